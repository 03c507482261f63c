"""ACHE's page classifier, the TRES papers' baseline: bag of words + linear SVM.

ACHE trains a linear SVM (Weka SMO) on stopword-filtered word features. We use TF-IDF over unigrams
(sublinear term frequency, English stopwords removed) and scikit-learn's LinearSVC with C = 1.

Probabilities: a linear SVM gives a margin, not a probability. We map it with a plain sigmoid,
P(relevant) = 1 / (1 + exp(-margin)), rather than Platt calibration: calibration would need an inner
cross-validation on topics with 50 relevant examples, and the sigmoid keeps the SVM's own decision rule
(P >= 0.5 exactly when the SVM says relevant), which is what the crawler's 0.5 reward threshold uses.
The numbers are therefore scores in (0, 1) with the right order and decision point, not calibrated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import joblib
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from focuscrawl.topic.relevance import fit_vectorizer

FORMAT = "focuscrawl.relevance/1"


class SvmRelevanceModel:
    kind = "svm"

    def __init__(self, seed: int = 0, C: float = 1.0):
        self.seed = seed
        self.vectorizer = TfidfVectorizer(lowercase=True, stop_words="english", sublinear_tf=True, min_df=1)
        # LinearSVC's dual solver shuffles coordinates: the seed makes it reproducible.
        self.model = LinearSVC(C=C, random_state=seed)

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> SvmRelevanceModel:
        self.vectorizer, features = fit_vectorizer(self.vectorizer, texts)
        self.model.fit(features, np.asarray(labels, dtype=int))
        return self

    def decision_function(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.decision_function(self.vectorizer.transform(list(texts)))

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        return 1.0 / (1.0 + np.exp(-self.decision_function(texts)))

    def save(self, path: str | Path) -> None:
        joblib.dump({"format": FORMAT, "kind": self.kind, "model": self}, Path(path))

    @classmethod
    def load(cls, path: str | Path) -> SvmRelevanceModel:
        data = joblib.load(Path(path))
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("kind") != cls.kind:
            raise ValueError(f"{path} is not a focuscrawl relevance model")
        return data["model"]
