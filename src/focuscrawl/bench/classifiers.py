"""Classifier evaluation on a labelled offline web: the shape of TRES's Table 1 (``focuscrawl topic evaluate``).

Evaluation sample: the agent's inputs hold only 50 relevant + 200 irrelevant texts, too few to compare
classifiers, so ``evaluate`` draws its own seeded sample of up to 300 relevant and 600 irrelevant pages
with text from the whole web (all hosts, WebKB's train/crawl host split ignored: this measures the
classifier, not a crawl). Each fold trains on its own 4/5 only, KwBiLSTM's keyword expansion included.
Figures are means over the 5 folds.
"""

from __future__ import annotations

import random
import time

import numpy as np
from sklearn.metrics import f1_score, precision_score, recall_score
from sklearn.model_selection import StratifiedKFold

from focuscrawl.topic.models import train_relevance_model
from focuscrawl.types import TopicInputs
from focuscrawl.webs.store import OfflineWeb, label_matches


def evaluation_sample(web: OfflineWeb, topic: str, seed: int, relevant: int,
                      irrelevant: int) -> tuple[list[str], list[int]]:
    """A seeded sample of labelled page texts from the whole web (see the module docstring)."""
    positives, negatives = [], []
    for record in web.records():
        if 200 <= record.status < 300 and record.labels:
            (positives if label_matches(record.labels, topic) else negatives).append(record.url)
    rng = random.Random(f"{seed}:{topic}:evaluation")
    texts, labels = [], []
    for urls, label, n in ((positives, 1, relevant), (negatives, 0, irrelevant)):
        for text in web.texts(rng.sample(urls, min(n, len(urls)))):
            if text.strip():
                texts.append(text)
                labels.append(label)
    return texts, labels


def cross_validate(name: str, keywords: list[str], texts: list[str], labels: list[int], seed: int,
                   folds: int = 5) -> dict:
    """Stratified k-fold CV of a registered model: mean precision/recall (relevant class) and macro F1."""
    y = np.asarray(labels)
    scores: dict[str, list[float]] = {"precision": [], "recall": [], "f_macro": [], "train_s": [], "predict_ms": []}
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(texts, y):
        inputs = TopicInputs("cv", keywords, [texts[i] for i in train], y[train].tolist())
        start = time.perf_counter()
        model = train_relevance_model(name, inputs, seed)
        scores["train_s"].append(time.perf_counter() - start)
        start = time.perf_counter()
        predicted = (model.predict_proba([texts[i] for i in test]) >= 0.5).astype(int)
        scores["predict_ms"].append(1000 * (time.perf_counter() - start) / len(test))
        scores["precision"].append(precision_score(y[test], predicted, zero_division=0))
        scores["recall"].append(recall_score(y[test], predicted, zero_division=0))
        scores["f_macro"].append(f1_score(y[test], predicted, average="macro", zero_division=0))
    return {key: float(np.mean(values)) for key, values in scores.items()}
