"""Why a crawl's run folder could not be written, said as it is: the machine's failures apart from damage.

A crawl stops when its disk fills, its folder turns read-only, its lock is lost or memory runs out, and none of
these damages the run folder: every step is one store transaction, so the steps committed before the failure are
whole, and the files derived from the store (pages.jsonl, harvest.csv, the WARC) are brought in line with it when
the crawl resumes. So each is one line naming the cause and the next step, the same command again, as a
``MachineError``. Only a store that cannot be read (SQLite's CORRUPT or NOTADB, a failed check) is damage,
``StoreDamagedError``, and only damage is told to ``--repair``: repairing a whole store sets it aside for nothing.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

RESUMES = "run the same command again: the crawl resumes where it stopped, with nothing lost"


class StoreDamagedError(RuntimeError):
    """The crawl-state store cannot be read; ``focuscrawl crawl --repair`` salvages what it can."""


def damage_message(path: Path, detail: str) -> str:
    return (f"{path} is damaged ({detail.splitlines()[0] if detail else 'unreadable'}); run the same "
            f"crawl command with --repair to keep what can be read, or start a new run folder")


class MachineError(RuntimeError):
    """The machine stopped the crawl, not damage: ``cause`` is one of ``MESSAGES``' keys. The run folder is whole
    and the same command resumes it."""

    def __init__(self, cause: str, run: Path, detail: str = "", steps: int | None = None):
        self.cause = cause
        after = f" after {steps} page(s)" if steps is not None else ""
        super().__init__(MESSAGES[cause].format(run=run, detail=detail or cause, after=after))


# One line per cause: what happened, then what to do.
MESSAGES = {
    "disk full": "the disk holding {run} is full ({detail}); the crawl stopped{after}: free space, then " + RESUMES,
    "read-only": "{run} cannot be written ({detail}): it is read-only or not yours; the crawl stopped{after}: make "
                 "it writable, then " + RESUMES,
    "disk error": "the disk holding {run} failed a read or write ({detail}); the crawl stopped{after}: check the "
                  "disk, then " + RESUMES,
    "lock lost": "{run}'s lock file (.lock) was removed or taken by another process, so another crawl may be "
                 "writing there; this one stopped{after}: make sure no other crawl uses {run}, then " + RESUMES,
    "out of memory": "out of memory ({detail}); the crawl of {run} stopped{after}: free memory (close other "
                     "programs, or lower --concurrency), then " + RESUMES,
}

# SQLite's primary result codes (an extended code's low byte) and errno values that are the machine's doing
_SQLITE_CAUSES = {sqlite3.SQLITE_FULL: "disk full", sqlite3.SQLITE_READONLY: "read-only",
                  sqlite3.SQLITE_CANTOPEN: "read-only", sqlite3.SQLITE_PERM: "read-only",
                  sqlite3.SQLITE_IOERR: "disk error", sqlite3.SQLITE_NOMEM: "out of memory"}
_ERRNO_CAUSES = {errno.ENOSPC: "disk full", errno.EDQUOT: "disk full", errno.EROFS: "read-only",
                 errno.EACCES: "read-only", errno.EPERM: "read-only", errno.EIO: "disk error",
                 errno.ENOMEM: "out of memory"}


def machine_cause(exc: BaseException) -> str | None:
    """The machine failure ``exc`` is (a ``MESSAGES`` key), or None: a sqlite3 error by its result code, an
    ``OSError`` by its errno, a ``MemoryError``."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return None if code is None else _SQLITE_CAUSES.get(code & 0xFF)
    if isinstance(exc, OSError):
        return _ERRNO_CAUSES.get(exc.errno)
    return None


def store_failure(exc: BaseException, store: Path, steps: int | None = None) -> BaseException:
    """What to raise for ``exc``, met opening, writing or reading the state store at ``store`` (or anything else
    of its run folder): a ``MachineError`` for the machine's failures, ``StoreDamagedError`` for any other sqlite3
    error, else ``exc`` itself."""
    cause = machine_cause(exc)
    detail = str(exc).splitlines()[0] if str(exc) else ""
    if cause is not None:
        return MachineError(cause, Path(store).parent, getattr(exc, "strerror", None) or detail, steps)
    if isinstance(exc, sqlite3.DatabaseError):
        return StoreDamagedError(damage_message(store, detail))
    return exc
