"""Named relevance models, so that a strategy can declare which classifier is its reward.

The benchmark trains each named model once per topic and shares it between the strategies that use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from focuscrawl.extras import require
from focuscrawl.topic.judges import is_judge_spec, load_judge
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.topic.vector_judge import tfidf_and_vectors, tfidf_and_vectors_stacked
from focuscrawl.topic.zeroshot import keyword_model
from focuscrawl.types import RelevanceModel, TopicInputs


@dataclass(frozen=True)
class ModelOptions:
    """Settings a relevance model may read (``RunSettings`` fields); a model ignores those it has no use for."""

    page_encoder: bool = False  # the keywords model: judge fetched pages by the MiniLM transformer too


ModelFactory = Callable[[TopicInputs, int, ModelOptions], RelevanceModel]

RELEVANCE_MODELS: dict[str, ModelFactory] = {}


def register_model(name: str, factory: ModelFactory) -> None:
    RELEVANCE_MODELS[name] = factory


def train_relevance_model(name: str, topic: TopicInputs, seed: int = 0,
                          options: ModelOptions = ModelOptions()) -> RelevanceModel:
    """Build and fit the named model on the topic's example texts; or resolve a user's judge (``module:callable``
    or a model file, ``focuscrawl.topic.judges``), which is fitted already."""
    factory = RELEVANCE_MODELS.get(name)
    if factory is None and is_judge_spec(name):
        return load_judge(name, topic, lambda: train_relevance_model(topic_model(topic), topic, seed, options))
    if factory is None:
        raise KeyError(f"unknown relevance model {name!r}; known: {', '.join(sorted(RELEVANCE_MODELS))}, or a "
                       "judge of your own: module:callable or a model file (.joblib)")
    return factory(topic, seed, options)


def topic_model(topic: TopicInputs) -> str:
    """The topic's own classifier where a judge of whole pages leaves link contexts to it: TF-IDF on the examples,
    the keyword model for a topic from keywords alone."""
    return "tfidf" if topic.example_texts else "keywords"


register_model("tfidf", lambda topic, seed, options: TfidfRelevanceModel(seed=seed).fit(topic.example_texts,
                                                                                         topic.example_labels))
# TF-IDF's probability averaged with a judge of the examples' sentence vectors (topic.vector_judge; a trial's)
register_model("tfidf+vectors", lambda topic, seed, options: tfidf_and_vectors(seed).fit(topic.example_texts,
                                                                                         topic.example_labels))
# the same two judges weighted by what their out-of-fold answers on the examples earn (stacking): adaptive's judge
register_model("tfidf+vectors-stacked", lambda topic, seed, options: tfidf_and_vectors_stacked(seed).fit(
    topic.example_texts, topic.example_labels))


# TRES classifiers. Imported when asked for: torch is an optional dependency (the ``neural`` extra).
def _kwbilstm(topic: TopicInputs, seed: int, options: ModelOptions) -> RelevanceModel:
    require("torch", "neural", "the KwBiLSTM relevance model (TRES's reward)")
    from focuscrawl.topic.neural import kwbilstm_for_topic

    return kwbilstm_for_topic(topic, seed)


def _bilstm(topic: TopicInputs, seed: int, options: ModelOptions) -> RelevanceModel:
    require("torch", "neural", "the BiLSTM relevance model")
    from focuscrawl.topic.neural import bilstm_for_topic

    return bilstm_for_topic(topic, seed)


def _svm(topic: TopicInputs, seed: int, options: ModelOptions) -> RelevanceModel:
    from focuscrawl.topic.svm import SvmRelevanceModel

    return SvmRelevanceModel(seed=seed).fit(topic.example_texts, topic.example_labels)


register_model("kwbilstm", _kwbilstm)
register_model("bilstm", _bilstm)
register_model("svm", _svm)
# a topic from a few words: zero-shot similarity, refined online by self-training (topic.zeroshot)
register_model("keywords", lambda topic, seed, options: keyword_model(topic, seed, options.page_encoder))
