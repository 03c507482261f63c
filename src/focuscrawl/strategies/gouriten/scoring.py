"""The model's scoring functions (Sec. 2.1): node score beta(u) and edge score alpha(u, v).

Two families, chosen with the strategy option ``scores``:

- ``"classifier"`` (default): beta(u) is the agent's classifier probability on the page's title and text
  (exactly the engine's ``Observation.relevance``, so it costs nothing more); alpha(u, v) is the same
  classifier on the link's context window. Pant & Srinivasan's classifier-driven setting, which the paper
  says fits the model (Sec. 2.2, "more elaborate settings [20]").
- ``"tfidf"``: the paper's own experimental functions (Sec. 2.3) generalised to a keyword query: with
  f(x) = log(1 + x), beta(u) = sum over query terms t of idf(t) f(count of t in u) and alpha(u, v) the
  same over the window around the link. The query is the topic's keywords split into words (English stop
  words dropped); idf comes from the topic's example texts, the only corpus an agent has; a term matches
  its plural (``bird`` matches ``birds``) because topic names are often plural.

The window (Sec. 2.3: "100-character window around a hyperlink") is ``window`` characters of page text
centred on the anchor's occurrence (``focuscrawl.strategies.frontier.link_context``, which ``adaptive`` uses
too); ``window=0`` uses the anchor text alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from focuscrawl.strategies.frontier.link_context import anchor_windows
from focuscrawl.topic.text import STOPWORDS, terms
from focuscrawl.types import Observation, Page, RelevanceModel, TopicInputs


class ClassifierScores:
    def __init__(self, classifier: RelevanceModel, window: int = 100):
        self.classifier = classifier
        self.window = window

    def node(self, observation: Observation) -> float:
        return float(observation.relevance)

    def edges(self, page: Page, anchors: Sequence[str]) -> np.ndarray:
        if not anchors:
            return np.zeros(0)
        windows = anchor_windows(page.text, anchors, self.window)
        return np.asarray(self.classifier.predict_proba(windows), dtype=float)


class KeywordTfidfScores:
    def __init__(self, topic: TopicInputs, window: int = 100):
        self.window = window
        stems: list[str] = []
        for keyword in topic.keywords:
            for word in terms(keyword):
                if word in STOPWORDS:
                    continue
                stem = word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
                if stem not in stems:
                    stems.append(stem)
        self.stems = stems
        # One alternation scanned by the regex engine in C: far cheaper than tokenising every page.
        self.pattern = (re.compile(r"\b(" + "|".join(map(re.escape, stems)) + r")(?:s|es)?\b", re.IGNORECASE)
                        if stems else None)
        documents = len(topic.example_texts)
        frequency = dict.fromkeys(stems, 0)
        for text in topic.example_texts:
            for stem in {m.lower() for m in self._matches(text)}:
                frequency[stem] += 1
        # Smoothed idf, as scikit-learn's TfidfVectorizer: a term absent from the examples still counts.
        self.idf = {s: math.log((1 + documents) / (1 + frequency[s])) + 1.0 for s in stems}

    def _matches(self, text: str) -> list[str]:
        return self.pattern.findall(text) if self.pattern is not None else []

    def score(self, text: str) -> float:
        counts: dict[str, int] = {}
        for match in self._matches(text):
            stem = match.lower()
            counts[stem] = counts.get(stem, 0) + 1
        return float(sum(self.idf[s] * math.log1p(c) for s, c in counts.items()))

    def node(self, observation: Observation) -> float:
        page = observation.page
        return self.score(f"{page.title}\n{page.text}") if page.ok else 0.0

    def edges(self, page: Page, anchors: Sequence[str]) -> np.ndarray:
        return np.asarray([self.score(w) for w in anchor_windows(page.text, anchors, self.window)], dtype=float)
