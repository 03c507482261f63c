"""The two online learners of ``adaptive``: least squares over the evidence, and the link model over hashed words.

``OnlineLeastSquares`` predicts a page's relevance from a URL's evidence (the policy ranks the frontier by it);
``OnlineLogistic`` predicts it from the words of a URL and of the anchor it was first seen with, hashed
(``hashed_words``): its probability is one piece of evidence, ``links``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np

from focuscrawl.strategies.adaptive.kernels import hashed_sums
from focuscrawl.topic.similarity import WORD_CACHE_SIZE
from focuscrawl.topic.text import terms, url_text

HASH_BITS = 18
MASK = (1 << HASH_BITS) - 1


class OnlineLeastSquares:
    """Recursive least squares with a prior: the exact ridge solution around ``prior`` after every sample,
    samples weighted by ``forget`` per newer sample (1: all alike)."""

    def __init__(self, prior: np.ndarray, strength: float, forget: float = 1.0):
        self.w = prior.astype(np.float64).copy()
        self.P = np.eye(len(prior)) / strength
        self.forget = forget
        self.samples = 0

    def learn(self, x: np.ndarray, y: float) -> None:
        px = self.P @ x
        gain = px / (self.forget + x @ px)
        self.w += gain * (y - self.w @ x)
        self.P = (self.P - np.outer(gain, px)) / self.forget
        self.samples += 1

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """The information form (A, b), w = A^-1 b: A = sum of forget^age * x x^T (plus the prior's strength),
        b likewise of x y. Learners' samples add up in it, which is how shards pool what they learned."""
        information = np.linalg.inv(self.P)
        return information, information @ self.w

    def set_statistics(self, information: np.ndarray, moment: np.ndarray) -> None:
        self.P = np.linalg.inv(information)
        self.w = self.P @ moment


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


class OnlineLogistic:
    """Logistic regression on hashed binary features by stochastic gradient descent, one example at a time."""

    def __init__(self, learning_rate: float = 0.2, l2: float = 1e-4):
        self.w = np.zeros(1 << HASH_BITS)
        self.bias = 0.0
        self.learning_rate, self.l2 = learning_rate, l2
        self.trained = 0

    def predict(self, features: np.ndarray) -> float:
        return _sigmoid(self.bias + float(self.w[features].sum()))

    def predict_many(self, features: np.ndarray, lengths: np.ndarray) -> list[float]:
        """``predict`` of many examples, their features concatenated (``lengths`` each): the same numbers, each
        example's weights summed as ``predict``'s numpy ``sum`` adds them (``kernels.hashed_sums``)."""
        lengths = np.asarray(lengths, dtype=np.int64)
        sums = hashed_sums(self.w, np.asarray(features), lengths)
        for e in np.flatnonzero(np.isnan(sums)).tolist():  # over 128 words: numpy's own sum (rare; NaN weights too)
            start = int(lengths[:e].sum())
            sums[e] = self.w[features[start:start + lengths[e]]].sum()
        return [_sigmoid(self.bias + z) for z in sums.tolist()]

    def learn(self, features: np.ndarray, label: float) -> None:
        error = self.predict(features) - label
        self.w[features] -= self.learning_rate * (error + self.l2 * self.w[features])
        self.bias -= self.learning_rate * error
        self.trained += 1


def hashed_words(url: str, anchor: str) -> np.ndarray:
    """The link model's features, hashed (deterministically: Python's own string hash changes from process to
    process): URL words and anchor words, kept apart, and the URL's shape, which words miss: how deep its path
    is, whether it is a user's directory (``/~name``), what its last segment is (a directory, an .html file,
    a query). Sorted, each once."""
    text = url_text(url)
    words = [f"u {t}" for t in terms(text)] + [f"a {t}" for t in terms(anchor)] + _shape_words(_url_shape(text))
    return np.array(sorted({zlib.crc32(w.encode()) & MASK for w in words}), dtype=np.int32)


def hashed_words_many(urls: Sequence[str], anchors: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``hashed_words`` of many links at once: their features concatenated link after link, and how many each
    link has; the same ints in the same order. Per link only the words are looked up (their hashes are
    remembered: words recur from link to link); one sort of all links' (link, hash) keys then does what a set
    and a sort per link did."""
    flat: list[int] = []
    counts: list[int] = []
    url_hash, anchor_hash = _URL_WORD_HASHES.__getitem__, _ANCHOR_WORD_HASHES.__getitem__
    for url, anchor in zip(urls, anchors):
        before = len(flat)
        text = url_text(url)
        flat.extend(map(url_hash, terms(text)))
        flat.extend(map(anchor_hash, terms(anchor)))
        flat.extend(shape_hashes(text))
        counts.append(len(flat) - before)
    keys = np.repeat(np.arange(len(counts), dtype=np.int64) << HASH_BITS, counts) | np.array(flat, dtype=np.int64)
    keys.sort()  # by link, then by hash; then each (link, hash) once
    once = np.empty(len(keys), dtype=bool)
    once[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=once[1:])
    keys = keys[once]
    return (keys & MASK).astype(np.int32), np.bincount(keys >> HASH_BITS, minlength=len(counts))


def _url_shape(text: str) -> tuple[int, bool, bool, str]:
    """A URL's (without its scheme) shape: path depth (6 for deeper), ``~`` in the path, a query, how the last
    segment ends (its extension, ``file`` without one, ``dir`` for a directory)."""
    path = text.partition("/")[2]
    segments = [s for s in path.split("?", 1)[0].split("/") if s]
    last = segments[-1] if segments and not path.endswith("/") else ""
    return (min(len(segments), 6), "~" in path, "?" in path,
            last.rpartition(".")[2].lower() if "." in last else ("file" if last else "dir"))


def shape_hashes(text: str) -> list[int]:
    """The hashed shape words of a URL (without its scheme), remembered per shape: few shapes recur."""
    shape = _url_shape(text)
    hashes = _SHAPE_HASHES.get(shape)
    if hashes is None:
        if len(_SHAPE_HASHES) >= WORD_CACHE_SIZE:
            _SHAPE_HASHES.clear()
        hashes = _SHAPE_HASHES[shape] = [zlib.crc32(w.encode()) & MASK for w in _shape_words(shape)]
    return hashes


SHAPE_WORDS = 4  # words of a URL's shape (``_shape_words``)


def _shape_words(shape: tuple[int, bool, bool, str]) -> list[str]:
    depth, tilde, query, ends = shape
    return [f"s depth {depth}", f"s tilde {tilde}", f"s query {query}", f"s ends {ends}"]


class _WordHashes(dict):
    """Word -> the masked crc32 of ``prefix`` + word, computed on first use (from the prefix's crc32, which is the
    same as hashing the joined text); emptied when full (URLs bring words that never recur, such as page
    numbers)."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix_crc = zlib.crc32(prefix.encode())

    def __missing__(self, word: str) -> int:
        if len(self) >= WORD_CACHE_SIZE:
            self.clear()
        value = self[word] = zlib.crc32(word.encode(), self.prefix_crc) & MASK
        return value


_URL_WORD_HASHES = _WordHashes("u ")
_ANCHOR_WORD_HASHES = _WordHashes("a ")
_SHAPE_HASHES: dict[tuple[int, bool, bool, str], list[int]] = {}
