"""Per-URL data that is written once and rarely read, kept in RAM up to a threshold and spilled to disk beyond it.

A frontier of ten million URLs cannot keep every URL's string and hashed words in Python objects (about
300 bytes a URL). Both are appended once, when the URL is first seen, and read back rarely: the string when
the URL is selected, the words when it is fetched (the link model learns from them) and, for the whole
frontier at once, when the link model re-scores it. So each column holds the rows of its most recent URLs in
RAM and, once more than ``threshold`` of them are there, moves them all to a scratch store on disk:

    UrlColumn   the URL strings, in SQLite (the standard library's embedded database: an integer-keyed
                B-tree gives a selected URL back in one lookup, and its page cache is bounded, so reading
                does not grow the process)
    WordColumn  the hashed words, in two flat files of fixed-width numbers (a URL's start offset, and the
                words), read with plain ``pread``/``readinto`` calls: a full pass over the frontier's words
                streams them in chunks, which a B-tree row per URL would make ten times slower, and which a
                memory map would count, page by page, in the process's resident memory

Spilling is exact: what is read back is byte for byte what was written, so a crawl that spills selects the
same URLs as one that does not. The scratch stores are anonymous (SQLite's private temporary database, and
unlinked temporary files): they vanish with the process, even one killed by SIGKILL. Nothing on disk is
needed to resume a crawl: a checkpoint pickles the columns' contents (``__getstate__``), and a crawl resumed
without one replays its log through a fresh policy, which rebuilds them.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence

import numpy as np

SPILL_AFTER = 200_000  # the default threshold: rows of each column kept in RAM before they move to disk
CHUNK_URLS = 262_144  # URLs per chunk of a pass over all words (about 4 MB of words read at a time)


class UrlColumn:
    """The URL string of each id (ids 0, 1, 2, ... in order), a sequence: ``len``, ``[i]``, ``append``."""

    def __init__(self, threshold: int = SPILL_AFTER):
        self.threshold = threshold
        self.spilled = 0  # ids below this are on disk
        self.recent: list[str] = []  # ids spilled, spilled + 1, ...
        self._db: sqlite3.Connection | None = None

    def __len__(self) -> int:
        return self.spilled + len(self.recent)

    def __getitem__(self, i: int) -> str:
        i = int(i)
        if i >= self.spilled:
            return self.recent[i - self.spilled]
        if i < 0:
            raise IndexError(i)
        return self._db.execute("SELECT url FROM urls WHERE id = ?", (i,)).fetchone()[0]

    def __iter__(self) -> Iterator[str]:
        if self.spilled:
            yield from (url for (url,) in self._db.execute("SELECT url FROM urls ORDER BY id"))
        yield from self.recent

    def append(self, url: str) -> None:
        self.recent.append(url)

    def spill_if_due(self) -> None:
        """Move the URLs held in RAM to disk if there are more than ``threshold`` of them (called once a page)."""
        if len(self.recent) <= self.threshold:
            return
        if self._db is None:
            # "": a private temporary database on disk, deleted when the connection closes or the process dies.
            # Scratch data: no journal, no syncs (a crash loses it, and nothing needs it after one).
            self._db = sqlite3.connect("", check_same_thread=False)
            self._db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-2048;"
                                   "CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL)")
        with self._db:
            self._db.executemany("INSERT INTO urls VALUES (?, ?)", enumerate(self.recent, self.spilled))
        self.spilled += len(self.recent)
        self.recent = []

    def __getstate__(self) -> dict:
        return {"threshold": self.threshold, "urls": list(self)}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["threshold"])
        self.recent = state["urls"]
        self.spill_if_due()


class WordColumn:
    """Each id's hashed words (an int32 array; ids appended in order), and passes over all of them in id order."""

    def __init__(self, threshold: int = SPILL_AFTER):
        self.threshold = threshold
        self.spilled = 0  # ids below this are on disk
        self.spilled_words = 0
        self.starts: list[int] = []  # offsets, in the words after the spilled ones, of ids spilled, spilled + 1, ...
        self.pool = np.zeros(1 << 12, np.int32)  # their words, one after the other
        self.end = 0
        self._starts_file = self._words_file = None  # int64 offsets by id, int32 words: on disk

    def __len__(self) -> int:
        return self.spilled + len(self.starts)

    def append(self, ids: Sequence[int], words: Sequence[np.ndarray]) -> None:
        """The words of new ids, which must follow on from the last ones: ``len(self), len(self) + 1, ...``."""
        if len(ids) and (ids[0] != len(self) or ids[-1] != len(self) + len(ids) - 1):
            raise ValueError(f"word rows must be appended in id order: got ids from {ids[0]}, expected {len(self)}")
        lengths = [len(w) for w in words]
        total = sum(lengths)
        if self.end + total > len(self.pool):
            grown = np.zeros(max(2 * len(self.pool), self.end + total), np.int32)
            grown[:self.end] = self.pool[:self.end]
            self.pool = grown
        start = self.end
        for length in lengths:
            self.starts.append(start)
            start += length
        if total:
            self.pool[self.end:self.end + total] = np.concatenate(words)
        self.end += total

    def get(self, i: int) -> np.ndarray:
        i = int(i)
        if i >= self.spilled:
            k = i - self.spilled
            return self.pool[self.starts[k]:self.starts[k + 1] if k + 1 < len(self.starts) else self.end].copy()
        bounds = np.empty(2, np.int64)
        n = os.preadv(self._starts_file.fileno(), [bounds], 8 * i)
        if n < 16:  # the last spilled id ends where the spilled words end
            bounds[1] = self.spilled_words
        return self._read_words(int(bounds[0]), int(bounds[1]))

    def _read_words(self, start: int, end: int) -> np.ndarray:
        out = np.empty(end - start, np.int32)
        if len(out):
            os.preadv(self._words_file.fileno(), [out], 4 * start)
        return out

    def chunks(self, urls: int = CHUNK_URLS) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """All words in id order, a chunk at a time: (first id, each id's word count, the words). A chunk always
        holds whole URLs, so a per-URL sum over a chunk adds each URL's words in the same order as over all."""
        for first in range(0, self.spilled, urls):
            last = min(first + urls, self.spilled)
            starts = np.empty(last - first + 1, np.int64)
            got = os.preadv(self._starts_file.fileno(), [starts], 8 * first)
            if got < 8 * len(starts):
                starts[-1] = self.spilled_words
            yield first, np.diff(starts), self._read_words(int(starts[0]), int(starts[-1]))
        if self.starts:
            starts = np.append(np.asarray(self.starts, np.int64), self.end)
            for k in range(0, len(self.starts), urls):
                part = starts[k:k + urls + 1]
                yield self.spilled + k, np.diff(part), self.pool[part[0]:part[-1]]

    def spill_if_due(self) -> None:
        """Move the words held in RAM to disk if they belong to more than ``threshold`` ids."""
        if len(self.starts) <= self.threshold:
            return
        if self._starts_file is None:
            self._starts_file, self._words_file = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        starts = np.asarray(self.starts, np.int64) + self.spilled_words
        os.pwrite(self._starts_file.fileno(), starts.tobytes(), 8 * self.spilled)
        os.pwrite(self._words_file.fileno(), self.pool[:self.end].tobytes(), 4 * self.spilled_words)
        self.spilled += len(self.starts)
        self.spilled_words += self.end
        self.starts, self.end = [], 0
        self.pool = np.zeros(1 << 12, np.int32)

    def __getstate__(self) -> dict:
        lengths, words = [], []
        for _, counts, chunk in self.chunks():
            lengths.append(counts)
            words.append(chunk.copy())
        return {"threshold": self.threshold, "lengths": np.concatenate(lengths) if lengths else np.zeros(0, np.int64),
                "words": np.concatenate(words) if words else np.zeros(0, np.int32)}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["threshold"])
        lengths, words = state["lengths"], state["words"]
        self.pool = np.array(words, np.int32) if len(words) else np.zeros(1 << 12, np.int32)
        self.end = len(words)
        self.starts = (np.cumsum(lengths) - lengths).tolist()
        self.spill_if_due()
