"""A judge of another kind than TF-IDF: logistic regression on the examples' static sentence vectors, and its
combinations with the TF-IDF judge (the relevance models ``tfidf+vectors`` and ``tfidf+vectors-stacked``).

TF-IDF on 100 example pages knows the examples' words and no others: on a web whose relevant pages say the same in
other words (the Debian web's package pages against Wikipedia-like examples) its probabilities sit between 0.1 and
0.5 whatever the page (docs/results.md, "The judge"). The static vectors (the packaged all-MiniLM-L6-v2 distilled,
``focuscrawl.topic.embeddings``) place words with their neighbours, so a page in other words lands near the
examples it resembles. Each judge alone ranks the crawl's pages about as well as the other; combined, they rank
better on 12 of 14 rows read (benchmarks/judge_recalibration.py). Their plain mean (``tfidf+vectors``) lost WebKB
``student``, where a topic is a page genre that sentence vectors do not see
(docs/history/trials/judge-vectors-rule.md); stacked on the topic's own examples (``tfidf+vectors-stacked``, each
judge weighted by what its out-of-fold answers earn) it is ``adaptive``'s judge
(docs/history/trials/judge-vectors-stacked-rule.md).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from focuscrawl.topic.embeddings import WordVectors, load_word_vectors
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
        model.fit(self._vectors.embed(list(texts), PAGE_CHARS), np.asarray(labels, dtype=int))
        self.weights, self.intercept = model.coef_[0].astype(np.float64), float(model.intercept_[0])
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        logits = self._vectors.embed(list(texts), PAGE_CHARS).astype(np.float64) @ self.weights + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))

    @functools.cached_property
    def _vectors(self) -> WordVectors:
        """The process's word vectors, looked up once per model: ``load_word_vectors`` checks paths on disk at
        each call (about 10 us), and a crawl asks once per page."""
        return load_word_vectors()

    def __getstate__(self) -> dict:
        # the vectors are the process's, not the model's (8 MB): looked up again where the model is loaded
        return {k: v for k, v in self.__dict__.items() if k != "_vectors"}


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


class StackedRelevanceModel:
    """Several judges combined by a logistic regression on their out-of-fold logits over the examples (stacking,
    Wolpert 1992): each judge gets the weight its answers on examples it was not trained on earn, so a judge that
    reads a topic's pages badly (sentence vectors on a page genre such as a student's home page) counts little.
    Folds: ``folds``, or as many as the rarer class has examples; with one, the logits are averaged.
    The stacker weighs both classes alike, so its answer is a probability under a prior of one half; ``calibrated``:
    then Platt scaling of its combined out-of-fold logit to the examples' own prior (``platt_scaling``), a monotone
    map that leaves the order of pages as it is and folds into the same two weights. ``threshold`` is where the
    stacker decides, its combined logit 0, on the answer's scale: 0.5, or ``sigmoid(shift)`` once Platt-scaled (below
    0.5 for a topic whose examples are mostly off topic), so that a crawl rewards the pages the stacker calls on
    topic, whichever scale it answers on (types.decision_point)."""

    def __init__(self, models: Sequence, seed: int = 0, folds: int = 5, calibrated: bool = False):
        self.models, self.seed, self.folds, self.calibrated = list(models), seed, folds, calibrated
        self.weights = np.zeros(len(self.models), dtype=np.float64)
        self.intercept = 0.0
        self.threshold = 0.5

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> StackedRelevanceModel:
        texts, y = list(texts), np.asarray(labels, dtype=int)
        for model in self.models:
            model.fit(texts, y)
        folds = min(self.folds, int(np.bincount(y, minlength=2).min()))
        if folds < 2:  # too few examples of a class to hold any out: the judges' logits count alike
            self.weights, self.intercept = np.full(len(self.models), 1.0 / len(self.models)), 0.0
            return self
        out_of_fold = np.zeros((len(texts), len(self.models)))
        splits = StratifiedKFold(n_splits=folds, shuffle=True, random_state=self.seed).split(texts, y)
        for train, test in splits:
            for j, model in enumerate(self.models):
                fold_model = copy.deepcopy(model).fit([texts[i] for i in train], y[train])
                out_of_fold[test, j] = logit(fold_model.predict_proba([texts[i] for i in test]))
        stacker = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000, random_state=self.seed)
        stacker.fit(out_of_fold, y)
        self.weights, self.intercept = stacker.coef_[0].astype(np.float64), float(stacker.intercept_[0])
        if self.calibrated:
            scale, shift = platt_scaling(out_of_fold @ self.weights + self.intercept, y, self.seed)
            self.weights, self.intercept = scale * self.weights, scale * self.intercept + shift
            self.threshold = float(1.0 / (1.0 + np.exp(-shift)))  # the stacker's logit 0, mapped
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        # the judges' probabilities side by side, then their logits in one pass (a page's link contexts are a
        # few dozen texts: numpy's per-call cost is most of the stacking's); elementwise, so the same numbers
        probabilities = np.empty((len(texts), len(self.models)))
        for j, model in enumerate(self.models):
            probabilities[:, j] = model.predict_proba(texts)
        return 1.0 / (1.0 + np.exp(-(logit(probabilities) @ self.weights + self.intercept)))


def platt_scaling(logits: np.ndarray, labels: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """Platt's (1999) map of scores to probabilities, ``sigmoid(scale * logit + shift)``, fitted to the labels with
    his targets: (positives + 1) / (positives + 2) for a positive and 1 / (negatives + 2) for a negative rather than
    1 and 0, so that scores that separate the examples perfectly (a few examples, an easy topic) still give a finite
    scale. Each example enters twice, weighted by its target and by one minus it."""
    y = np.asarray(labels, dtype=int)
    positives, negatives = int(y.sum()), int(len(y) - y.sum())
    target = np.where(y == 1, (positives + 1) / (positives + 2), 1 / (negatives + 2))
    x = np.concatenate([logits, logits])[:, None]
    model = LogisticRegression(C=1e6, max_iter=2000, random_state=seed)
    sides = np.r_[np.ones(len(y), dtype=int), np.zeros(len(y), dtype=int)]
    model.fit(x, sides, sample_weight=np.r_[target, 1 - target])
    return float(model.coef_[0, 0]), float(model.intercept_[0])


def logit(p: np.ndarray) -> np.ndarray:
    """Log-odds of probabilities, kept finite."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def tfidf_and_vectors_stacked(seed: int = 0, calibrated: bool = True) -> StackedRelevanceModel:
    """The ``tfidf+vectors-stacked`` judge, unfitted: calibrated to the examples' prior (adopted by
    docs/history/trials/judge-decision-point-rule.md; ``calibrated=False``, the stacker's balanced scale, before)."""
    return StackedRelevanceModel([TfidfRelevanceModel(seed=seed), VectorRelevanceModel(seed=seed)], seed=seed,
                                 calibrated=calibrated)
