"""Reading a state store that a crawl may be writing: read-only, without the run folder's lock, never in its way.

``state.py`` writes the store; this module holds the queries of those who only read it: ``StoreReader`` (the
dashboard, polling a live crawl) and ``read_steps`` (an export). A connection is read-only and creates no file
(``connect_readonly``), so WAL readers do not block the writer and see only committed steps, and a finished folder
is left exactly as it was.
"""

from __future__ import annotations

import json
import sqlite3
from collections import namedtuple
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from focuscrawl.storage.failures import StoreDamagedError, damage_message
from focuscrawl.storage.state import (
    ADDED_COLUMNS,
    SCHEMA_VERSION,
    STEP_COLUMNS,
    StepRecord,
    StoreVersionError,
    step_from_row,
)


def connect_readonly(path: Path, timeout: float = 1.0) -> sqlite3.Connection:
    """A read-only connection to the state store that creates no file and takes no write lock."""
    path = Path(path).resolve()
    uri = f"{path.as_uri()}?mode=ro"
    if not path.with_name(path.name + "-wal").exists():
        # No writer has it open (a WAL writer keeps the -wal file while connected): everything is in the
        # main file, and immutable keeps SQLite from creating -wal/-shm files in a finished folder.
        uri += "&immutable=1"
    db = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
    db.execute("PRAGMA query_only=1")
    return db


def _select(db: sqlite3.Connection, columns: tuple[str, ...]) -> str:
    """``columns`` to select from ``steps``; one a store made before it was added lacks reads as its default, as
    ``StateStore`` gives it the steps it holds."""
    have = {row[1] for row in db.execute("PRAGMA table_info(steps)")}
    defaults = {name: declaration.rpartition("DEFAULT ")[2] for name, declaration in ADDED_COLUMNS}
    return ", ".join(f"{defaults[name]} AS {name}" if name in defaults and name not in have else name
                     for name in columns)


def read_steps(path: Path) -> Iterator[StepRecord]:
    """Every step committed to the store at ``path``, in step order, read as the dashboard reads it (read-only, no
    lock): a running crawl is read up to its last commit, and a finished folder is left exactly as it was."""
    path = Path(path)
    try:
        db = connect_readonly(path)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:  # a crawl starting: nothing committed yet
                return
            if json.loads(row[0]) != SCHEMA_VERSION:
                raise StoreVersionError(f"{path} was written by another focuscrawl version (store format "
                                        f"{row[0]}, this one reads {SCHEMA_VERSION}); read it with that version")
            yield from map(step_from_row, db.execute(f"SELECT {_select(db, STEP_COLUMNS)} FROM steps ORDER BY step"))
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise StoreDamagedError(damage_message(path, str(exc))) from None


# A committed step without its page body (text and outlinks, which can be large): what a viewer lists. Its fields
# are the store's columns but the body (``skipped`` is JSON text: [[url, why], ...]).
StepRow = namedtuple("StepRow", [name for name in STEP_COLUMNS if name != "body"])


class StoreReader:
    """The queries of a viewer of a run folder's store (``focuscrawl.dashboard``), on one read-only connection.

    Open it for one read and close it at once (``with StoreReader(path) as store:``): a connection kept open would
    hold a snapshot that keeps the crawl's WAL from being checkpointed. Raises ``sqlite3.Error`` for a store being
    created or damaged."""

    def __init__(self, path: Path, timeout: float = 1.0):
        self.db = connect_readonly(path, timeout)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """The reads inside see one state of the store (a commit between them is not half seen)."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def meta(self) -> dict[str, str]:
        """The store's meta table: key -> its value as JSON text."""
        return dict(self.db.execute("SELECT key, value FROM meta"))

    def last_step(self) -> int | None:
        return self.db.execute("SELECT MAX(step) FROM steps").fetchone()[0]

    def step_rows(self, start: int) -> Iterator[StepRow]:
        """The steps from ``start`` on, in step order, without their bodies."""
        cursor = self.db.execute(f"SELECT {_select(self.db, StepRow._fields)} FROM steps WHERE step >= ? "
                                 "ORDER BY step", (start,))
        return map(StepRow._make, cursor)

    def step(self, step: int) -> StepRecord | None:
        """One step with its page (a body that cannot be decoded reads as no text and no outlinks)."""
        row = self.db.execute(f"SELECT {_select(self.db, STEP_COLUMNS)} FROM steps WHERE step = ?",
                              (step,)).fetchone()
        return None if row is None else step_from_row(row, damaged_body_ok=True)

    def step_of(self, url: str) -> int | None:
        """The step that fetched ``url``, or was redirected to it."""
        row = self.db.execute("SELECT step FROM steps WHERE url = ? OR final_url = ? LIMIT 1", (url, url)).fetchone()
        return None if row is None else row[0]
