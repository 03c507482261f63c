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

``best(ready, floor)`` is the argmax over the nodes whose host ``ready(host)`` accepts and whose score is at least
``floor``: under politeness, the best URL a fetch could start on now that is still worth a fetch; the argmax of all
when there is none (it waits for its host). Entries of hosts that are not ready are parked, in a heap per host,
as they reach the top, and go back into the heap once the host is ready; ``limit`` then bounds the nodes outside
the heap and the parked lists together. A rebuild for ``ready`` keeps the best ``keep`` eligible nodes among the
best ``READY_DEPTH x keep`` in the heap and parks the better nodes of hosts that are not ready, so that a policy
whose best URLs crowd on a few hosts it has just fetched digs past them in one pass. When it finds none, the
ranking does not dig again until the next rebuild (``starved``): a crawl of one site would otherwise search its
whole frontier at every step.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import numpy as np

from focuscrawl.compiled import compiled
from focuscrawl.policy import Ready
from focuscrawl.strategies.frontier.graph import FRONTIER, CrawlGraph

KEEP_FRACTION = 100  # on large frontiers the heap keeps 1 node in KEEP_FRACTION (see ``rebuild``)

SAMPLE_STRIDE = 32  # kth_smallest's sample: every 32nd value

READY_DEPTH = 16  # a rebuild for ``ready`` looks this many times ``keep`` nodes deep for nodes of ready hosts


class Ranking:
    def __init__(self, graph: CrawlGraph, score: Callable[[np.ndarray], np.ndarray], keep: int = 512):
        self.graph = graph
        self.score = score
        self.keep = keep
        graph.track(self, "value", -np.inf)
        self.heap: list[tuple[float, int]] = []
        self.parked: dict[int, list[tuple[float, int]]] = {}  # host number -> a heap of the entries passed over
        self.limit = (np.inf, 0)  # (-score, id) of the best node left out of the heap and the parked entries
        self.rebuilds = 0
        self.starved = False  # a rebuild for ``ready`` found no eligible node: none until the next rebuild

    def update(self, ids: np.ndarray) -> None:
        """Rescore ``ids`` (frontier nodes whose estimate may have changed)."""
        if len(ids) == 0:
            return
        scores = self.score(ids)
        self.value[ids] = scores
        # Only keys that beat ``limit`` enter the heap: a node whose key does not may stay outside it, as every node
        # outside is no better than ``limit`` (its old entry, if any, is stale now). Most of a page's changed nodes
        # are far from the top; pushing them cost a heap push now and a pop later.
        neg = -scores
        bound, bound_id = self.limit
        better = np.flatnonzero((neg < bound) | ((neg == bound) & (ids < bound_id)))
        push, heap = heapq.heappush, self.heap
        for i, s in zip(ids[better].tolist(), neg[better].tolist()):
            push(heap, (s, i))
        # Stale entries pile up when scores change often (sl_): compact before they dominate.
        if len(heap) > 4 * self.graph.n_front + 4 * self.keep:
            self.rebuild(rescore=False)

    def rebuild(self, ready: Ready | None = None, floor: float = -math.inf, *, rescore: bool = True) -> None:
        """Rescore the whole frontier; keep the best ``keep`` in the heap (given ``ready``: the best eligible).

        The ranking's own rebuilds (a heap run out or grown stale) keep the scores as they are (``rescore``
        False): scores change only through ``update`` and the estimator's own ``rebuild``, never with the moment
        a heap runs out, which in a polite crawl depends on the clock. A resumed crawl's replay then reaches the
        same scores."""
        self.rebuilds += 1
        ids = self.graph.frontier().copy()
        if rescore:
            neg = -self.score(ids) if len(ids) else np.zeros(0)
            self.value[ids] = -neg
        else:
            neg = -self.value[ids]
        self.limit = (np.inf, 0)
        self.parked = {}
        self.starved = False
        # A heap of ``keep`` nodes runs out after about ``keep`` selections, and each rebuild re-scores the whole
        # frontier: on a large frontier keep 1% of it, so rebuilds come with the estimator's own re-ranks, not
        # every few hundred steps (which cost 1 ms a step at 1M URLs). Same frontiers below 51,200 URLs.
        keep = max(self.keep, len(ids) // KEEP_FRACTION)
        if ready is not None:
            self._keep_ready(ids, neg, ready, floor, keep)
            return
        if len(ids) > keep:
            kth = kth_smallest(neg, keep)
            inside = np.flatnonzero(neg < kth)
            tied = np.flatnonzero(neg == kth)
            need = keep - len(inside)  # >= 1: kth itself is among the best keep
            if need < len(tied):  # ties at the cut: the smallest ids go in, the next one is the limit
                order = np.argpartition(ids[tied], need)
                self.limit = (float(kth), int(ids[tied[order[need]]]))
                tied = tied[order[:need]]
            else:
                self.limit = _best_above(neg, ids, kth)
            chosen = np.concatenate([inside, tied])
            ids, neg = ids[chosen], neg[chosen]
        self.heap = list(zip(neg.tolist(), ids.tolist()))
        heapq.heapify(self.heap)

    def _keep_ready(self, ids: np.ndarray, neg: np.ndarray, ready: Ready, floor: float, keep: int) -> None:
        """The heap and parked lists of a rebuild for ``ready``: of the best ``READY_DEPTH x keep`` nodes in
        (score, id) order, those up to the ``keep``-th eligible one (on a ready host, scored ``floor`` or more);
        the eligible ones and those below ``floor`` go in the heap, the others are parked by host."""
        size = READY_DEPTH * keep
        if len(ids) > size:
            kth = kth_smallest(neg, size)
            candidates = np.flatnonzero(neg <= kth)  # ties at the cut included, so the order below is exact
        else:
            candidates = np.arange(len(ids))
        order = candidates[np.lexsort((ids[candidates], neg[candidates]))]
        names = self.graph.host_names
        hosts = self.graph.host[ids[order]].tolist()
        verdict = {h: ready(names[h]) for h in set(hosts)}
        waits = [not verdict[h] for h in hosts]
        eligible = ~np.array(waits, bool) & (-neg[order] >= floor)
        enough = np.flatnonzero(np.cumsum(eligible) == keep)
        end = int(enough[0]) + 1 if len(enough) else len(order)
        if end < len(order):
            self.limit = (float(neg[order[end]]), int(ids[order[end]]))
        elif len(order) < len(ids):  # every candidate taken: the best key left is the best outside them
            self.limit = _best_above(neg, ids, kth)
        self.heap = []
        chosen = order[:end]
        for entry, h, wait in zip(zip(neg[chosen].tolist(), ids[chosen].tolist()), hosts, waits):
            if wait:
                self.parked.setdefault(h, []).append(entry)  # in key order: a heap
            else:
                self.heap.append(entry)
        heapq.heapify(self.heap)
        self.starved = not eligible[:end].any()

    def best(self, ready: Ready | None = None, floor: float = -math.inf) -> int | None:
        """The frontier node with the highest score (ties: the earliest discovered), or None.

        Given ``ready``, the best of those on hosts it accepts scored ``floor`` or more, if any; otherwise the best
        of all."""
        if ready is not None:
            found = self._best_ready(ready, floor)
            if found is not None:
                return found
            found = self._best_parked()
            if found is not None:
                return found
        if self.parked:  # the best node may be parked: every entry back in the heap
            for entries in self.parked.values():
                for entry in entries:
                    heapq.heappush(self.heap, entry)
            self.parked = {}
        return self._best()

    def _best(self) -> int | None:
        state, value = self.graph.state, self.value
        for attempt in range(2):
            heap = self.heap
            while heap and (state[heap[0][1]] != FRONTIER or value[heap[0][1]] != -heap[0][0]):
                heapq.heappop(heap)
            if heap and heap[0] < self.limit:
                return heap[0][1]
            if self.graph.n_front == 0 or attempt:
                break
            self.rebuild(rescore=False)  # the best node may be among those left out of the heap
        return None

    def _live(self, entry: tuple[float, int]) -> bool:
        return self.graph.state[entry[1]] == FRONTIER and self.value[entry[1]] == -entry[0]

    def _best_ready(self, ready: Ready, floor: float) -> int | None:
        """The best eligible node, or None; entries of hosts that are not ready met on the way are parked."""
        host, names = self.graph.host, self.graph.host_names
        verdict: dict[int, bool] = {}

        def accepts(h: int) -> bool:
            ok = verdict.get(h)
            if ok is None:
                ok = verdict[h] = ready(names[h])
            return ok

        for h in [h for h in self.parked if accepts(h)]:  # hosts ready again: their entries back in the heap
            for entry in self.parked.pop(h):
                heapq.heappush(self.heap, entry)
        for attempt in range(2):
            heap = self.heap
            while heap and -heap[0][0] >= floor:
                if not self._live(heap[0]):
                    heapq.heappop(heap)
                    continue
                h = int(host[heap[0][1]])
                if accepts(h):
                    break
                heapq.heappush(self.parked.setdefault(h, []), heapq.heappop(heap))
            if heap and -heap[0][0] >= floor and heap[0] < self.limit:
                return heap[0][1]
            # None left in the heap: nodes outside it may be eligible if the best of them is scored floor or more
            if attempt or self.starved or self.limit[0] == np.inf or -self.limit[0] < floor:
                break
            self.rebuild(ready, floor, rescore=False)
        return None

    def _best_parked(self) -> int | None:
        """The best node in the heap or the parked lists, if it beats ``limit`` (it is then the best of all)."""
        heap = self.heap
        while heap and not self._live(heap[0]):
            heapq.heappop(heap)
        best = heap[0] if heap else None
        for entries in self.parked.values():
            while entries and not self._live(entries[0]):
                heapq.heappop(entries)
            if entries and (best is None or entries[0] < best):
                best = entries[0]
        return best[1] if best is not None and best < self.limit else None


def kth_smallest(values: np.ndarray, k: int) -> float:
    """``np.partition(values, k - 1)[k - 1]``: the k-th smallest value (1 <= k <= len(values)), in a fraction of the
    time on large arrays. A sample of every SAMPLE_STRIDE-th value gives a threshold that about twice k values
    should fall under; if at least k do, the k-th smallest of all is among them (it is at most the threshold, and
    so is every value before it), and is found in them alone. Otherwise (a skewed order) the whole array is
    partitioned. Exact either way: the same value as one partition of all."""
    if len(values) < SAMPLE_STRIDE * SAMPLE_STRIDE or k * SAMPLE_STRIDE > len(values):
        return float(np.partition(values, k - 1)[k - 1])
    sample = values[::SAMPLE_STRIDE]
    position = min(len(sample) - 1, 2 * (k // SAMPLE_STRIDE) + 1)
    threshold = np.partition(sample, position)[position]
    under = values[values <= threshold]
    if len(under) < k:
        return float(np.partition(values, k - 1)[k - 1])
    return float(np.partition(under, k - 1)[k - 1])


def _best_above(neg: np.ndarray, ids: np.ndarray, cut: float) -> tuple[float, int]:
    """The best (-score, id) key among the nodes whose -score is above ``cut``: the ``limit`` of a cut heap."""
    best, best_id = _smallest_key_above(neg, ids, cut)
    return float(best), int(best_id)


@compiled
def _smallest_key_above(neg, ids, cut):
    """The smallest ``neg`` above ``cut`` and the smallest id having it, in one pass (numpy's mask, index array and
    two gathers were a tenth of a 10M-URL re-rank)."""
    best, best_id = np.inf, -1
    for k in range(len(neg)):
        value = neg[k]
        if value > cut and (best_id < 0 or value < best or (value == best and ids[k] < best_id)):
            best, best_id = value, ids[k]
    return best, best_id
