"""Where each piece of ``adaptive``'s evidence lives, how it is stored, and how a matrix of it is gathered.

    GRAPH  the crawled graph's neighbourhood sums (``frontier.graph``), kept by the graph
    OWN    per URL, set when a link to it is first seen and improved when another page links to it: packed
           in three arrays the graph grows (``encode_own``)
    HOST   per host, read from its record when predicting (``hosts``)

``Evidence.rows`` gathers all of them for some URLs, in EVIDENCE order; ``Evidence.column`` one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from focuscrawl.strategies.adaptive.hosts import HOST, Hosts
from focuscrawl.strategies.adaptive.kernels import fill_rows, gather_sums, word_sums
from focuscrawl.strategies.adaptive.models import OnlineLogistic
from focuscrawl.strategies.frontier.graph import FEATURES, CrawlGraph
from focuscrawl.strategies.frontier.spill import WordColumn

GRAPH = FEATURES  # the crawled graph's neighbourhood sums, log-smoothed
OWN = ("parent", "anchor", "words", "links", "path", "local")
EVIDENCE = GRAPH + OWN + HOST
SEED_EVIDENCE = (1.0, 1.0, 1.0, 0.5, 1.0, 1.0)  # a seed's OWN row: made up, since no crawled page links to it
# How OWN is stored, losslessly (13 bytes a URL less than six float64s): the scores as float64, ``path`` as how
# many times it was halved (it is always a power of 1/2, or 0 once halved past the smallest float) and ``local``
# in halves; PATH_VALUES and LOCAL_VALUES decode them to the very float64s they stand for.
SCORES = OWN[:4]
PATH_ZERO = 1075  # halvings after which path is 0.0 (2^-1074 is the smallest float64)
PATH_VALUES = np.array([0.5 ** k for k in range(PATH_ZERO)] + [0.0])  # exact: each is half the one before
LOCAL_VALUES = np.array([0.0, 0.5, 1.0])
EVIDENCE_BLOCK = 8192  # rows of evidence gathered at a time: 1 MB of the matrix, held in the CPU's cache


def encode_own(rows: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OWN rows of float64s (n x 6) as they are stored: the scores (n x 4), path as halvings (int16), local in
    halves (int8). A path that is not a power of 1/2 (or 0), or a local not 0, 0.5 or 1, is an error: it could
    not be stored exactly."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, len(OWN))
    path, local = rows[:, OWN.index("path")], rows[:, OWN.index("local")]
    exponent = np.frexp(path)[1]  # path = 0.5 x 2^exponent
    halvings = np.where(path == 0, PATH_ZERO, 1 - exponent).astype(np.int16)
    halves = (local * 2).astype(np.int8)
    if not (np.array_equal(PATH_VALUES[np.clip(halvings, 0, PATH_ZERO)], path) and (halvings >= 0).all()
            and np.array_equal(LOCAL_VALUES[np.clip(halves, 0, 2)], local)):
        raise ValueError("OWN rows whose path is not a power of 1/2 or whose local is not 0, 0.5 or 1")
    return rows[:, :len(SCORES)].copy(), halvings, halves


class Evidence:
    """Each URL's evidence: the graph's sums, its OWN row, its host's record; and its hashed words, which the
    link model scores into OWN's ``links``."""

    def __init__(self, graph: CrawlGraph, hosts: Hosts, spill_after: int):
        self.graph, self.hosts = graph, hosts
        # OWN's per-URL arrays (``encode_own``'s layout), grown with the graph
        graph.track(self, "own_scores", columns=len(SCORES))
        graph.track(self, "own_path", dtype=np.int16)
        graph.track(self, "own_local", dtype=np.int8)
        # each URL's hashed words, for the link model; on disk past ``spill_after`` URLs, which changes memory,
        # never the crawl
        self.words = WordColumn(spill_after)

    def add(self, ids: list[int], hosts: list[str], words: list[np.ndarray],
            scores: np.ndarray | list[tuple[float, ...]], halvings: int | np.ndarray, halves: np.ndarray) -> None:
        """Evidence of URLs seen for the first time: their hosts, their hashed words for the link model, and
        their OWN evidence as ``encode_own`` stores it (scores, path's halvings, local's halves; each an array
        or one value for all). One call per page (numpy's per-call cost is most of the work per URL)."""
        if not ids:
            return
        index = np.asarray(ids, dtype=np.int64)
        self.own_scores[index] = scores
        self.own_path[index] = halvings
        self.own_local[index] = halves
        for host in hosts:
            self.hosts.number(host)
        self.words.append(ids, words)  # new ids come in order: the graph numbers URLs as it first sees them
        self.words.spill_if_due()

    def relink(self, ids: np.ndarray, relevance: float, halvings: int, halves: np.ndarray) -> None:
        """Frontier URLs a page of ``relevance`` links to again: their parent, path and local evidence become the
        best of old and new (their anchor stays their first link's). A URL linked twice by the page has the same
        new values at each link (one host, one page), so assigning the maxima is maximum.at's result."""
        if not len(ids):
            return
        self.own_scores[ids, 0] = np.maximum(self.own_scores[ids, 0], relevance)
        self.own_path[ids] = np.minimum(self.own_path[ids], halvings)
        self.own_local[ids] = np.maximum(self.own_local[ids], halves)

    def own_rows(self, ids: np.ndarray | Sequence[int]) -> np.ndarray:
        """The OWN evidence of each URL of ``ids`` as float64s, one row each, in OWN order."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty((len(ids), len(OWN)))
        np.take(self.own_scores, ids, axis=0, out=out[:, :len(SCORES)], mode="clip")
        np.take(PATH_VALUES, np.take(self.own_path, ids, mode="clip"), out=out[:, len(SCORES)], mode="clip")
        np.take(LOCAL_VALUES, np.take(self.own_local, ids, mode="clip"), out=out[:, len(SCORES) + 1], mode="clip")
        return out

    def column(self, ids: np.ndarray, column: int) -> np.ndarray:
        """One piece of evidence (its index in EVIDENCE) for each URL of ``ids``."""
        if column < len(GRAPH):
            return self.graph.feature(ids, column)
        if column < len(GRAPH) + len(SCORES):
            return self.own_scores[ids, column - len(GRAPH)]
        if column == len(GRAPH) + len(SCORES):
            return PATH_VALUES[self.own_path[ids]]
        if column == len(GRAPH) + len(SCORES) + 1:
            return LOCAL_VALUES[self.own_local[ids]]
        host = np.empty((len(ids), len(HOST)))  # exploring reads one HOST column for the whole frontier
        self.hosts.evidence(self.graph.host[ids], host)
        return host[:, column - len(GRAPH) - len(OWN)]

    def rows(self, ids: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The evidence of each URL, in EVIDENCE order: one row per id, into ``out`` if given (else a new matrix).
        Gathered EVIDENCE_BLOCK rows at a time, so that writing its rows stays in the CPU's cache, by two compiled
        loops a block (``kernels.gather_sums``, ``kernels.fill_rows``, which also computes HOST from its host's counts)
        around numpy's ``log1p`` of the graph's sums, on a contiguous block as ``CrawlGraph.features_of`` applies
        it: some twenty numpy calls a block before, whose per-call cost was most of a step's few rows and whose
        passes were most of a re-rank's. The values are the same: the gathers copy, log1p is numpy's element by
        element, and HOST is ``Hosts.evidence``'s arithmetic."""
        x = np.empty((len(ids), len(EVIDENCE))) if out is None else out
        graph, hosts = self.graph, self.hosts
        prior_relevant, site_prior, fetches = hosts.terms()
        sums = np.empty((min(len(ids), EVIDENCE_BLOCK), len(GRAPH)))
        for start in range(0, len(ids), EVIDENCE_BLOCK):
            part, smoothed = ids[start:start + EVIDENCE_BLOCK], sums[:len(ids) - start]
            gather_sums(part, graph.fl, graph.sl, smoothed)
            np.log1p(smoothed, out=smoothed)
            fill_rows(part, smoothed, self.own_scores, self.own_path, self.own_local, PATH_VALUES, LOCAL_VALUES,
                      graph.host, hosts.fetched, hosts.relevant, hosts.ok, prior_relevant, site_prior, fetches,
                      x[start:start + EVIDENCE_BLOCK])
        return x

    def rescore_links(self, ids: np.ndarray, link_model: OnlineLogistic) -> None:
        """The link model's current probability for every URL of ``ids``: one pass over all URLs' words, a chunk
        of whole URLs at a time (read from disk for spilled ones), summed per URL in word order, so each URL's sum
        is the same as word by word and whatever was spilled. Cheaper than gathering a large frontier's words URL
        by URL."""
        sums = np.zeros(len(self.words))
        link_w = link_model.w
        for first, lengths, words in self.words.chunks():
            # each URL's weights added in word order from 0.0, as np.bincount over the chunk added them, compiled
            # (without the chunk's owner and weight arrays)
            word_sums(first, lengths, words, link_w, sums)
        # 1 / (1 + exp(-(sum + bias))), each operation in place on one array (a frontier's worth of temporaries
        # costs more than the arithmetic)
        z = sums[ids]
        z += link_model.bias
        np.negative(z, out=z)
        np.exp(z, out=z)
        z += 1.0
        self.own_scores[ids, SCORES.index("links")] = np.divide(1.0, z, out=z)
