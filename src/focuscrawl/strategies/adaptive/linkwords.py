"""One pass over a page's new links: each link tokenised once, every per-link model's features from that pass.

A new link's URL words and anchor words feed two models: the link model's hashed words (``models.hashed_words``)
and the topic similarity of "URL words, then anchor words" (``TopicSimilarity.links``). Each used to tokenise the
link itself and look every word up in a cache of its own, link by link. Here the page's links are tokenised once,
each distinct word numbered once in a ``Lexicon`` whose tables hold everything the models read of a word (its
hash as a URL word and as an anchor word, its similarity column and idf), and the rest is one compiled pass over
the page's word numbers (``kernels.link_features``; numpy passes cost more than they save on a page's few dozen
links): the same ints and the same float64s as link by link (``tests/test_adaptive_batched.py`` compares them),
so crawls do not change.

Why the floats are the same. The similarity of a link text is ``sum(w_t * topic_t) / sqrt(sum(w_t^2))`` over its
distinct in-vocabulary terms t in the order they first occur, ``w_t = idf_t`` for a term seen once and
``(1 + ln count) * idf_t`` otherwise (``1 + ln count`` from ``math.log``, ``topic.kernels.log_tf``). The
numerator goes through ``TopicSimilarity``'s own ``_scores`` with the same (column, weight) pairs in the same
order; the squared norm is summed term after term from 0 as Python's loop did.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from focuscrawl.strategies.adaptive.kernels import link_features
from focuscrawl.strategies.adaptive.models import HASH_BITS, MASK, SHAPE_WORDS, shape_hashes
from focuscrawl.topic.kernels import log_tf
from focuscrawl.topic.similarity import MAX_CHARS, WORD_CACHE_SIZE, TopicSimilarity
from focuscrawl.topic.text import terms, url_text

_URL_PREFIX_CRC = zlib.crc32(b"u ")
_ANCHOR_PREFIX_CRC = zlib.crc32(b"a ")


class Lexicon(dict):
    """Word -> its number, with per-number tables: link-model hash as a URL word and as an anchor word, and the
    similarity column (-1: a stop word or outside the vocabulary) and idf. Numbered on first use; emptied between
    pages once it holds ``WORD_CACHE_SIZE`` words (URLs bring words that never recur), never within a page, whose
    numbers are read after all its words are looked up."""

    def __init__(self, similarity: TopicSimilarity):
        super().__init__()
        self.similarity = similarity
        self._grow(1024)

    def _grow(self, size: int) -> None:
        old = [getattr(self, name, None) for name in ("url_hash", "anchor_hash", "column", "idf")]
        self.url_hash, self.anchor_hash = np.zeros(size, np.int64), np.zeros(size, np.int64)
        self.column, self.idf = np.full(size, -1, np.int64), np.zeros(size)
        if old[0] is not None:
            for new, was in zip((self.url_hash, self.anchor_hash, self.column, self.idf), old):
                new[:len(was)] = was

    def reserve(self, words: int) -> None:
        """Room for a page of ``words`` words: emptied first if the lexicon is full."""
        if len(self) + words > WORD_CACHE_SIZE and len(self):
            self.clear()
        if len(self) + words > len(self.column):
            self._grow(max(2 * len(self.column), len(self) + words))

    def __missing__(self, word: str) -> int:
        number = self[word] = len(self)
        encoded = word.encode()
        self.url_hash[number] = zlib.crc32(encoded, _URL_PREFIX_CRC) & MASK
        self.anchor_hash[number] = zlib.crc32(encoded, _ANCHOR_PREFIX_CRC) & MASK
        # (a number is reused after the lexicon is emptied: every table is written)
        self.column[number], self.idf[number] = self.similarity.link_term(word) or (-1, 0.0)
        return number

    def __reduce__(self):
        # a cache: not stored in checkpoints (an empty one is), refilled as links come
        return (Lexicon, (self.similarity,))


class PageLinks:
    """The new links of one page, tokenised once (URL words, then anchor words, link after link; each word's
    number in the lexicon), and both models' features of every link from one compiled pass
    (``kernels.link_features``)."""

    def __init__(self, lexicon: Lexicon, urls: Sequence[str], anchors: Sequence[str]):
        self.lexicon = lexicon
        self.texts = [url_text(u) for u in urls]
        self.anchors = anchors
        url_terms = [terms(t) for t in self.texts]
        anchor_terms = [terms(a) for a in anchors]
        flat: list[str] = []
        for u, a in zip(url_terms, anchor_terms):
            flat += u
            flat += a
        lexicon.reserve(len(flat))
        word = np.fromiter(map(lexicon.__getitem__, flat), np.int64, len(flat))
        url_counts = np.fromiter(map(len, url_terms), np.int64, len(url_terms))
        counts = url_counts + np.fromiter(map(len, anchor_terms), np.int64, len(anchor_terms))
        starts = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=starts[1:])
        shapes = np.array([shape_hashes(t) for t in self.texts], np.int64).reshape(len(self.texts), SHAPE_WORDS)
        table = log_tf(int(counts.max(initial=0)))
        (self.hashed, self.hashed_lengths, self._terms, self._weights, self._term_lengths,
         self._norms) = link_features(word, starts, url_counts, lexicon.url_hash, lexicon.anchor_hash, lexicon.column,
                                      lexicon.idf, shapes, table, HASH_BITS)

    def hashed_words(self) -> tuple[np.ndarray, np.ndarray]:
        """``models.hashed_words_many`` of the links: their hashed words concatenated, and how many each has."""
        return self.hashed, self.hashed_lengths

    def similarity(self) -> np.ndarray:
        """``TopicSimilarity.links`` of each link's "URL text anchor", topic column: the same float64s."""
        similarity = self.lexicon.similarity
        if any(len(t) + 1 + len(a) > MAX_CHARS for t, a in zip(self.texts, self.anchors)):
            # a text cut at MAX_CHARS: its words are not the link's words (rare; the plain way)
            return similarity.links([f"{t} {a}" for t, a in zip(self.texts, self.anchors)])[:, 0]
        return similarity.link_scores(self._terms, self._weights, self._term_lengths, self._norms)[:, 0]
