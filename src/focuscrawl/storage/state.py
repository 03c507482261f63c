"""The crawl-state store: one SQLite file (WAL) that is the single source of truth of a run folder.

Every completed fetch is committed in one transaction that holds the page record and the engine
operations that led to it (and, every so often, a checkpoint). Everything else in the run folder
(pages.jsonl, the WARC, harvest.csv) is derived from it and repaired against it when a crawl resumes.

Resume (``focuscrawl.crawl.resume``) loads the latest checkpoint (``CrawlEngine.snapshot``: the engine's
crawl state and the policy) into a freshly built engine and replays the operation log after it (``ops``:
each selection the engine answered and each ``record`` it made, in order). Policies are deterministic
given the crawl seed, so the replay rebuilds exactly the state the crashed process had at its last
commit. A checkpoint only shortens the replay; one that fails to load is ignored and the whole log is
replayed. Nothing else is kept: what the crawl has fetched (the closure) is the ``steps`` table.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.storage.failures import store_failure
from focuscrawl.types import Link, Page, StepEvent

STATE_FILE = "state.sqlite"
SCHEMA_VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- The engine's calls in order: 'S' = next_url() answered url, 'R' = record(url) made step.
CREATE TABLE IF NOT EXISTS ops (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, url TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps (
    step INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    final_url TEXT NOT NULL,
    host TEXT NOT NULL,
    status INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    title TEXT NOT NULL,
    error TEXT NOT NULL,
    body BLOB NOT NULL,          -- zlib(json {text, outlinks}): what a replay feeds back to the engine
    fetched_at REAL NOT NULL,    -- unix time the fetch completed
    fetch_s REAL NOT NULL,
    relevance REAL NOT NULL,
    reward REAL NOT NULL,
    depth INTEGER NOT NULL,
    parent TEXT,
    score REAL,                  -- the policy's score of its selection, and why it chose it
    reason TEXT NOT NULL,
    frontier_size INTEGER NOT NULL,
    warc_end INTEGER,            -- size of the WARC file once this step's records were written
    -- the engine's defences: why the page gave no reward ('duplicate of URL', 'soft 404', ...; '' if it did), and
    -- the URLs they kept out of the frontier at this step, JSON [[url, why], ...] (ADDED_COLUMNS: later columns)
    verdict TEXT NOT NULL DEFAULT '',
    skipped TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS checkpoints (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL, created REAL NOT NULL,
                                        blob BLOB NOT NULL);
-- Distributed crawls only (focuscrawl.crawl.distributed), empty otherwise. outbox: links found for another
-- shard, written with the step that found them, deleted once that shard has stored them. inbox: every
-- message adopted (op 'A', url = the message id), so a re-sent message is recognised and a replay re-adopts it.
CREATE TABLE IF NOT EXISTS outbox (id TEXT PRIMARY KEY, dest INTEGER NOT NULL, blob BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, blob BLOB NOT NULL);
"""

KEEP_CHECKPOINTS = 2
# Columns added to ``steps`` since the store format's version: a store without them gets them (their default for
# the steps it holds, made before them), so run folders of the same format resume. (name, declaration)
ADDED_COLUMNS = (("verdict", "TEXT NOT NULL DEFAULT ''"), ("skipped", "TEXT NOT NULL DEFAULT '[]'"))


@dataclass(slots=True)
class StepRecord:
    """One fetched URL as stored: the page, the agent's judgement of it, and where it sat in the crawl."""

    step: int
    url: str
    final_url: str
    host: str
    status: int
    content_type: str
    title: str
    error: str
    text: str
    outlinks: list[Link]
    fetched_at: float
    fetch_s: float
    relevance: float
    reward: float
    depth: int
    parent: str | None
    score: float | None
    frontier_size: int
    reason: str = ""
    warc_end: int | None = None
    verdict: str = ""
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, event: StepEvent, page: Page, fetch_s: float, fetched_at: float) -> StepRecord:
        """The record of one engine step: ``CrawlEngine.record``'s event and the page it was given."""
        return cls(
            step=event.step, url=event.url, final_url=page.final_url or event.url, host=event.host,
            status=page.status, content_type=page.content_type, title=page.title, error=page.error, text=page.text,
            outlinks=list(page.outlinks), fetched_at=fetched_at, fetch_s=fetch_s, relevance=event.relevance,
            reward=event.reward, depth=event.depth, parent=event.parent, score=event.score,
            frontier_size=event.frontier_size, reason=event.reason, verdict=event.verdict,
            skipped=list(event.skipped),
        )

    def page(self) -> Page:
        return Page(url=self.url, final_url=self.final_url, status=self.status, content_type=self.content_type,
                    title=self.title, text=self.text, outlinks=list(self.outlinks), error=self.error)

    def to_json(self, strategy: str) -> dict:
        """The pages.jsonl record (outlinks are left to the state store and the WARC)."""
        return {
            "step": self.step, "url": self.url, "final_url": self.final_url, "status": self.status,
            "fetched_at": round(self.fetched_at, 3), "fetch_ms": round(self.fetch_s * 1000.0, 1),
            "content_type": self.content_type, "title": self.title, "text": self.text,
            "relevance": round(self.relevance, 6), "reward": self.reward, "depth": self.depth,
            "parent": self.parent, "strategy": strategy, "score": self.score, "reason": self.reason,
            "error": self.error, "outlinks": len(self.outlinks), "verdict": self.verdict,
            "skipped": [[url, why] for url, why in self.skipped],
        }


# The columns of a step, in StepRecord's order (the page body: zlib(json {text, outlinks})).
STEP_COLUMNS = ("step", "url", "final_url", "host", "status", "content_type", "title", "error", "body", "fetched_at",
                "fetch_s", "relevance", "reward", "depth", "parent", "score", "frontier_size", "reason", "warc_end",
                *(name for name, _ in ADDED_COLUMNS))
_STEP_COLUMNS = ", ".join(STEP_COLUMNS)


def step_from_row(row: tuple, *, damaged_body_ok: bool = False) -> StepRecord:
    """The StepRecord of a ``steps`` row read as ``STEP_COLUMNS``; ``damaged_body_ok``: a body that cannot be
    decoded reads as no text, outlinks or skipped URLs (what a viewer shows of a damaged row) instead of raising."""
    (step, url, final_url, host, status, content_type, title, error, body, fetched_at, fetch_s, relevance,
     reward, depth, parent, score, frontier_size, reason, warc_end, verdict, skipped) = row
    try:
        payload = json.loads(zlib.decompress(body))
        kept_out = [(u, why) for u, why in json.loads(skipped)]
    except (zlib.error, ValueError, TypeError):
        if not damaged_body_ok:
            raise
        payload, kept_out = {"text": "", "outlinks": []}, []
    links = [Link(u, a) for u, a in payload["outlinks"]]
    return StepRecord(step, url, final_url, host, status, content_type, title, error, payload["text"], links,
                      fetched_at, fetch_s, relevance, reward, depth, parent, score, frontier_size, reason,
                      warc_end, verdict, kept_out)


class StoreVersionError(RuntimeError):
    """The state store was written by another version of focuscrawl."""


class StateStore:
    """Crawl state in ``<run>/state.sqlite``. Single writer: the crawl holds the run folder's lock."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so that a step is exactly one transaction.
        self.db = sqlite3.connect(self.path, isolation_level=None)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a commit survives the process being killed (it is in the OS once written);
            # only a power cut can lose the last commits, and the derived files are repaired to match then too.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
            self._add_columns()
            version = self.get_meta("schema_version")
        except sqlite3.DatabaseError as exc:  # damage, or the machine's (a full disk, a read-only folder)
            self.db.close()
            raise store_failure(exc, self.path) from None
        if version not in (None, SCHEMA_VERSION):
            self.db.close()
            raise StoreVersionError(f"{self.path} was written by another focuscrawl version (store format "
                                    f"{version}, this one reads {SCHEMA_VERSION}); resume it with that version "
                                    "or start a new run folder")
        self._pending_selects: list[str] = []

    def close(self) -> None:
        self.db.close()

    def _add_columns(self) -> None:
        have = {row[1] for row in self.db.execute("PRAGMA table_info(steps)")}
        for name, declaration in ADDED_COLUMNS:
            if name not in have:
                self.db.execute(f"ALTER TABLE steps ADD COLUMN {name} {declaration}")

    # -- meta ------------------------------------------------------------------------------------
    def get_meta(self, key: str, default=None):
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set_meta(self, **items) -> None:
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in items.items()])

    @property
    def is_new(self) -> bool:
        return self.get_meta("schema_version") is None

    def initialise(self, **meta) -> None:
        """First start of a run: remember what defines the crawl."""
        self.set_meta(schema_version=SCHEMA_VERSION, created=time.time(), **meta)

    # -- the step transaction ----------------------------------------------------------------------
    def log_select(self, url: str) -> None:
        """Buffer a select; it is committed with the next step, so the log stays a prefix of what happened.

        A select that never gets committed is simply redone by the resumed, identical policy.
        """
        self._pending_selects.append(url)

    def commit_step(self, record: StepRecord, checkpoint: bytes | None = None,
                    outbox: list[tuple[str, int, bytes]] = ()) -> None:
        """Atomically: the selects so far, the record op, the page (and a checkpoint taken after it), and in a
        distributed crawl the messages (id, destination shard, payload) of the links it found for other shards."""
        body = zlib.compress(json.dumps({"text": record.text,
                                         "outlinks": [(l.url, l.anchor) for l in record.outlinks]}).encode(), 3)
        with self._transaction():
            self.db.executemany("INSERT INTO ops (kind, url) VALUES ('S', ?)", [(u,) for u in self._pending_selects])
            cursor = self.db.execute("INSERT INTO ops (kind, url) VALUES ('R', ?)", (record.url,))
            seq = cursor.lastrowid
            self.db.execute(
                f"INSERT INTO steps ({_STEP_COLUMNS}) VALUES ({','.join('?' * 21)})",
                (record.step, record.url, record.final_url, record.host, record.status, record.content_type,
                 record.title, record.error, body, record.fetched_at, record.fetch_s, record.relevance,
                 record.reward, record.depth, record.parent, record.score, record.frontier_size, record.reason,
                 record.warc_end, record.verdict, json.dumps(record.skipped)),
            )
            if checkpoint is not None:
                self.db.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?)",
                                (seq, record.step, time.time(), checkpoint))
                self.db.execute("DELETE FROM checkpoints WHERE seq NOT IN "
                                "(SELECT seq FROM checkpoints ORDER BY seq DESC LIMIT ?)", (KEEP_CHECKPOINTS,))
            if outbox:
                self.db.executemany("INSERT OR REPLACE INTO outbox VALUES (?, ?, ?)", outbox)
        self._pending_selects.clear()

    # -- distributed crawls: messages between shards ------------------------------------------------
    def commit_adopt(self, message_id: str, blob: bytes) -> bool:
        """Atomically: the selects so far, an 'A' op and the message; False (nothing written) if already stored."""
        if self.has_message(message_id):
            return False
        with self._transaction():
            self.db.executemany("INSERT INTO ops (kind, url) VALUES ('S', ?)", [(u,) for u in self._pending_selects])
            self.db.execute("INSERT INTO ops (kind, url) VALUES ('A', ?)", (message_id,))
            self.db.execute("INSERT INTO inbox VALUES (?, ?)", (message_id, blob))
        self._pending_selects.clear()
        return True

    def has_message(self, message_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM inbox WHERE id = ?", (message_id,)).fetchone() is not None

    def message(self, message_id: str) -> bytes:
        row = self.db.execute("SELECT blob FROM inbox WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            raise KeyError(f"message {message_id} is not in the inbox")
        return row[0]

    def outbox(self, limit: int = 1000) -> list[tuple[str, int, bytes]]:
        """Messages not yet acknowledged by their destination, oldest first."""
        return list(self.db.execute("SELECT id, dest, blob FROM outbox ORDER BY rowid LIMIT ?", (limit,)))

    def outbox_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0]

    def acknowledge(self, message_ids: list[str]) -> None:
        """Their destinations stored them: they leave the outbox."""
        with self._transaction():
            self.db.executemany("DELETE FROM outbox WHERE id = ?", [(i,) for i in message_ids])

    # -- reading -------------------------------------------------------------------------------------
    def step_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM steps").fetchone()[0]

    def steps(self, start: int = 0) -> Iterator[StepRecord]:
        cursor = self.db.execute(f"SELECT {_STEP_COLUMNS} FROM steps WHERE step >= ? ORDER BY step", (start,))
        for row in cursor:
            yield step_from_row(row)

    def step(self, step: int) -> StepRecord | None:
        row = self.db.execute(f"SELECT {_STEP_COLUMNS} FROM steps WHERE step = ?", (step,)).fetchone()
        return None if row is None else step_from_row(row)

    def ops(self, after: int = 0) -> Iterator[tuple[int, str, str]]:
        yield from self.db.execute("SELECT seq, kind, url FROM ops WHERE seq > ? ORDER BY seq", (after,))

    def closure(self) -> set[str]:
        """Every URL the crawl counts as fetched (requested URLs and the final URLs of redirects)."""
        return {url for (url,) in self.db.execute("SELECT url FROM steps UNION SELECT final_url FROM steps")}

    def error_count(self) -> int:
        """Steps that failed: network errors, refusals (status 0) and HTTP errors."""
        return self.db.execute("SELECT COUNT(*) FROM steps WHERE status = 0 OR status >= 400").fetchone()[0]

    def warc_end(self) -> int | None:
        """Size of the WARC after the last committed step's records (None: no step wrote one)."""
        return self.db.execute("SELECT MAX(warc_end) FROM steps").fetchone()[0]

    def last_frontier_size(self) -> int:
        row = self.db.execute("SELECT frontier_size FROM steps ORDER BY step DESC LIMIT 1").fetchone()
        return 0 if row is None else row[0]

    def latest_checkpoint(self) -> tuple[int, int, bytes] | None:
        row = self.db.execute("SELECT seq, step, blob FROM checkpoints ORDER BY seq DESC LIMIT 1").fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def harvest_series(self) -> list[tuple[int, float, float, str, int]]:
        """(step, fetched_at, reward, host, frontier_size) per step, for harvest.csv and the plot."""
        return list(self.db.execute("SELECT step, fetched_at, reward, host, frontier_size FROM steps ORDER BY step"))

    # -- plumbing ------------------------------------------------------------------------------------
    def _transaction(self):
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb):
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
        return False
