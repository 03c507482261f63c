"""The link graph of an offline web, for what only ground truth may know: how far a page is from a target.

The distance-guided oracle (``focuscrawl.strategies.baselines.OraclePolicy``) asks, through the benchmark's
``GroundTruth``, how many links separate each page from the nearest relevant page it has not fetched yet.
One breadth-first search from all targets at once over the reversed links answers that for every page.
A redirect is an edge to its target, as a crawler follows it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

UNREACHABLE = -1


class LinkGraph:
    """Pages by dense index, and their in-links as a CSR (``indptr``, ``sources``): page i is linked from
    ``sources[indptr[i]:indptr[i + 1]]``."""

    def __init__(self, urls: list[str], src: np.ndarray, dst: np.ndarray):
        self.urls = urls
        self.index = {url: i for i, url in enumerate(urls)}
        order = np.argsort(dst, kind="stable")
        self.sources = src[order].astype(np.int64)
        self.indptr = np.zeros(len(urls) + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=len(urls)), out=self.indptr[1:])

    def distances_to(self, targets: Iterable[int]) -> np.ndarray:
        """Links from every page to the nearest of ``targets`` (0 for a target, UNREACHABLE when none)."""
        dist = np.full(len(self.urls), UNREACHABLE, dtype=np.int64)
        level = np.unique(np.fromiter(targets, dtype=np.int64))
        dist[level] = 0
        depth = 0
        while level.size:
            depth += 1
            starts, ends = self.indptr[level], self.indptr[level + 1]
            counts = ends - starts
            if not counts.sum():
                break
            # every in-link of this level at once: positions starts[k] .. ends[k] for each k
            offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
            parents = np.unique(self.sources[offsets])
            level = parents[dist[parents] == UNREACHABLE]
            dist[level] = depth
        return dist
