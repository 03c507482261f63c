"""The sentence-vector judge and its mean with TF-IDF (relevance model ``tfidf+vectors``, under trial)."""

from __future__ import annotations

import pickle

import numpy as np

from focuscrawl.topic.models import train_relevance_model
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.topic.vector_judge import (
    MeanRelevanceModel,
    StackedRelevanceModel,
    VectorRelevanceModel,
    logit,
    platt_scaling,
)
from focuscrawl.types import TopicInputs

BIRDS = ["Birds build nests, lay eggs and migrate; a bird has feathers, wings and a beak.",
         "The songbird sang at dawn; its plumage and flight feathers help the bird fly.",
         "Eagles and owls are birds of prey that hunt small animals from the air.",
         "A sparrow hatched in the nest under the roof and fledged after two weeks."]
OTHER = ["The railway timetable lists trains from the central station every hour.",
         "Interest rates and the stock market moved after the central bank's decision.",
         "The football match ended in a draw after extra time in the stadium.",
         "Compile the kernel module with make and load it with modprobe as root."]
# the same topics in words the examples never use: what TF-IDF cannot know and vectors can
UNSEEN_BIRD = "Herons and storks wade through the marsh, catching frogs with long bills."
UNSEEN_OTHER = "The locomotive pulled freight wagons along the track to the harbour depot."


def test_sentence_vectors_judge_pages_in_words_the_examples_never_use():
    labels = [1] * len(BIRDS) + [0] * len(OTHER)
    vectors = VectorRelevanceModel(seed=0).fit(BIRDS + OTHER, labels)
    tfidf = TfidfRelevanceModel(seed=0).fit(BIRDS + OTHER, labels)
    bird, other = vectors.predict_proba([UNSEEN_BIRD, UNSEEN_OTHER])
    assert bird > 0.5 > other
    # TF-IDF shares no word with either: it cannot tell them apart as far
    tfidf_gap = float(np.diff(tfidf.predict_proba([UNSEEN_OTHER, UNSEEN_BIRD]))[0])
    assert bird - other > tfidf_gap
    assert vectors.predict_proba([]).shape == (0,)


def test_the_mean_judge_is_the_mean_of_its_parts_and_trains_from_the_registry():
    topic = TopicInputs("birds", ["bird"], BIRDS + OTHER, [1] * len(BIRDS) + [0] * len(OTHER))
    judge = train_relevance_model("tfidf+vectors", topic, seed=0)
    assert isinstance(judge, MeanRelevanceModel)
    texts = [UNSEEN_BIRD, UNSEEN_OTHER, BIRDS[0]]
    parts = [model.predict_proba(texts) for model in judge.models]
    np.testing.assert_allclose(judge.predict_proba(texts), (parts[0] + parts[1]) / 2)
    # a judge is pickled with a crawl's checkpoint: the same answers after
    again = pickle.loads(pickle.dumps(judge))
    assert np.array_equal(again.predict_proba(texts), judge.predict_proba(texts))
    # the same seed and examples give the same judge
    assert np.array_equal(train_relevance_model("tfidf+vectors", topic, seed=0).predict_proba(texts),
                          judge.predict_proba(texts))


def test_stacking_weighs_each_judge_by_its_out_of_fold_answers():
    # the label is a marker word only TF-IDF can learn: every text is about birds or trains whatever its label, so
    # the sentence vectors (what a text is about) carry nothing; stacking gives TF-IDF the larger weight
    about = BIRDS + OTHER
    texts = [f"{text} Reference qzxv{'ok' if i % 2 else 'no'}." for i, text in enumerate(about * 3)]
    labels = [i % 2 for i in range(len(texts))]
    judge = StackedRelevanceModel([TfidfRelevanceModel(seed=0), VectorRelevanceModel(seed=0)], seed=0).fit(
        texts, labels)
    assert judge.weights[0] > judge.weights[1]
    p = judge.predict_proba(["A heron in the marsh. Reference qzxvok.", "A heron in the marsh. Reference qzxvno."])
    assert p[0] > p[1]
    # the registered judge is the same stacker, calibrated to the examples' prior (its weights scaled, the order kept)
    again = train_relevance_model("tfidf+vectors-stacked", TopicInputs("t", [], texts, labels), seed=0)
    calibrated = StackedRelevanceModel([TfidfRelevanceModel(seed=0), VectorRelevanceModel(seed=0)], seed=0,
                                       calibrated=True).fit(texts, labels)
    assert np.array_equal(again.weights, calibrated.weights) and isinstance(again, StackedRelevanceModel)


def test_a_topic_with_one_example_of_a_class_still_gets_a_judge():
    texts, labels = [BIRDS[0], *OTHER], [1, 0, 0, 0, 0]
    judge = train_relevance_model("tfidf+vectors-stacked", TopicInputs("t", [], texts, labels), seed=0)
    assert judge.weights.tolist() == [0.5, 0.5]
    bird, other = judge.predict_proba([UNSEEN_BIRD, UNSEEN_OTHER])
    assert bird > other


def _one_bird_in_four() -> tuple[list[str], list[int], StackedRelevanceModel, StackedRelevanceModel]:
    """Examples with one bird in four, and the stacked judge fitted on them balanced and calibrated."""
    texts = BIRDS + OTHER * 3 + [f"{text} Timetable." for text in OTHER]
    labels = [1] * len(BIRDS) + [0] * (len(texts) - len(BIRDS))
    balanced = StackedRelevanceModel([TfidfRelevanceModel(seed=0), VectorRelevanceModel(seed=0)], seed=0)
    calibrated = StackedRelevanceModel([TfidfRelevanceModel(seed=0), VectorRelevanceModel(seed=0)], seed=0,
                                       calibrated=True)
    return texts, labels, balanced.fit(texts, labels), calibrated.fit(texts, labels)


def test_the_calibrated_stacked_judge_orders_pages_as_the_balanced_one_and_keeps_the_examples_prior():
    # one bird example in four: balanced, the stacker answers as if half the pages were birds; calibrated, its
    # probabilities come down towards the examples' share while every page keeps its place
    texts, labels, balanced, calibrated = _one_bird_in_four()
    pages = [UNSEEN_BIRD, UNSEEN_OTHER, *BIRDS, *OTHER, "Owls at night.", "Trains at night."]
    p, q = balanced.predict_proba(pages), calibrated.predict_proba(pages)
    assert np.array_equal(np.argsort(p, kind="stable"), np.argsort(q, kind="stable"))
    assert q[1] < p[1] and q[len(BIRDS) + 2:].mean() < p[len(BIRDS) + 2:].mean()
    assert abs(calibrated.predict_proba(texts).mean() - np.mean(labels)) < abs(
        balanced.predict_proba(texts).mean() - np.mean(labels))


def test_platt_scaling_stays_finite_on_examples_it_separates():
    logits, labels = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0]), np.array([0, 0, 0, 1, 1, 1])
    scale, shift = platt_scaling(logits, labels)
    assert 0 < scale < 10 and abs(shift) < 1e-6
    p = 1 / (1 + np.exp(-(scale * logits + shift)))
    assert p[-1] < 1 - 1e-3 and p[0] > 1e-3  # Platt's targets: never certain from six examples


def test_the_calibrated_stacked_judge_decides_where_the_balanced_one_does():
    # its threshold is the balanced stacker's 0.5 on the calibrated scale: the same pages are on topic either way
    _, _, balanced, calibrated = _one_bird_in_four()
    assert balanced.threshold == 0.5 and calibrated.threshold < 0.5  # one example in four on topic
    pages = [UNSEEN_BIRD, UNSEEN_OTHER, *BIRDS, *OTHER, "Owls at night.", "Trains at night.", "Owls and trains."]
    p, q = balanced.predict_proba(pages), calibrated.predict_proba(pages)
    assert ((p >= 0.5) == (q >= calibrated.threshold)).all()
    assert (q >= calibrated.threshold).any() and (q < calibrated.threshold).any()


def test_a_pickled_vector_judge_leaves_the_word_vectors_to_the_process():
    labels = [1] * len(BIRDS) + [0] * len(OTHER)
    judge = VectorRelevanceModel(seed=0).fit(BIRDS + OTHER, labels)
    texts = [UNSEEN_BIRD, UNSEEN_OTHER]
    assert len(pickle.dumps(judge)) < 10_000  # the weights, not the 8 MB of vectors
    assert np.array_equal(pickle.loads(pickle.dumps(judge)).predict_proba(texts), judge.predict_proba(texts))


def test_the_stacked_judge_is_its_formula_on_its_judges_logits_to_the_bit():
    labels = [1] * len(BIRDS) + [0] * len(OTHER)
    judge = StackedRelevanceModel([TfidfRelevanceModel(seed=0), VectorRelevanceModel(seed=0)], folds=2)
    judge.fit(BIRDS + OTHER, labels)
    texts = [UNSEEN_BIRD, UNSEEN_OTHER, *BIRDS, *OTHER, "", "bird"] * 3
    columns = np.column_stack([logit(np.asarray(m.predict_proba(texts), dtype=float)) for m in judge.models])
    expected = 1.0 / (1.0 + np.exp(-(columns @ judge.weights + judge.intercept)))
    assert judge.predict_proba(texts).tobytes() == expected.tobytes()
