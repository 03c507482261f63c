"""Word vectors and TRES keyword expansion (Algorithm 1, equation 2).

The word vectors ship with the package; ``focuscrawl topic vectors --force`` distils them again into the cache.
"""

from __future__ import annotations

import numpy as np
import pytest

from focuscrawl.topic.embeddings import load_word_vectors
from focuscrawl.topic.keywords import KeywordSet, expand_keywords, expansion_threshold, keyword_table
from focuscrawl.topic.text import words
from focuscrawl.types import TopicInputs

BIRD_TEXTS = [
    "the bird built a nest of feathers and the songbird laid an egg before migration",
    "plumage and wing feathers help a bird in flight; the beak of a songbird is small",
    "sparrows and eagles are birds; each bird has a beak, wings and feathers",
]
TRAIN_TEXTS = [
    "the train left the railway station on time and the locomotive pulled freight carriages",
    "a railway timetable lists every train; the engine stops at each station on the track",
]


@pytest.fixture(scope="module")
def vectors():
    return load_word_vectors()


def test_vectors_load_offline_and_make_sense(vectors, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert vectors.dim == 128
    assert vectors.similarity("football", "soccer") > vectors.similarity("football", "violin") + 0.3
    assert "football" in vectors and "soccer" in vectors.vocabulary
    assert not any(w.startswith("#") for w in vectors.vocabulary)
    stacked = vectors.vectors(["football", "photosynthesis", "soccer"])
    assert stacked.shape == (3, 128)
    assert np.allclose(stacked[0], vectors.vector("football"))
    assert np.abs(stacked[1]).sum() > 0  # out-of-vocabulary word: built from its sub-word pieces
    assert vectors.vector("") is None and vectors.vector("!!") is None


def test_phrase_vector_is_mean_of_content_words(vectors):
    expected = (vectors.vector("health") + vectors.vector("medicine")) / 2
    assert np.allclose(vectors.vector("health and medicine"), expected, atol=1e-6)


def test_equation_2_threshold_is_mean_pairwise_cosine():
    e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    mixed = (e1 + e2) / np.sqrt(2)
    assert expansion_threshold(np.stack([e1, e2, mixed])) == pytest.approx((0 + 2 * np.sqrt(0.5)) / 3)
    assert expansion_threshold(np.stack([e1]), single_keyword_threshold=0.42) == 0.42


def _bird_topic(keywords: list[str]) -> TopicInputs:
    return TopicInputs("birds", keywords, BIRD_TEXTS + TRAIN_TEXTS, [1] * len(BIRD_TEXTS) + [0] * len(TRAIN_TEXTS))


def test_expansion_finds_topic_words_only_in_relevant_texts(vectors):
    topic = _bird_topic(["bird", "wing", "Feathers"])
    result = expand_keywords(topic, vectors)
    assert result.initial == ["bird", "wing", "feathers"]
    assert set(result.initial) <= set(result.all)
    assert set(result.discovered) & {"songbird", "plumage", "beak", "birds", "wings", "nest", "flight"}
    # Irrelevant texts are not candidates, and every discovered word passed equation 2's threshold.
    assert not set(result.discovered) & set(words(" ".join(TRAIN_TEXTS))) - set(words(" ".join(BIRD_TEXTS)))
    assert all(result.scores[w] >= result.threshold - 1e-6 for w in result.discovered)
    assert list(result.scores.values()) == sorted(result.scores.values(), reverse=True)
    assert expand_keywords(topic, vectors) == result  # deterministic


def test_threshold_controls_selectivity(vectors):
    topic = _bird_topic(["bird", "wing"])
    assert expand_keywords(topic, vectors, threshold=1.01).discovered == []
    everything = expand_keywords(topic, vectors, threshold=-1.0)
    assert "nest" in everything.discovered and "the" not in everything.discovered  # stopwords never
    default = expand_keywords(topic, vectors)
    assert set(default.discovered) < set(everything.discovered)


def test_keyword_matching_and_table():
    keywords = KeywordSet(["health and medicine", "bird"], ["wing"])
    assert keywords.all == ["health and medicine", "bird", "wing"]
    assert keywords.keyphrases == ["health and medicine"]
    assert keywords.count("Bird wings; Health and Medicine of a bird, one wing") == 4
    assert keywords.match_tokens(words("health and medicine, health")) == (0, 1)
    assert keywords.count("https://en.wikipedia.org/wiki/Bird_flu") == 1
    assert keywords.count("train station") == 0
    figures = keyword_table(keywords, ["wing wing bird", "wing", "train"], [1, 1, 0])
    assert figures["mean_discovered_relevant"] == 1.5 and figures["mean_discovered_irrelevant"] == 0
    assert figures["mean_all_relevant"] == 2.0 and figures["initial"] == 2 and figures["discovered"] == 1
    assert KeywordSet.from_dict(keywords.to_dict()) == keywords


def test_building_word_vectors_shows_one_line_not_the_libraries_chatter(tmp_path, monkeypatch, capfd):
    """The first run builds the vectors: the libraries' loading tables, warnings and progress bars (here a
    stand-in distill that prints all of them, from Python and at file-descriptor level) are silenced."""
    import os
    import sys
    import types
    import warnings

    from focuscrawl.topic import embeddings

    class Model:
        def save_pretrained(self, path):
            (tmp_path / "made").write_text("x")
            open(os.path.join(path, "model.safetensors"), "w").close()

    def noisy_distill(**kwargs):
        print("UNEXPECTED key ... can be ignored")
        print("100%|#####| 30522/30522 tokens", file=sys.stderr)
        os.write(2, b"C-level chatter\n")
        warnings.warn("a third-party warning")
        return Model()

    monkeypatch.setattr(embeddings, "require", lambda *a: types.SimpleNamespace(distill=noisy_distill))
    lines = []
    embeddings.build_word_vectors(tmp_path / "vectors", log=lines.append)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "") and len(lines) == 2 and (tmp_path / "vectors" / "model.safetensors").exists()


def test_the_shipped_vectors_are_used_and_nothing_is_built(monkeypatch, tmp_path):
    from focuscrawl.topic import embeddings

    monkeypatch.setenv("FOCUSCRAWL_CACHE", str(tmp_path / "empty-cache"))

    def no_build(*args, **kwargs):
        raise AssertionError("the shipped vectors need no build")

    monkeypatch.setattr(embeddings, "build_word_vectors", no_build)
    assert embeddings.default_dir() == embeddings.packaged_dir()
    vectors = embeddings.load_word_vectors()
    assert vectors.directory == embeddings.packaged_dir() and vectors.dim == embeddings.PCA_DIMS
    assert vectors.similarity("football", "soccer") > vectors.similarity("football", "violin") + 0.3


@pytest.mark.slow
def test_topic_vectors_force_distils_again_and_compares_with_the_shipped_ones(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from focuscrawl.cli.main import app

    monkeypatch.setenv("FOCUSCRAWL_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(app, ["topic", "vectors", "--force"])
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "cache") in result.output.replace("\n", "")
    assert "the same as the vectors the package ships" in result.output or "not the same as" in result.output
    assert (tmp_path / "cache" / "word-vectors-minilm-l6-m2v-128-v1" / "model.safetensors").exists()
