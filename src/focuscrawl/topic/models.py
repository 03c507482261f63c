"""Named relevance models, so that a strategy can declare which classifier is its reward.

The benchmark trains each named model once per topic and shares it between the strategies that use it.
"""

from __future__ import annotations

from collections.abc import Callable

from focuscrawl.topic.inputs import TopicInputs
from focuscrawl.topic.relevance import RelevanceModel, TfidfRelevanceModel

ModelFactory = Callable[[TopicInputs, int], RelevanceModel]

RELEVANCE_MODELS: dict[str, ModelFactory] = {}


def register_model(name: str, factory: ModelFactory) -> None:
    RELEVANCE_MODELS[name] = factory


def train_relevance_model(name: str, topic: TopicInputs, seed: int = 0) -> RelevanceModel:
    """Build and fit the named model on the topic's example texts."""
    factory = RELEVANCE_MODELS.get(name)
    if factory is None:
        raise KeyError(f"unknown relevance model {name!r}; known: {', '.join(sorted(RELEVANCE_MODELS))}")
    return factory(topic, seed)


register_model("tfidf", lambda topic, seed: TfidfRelevanceModel(seed=seed).fit(topic.example_texts, topic.example_labels))
