"""Compiled loops of ``adaptive``'s per-page and per-re-rank work, the same numbers as the numpy and Python they
replace.

A page's new links are a few dozen; numpy's cost per call (a few microseconds) then exceeds the arithmetic, and
Python's cost per word is most of a step. These loops run once per page (``link_features``, ``hashed_sums``) or
per re-rank (``word_sums``) compiled by numba (``focuscrawl.compiled``: without numba they run as the Python they
are, slower, the same numbers).

Same numbers: integer work (hashes sorted and de-duplicated) is exact however it is done; every float sum is
added in the order the code it replaces adds them (a Python loop's order from 0.0, ``np.bincount``'s, which adds
each bin's weights in input order, or numpy's pairwise ``sum``), with IEEE operations only (numba compiles
without fast-math, so no reassociation or fused multiply-add); ``math.sqrt`` is correctly rounded everywhere.
``tests/test_adaptive_batched.py`` compares them bit for bit with the definitions.
"""

from __future__ import annotations

import math

import numpy as np

from focuscrawl.compiled import compiled


@compiled
def link_features(word, starts, url_counts, url_hash, anchor_hash, column, idf, shapes, log_tf, hash_bits):
    """Per link (its words ``word[starts[i]:starts[i + 1]]``, the first ``url_counts[i]`` from its URL), the link
    model's hashed words (URL words' ``url_hash``, anchor words' ``anchor_hash``, its ``shapes`` row: sorted, each
    once), and its topic-similarity terms: the distinct ``column``s of its words in the order it meets them, their
    weights (idf, or ``log_tf[count]`` x idf for a term met ``count`` times) and the square root of the sum of
    the weights' squares, summed in that order from 0.0 (``TopicSimilarity._link_cosine``'s loop)."""
    n = len(starts) - 1
    hashed = np.empty(len(word) + shapes.size, np.int32)
    hashed_lengths = np.zeros(n, np.int64)
    terms = np.empty(len(word), np.int64)
    weights = np.empty(len(word), np.float64)
    counts = np.empty(len(word), np.int64)
    term_lengths = np.zeros(n, np.int64)
    norms = np.zeros(n, np.float64)
    mask = (1 << hash_bits) - 1
    h = t = 0
    for i in range(n):
        first, end = starts[i], starts[i + 1]
        keys = np.empty(end - first + shapes.shape[1], np.int64)
        for k in range(first, end):
            keys[k - first] = url_hash[word[k]] if k - first < url_counts[i] else anchor_hash[word[k]]
        for j in range(shapes.shape[1]):
            keys[end - first + j] = shapes[i, j]
        keys.sort()
        for j in range(len(keys)):
            if j == 0 or keys[j] != keys[j - 1]:
                hashed[h] = keys[j] & mask
                h += 1
                hashed_lengths[i] += 1
        begin = t
        for k in range(first, end):
            c = column[word[k]]
            if c < 0:
                continue
            seen = -1
            for e in range(begin, t):
                if terms[e] == c:
                    seen = e
                    break
            if seen >= 0:
                counts[seen] += 1
            else:
                terms[t], weights[t], counts[t] = c, idf[word[k]], 1
                t += 1
        squared = 0.0
        for e in range(begin, t):
            if counts[e] > 1:
                weights[e] = log_tf[counts[e]] * weights[e]
            squared += weights[e] * weights[e]
        term_lengths[i] = t - begin
        norms[i] = math.sqrt(squared)
    return hashed[:h], hashed_lengths, terms[:t], weights[:t], term_lengths, norms


@compiled
def word_sums(first, lengths, words, weights, out):
    """``out[first + u]`` = the sum of ``weights[w]`` over URL u's words (``lengths[u]`` of ``words``, URL after
    URL), added in word order from 0.0, as ``np.bincount`` adds a bin's weights."""
    k = 0
    for u in range(len(lengths)):
        total = 0.0
        for _ in range(lengths[u]):
            total += weights[words[k]]
            k += 1
        out[first + u] = total


@compiled
def hashed_sums(weights, features, lengths):
    """Each example's ``weights[its features].sum()`` (``lengths[e]`` features each, concatenated), as numpy's
    ``sum`` adds them up to 128 values: from 0.0, a short one in order, else eight running sums over blocks of
    eight combined as a tree and the rest added in order. An example of more values (numpy halves it first) is
    NaN here, for the caller to sum with numpy: the link model's ``predict`` of each, without a gather, a padding
    and a reduceat a page."""
    out = np.empty(len(lengths))
    r = np.empty(8)
    start = 0
    for e in range(len(lengths)):
        n = lengths[e]
        if n > 128:
            total = np.nan
        elif n < 8:
            total = -0.0
            for k in range(start, start + n):
                total += weights[features[k]]
        else:
            for j in range(8):
                r[j] = weights[features[start + j]]
            i = 8
            while i < n - n % 8:
                for j in range(8):
                    r[j] += weights[features[start + i + j]]
                i += 8
            total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
            while i < n:
                total += weights[features[start + i]]
                i += 1
        out[e] = 0.0 + total
        start += n
    return out


@compiled
def gather_sums(ids, fl, sl, out):
    """``out[k]`` = the graph's first-level sums of URL ``ids[k]``, then its second-level ones (``fl`` and ``sl``
    rows side by side): ``CrawlGraph.features_of`` before its ``log1p``, which stays numpy's (libm's log1p differs
    from it in the last bit)."""
    first = fl.shape[1]
    for k in range(len(ids)):
        i = ids[k]
        for j in range(first):
            out[k, j] = fl[i, j]
        for j in range(sl.shape[1]):
            out[k, first + j] = sl[i, j]


@compiled
def fill_rows(ids, smoothed, own_scores, own_path, own_local, path_values, local_values, host, fetched, relevant, ok,
              prior_relevant, site_prior, fetches, out):
    """Rows of ``Evidence.rows`` for URLs ``ids``: the graph's smoothed sums, OWN decoded (``path_values`` and
    ``local_values`` indexed by the stored codes), and HOST from the counts of each URL's ``host``, as
    ``Hosts.evidence`` computes them (``Hosts.terms`` gives its three constants): ``site`` = (relevant +
    prior_relevant) / (fetched + site_prior), ``known`` = ok > 0, ``rare`` = 1 - fetched / fetches, the same IEEE
    operations on the same float64s, one element at a time as numpy's. Every index is clipped into range as
    ``np.take(mode="clip")`` clips it; everything else is copied."""
    graph, scores = smoothed.shape[1], own_scores.shape[1]
    own = graph + scores
    last_path, last_local, last_host = len(path_values) - 1, len(local_values) - 1, len(fetched) - 1
    for k in range(len(ids)):
        i = ids[k]
        for j in range(graph):
            out[k, j] = smoothed[k, j]
        for j in range(scores):
            out[k, graph + j] = own_scores[i, j]
        out[k, own] = path_values[min(max(own_path[i], 0), last_path)]
        out[k, own + 1] = local_values[min(max(own_local[i], 0), last_local)]
        h = min(max(host[i], 0), last_host)
        out[k, own + 2] = (relevant[h] + prior_relevant) / (fetched[h] + site_prior)
        out[k, own + 3] = 1.0 if ok[h] > 0 else 0.0
        out[k, own + 4] = 1.0 - fetched[h] / fetches
