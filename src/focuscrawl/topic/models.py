"""Named relevance models, so that a strategy can declare which classifier is its reward.

The benchmark trains each named model once per topic and shares it between the strategies that use it.
"""

from __future__ import annotations

from collections.abc import Callable

from focuscrawl.topic.extras import require
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.topic.zeroshot import keyword_model
from focuscrawl.types import RelevanceModel, TopicInputs

ModelFactory = Callable[[TopicInputs, int], RelevanceModel]

RELEVANCE_MODELS: dict[str, ModelFactory] = {}


def register_model(name: str, factory: ModelFactory) -> None:
    RELEVANCE_MODELS[name] = factory


def train_relevance_model(name: str, topic: TopicInputs, seed: int = 0, *,
                          page_encoder: bool = False) -> RelevanceModel:
    """Build and fit the named model on the topic's example texts.

    ``page_encoder``: the ``keywords`` model also judges fetched pages by the MiniLM sentence transformer
    (``RunSettings.page_encoder``); the other models read texts their own way and ignore it."""
    if name == "keywords":
        return keyword_model(topic, seed, page_encoder=page_encoder)
    factory = RELEVANCE_MODELS.get(name)
    if factory is None:
        raise KeyError(f"unknown relevance model {name!r}; known: {', '.join(sorted(RELEVANCE_MODELS))}")
    return factory(topic, seed)


register_model("tfidf", lambda topic, seed: TfidfRelevanceModel(seed=seed).fit(topic.example_texts,
                                                                                topic.example_labels))


# TRES classifiers. Imported when asked for: torch is an optional dependency (the ``neural`` extra).
def _kwbilstm(topic: TopicInputs, seed: int) -> RelevanceModel:
    require("torch", "neural", "the KwBiLSTM relevance model (TRES's reward)")
    from focuscrawl.topic.neural import kwbilstm_for_topic

    return kwbilstm_for_topic(topic, seed)


def _bilstm(topic: TopicInputs, seed: int) -> RelevanceModel:
    require("torch", "neural", "the BiLSTM relevance model")
    from focuscrawl.topic.neural import bilstm_for_topic

    return bilstm_for_topic(topic, seed)


def _svm(topic: TopicInputs, seed: int) -> RelevanceModel:
    from focuscrawl.topic.svm import SvmRelevanceModel

    return SvmRelevanceModel(seed=seed).fit(topic.example_texts, topic.example_labels)


register_model("kwbilstm", _kwbilstm)
register_model("bilstm", _bilstm)
register_model("svm", _svm)
# a topic from a few words: zero-shot similarity, refined online by self-training (topic.zeroshot); built by
# train_relevance_model, which passes it the page_encoder setting
register_model("keywords", keyword_model)
