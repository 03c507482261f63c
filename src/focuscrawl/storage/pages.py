"""pages.jsonl: one JSON object per fetched URL, in step order, appended after the step is committed.

Because a line is written only once its step is in the state store, a crash can leave the file short
(records committed but not yet written) or with a partial last line, never ahead of the store except
after a power cut. ``repair`` brings it back in line with the store: keep the longest prefix of valid
lines whose steps are 0, 1, 2, ..., truncate the rest, then append what the store has beyond it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from focuscrawl.storage.state import StateStore, StepRecord

PAGES_FILE = "pages.jsonl"


def valid_prefix(path: Path, limit: int | None = None) -> tuple[int, int]:
    """(number of records, byte length) of the file's longest prefix of complete, in-order records."""
    count = 0
    length = 0
    if not path.exists():
        return 0, 0
    with open(path, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n") or (limit is not None and count >= limit):
                break
            try:
                step = json.loads(line)["step"]
            except (ValueError, KeyError, TypeError):
                break
            if step != count:
                break
            count += 1
            length += len(line)
    return count, length


def repair_pages(path: Path, store: StateStore, strategy: str) -> tuple[int, int]:
    """Make ``path`` hold exactly the store's steps. Returns (records truncated away, records appended)."""
    total = store.step_count()
    count, length = valid_prefix(path, limit=total)
    size = path.stat().st_size if path.exists() else 0
    dropped = 0
    if size != length:
        with open(path, "rb") as fh:
            fh.seek(length)
            dropped = fh.read().count(b"\n")
        with open(path, "r+b") as fh:
            fh.truncate(length)
    appended = 0
    if count < total:
        with PagesWriter(path, strategy) as writer:
            for record in store.steps(start=count):
                writer.write(record)
                appended += 1
    return dropped, appended


class PagesWriter:
    """Appends records; each line is flushed to the OS at once, so a killed process loses none of them."""

    def __init__(self, path: str | Path, strategy: str):
        self.path = Path(path)
        self.strategy = strategy
        self._fh = open(self.path, "a", encoding="utf-8")

    def write(self, record: StepRecord) -> None:
        # One write() call per line: a kill can cut a line short, but never interleave two of them.
        self._fh.write(json.dumps(record.to_json(self.strategy), ensure_ascii=False) + "\n")
        self._fh.flush()

    def write_all(self, records: Iterable[StepRecord]) -> None:
        for record in records:
            self.write(record)

    def sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> PagesWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
