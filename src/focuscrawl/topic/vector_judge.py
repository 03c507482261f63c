"""A judge of another kind than TF-IDF: logistic regression on the examples' static sentence vectors, and its mean
with the TF-IDF judge (the relevance model ``tfidf+vectors``).

TF-IDF on 100 example pages knows the examples' words and no others: on a web whose relevant pages say the same in
other words (the Debian web's package pages against Wikipedia-like examples) its probabilities sit between 0.1 and
0.5 whatever the page (docs/results.md, "The judge"). The static vectors (the packaged all-MiniLM-L6-v2 distilled,
``focuscrawl.topic.embeddings``) place words with their neighbours, so a page in other words lands near the
examples it resembles. Each judge alone ranks the crawl's pages about as well as the other; their mean is the
judge under trial (docs/history/trials/judge-vectors-rule.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from focuscrawl.topic.embeddings import load_word_vectors
from focuscrawl.topic.relevance import TfidfRelevanceModel

PAGE_CHARS = 2000  # as the keyword model reads a page: its opening says what it is about


class VectorRelevanceModel:
    """Balanced logistic regression on each text's static sentence vector (its first ``PAGE_CHARS`` characters)."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.weights = np.zeros(0, dtype=np.float64)
        self.intercept = 0.0

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> VectorRelevanceModel:
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000, random_state=self.seed)
        model.fit(load_word_vectors().embed(list(texts), PAGE_CHARS), np.asarray(labels, dtype=int))
        self.weights, self.intercept = model.coef_[0].astype(np.float64), float(model.intercept_[0])
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        logits = load_word_vectors().embed(list(texts), PAGE_CHARS).astype(np.float64) @ self.weights + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))


class MeanRelevanceModel:
    """The mean of several judges' probabilities, each fitted on the same examples."""

    def __init__(self, models: Sequence):
        self.models = list(models)

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> MeanRelevanceModel:
        for model in self.models:
            model.fit(texts, labels)
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.mean([np.asarray(model.predict_proba(texts), dtype=float) for model in self.models], axis=0)


def tfidf_and_vectors(seed: int = 0) -> MeanRelevanceModel:
    """The ``tfidf+vectors`` judge, unfitted."""
    return MeanRelevanceModel([TfidfRelevanceModel(seed=seed), VectorRelevanceModel(seed=seed)])
