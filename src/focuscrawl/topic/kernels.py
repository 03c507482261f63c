"""Compiled loops of the judges' batch work, the same numbers as the Python and numpy they replace.

A crawl asks its judge about each new link's context, a page's new links in one call: a few dozen short texts.
Python's and numpy's cost per text and per call (a few microseconds each) then exceeds the arithmetic, so these
loops take a whole batch at once (``focuscrawl.compiled``: by numba, or as the Python they are without it).

Same numbers: every float sum is added term after term from zero, in the order the code it replaces adds them,
with IEEE operations only (numba compiles without fast-math, so no reassociation or fused multiply-add; a float32
sum stays float32), ``math.sqrt`` is correctly rounded everywhere, and no transcendental function is computed here
(libm's and numpy's can differ in the last bit): ``1 + ln count`` comes in a table from ``math.log``
(``log_tf``). ``tests/test_judge_kernels.py`` compares them bit for bit with the per-text definitions.
"""

from __future__ import annotations

import math

import numpy as np

from focuscrawl.compiled import compiled

_LOG_TF = np.zeros(1)  # 1 + ln(count) for counts 0 (unused) to len - 1


def log_tf(top: int) -> np.ndarray:
    """Sublinear term frequency, 1 + ln(count), for counts 0 (unused) to ``top`` (at least), as ``math.log`` gives
    it (numpy's log may differ from it in the last bit). Tabled once per process, grown as texts get longer."""
    global _LOG_TF
    if len(_LOG_TF) <= top:
        _LOG_TF = np.array([0.0] + [1.0 + math.log(count) for count in range(1, max(top + 1, 2 * len(_LOG_TF)))])
    return _LOG_TF


@compiled
def mean_token_vectors(matrix, ids, starts, unknown):
    """Per text (its token ids ``ids[starts[i]:starts[i + 1]]``), the mean of the ``matrix`` rows of its ids but
    ``unknown`` and those past the matrix; a zero row for a text with none. As ``np.add.reduce(rows, axis=0)``
    adds a C-ordered block's rows (one after another into a zeroed float32 row) and ``np.true_divide`` by the
    count (float64 division, rounded to float32)."""
    n, dim = len(starts) - 1, matrix.shape[1]
    rows = matrix.shape[0]
    out = np.zeros((n, dim), np.float32)
    for i in range(n):
        used = 0
        for k in range(starts[i], starts[i + 1]):
            t = ids[k]
            if t == unknown or t >= rows:
                continue
            for j in range(dim):
                out[i, j] += matrix[t, j]
            used += 1
        if used:
            count = np.float64(used)
            for j in range(dim):
                out[i, j] = out[i, j] / count
    return out


@compiled
def tfidf_logits(columns, starts, idf, coef, log_tf, intercept):
    """Per text (its terms' vocabulary columns ``columns[starts[i]:starts[i + 1]]``, -1 outside the vocabulary,
    in the analyzer's order), the TF-IDF logistic model's logit: ``intercept + sum(w_t coef_t) / sqrt(sum(w_t^2))``
    over its distinct known terms in the order they first occur, ``w_t = idf_t`` for a term met once and
    ``log_tf[count] * idf_t`` otherwise; both sums added term after term from 0.0, the intercept alone for a text
    with no known term (``TfidfRelevanceModel``'s formula of sublinear tf x idf, L2-normalised, dot the weights)."""
    n = len(starts) - 1
    logits = np.empty(n, np.float64)
    for i in range(n):
        text = columns[starts[i]:starts[i + 1]]
        m = len(text)
        # each term's count, at its first occurrence (a stable sort puts it first among its equals); 0 elsewhere
        order = np.argsort(text, kind="mergesort")
        count_at = np.zeros(m, np.int64)
        g = 0
        while g < m:
            h = g + 1
            while h < m and text[order[h]] == text[order[g]]:
                h += 1
            count_at[order[g]] = h - g
            g = h
        norm_sq = dot = 0.0
        for p in range(m):
            c, count = text[p], count_at[p]
            if c < 0 or count == 0:
                continue
            weight = log_tf[count] * idf[c] if count > 1 else idf[c]
            norm_sq += weight * weight
            dot += weight * coef[c]
        logits[i] = intercept + (dot / math.sqrt(norm_sq) if norm_sq > 0 else 0.0)
    return logits


@compiled
def known_term_columns(words, starts, unigram_columns, pair_keys, pair_columns):
    """Per text (its tokens' word numbers ``words[starts[i]:starts[i + 1]]``: -2 a stop word, -1 a word of no
    vocabulary term), the vocabulary columns of its unigrams in token order, then of its bigrams: pairs of
    successive tokens once stop words are removed (an unknown word stays and pairs with nothing), each pair whose
    key (first x number of words + second) is in the sorted ``pair_keys``. Returns the columns, texts
    concatenated, and each text's start in them (``WordPairTable``)."""
    n_words = len(unigram_columns)
    out = np.empty(2 * len(words), np.int64)
    out_starts = np.zeros(len(starts), np.int64)
    o = 0
    for i in range(len(starts) - 1):
        for k in range(starts[i], starts[i + 1]):
            w = words[k]
            if w >= 0 and unigram_columns[w] >= 0:
                out[o] = unigram_columns[w]
                o += 1
        previous = -1
        for k in range(starts[i], starts[i + 1]):
            w = words[k]
            if w == -2:
                continue
            if previous >= 0 and w >= 0 and len(pair_keys):
                key = previous * n_words + w
                j = np.searchsorted(pair_keys, key)
                if j < len(pair_keys) and pair_keys[j] == key:
                    out[o] = pair_columns[j]
                    o += 1
            previous = w
        out_starts[i + 1] = o
    return out[:o], out_starts
