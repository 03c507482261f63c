"""An ACHE-like best-first crawler: a page classifier, inherited link priorities, online link learning.

ACHE (Vieira et al.) scores each fetched page with a linear text classifier; the page's outlinks inherit
that score as their frontier priority. Its online learning periodically retrains a link classifier on
features of the links it followed (URL tokens, anchor text) labelled by whether the page they led to was
relevant, then re-prioritises the frontier with it. We do the same with the agent's own page classifier
as the label source, never ground truth.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import SGDClassifier

from focuscrawl.policy import Count, CrawlContext, Fraction, Policy
from focuscrawl.strategies.registry import StrategySpec, register
from focuscrawl.topic.text import terms, url_text
from focuscrawl.types import Observation, Selection


def link_features(url: str, anchor: str) -> str:
    """Prefixed terms so that a word in the URL and the same word in the anchor are different features."""
    url_tokens = " ".join(f"u_{t}" for t in terms(url_text(url)))
    anchor_tokens = " ".join(f"a_{t}" for t in terms(anchor))
    return f"{url_tokens} {anchor_tokens}"


class BestFirstPolicy(Policy):
    """Frontier priority: the parent page's relevance, blended with an online link classifier's once it exists.

    ``link_weight`` is the link model's share of the blend; it is retrained on every followed link every
    ``retrain_every`` steps, and the whole frontier is re-prioritised then.
    """

    def __init__(self, retrain_every: Count = 100, link_weight: Fraction = 0.5):
        self.retrain_every = retrain_every
        self.link_weight = link_weight

    def reset(self, context: CrawlContext) -> None:
        self.seed = context.seed
        self.seeds = frozenset(context.seeds)
        self.vectorizer = HashingVectorizer(n_features=2**18, alternate_sign=False, token_pattern=r"\S+")
        self.link_model: SGDClassifier | None = None
        self.heap: list[tuple[float, int, str]] = []
        self.counter = itertools.count()
        self.priority: dict[str, float] = {}
        self.inherited: dict[str, float] = {}
        self.features: dict[str, str] = {}
        self.train_x: list[str] = []
        self.train_y: list[int] = []
        self.since_retrain = 0
        for url in context.seeds:
            self._push(url, 1.0, link_features(url, ""), 1.0)

    def _push(self, url: str, priority: float, features: str, inherited: float) -> None:
        self.priority[url] = priority
        self.inherited[url] = inherited
        self.features[url] = features
        heapq.heappush(self.heap, (-priority, next(self.counter), url))

    def _link_scores(self, features: list[str]) -> np.ndarray:
        assert self.link_model is not None
        return self.link_model.predict_proba(self.vectorizer.transform(features))[:, 1]

    def select(self) -> Selection | None:
        while self.heap:
            negative, _, url = heapq.heappop(self.heap)
            if self.priority.get(url) == -negative:
                del self.priority[url]
                inherited = self.inherited.pop(url)
                # memo: the link's features, a training example once its page's verdict is known
                return Selection(url, -negative, self._reason(url, -negative, inherited), memo=self.features.pop(url))
        return None

    def _reason(self, url: str, priority: float, inherited: float) -> str:
        """In words: the relevance of the best page linking to ``url`` and, once there is one, the link model's
        probability that a link like it leads to a relevant page (recovered from the blend that is its priority)."""
        if url in self.seeds:
            return "a seed"
        reason = f"linked from a page of relevance {inherited:.2f}"
        if self.link_model is None or self.link_weight == 0:
            return reason
        link = (priority - (1 - self.link_weight) * inherited) / self.link_weight
        return f"{reason}; links like it led to relevant pages ({link:.2f})"

    def observe(self, observation: Observation) -> None:
        features = observation.selection.memo
        if features is not None:
            self.train_x.append(features)
            self.train_y.append(int(observation.reward > 0))
        parent_score = observation.relevance
        candidates = [
            (link.url, link_features(link.url, link.anchor))
            for link in observation.links
            if link.url not in self.priority or self.inherited[link.url] < parent_score
        ]
        if candidates:
            priorities = np.full(len(candidates), parent_score)
            if self.link_model is not None:
                link_scores = self._link_scores([f for _, f in candidates])
                priorities = (1 - self.link_weight) * priorities + self.link_weight * link_scores
            for (url, feats), priority in zip(candidates, priorities):
                if url not in self.priority or priority > self.priority[url]:
                    self._push(url, float(priority), feats, parent_score)
        self.since_retrain += 1
        if self.since_retrain >= self.retrain_every:
            self.since_retrain = 0
            self._retrain()

    def _retrain(self) -> None:
        """Retrain the link classifier on every followed link so far and re-prioritise the frontier."""
        if len(set(self.train_y)) < 2:
            return
        model = SGDClassifier(loss="log_loss", alpha=1e-4, class_weight="balanced", random_state=self.seed)
        model.fit(self.vectorizer.transform(self.train_x), np.asarray(self.train_y))
        self.link_model = model
        urls = list(self.priority)
        if not urls:
            return
        scores = self._link_scores([self.features[u] for u in urls])
        inherited = np.fromiter((self.inherited[u] for u in urls), dtype=float, count=len(urls))
        priorities = (1 - self.link_weight) * inherited + self.link_weight * scores
        self.heap = []
        for url, priority in zip(urls, priorities):
            self.priority[url] = float(priority)
            self.heap.append((-float(priority), next(self.counter), url))
        heapq.heapify(self.heap)


register(StrategySpec("best-first", "ACHE-like: page classifier priorities + online link classifier", BestFirstPolicy))
