"""Per-URL data that is written once and rarely read, kept in RAM up to a threshold and spilled to disk beyond it.

A frontier of ten million URLs cannot keep every URL's string, hashed words and parent edges in Python
objects (about 300 bytes a URL). Each is written once and read back rarely: the string when the URL is
selected, the words when it is fetched (the link model learns from them) and, for the whole frontier at once,
when the link model re-scores it, the parent edges when it is crawled. So each column holds the rows of its
most recent URLs in RAM and, once more than ``threshold`` of them are there, moves them all to a scratch
store on disk:

    UrlColumn   the URL strings, in SQLite (the standard library's embedded database: an integer-keyed
                B-tree gives a selected URL back in one lookup, and its page cache is bounded, so reading
                does not grow the process)
    WordColumn  the hashed words, in two flat files of fixed-width numbers (a URL's start offset, and the
                words), read with plain ``pread``/``readinto`` calls: a full pass over the frontier's words
                streams them in chunks, which a B-tree row per URL would make ten times slower, and which a
                memory map would count, page by page, in the process's resident memory
    ParentColumn each node's crawled parents and the context relevance of their links to it, in SQLite keyed
                (node, order): read once, in one range, when the node itself is crawled

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
# URLs per chunk of a pass over all words: about 650 KB of words, so that the per-chunk temporaries of a re-rank
# (owners, weights) stay in the CPU's cache (a 1M-URL pass: 59 ms against 80-90 with 262,144)
CHUNK_URLS = 16_384


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
        # offsets, in the words after the spilled ones, of ids spilled, spilled + 1, ... (the first ``held``);
        # an array, not a list (8 bytes an id, not 36, and a re-rank's pass reads it as it is)
        self.starts = np.zeros(1 << 10, np.int64)
        self.held = 0
        self.pool = np.zeros(1 << 12, np.int32)  # their words, one after the other
        self.end = 0
        self._starts_file = self._words_file = None  # int64 offsets by id, int32 words: on disk

    def __len__(self) -> int:
        return self.spilled + self.held

    def append(self, ids: Sequence[int], words: Sequence[np.ndarray]) -> None:
        """The words of new ids, which must follow on from the last ones: ``len(self), len(self) + 1, ...``."""
        if len(ids) and (ids[0] != len(self) or ids[-1] != len(self) + len(ids) - 1):
            raise ValueError(f"word rows must be appended in id order: got ids from {ids[0]}, expected {len(self)}")
        lengths = np.fromiter(map(len, words), np.int64, len(words))
        total = int(lengths.sum())
        if self.end + total > len(self.pool):
            grown = np.zeros(max(2 * len(self.pool), self.end + total), np.int32)
            grown[:self.end] = self.pool[:self.end]
            self.pool = grown
        if self.held + len(lengths) > len(self.starts):
            grown_starts = np.zeros(max(2 * len(self.starts), self.held + len(lengths)), np.int64)
            grown_starts[:self.held] = self.starts[:self.held]
            self.starts = grown_starts
        offsets = self.starts[self.held:self.held + len(lengths)]
        if len(lengths):
            offsets[0] = self.end
            np.cumsum(lengths[:-1], out=offsets[1:])
            offsets[1:] += self.end
        self.held += len(lengths)
        if total:
            self.pool[self.end:self.end + total] = np.concatenate(words)
        self.end += total

    def get(self, i: int) -> np.ndarray:
        i = int(i)
        if i >= self.spilled:
            k = i - self.spilled
            return self.pool[self.starts[k]:self.starts[k + 1] if k + 1 < self.held else self.end].copy()
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
        if self.held:
            starts = np.append(self.starts[:self.held], self.end)
            for k in range(0, self.held, urls):
                part = starts[k:k + urls + 1]
                yield self.spilled + k, np.diff(part), self.pool[part[0]:part[-1]]

    def spill_if_due(self) -> None:
        """Move the words held in RAM to disk if they belong to more than ``threshold`` ids."""
        if self.held <= self.threshold:
            return
        if self._starts_file is None:
            self._starts_file, self._words_file = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        starts = self.starts[:self.held] + self.spilled_words
        os.pwrite(self._starts_file.fileno(), starts.tobytes(), 8 * self.spilled)
        os.pwrite(self._words_file.fileno(), self.pool[:self.end].tobytes(), 4 * self.spilled_words)
        self.spilled += self.held
        self.spilled_words += self.end
        self.starts, self.held, self.end = np.zeros(1 << 10, np.int64), 0, 0
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
        self.starts = np.asarray(np.cumsum(lengths) - lengths, np.int64)
        self.held = len(lengths)
        self.spill_if_due()


class ParentColumn:
    """Each node's crawled parents u and alpha(u, v), in the order they were added, read when the node itself is
    crawled. Recent edges stay in RAM, linked per node through flat arrays (``head``, the graph's per-node array,
    holds 1 + the node's latest edge); past ``threshold`` of them they move to SQLite, clustered by node, so a
    node's spilled parents are one indexed range read. Alpha is stored as SQLite's REAL, the same float64."""

    def __init__(self, threshold: int = SPILL_AFTER, capacity: int = 1024):
        self.threshold = threshold
        self.base = 0  # edges numbered below this are on disk
        self.count = 0  # edges in RAM, numbered base, base + 1, ...
        self.source = np.zeros(capacity, np.int32)
        self.target = np.zeros(capacity, np.int32)
        self.alpha = np.zeros(capacity)
        self.older = np.zeros(capacity, np.int64)  # 1 + the number of the node's previous edge, 0 for none
        self._db: sqlite3.Connection | None = None

    def add(self, head: np.ndarray, u: int, kids: list[int], alphas) -> None:
        """``u`` is a new parent of each of ``kids`` (repeats allowed: each is an edge)."""
        need = self.count + len(kids)
        if need > len(self.source):
            new = len(self.source)
            while new < need:
                new *= 2
            for name in ("source", "target", "alpha", "older"):
                old = getattr(self, name)
                grown = np.zeros(new, old.dtype)
                grown[:self.count] = old[:self.count]
                setattr(self, name, grown)
        k = self.count
        self.source[k:need] = u
        self.target[k:need] = kids
        self.alpha[k:need] = alphas
        e = self.base + k
        for v in kids:
            self.older[k] = head[v]
            head[v] = e + 1
            e += 1
            k += 1
        self.count = need

    def of(self, head: np.ndarray, v: int) -> tuple[list[int], list[float]]:
        parents, alphas = [], []
        e = int(head[v])
        while e > self.base:  # the RAM part, newest first
            k = e - 1 - self.base
            parents.append(self.source.item(k))
            alphas.append(self.alpha.item(k))
            e = self.older.item(k)
        parents.reverse()
        alphas.reverse()
        if e and self._db is not None:  # older edges are on disk
            rows = self._db.execute("SELECT src, alpha FROM edges WHERE dst = ? ORDER BY seq", (int(v),)).fetchall()
            parents[:0] = [r[0] for r in rows]
            alphas[:0] = [r[1] for r in rows]
        return parents, alphas

    def spill_if_due(self) -> None:
        if self.count <= self.threshold:
            return
        n = self.count
        self._write(self.target[:n], np.arange(self.base, self.base + n), self.source[:n], self.alpha[:n])
        self.base += n
        self.count = 0
        self.source, self.target = np.zeros(1024, np.int32), np.zeros(1024, np.int32)
        self.alpha, self.older = np.zeros(1024), np.zeros(1024, np.int64)

    def _write(self, target, seq, source, alpha) -> None:
        if self._db is None:
            self._db = sqlite3.connect("", check_same_thread=False)
            self._db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-2048;"
                                   "CREATE TABLE edges (dst INTEGER, seq INTEGER, src INTEGER, alpha REAL,"
                                   " PRIMARY KEY (dst, seq)) WITHOUT ROWID")
        with self._db:
            self._db.executemany("INSERT INTO edges VALUES (?, ?, ?, ?)",
                                 zip(target.tolist(), seq.tolist(), source.tolist(), alpha.tolist()))

    def __getstate__(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k != "_db"}
        rows = self._db.execute("SELECT dst, seq, src, alpha FROM edges").fetchall() if self._db is not None else []
        state["disk"] = [np.array([r[c] for r in rows], dtype) for c, dtype in
                         enumerate((np.int64, np.int64, np.int64, np.float64))]
        return state

    def __setstate__(self, state: dict) -> None:
        disk = state.pop("disk")
        self.__dict__.update(state)
        self._db = None
        if len(disk[0]):
            self._write(*disk)
