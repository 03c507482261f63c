"""Near-duplicate pages, by their main text: MinHash signatures and an LSH index (datasketch).

A page's text (title and main text, lower-cased words) is cut into overlapping runs of ``shingle`` words; two
pages' Jaccard similarity of those sets is estimated from MinHash signatures (Broder's resemblance), and
datasketch's LSH finds the earlier pages likely to pass ``threshold`` without comparing every pair. A
candidate is confirmed on its estimated similarity, so what the index lets through never decides alone.

MinHash rather than SimHash (Manku et al.) because its threshold reads as a share of shared text, which is
what a user can choose and we can measure on clean webs; datasketch because it is the maintained
implementation (numpy-vectorised permutations, the LSH band sizes chosen for a threshold).

The index is crawl state. A checkpoint keeps the signatures (``num_perm`` 32-bit values a page) and rebuilds
the LSH tables on load, which are as large again and follow from the signatures.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache
from typing import Annotated

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH
from pydantic import BaseModel, ConfigDict, Field

_WORD = re.compile(r"\w+")
_SEED = 1  # the permutations' seed: part of what a signature is, not a crawl's random choice
_SCHEME = "affine32"  # datasketch 2's default: values below 2**32, which a signature keeps as uint32


class NearDuplicateSettings(BaseModel):
    """A page whose text is a near-copy of a page fetched before is a duplicate ("duplicate of URL")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    threshold: Annotated[float, Field(gt=0, le=1)] = Field(
        0.9, description="estimated Jaccard similarity of the two texts' word shingles at which a page is a "
                         "near-duplicate (docs/crawl.md, 'Messy web', gives the false positives on clean webs)")
    shingle: Annotated[int, Field(ge=1, le=10)] = Field(5, description="words per shingle")
    max_words: Annotated[int, Field(ge=10)] = Field(
        300, description="words of a page's text that its signature covers, half from its start and half from its "
                          "end: copies share both, two pages that open alike (a list of publications under one "
                          "header) differ at their ends, and a long article costs no more than a short one")
    min_shingles: Annotated[int, Field(ge=1)] = Field(
        25, description="pages with fewer distinct shingles are never called near-duplicates: over a small set, one "
                        "shingle moves the similarity by several hundredths, and two short texts agree by chance")
    num_perm: Annotated[int, Field(ge=16, le=512)] = Field(
        64, description="MinHash permutations (the similarity's standard error is about sqrt(J(1-J)/num_perm))")


def words(text: str, drop: frozenset[str] = frozenset(), limit: int | None = None) -> list[str]:
    """The lower-cased words of ``text``, without those in ``drop``; with a ``limit``, its first and last
    ``limit // 2`` words when it has more."""
    half = None if limit is None else max(1, limit // 2)
    if half is not None and len(text) > half * 24:  # words average 5-7 characters with their space
        head, tail = words(text[:half * 10], drop), words(text[-half * 10:], drop)
        if len(head) >= half and len(tail) >= half:
            return head[:half] + tail[-half:]
    found = _WORD.findall(text.lower())
    if drop:
        found = [w for w in found if w not in drop]
    return found


def url_words(url: str) -> frozenset[str]:
    """The words of a URL's path and query: what an error page echoes of the address asked for."""
    _, _, rest = url.partition("://")
    _, _, path = rest.partition("/")
    return frozenset(words(path))


def page_shingles(title: str, text: str, reading: NearDuplicateSettings, drop: frozenset[str] = frozenset()
                  ) -> np.ndarray:
    """A page's text as the near-duplicate defences read it: the hashes of the distinct shingles of its title and
    main text, without the words in ``drop`` (a long text by its ends only, so a copy of it costs no more)."""
    tokens = words(title, drop) + words(text, drop, reading.max_words)
    return shingles(tokens, reading.shingle)


@lru_cache(maxsize=8)
def _permutations(num_perm: int) -> np.ndarray:
    return MinHash(num_perm=num_perm, seed=_SEED, scheme=_SCHEME).permutations


_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd 64-bit constant (the golden ratio's): spreads a shingle's word hashes
_WORD_HASHES: dict[str, int] = {}  # words recur (Zipf): a lookup costs a sixth of encoding and hashing


def shingles(tokens: list[str], shingle: int) -> np.ndarray:
    """The distinct ``shingle``-word runs of ``tokens`` (all of them as one when there are fewer), each as a 32-bit
    hash: the words' CRC-32s combined as a polynomial, in numpy, so that a page costs one pass over its words."""
    cache = _WORD_HASHES
    missing = set(tokens).difference(cache)
    if missing:
        if len(cache) + len(missing) > 1 << 20:  # a bound on memory; a hash never changes, so forgetting is harmless
            cache.clear()
            missing = set(tokens)
        cache.update((w, zlib.crc32(w.encode())) for w in missing)
    hashed = np.fromiter(map(cache.__getitem__, tokens), dtype=np.uint64, count=len(tokens))
    k = min(shingle, len(tokens))
    if k == 0:
        return np.zeros(0, dtype=np.uint64)
    runs = np.zeros(len(tokens) - k + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):  # arithmetic modulo 2**64, as meant
        for j in range(k):
            runs = runs * _MIX + hashed[j:len(hashed) - k + 1 + j]
    return np.unique(runs >> np.uint64(32))


def signature(runs: np.ndarray, num_perm: int) -> np.ndarray:
    """The MinHash signature (uint32 values) of a set of shingle hashes."""
    minhash = MinHash(num_perm=num_perm, seed=_SEED, hashfunc=int, permutations=_permutations(num_perm),
                      scheme=_SCHEME)
    minhash.update_batch(runs.tolist())  # hashed already: datasketch applies its permutations to them
    return minhash.hashvalues.astype(np.uint32)  # lossless: affine32 values are below 2**32


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The estimated Jaccard similarity of the two signatures' shingle sets."""
    return float(np.count_nonzero(a == b)) / len(a)


class NearDuplicates:
    """The signatures of the pages fetched so far, by URL, and the LSH index that finds near-copies among them.

    ``find`` looks a new page up among those ``add``-ed before; ``of`` gives a URL's signature (its own page's: what
    a ``rel=canonical`` claim naming it is checked against).
    """

    def __init__(self, settings: NearDuplicateSettings):
        self.settings = settings
        self.urls: list[str] = []
        self.signatures: list[np.ndarray] = []
        self.index_of: dict[str, int] = {}
        self.indexed = bytearray()  # 1 where the signature is in the LSH index (0: kept for ``of`` alone)
        self._lsh = self._new_lsh()

    def _new_lsh(self) -> MinHashLSH:
        return MinHashLSH(threshold=self.settings.threshold, num_perm=self.settings.num_perm)

    def signature(self, runs: np.ndarray) -> np.ndarray | None:
        """The signature of a page's shingles (``read``), or None when it has too few to tell."""
        if len(runs) < self.settings.min_shingles:
            return None
        return signature(runs, self.settings.num_perm)

    def find(self, sig: np.ndarray) -> tuple[str, float] | None:
        """The earlier page most similar to ``sig`` at or above the threshold (the first such on a tie), or None."""
        found = self.find_all(sig)
        return max(found, key=lambda item: (item[1], -self.index_of[item[0]])) if found else None

    def find_all(self, sig: np.ndarray) -> list[tuple[str, float]]:
        """Every earlier page whose similarity to ``sig`` is at or above the threshold."""
        found = []
        for i in self._lsh.query(self._minhash(sig)):
            score = similarity(sig, self.signatures[i])
            if score >= self.settings.threshold:
                found.append((self.urls[i], score))
        return found

    def add(self, url: str, sig: np.ndarray, *, indexed: bool = True) -> None:
        """Remember ``url``'s signature; ``indexed``: also let later pages find it as their original."""
        if url in self.index_of:
            return
        i = len(self.urls)
        self.urls.append(url)
        self.signatures.append(sig)
        self.index_of[url] = i
        self.indexed.append(indexed)
        if indexed:
            self._lsh.insert(i, self._minhash(sig), check_duplication=False)

    def of(self, url: str) -> np.ndarray | None:
        i = self.index_of.get(url)
        return None if i is None else self.signatures[i]

    def _minhash(self, sig: np.ndarray) -> LeanMinHash:
        return LeanMinHash(seed=_SEED, hashvalues=sig.astype(np.uint64), scheme=_SCHEME)

    # checkpoints: the signatures, not the LSH tables (rebuilt from them, in the same order)
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_lsh"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lsh = self._new_lsh()
        for i, sig in enumerate(self.signatures):
            if self.indexed[i]:
                self._lsh.insert(i, self._minhash(sig), check_duplication=False)
