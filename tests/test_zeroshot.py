"""Topics from a few words: zero-shot similarity, calibration by a mixture, self-training without drift."""

from __future__ import annotations

import numpy as np
import pytest

from focuscrawl.topic.embeddings import load_sentence_encoder, load_word_vectors
from focuscrawl.topic.zeroshot import KeywordRelevance, keyword_model, topic_query
from focuscrawl.types import TopicInputs

BIRDS = ["Birds build nests, lay eggs and migrate; a bird has feathers, wings and a beak.",
         "The songbird sang at dawn; its plumage and flight feathers help the bird fly.",
         "Eagles and owls are birds of prey that hunt small animals from the air."]
OTHER = ["The railway timetable lists trains from the central station every hour.",
         "Interest rates and the stock market moved after the central bank's decision.",
         "The football match ended in a draw after extra time in the stadium."]


@pytest.fixture(scope="module")
def vectors():
    return load_word_vectors()


def test_zero_shot_ranks_pages_by_the_topics_words(vectors):
    model = KeywordRelevance("birds, nests, feathers", vectors=vectors)
    p = model.predict_proba(BIRDS + OTHER)
    assert min(p[:3]) > max(p[3:]), "every bird page above every other page"
    assert topic_query(TopicInputs("t", ["birds", " nests"], [], [], description="Wild birds.")) == \
        "Wild birds. birds, nests"


def test_calibration_follows_the_pages_seen_and_examples_come_from_zero_shot_only(vectors):
    model = KeywordRelevance("birds, nests, feathers", vectors=vectors, min_pages=6, refit_every=6,
                             min_examples=2, retrain_every=4)
    for _ in range(3):
        for text in BIRDS + OTHER:
            model.learn_one(text)
    w, m1, s1, m0, s0 = model.mixture
    assert m1 > m0 and 0.2 < w < 0.8, "a relevant and an other component, fitted"
    labels = dict.fromkeys(BIRDS, 1) | dict.fromkeys(OTHER, 0)
    assert model.examples and all(labels[text] == y for text, y in model.examples), "confident, correct examples"
    assert model.learned is not None
    p = model.predict_proba(BIRDS + OTHER)
    assert (p[:3] > 0.5).all() and (p[3:] < 0.5).all()
    # drift: an example is labelled by the zero-shot posterior, whatever the blend says
    zero_shot = model._posterior(model.similarity(BIRDS + OTHER))
    assert all((zero_shot[i] >= model.confident) == (labels[t] == 1) for i, t in enumerate(BIRDS + OTHER)
               if zero_shot[i] >= model.confident or zero_shot[i] <= 1 - model.confident)


def test_a_less_similar_text_is_never_more_likely_relevant(vectors):
    # A fit like Citizenship's on the dev suite: the relevant component wider than the other. The mixture's
    # own posterior turns back below the other component (the least similar pages came out relevant).
    model = KeywordRelevance("birds", vectors=vectors)
    model.mixture = (0.5, 0.27, 0.16, 0.21, 0.09)
    z = np.linspace(-0.5, 1.0, 301)
    assert model._responsibility(np.array([-0.5]), model.mixture)[0] > 0.9, "the raw mixture turns back"
    p = model._posterior(z)
    assert (np.diff(p) >= 0).all() and p[0] < 0.5
    model.mixture = (0.5, 0.27, 0.05, 0.0, 0.2)  # the relevant component narrower: it turns back above
    p = model._posterior(z)
    assert (np.diff(p) >= 0).all() and p[-1] > 0.5
    model.mixture = model._prior_mixture()  # equal spreads: the mixture's posterior as it is
    assert np.allclose(model._posterior(z), model._responsibility(z, model.mixture))


def test_a_crawl_of_the_same_pages_gives_the_same_model(vectors):
    a = KeywordRelevance("birds", vectors=vectors, min_pages=4, refit_every=2)
    b = KeywordRelevance("birds", vectors=vectors, min_pages=4, refit_every=2)
    for text in BIRDS + OTHER + BIRDS:
        a.learn_one(text)
        b.learn_one(text)
    assert a.mixture == b.mixture and a.examples == b.examples


def test_examples_a_user_has_are_trusted_and_empty_words_are_refused(vectors):
    topic = TopicInputs("birds", ["birds"], BIRDS + OTHER, [1, 1, 1, 0, 0, 0])
    model = keyword_model(topic, seed=0)
    assert model.examples[:6] == list(zip(BIRDS + OTHER, [1, 1, 1, 0, 0, 0]))
    with pytest.raises(ValueError, match="keywords or a description"):
        KeywordRelevance("  ", vectors=vectors)
    assert np.asarray(model.predict_proba([])).size == 0


@pytest.mark.slow
def test_the_page_encoder_judges_fetched_pages_and_leaves_link_contexts_to_the_static_vectors(vectors):
    import pickle

    encoder = load_sentence_encoder()
    static = KeywordRelevance("birds, nests, feathers", vectors=vectors)
    blended = KeywordRelevance("birds, nests, feathers", vectors=vectors, page_encoder=encoder)
    texts = BIRDS + OTHER
    transformer = encoder.embed(texts) @ encoder.embed(["birds, nests, feathers"])[0]
    assert np.allclose([blended.page_similarity(t) for t in texts],
                       (static.similarity(texts) + transformer) / 2, atol=1e-5), "the mean of the two cosines"
    pages = [blended.predict_page(t) for t in texts]
    assert min(pages[:3]) > max(pages[3:])
    assert np.array_equal(blended.predict_proba(texts), static.predict_proba(texts)), "link contexts: static only"
    for text in texts:
        blended.learn_one(text)
    copy = pickle.loads(pickle.dumps(blended))
    assert copy.page_encoder is encoder and "page_encoder" not in pickle.loads(pickle.dumps(blended)).__getstate__()
    assert copy.predict_page(BIRDS[0]) == blended.predict_page(BIRDS[0])
    assert copy.similarities == blended.similarities


@pytest.mark.slow
@pytest.mark.parametrize("page_encoder", [False, True])
def test_a_crawl_from_a_few_words_stops_and_resumes_as_one(tmp_path, page_encoder):
    """A topic from keywords only: the crawl's self-training relevance model is part of the crawl's state, so
    a crawl stopped and resumed (from a checkpoint and the log) scores and selects as the uninterrupted one."""
    import asyncio

    from focuscrawl.crawl import Crawler
    from focuscrawl.topic.topic_dir import init_from_words
    from focuscrawl.webs import embedded_web_dir
    from focuscrawl.webs.store import OfflineWeb

    web = OfflineWeb(embedded_web_dir())
    seed = next(r.url for r in web.records() if "Bird" in r.url and r.outdegree > 5)
    web.close()
    init_from_words(tmp_path / "topic", keywords=["birds", "animals"], description="Birds and other animals.",
                    seeds=[seed])
    settings = dict(topic=tmp_path / "topic", web="embedded", budget=40, strategy="adaptive", progress="none",
                    plot=False, concurrency=1, checkpoint_every=7, page_encoder=page_encoder)
    whole = [r.url for r in asyncio.run(_records(Crawler(out=tmp_path / "a", **settings)))]

    first = Crawler(out=tmp_path / "b", **settings)
    part = asyncio.run(_records(first, stop_after=17))
    rest = asyncio.run(_records(Crawler(out=tmp_path / "b", **settings)))
    assert [r.url for r in part + rest] == whole
    assert len(whole) == 40


async def _records(crawler, stop_after=None):
    out = []
    async for record in crawler.run():
        out.append(record)
        if stop_after is not None and len(out) == stop_after:
            crawler.stop()
    return out
