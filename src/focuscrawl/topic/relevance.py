"""Relevance classifiers: page text -> P(on topic). The agent's own judge, and so its reward."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression


@runtime_checkable
class RelevanceModel(Protocol):
    """``fit`` on labelled texts, then ``predict_proba`` in batches (one probability per text)."""

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> RelevanceModel: ...

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray: ...


class TfidfRelevanceModel:
    """TF-IDF over words and bigrams + logistic regression, the classic focused-crawler page classifier.

    Class weights are balanced because topic samples are usually small next to the negatives. The seed
    makes the (deterministic by default) solver's tie-breaking reproducible all the same.
    """

    def __init__(self, seed: int = 0, max_features: int = 50_000):
        self.vectorizer = TfidfVectorizer(
            lowercase=True, ngram_range=(1, 2), min_df=1, max_features=max_features, sublinear_tf=True,
            stop_words="english",
        )
        self.model = LogisticRegression(C=10.0, class_weight="balanced", max_iter=2000, random_state=seed)

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> TfidfRelevanceModel:
        features = self.vectorizer.fit_transform(list(texts))
        self.model.fit(features, np.asarray(labels, dtype=int))
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        features = self.vectorizer.transform(list(texts))
        return self.model.predict_proba(features)[:, 1]


class MemoizedRelevance:
    """Wraps a fitted model and remembers its answer per text.

    A benchmark fetches the same pages again and again across strategies and runs; the model is a pure
    function of the text, so caching changes no number and saves most of the scoring time.
    """

    def __init__(self, model: RelevanceModel, max_entries: int = 200_000):
        self.model = model
        self.max_entries = max_entries
        self._cache: dict[str, float] = {}

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> MemoizedRelevance:
        self.model.fit(texts, labels)
        self._cache.clear()
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self.max_entries:
                self._cache.clear()
            self._cache.update(zip(missing, map(float, self.model.predict_proba(missing))))
        return np.fromiter((self._cache[t] for t in texts), dtype=float, count=len(texts))
