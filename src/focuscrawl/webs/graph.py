"""The link graph of an offline web, for what only ground truth may know: how far a page is from a target,
and how much of the web a page can lead to.

The distance-guided oracle (``focuscrawl.strategies.baselines.OraclePolicy``) asks, through the benchmark's
``GroundTruth``, how many links separate each page from the nearest relevant page it has not fetched yet.
One breadth-first search from all targets at once over the reversed links answers that for every page.
A redirect is an edge to its target, as a crawler follows it.

The benchmark's seeds must be able to crawl (``focuscrawl.bench.protocol``): ``reach`` counts the pages a
crawl from given pages can fetch, and ``can_reach`` tells, for many candidate pages at once, which lead to at
least a given number. Reach follows links the way a crawl does: out of pages that answer 2xx (their
outlinks) and out of redirects (to their target), never out of a dead end (4xx, 5xx, unknown URL), which
answers no links. It counts only 2xx pages: a dead end or a redirect's own URL costs a crawl a fetch but holds
no text and no link, so a seed that can reach only those cannot give a crawl anything to choose between.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

UNREACHABLE = -1


def _neighbours(indptr: np.ndarray, adjacent: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The distinct nodes adjacent to any of ``nodes`` in a CSR (``adjacent[indptr[i]:indptr[i + 1]]``)."""
    starts, ends = indptr[nodes], indptr[nodes + 1]
    counts = ends - starts
    total = int(counts.sum())
    if not total:
        return np.empty(0, dtype=np.int64)
    # every edge of these nodes at once: positions starts[k] .. ends[k] for each k
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
    return np.unique(adjacent[offsets])


class LinkGraph:
    """Pages by dense index, and their in-links as a CSR (``indptr``, ``sources``): page i is linked from
    ``sources[indptr[i]:indptr[i + 1]]``. ``statuses`` (HTTP status per page; all 200 when not given) says
    which pages a crawl can fetch and which it follows links out of. ``own`` marks the pages that are the web's
    own content (default: all), and ``stands_for`` the page each URL shows (default: itself; a messy web's copy
    of a page shows that page). Reach counts own pages, follows links out of them only and a link to a copy as
    a link to its page: a messy web's injected pages (traps, copies) cost a crawl its fetches but are not what a
    seed must be able to reach. ``scripted`` (pairs of page indexes) are links only a page's scripts add: reach
    follows them, as they are the web's links a mess hid, and ``distances_to`` does not, as a crawler that does
    not run scripts never sees them. So a messy web draws the seeds its clean original draws."""

    def __init__(self, urls: list[str], src: np.ndarray, dst: np.ndarray, statuses: np.ndarray | None = None,
                 own: np.ndarray | None = None, stands_for: np.ndarray | None = None,
                 scripted: np.ndarray | None = None):
        self.urls = urls
        self.index = {url: i for i, url in enumerate(urls)}
        order = np.argsort(dst, kind="stable")
        self.sources = src[order].astype(np.int64)
        self.indptr = np.zeros(len(urls) + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=len(urls)), out=self.indptr[1:])
        self.statuses = (np.full(len(urls), 200, dtype=np.int64) if statuses is None
                         else np.asarray(statuses, dtype=np.int64))
        if len(self.statuses) != len(urls):
            raise ValueError(f"{len(self.statuses)} statuses for {len(urls)} pages")
        self.own = np.ones(len(urls), dtype=bool) if own is None else np.asarray(own, dtype=bool)
        self.stands_for = (np.arange(len(urls), dtype=np.int64) if stands_for is None
                           else np.asarray(stands_for, dtype=np.int64))
        self.scripted = np.zeros((0, 2), dtype=np.int64) if scripted is None else np.asarray(scripted, np.int64)

    def distances_to(self, targets: Iterable[int]) -> np.ndarray:
        """Links from every page to the nearest of ``targets`` (0 for a target, UNREACHABLE when none)."""
        dist = np.full(len(self.urls), UNREACHABLE, dtype=np.int64)
        level = np.unique(np.fromiter(targets, dtype=np.int64))
        dist[level] = 0
        depth = 0
        while level.size:
            depth += 1
            parents = _neighbours(self.indptr, self.sources, level)
            if not parents.size:
                break
            level = parents[dist[parents] == UNREACHABLE]
            dist[level] = depth
        return dist

    # -- reach: what a crawl from some pages can fetch ---------------------------------------------------
    @cached_property
    def fetchable(self) -> np.ndarray:
        """Pages a crawl fetches with content: status 2xx (bool per page)."""
        return (self.statuses >= 200) & (self.statuses < 300)

    @cached_property
    def counted(self) -> np.ndarray:
        """The pages reach counts: the web's own (``own``) 2xx pages."""
        return self.fetchable & self.own

    @cached_property
    def _followed(self) -> csr_matrix:
        """Links a crawl follows, as a CSR from source to target: those out of the web's own 2xx pages and
        redirects (scripted ones included), a link to a copy standing for a link to its page."""
        n = len(self.urls)
        src = np.concatenate([self.sources, self.scripted[:, 0]])
        dst = self.stands_for[np.concatenate([np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr)),
                                              self.scripted[:, 1]])]
        keep = (self.statuses[src] >= 200) & (self.statuses[src] < 400) & self.own[src]
        edges = csr_matrix((np.ones(int(keep.sum()), dtype=np.int8), (src[keep], dst[keep])), shape=(n, n))
        edges.sum_duplicates()
        return edges

    @cached_property
    def _followed_back(self) -> csr_matrix:
        return self._followed.T.tocsr()

    def closure(self, sources: Iterable[int], *, backwards: bool = False) -> np.ndarray:
        """Every page reachable from ``sources`` (``sources`` included) along followed links, as a bool mask;
        ``backwards``: every page from which one of ``sources`` is reachable."""
        edges = self._followed_back if backwards else self._followed
        indptr, adjacent = edges.indptr.astype(np.int64), edges.indices.astype(np.int64)
        seen = np.zeros(len(self.urls), dtype=bool)
        level = np.unique(np.fromiter(sources, dtype=np.int64))
        seen[level] = True
        while level.size:
            found = _neighbours(indptr, adjacent, level)
            level = found[~seen[found]]
            seen[level] = True
        return seen

    def reach(self, sources: Iterable[int]) -> int:
        """The web's own 2xx pages a crawl from ``sources`` can fetch (``sources`` included), with no budget or
        cap."""
        return int((self.closure(sources) & self.counted).sum())

    def can_reach(self, candidates: Iterable[int], threshold: int) -> np.ndarray:
        """For each candidate page, whether a crawl from it alone can fetch at least ``threshold`` counted pages.

        Pages of one strongly connected component reach the same pages, so the question is asked once per
        component: a component holding ``threshold`` pages itself answers yes for every page that can reach
        it (one backward search from all such components), and the rest, which reach no large component,
        are counted one search each.
        """
        candidates = np.fromiter(candidates, dtype=np.int64)
        edges = self._followed
        _, component = connected_components(edges, directed=True, connection="strong")
        size = np.bincount(component, weights=self.counted)
        large = np.flatnonzero(size[component] >= threshold)
        ok = self.closure(large, backwards=True)[candidates] if large.size else np.zeros(len(candidates), bool)
        answer: dict[int, bool] = {}
        for k in np.flatnonzero(~ok):
            page = int(candidates[k])
            c = int(component[page])
            if c not in answer:
                reached = breadth_first_order(edges, page, directed=True, return_predecessors=False)
                answer[c] = int(self.counted[reached].sum()) >= threshold
                if not answer[c]:  # what a page reaches reaches less: no for every component on the way
                    answer.update(dict.fromkeys(np.unique(component[reached]).tolist(), False))
            ok[k] = answer[c]
        return ok
