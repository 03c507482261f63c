"""Repairing a damaged run folder: salvage what the crawl-state store still holds, say what was lost.

A disk error, a copy of a folder taken mid-write or a stray edit can damage ``state.sqlite``
("database disk image is malformed"). ``repair_run_folder`` moves the damaged file aside and copies every
row it can still read into a fresh store, table by table (a read that fails is split in halves until the
unreadable rows are isolated). The crawl can only continue from a consistent prefix: steps 0..k-1 with no
gap, the operation log up to step k-1's record, and checkpoints taken at or before it. What lies beyond is
reported as lost (its pages stay in the set-aside files), and the next ``focuscrawl crawl`` on the folder
resumes from step k, rebuilding pages.jsonl, harvest.csv and the WARC from the store as usual.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.storage.failures import StoreDamagedError, damage_message, store_failure
from focuscrawl.storage.state import STATE_FILE, StateStore

DERIVED = ("pages.jsonl", "harvest.csv")


@dataclass
class RepairReport:
    folder: str
    set_aside: str
    steps_kept: int
    steps_lost: int
    rows_unreadable: int
    checkpoints_kept: int

    def __str__(self) -> str:
        lost = f"{self.steps_lost} step(s) after it lost" if self.steps_lost else "no step lost"
        unreadable = f", {self.rows_unreadable} unreadable row(s) skipped" if self.rows_unreadable else ""
        return (f"repaired {self.folder}: {self.steps_kept} step(s) kept, {lost}{unreadable}; the damaged store "
                f"and the files derived from it are in {self.set_aside}")


def check_store(path: Path) -> None:
    """Raise StoreDamagedError when ``path`` is not a readable SQLite database (a quick structural check)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            result = db.execute("PRAGMA quick_check").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:  # damage, or the machine's (a read-only folder, a failing disk)
        raise store_failure(exc, path) from None
    if result is None or result[0] != "ok":
        raise StoreDamagedError(damage_message(path, str(result[0]) if result else "no answer"))


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    try:
        row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
        return row is not None
    except sqlite3.DatabaseError:
        return True  # the schema is unreadable: look for the rows anyway


def _readable_rows(db: sqlite3.Connection, table: str, lost: list[int]) -> Iterator[tuple]:
    """Every row of ``table`` that can be read, in rowid order; counts unreadable rows into ``lost``."""
    try:
        top = db.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        top = 1 << 22  # the b-tree's root is damaged: probe a wide range

    def read(low: int, high: int) -> Iterator[tuple]:
        try:
            rows = db.execute(f"SELECT * FROM {table} WHERE rowid BETWEEN ? AND ?", (low, high)).fetchall()
        except sqlite3.DatabaseError:
            if low == high:
                lost[0] += 1
                return
            middle = (low + high) // 2
            yield from read(low, middle)
            yield from read(middle + 1, high)
            return
        yield from rows

    for start in range(0, top + 1, 4096):
        yield from read(start, min(start + 4095, top))


def repair_run_folder(folder: str | Path) -> RepairReport:
    """Salvage ``folder``'s state store into a fresh one (see the module docstring)."""
    folder = Path(folder)
    path = folder / STATE_FILE
    if not path.exists():
        raise FileNotFoundError(f"{folder} holds no crawl state ({STATE_FILE} not found): nothing to repair")
    aside = _set_aside(folder)
    tables, unreadable = _readable_tables(aside / STATE_FILE)
    meta = {key: value for key, value in tables["meta"]}
    if "schema_version" not in meta or "identity" not in meta:
        raise StoreDamagedError(f"{aside / STATE_FILE} lost the record of what its crawl was (its settings): it "
                                f"cannot be resumed; start a new run folder (the pages it fetched are in {aside})")
    steps = sorted(tables["steps"], key=lambda row: row[0])
    kept = 0
    while kept < len(steps) and steps[kept][0] == kept:
        kept += 1
    ops, adopted_later, kept = _log_up_to(tables["ops"], {row[0] for row in tables["inbox"]}, kept)
    last_seq = ops[-1][0] if ops else 0
    checkpoints = [row for row in tables["checkpoints"] if row[0] <= last_seq and row[1] < kept]
    _write_store(path, {**tables, "ops": ops + adopted_later, "steps": steps[:kept], "checkpoints": checkpoints})
    return RepairReport(str(folder), str(aside), kept, len(steps) - kept, unreadable, len(checkpoints))


def _set_aside(folder: Path) -> Path:
    """Move the damaged store and the files derived from it into a new ``damaged-TIME`` folder; returns it."""
    aside = folder / f"damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    aside.mkdir()
    for name in (STATE_FILE, f"{STATE_FILE}-wal", f"{STATE_FILE}-shm", *DERIVED):
        if (folder / name).exists():
            shutil.move(str(folder / name), str(aside / name))
    return aside


def _readable_tables(path: Path) -> tuple[dict[str, list[tuple]], int]:
    """Every readable row of the store at ``path`` by table, and how many rows could not be read."""
    old = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    unreadable = [0]
    try:
        tables = {name: list(_readable_rows(old, name, unreadable)) for name in ("meta", "ops", "steps", "checkpoints")}
        for name in ("inbox", "outbox"):  # a distributed crawl's shard (stores of older versions lack them)
            tables[name] = list(_readable_rows(old, name, unreadable)) if _has_table(old, name) else []
    finally:
        old.close()
    return tables, unreadable[0]


def _log_up_to(rows: list[tuple], inbox: set[str], kept: int) -> tuple[list[tuple], list[tuple], int]:
    """The operation log up to the record of step ``kept - 1`` (its selects and records, in order), the messages
    adopted after it, and the steps it can replay (``kept``, or fewer when the log lost a record).

    A distributed crawl's shard: a message adopted ('A') is kept wherever it is, after the cut too (its sender has
    forgotten it; the steps around it are redone anyway), if its row in ``inbox`` is still readable."""
    ops, adopted_later, records = [], [], 0
    for op in sorted(rows):
        if op[1] == "A":
            if op[2] in inbox:
                (ops if records < kept else adopted_later).append(op)
            continue
        if records == kept:
            continue
        ops.append(op)
        records += op[1] == "R"
    return ops, adopted_later, min(kept, records)


def _write_store(path: Path, tables: dict[str, list[tuple]]) -> None:
    """A fresh store at ``path`` holding ``tables``' rows."""
    store = StateStore(path)
    try:
        with store._transaction() as db:
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", tables["meta"])
            db.executemany("INSERT INTO ops VALUES (?, ?, ?)", tables["ops"])
            if tables["steps"]:
                # by position: a store older than a column lacks only the last ones, which keep their defaults
                columns = [row[1] for row in db.execute("PRAGMA table_info(steps)")][:len(tables["steps"][0])]
                db.executemany(f"INSERT INTO steps ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                               tables["steps"])
            db.executemany("INSERT INTO checkpoints VALUES (?, ?, ?, ?)", tables["checkpoints"])
            db.executemany("INSERT INTO inbox VALUES (?, ?)", tables["inbox"])
            db.executemany("INSERT INTO outbox VALUES (?, ?, ?)", tables["outbox"])
    finally:
        store.close()
