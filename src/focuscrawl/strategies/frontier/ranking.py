"""A scored frontier: argmax of an estimator over the frontier without rescoring the frontier each step.

A max-heap of (score, id) entries with lazy invalidation: an entry is live while its node is still in the
frontier and its score is still the node's current score; stale entries are discarded when they reach the
top. Estimators whose scores change only locally (a node's first-level features change only when one of
its parents is crawled) push the few changed nodes per step: O(changes x log frontier).

Estimators whose scores all change at once (linear regression with new weights, a Navigational Rank
re-solve) call ``rebuild``: every frontier node is rescored in one numpy pass, but only the top ``keep``
enter the heap. Order is by (score descending, id ascending), ties going to the earliest discovered
node; ``limit`` is the best such key left out of the heap. Every node outside the heap has a key no
better than that until an update pushes it, so while the live top beats ``limit`` it is the true argmax,
and when it does not we rebuild. A rebuild is O(frontier) numpy work plus O(keep) Python.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from focuscrawl.strategies.frontier.graph import FRONTIER, CrawlGraph

KEEP_FRACTION = 100  # on large frontiers the heap keeps 1 node in KEEP_FRACTION (see ``rebuild``)


class Ranking:
    def __init__(self, graph: CrawlGraph, score: Callable[[np.ndarray], np.ndarray], keep: int = 512):
        self.graph = graph
        self.score = score
        self.keep = keep
        graph.track(self, "value", -np.inf)
        self.heap: list[tuple[float, int]] = []
        self.limit = (np.inf, 0)  # (-score, id) of the best node left out of the heap
        self.rebuilds = 0

    def update(self, ids: np.ndarray) -> None:
        """Rescore ``ids`` (frontier nodes whose estimate may have changed)."""
        if len(ids) == 0:
            return
        scores = self.score(ids)
        self.value[ids] = scores
        push, heap = heapq.heappush, self.heap
        for i, s in zip(ids.tolist(), scores.tolist()):
            push(heap, (-s, i))
        # Stale entries pile up when scores change often (sl_): compact before they dominate.
        if len(heap) > 4 * self.graph.n_front + 4 * self.keep:
            self.rebuild()

    def rebuild(self) -> None:
        """Rescore the whole frontier; keep the best ``keep`` in the heap."""
        self.rebuilds += 1
        ids = self.graph.frontier().copy()
        neg = -self.score(ids) if len(ids) else np.zeros(0)
        self.value[ids] = -neg
        self.limit = (np.inf, 0)
        # A heap of ``keep`` nodes runs out after about ``keep`` selections, and each rebuild re-scores the whole
        # frontier: on a large frontier keep 1% of it, so rebuilds come with the estimator's own re-ranks, not
        # every few hundred steps (which cost 1 ms a step at 1M URLs). Same frontiers below 51,200 URLs.
        keep = max(self.keep, len(ids) // KEEP_FRACTION)
        if len(ids) > keep:
            kth = np.partition(neg, keep - 1)[keep - 1]
            inside = np.flatnonzero(neg < kth)
            tied = np.flatnonzero(neg == kth)
            need = keep - len(inside)  # >= 1: kth itself is among the best keep
            if need < len(tied):  # ties at the cut: the smallest ids go in, the next one is the limit
                order = np.argpartition(ids[tied], need)
                self.limit = (float(kth), int(ids[tied[order[need]]]))
                tied = tied[order[:need]]
            else:
                rest = np.flatnonzero(neg > kth)
                best = neg[rest].min()
                self.limit = (float(best), int(ids[rest[neg[rest] == best]].min()))
            chosen = np.concatenate([inside, tied])
            ids, neg = ids[chosen], neg[chosen]
        self.heap = list(zip(neg.tolist(), ids.tolist()))
        heapq.heapify(self.heap)

    def best(self) -> int | None:
        """The frontier node with the highest score (ties: the earliest discovered), or None."""
        state, value = self.graph.state, self.value
        for attempt in range(2):
            heap = self.heap
            while heap and (state[heap[0][1]] != FRONTIER or value[heap[0][1]] != -heap[0][0]):
                heapq.heappop(heap)
            if heap and heap[0] < self.limit:
                return heap[0][1]
            if self.graph.n_front == 0 or attempt:
                break
            self.rebuild()  # the best node may be among those left out of the heap
        return None
