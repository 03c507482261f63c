"""Topics: what a user gives the crawler (keywords, example texts, seeds) and the relevance classifier."""

from focuscrawl.topic.inputs import TopicInputs
from focuscrawl.topic.relevance import RelevanceModel, TfidfRelevanceModel

__all__ = ["RelevanceModel", "TfidfRelevanceModel", "TopicInputs"]
