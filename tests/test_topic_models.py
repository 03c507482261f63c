"""The TRES relevance classifiers (SVM, BiLSTM, KwBiLSTM), their persistence, registry and CLI."""

from __future__ import annotations

import random

import numpy as np
import pytest
from typer.testing import CliRunner

from focuscrawl.cli.main import app
from focuscrawl.topic.embeddings import load_word_vectors
from focuscrawl.topic.keywords import expand_keywords
from focuscrawl.topic.models import RELEVANCE_MODELS, train_relevance_model
from focuscrawl.topic.neural import BiLSTMConfig, BiLSTMRelevanceModel, load_relevance_model
from focuscrawl.topic.svm import SvmRelevanceModel
from focuscrawl.types import TopicInputs

BIRDS = "bird feather wing nest egg beak flight migration songbird plumage sparrow eagle owl parrot hatch".split()
TRAINS = "train railway station engine track locomotive carriage timetable signal freight platform rail".split()
FILLER = "the a of and in on with was is it for by from this that at as one two new old".split()
SMALL = BiLSTMConfig(max_words=30, epochs=12, batch_size=16)


def _texts(vocab: list[str], n: int, rng: random.Random) -> list[str]:
    # Topic words are a minority among filler, so a classifier must look past the common words.
    return [" ".join(rng.choice(vocab) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(30))
            for _ in range(n)]


@pytest.fixture(scope="module")
def toy():
    rng = random.Random(7)
    train_texts = _texts(BIRDS, 30, rng) + _texts(TRAINS, 60, rng)
    train_labels = [1] * 30 + [0] * 60
    test_texts = _texts(BIRDS, 20, rng) + _texts(TRAINS, 20, rng)
    test_labels = [1] * 20 + [0] * 20
    topic = TopicInputs("birds", ["bird", "wing"], train_texts, train_labels)
    return topic, test_texts, np.asarray(test_labels)


@pytest.fixture(scope="module")
def vectors():
    return load_word_vectors()


def _models(topic, vectors):
    keywords = expand_keywords(topic, vectors)
    return {
        "svm": SvmRelevanceModel(seed=0),
        "bilstm": BiLSTMRelevanceModel(None, seed=0, config=SMALL, vectors=vectors),
        "kwbilstm": BiLSTMRelevanceModel(keywords, seed=0, config=SMALL, vectors=vectors),
    }


@pytest.fixture(scope="module")
def fitted(toy, vectors):
    topic = toy[0]
    return {name: m.fit(topic.example_texts, topic.example_labels) for name, m in _models(topic, vectors).items()}


@pytest.mark.parametrize("name", ["svm", "bilstm", "kwbilstm"])
def test_classifier_learns_separable_topic(fitted, toy, name):
    _, test_texts, test_labels = toy
    probs = fitted[name].predict_proba(test_texts)
    assert probs.shape == (len(test_texts),) and np.all((probs >= 0) & (probs <= 1))
    assert np.mean((probs >= 0.5) == test_labels) >= 0.9
    assert fitted[name].predict_proba([]).shape == (0,)
    assert fitted[name].predict_proba([""]).shape == (1,)  # empty page text: a probability, no crash


def test_kwbilstm_uses_expanded_keywords(fitted):
    model = fitted["kwbilstm"]
    assert model.kind == "kwbilstm" and model.ek_dim >= 1
    assert {"bird", "wing"} <= set(model.keywords.all)
    assert {"sparrow", "beak", "plumage"} <= set(model.keywords.discovered)
    assert fitted["bilstm"].kind == "bilstm" and fitted["bilstm"].ek_dim == 0


def test_short_anchor_texts_are_scored_in_a_batch(fitted):
    probs = fitted["kwbilstm"].predict_proba(["songbird nest", "railway timetable", "owl"])
    assert probs[0] > probs[1] and probs[2] > probs[1]


@pytest.mark.parametrize("name", ["bilstm", "kwbilstm"])
def test_a_texts_probability_does_not_depend_on_its_batch(fitted, toy, name):
    # batches are padded to their longest text: the padding is masked, so only float rounding may differ
    # (the dense layers see a different number of rows)
    model, long_texts = fitted[name], toy[1][:3]
    anchors = ["songbird nest", "railway timetable", "owl", ""]
    alone = np.concatenate([model.predict_proba([t]) for t in anchors + long_texts])
    together = model.predict_proba(anchors + long_texts)
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["svm", "bilstm", "kwbilstm"])
def test_save_load_round_trip_is_exact(fitted, toy, tmp_path, name):
    path = tmp_path / f"{name}.model"
    fitted[name].save(path)
    loaded = load_relevance_model(path)
    assert type(loaded) is type(fitted[name])
    texts = toy[1]
    assert np.array_equal(loaded.predict_proba(texts), fitted[name].predict_proba(texts))


@pytest.mark.slow
def test_training_is_reproducible(toy, vectors):
    topic, test_texts, _ = toy
    runs = [BiLSTMRelevanceModel(expand_keywords(topic, vectors), seed=3, config=SMALL, vectors=vectors)
            .fit(topic.example_texts, topic.example_labels).predict_proba(test_texts) for _ in range(2)]
    assert np.array_equal(runs[0], runs[1])


def test_registry_names_train_from_topic_inputs(toy):
    topic, test_texts, test_labels = toy
    assert {"kwbilstm", "bilstm", "svm"} <= set(RELEVANCE_MODELS)
    model = train_relevance_model("kwbilstm", topic, seed=0)
    assert model.keywords.initial == ["bird", "wing"]
    assert np.mean((model.predict_proba(test_texts) >= 0.5) == test_labels) >= 0.9


@pytest.mark.slow
def test_cli_expand_train_evaluate_on_embedded_web(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["topic", "expand", "--web", "embedded", "--topic", "subject.Science.Biology"])
    assert result.exit_code == 0, result.output
    assert "Table 2" in result.output and "KS (" in result.output and "K' (" in result.output

    path = tmp_path / "svm.joblib"
    result = runner.invoke(app, ["topic", "train", "--web", "embedded", "--model", "svm", "--out", str(path)])
    assert result.exit_code == 0, result.output
    assert isinstance(load_relevance_model(path), SvmRelevanceModel)

    result = runner.invoke(app, ["topic", "evaluate", "--web", "embedded", "--models", "svm,kwbilstm",
                                 "--relevant", "15", "--irrelevant", "30", "--folds", "2"])
    assert result.exit_code == 0, result.output
    assert "Table 1" in result.output and "kwbilstm" in result.output and "F-m" in result.output

    result = runner.invoke(app, ["topic", "train", "--web", "embedded", "--model", "nope", "--out", str(path)])
    assert result.exit_code == 2


@pytest.mark.slow
def test_tfidf_fast_path_equals_scikit_learn_and_survives_pickling():
    import pickle

    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.topic.relevance import TfidfRelevanceModel
    from focuscrawl.webs import embedded_web_dir
    from focuscrawl.webs.store import OfflineWeb

    web = OfflineWeb(embedded_web_dir())
    topic = load_topic(web, "subject.Science.Biology")
    model = TfidfRelevanceModel().fit(topic.inputs.example_texts, topic.inputs.example_labels)
    pages = [web.fetch(record.url) for record in list(web.records())[:60]]
    texts = [p.title + "\n" + p.text for p in pages] + [l.anchor for p in pages for l in p.outlinks] + ["", "the of"]
    np.testing.assert_allclose(model.predict_proba(texts), model.predict_proba_sklearn(texts), rtol=0, atol=1e-12)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(loaded.predict_proba(texts), model.predict_proba(texts), rtol=0, atol=0)


@pytest.mark.parametrize("model_class", ["tfidf", "svm"])
def test_refitting_on_the_same_texts_reuses_the_vocabulary_and_changes_nothing(toy, model_class):
    from focuscrawl.topic import relevance
    from focuscrawl.topic.relevance import TfidfRelevanceModel

    make = {"tfidf": TfidfRelevanceModel, "svm": SvmRelevanceModel}[model_class]
    topic, test_texts, _ = toy
    texts, labels = topic.example_texts, topic.example_labels
    first = make(seed=0).fit(texts, labels)
    second = make(seed=1).fit(texts, labels)
    assert second.vectorizer is first.vectorizer  # the per-process cache answered
    relevance._FITTED_VECTORIZERS.clear()
    fresh = make(seed=1).fit(texts, labels)
    assert fresh.vectorizer is not first.vectorizer
    assert np.array_equal(second.predict_proba(test_texts), fresh.predict_proba(test_texts))
    # refitting a model that holds the shared vectorizer on other texts must not touch the other model
    before = first.predict_proba(test_texts)
    relevance._FITTED_VECTORIZERS.clear()
    make(seed=0).fit(texts, labels)
    second.fit(test_texts, [1] * 20 + [0] * 20)
    assert second.vectorizer is not first.vectorizer
    assert np.array_equal(first.predict_proba(test_texts), before)
