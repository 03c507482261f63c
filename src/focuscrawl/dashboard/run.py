"""Reading a crawl's run folder while the crawl writes it: read-only, incremental, never in the writer's way.

* ``state.sqlite`` is read through ``focuscrawl.storage.reader.StoreReader``, opened per refresh (read-only)
  and closed at once, so the dashboard never holds a snapshot that would keep the crawl's WAL from being
  checkpointed, and never creates a file in a finished folder.
* The run folder's lock (``.lock``, an flock held by the crawl) is never taken: whether a crawl is
  running is read from ``/proc/locks`` (Linux), else from the pid in the lock file.
* Only the steps after the last one seen are read (without their page bodies), and the aggregates are
  updated in place: a poll of a 100,000-step crawl reads the few new rows, not the table.
* ``pages.jsonl`` is indexed by byte offset as it grows, so a page's text is one seek, never a rescan.
* A missing, half-written or repaired folder is tolerated: whatever cannot be read now is read later.
"""

from __future__ import annotations

import heapq
import json
import os
import re
import sqlite3
import threading
import time
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from focuscrawl.config import CONFIG_FILE
from focuscrawl.crawl.run_folder import LOCK_FILE, SUMMARY_FILE
from focuscrawl.storage.harvest import HARVEST_FILE
from focuscrawl.storage.pages import PAGES_FILE
from focuscrawl.storage.reader import StepRow, StoreReader
from focuscrawl.storage.state import STATE_FILE

T = TypeVar("T")

LATEST = 30          # rows in the "latest pages" table
TOP_HOSTS = 12       # rows in each host table
WINDOW = 100         # steps of the recent harvest rate
RATE_WINDOW_S = 10.0  # seconds of the current pages/s

_STEP_PREFIX = re.compile(rb'\{"step": (\d+)')

# The fetcher's words for why a URL was not fetched (http/fetcher.py, http/safety.py): refusals before any request.
_URL_REFUSALS = ("url longer", "malformed url", "scheme", "url has no host", "port 0", "credentials in url",
                 "looks like a spider trap", "redirect to an unusable url")


def verdict_kind(verdict: str) -> str:
    """A defence's verdict without its particulars: ``duplicate of URL`` is a ``duplicate``."""
    return "duplicate" if verdict.startswith("duplicate of ") else verdict


def problem_kind(status: int, error: str) -> tuple[str, bool] | None:
    """What went wrong with a step: (kind, counts as an error), or None when nothing did.

    Errors are what the store counts (``StateStore.error_count``: status 0 or >= 400): HTTP errors by
    status, robots.txt, refusals (private address, unusable URL, spider trap), timeouts, connections that
    failed. A 2xx/3xx step with an error (not HTML, body cut, redirect loop) is a problem but not an error.
    """
    text = (error or "").strip().lower()
    if status >= 400:
        return f"HTTP {status}", True
    if status == 0:
        if "robots.txt" in text:
            return "robots.txt", True
        if text.startswith("refused address"):
            return "refused: address", True
        if text.startswith(_URL_REFUSALS):
            return "refused: URL", True
        if text.startswith("timeout") or "timeouterror" in text or "timed out" in text:
            return "timeout", True
        if text.startswith("cannot connect") or "connection" in text:
            return "connection failed", True
        return "network: other", True
    if not text:
        return None
    if text.startswith("not html"):
        return "not HTML", False
    if text.startswith("body cut"):
        return "body cut", False
    if "redirect" in text:
        return "redirect problem", False
    return "other", False


# -- read-only access ----------------------------------------------------------------------------------
def lock_held(lock_path: Path) -> bool | None:
    """Whether a process holds the flock on ``lock_path`` (None: cannot tell on this system).

    Read from /proc/locks, so the lock is never taken, not even for a moment (a crawl starting at that
    moment would find its folder busy)."""
    try:
        st = os.stat(lock_path)
    except OSError:
        return False
    try:
        with open("/proc/locks") as fh:
            text = fh.read()
    except OSError:
        return None
    wanted = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 6 or parts[1] != "FLOCK":  # "->" lines are waiters, not holders
            continue
        try:
            major, minor, inode = parts[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == wanted:
                return True
        except ValueError:
            continue
    return False


def crawl_running(folder: Path) -> bool:
    lock = folder / LOCK_FILE
    held = lock_held(lock)
    if held is not None:
        return held
    try:  # no /proc/locks: a live pid in the lock file, written after the last summary
        pid = int(lock.read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return False
    summary = folder / SUMMARY_FILE
    return not summary.exists() or summary.stat().st_mtime < lock.stat().st_mtime


# -- pages.jsonl by offset -----------------------------------------------------------------------------
class PagesIndex:
    """Byte offsets of ``pages.jsonl``'s lines, extended as the file grows, rebuilt if it is cut back."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._reset(None)

    def _reset(self, ident) -> None:
        self.offsets = array("q")
        self.scanned = 0
        self.ident = ident

    def __len__(self) -> int:
        with self._lock:
            self._extend()
            return len(self.offsets)

    def _extend(self) -> None:
        try:
            st = os.stat(self.path)
        except OSError:
            self._reset(None)
            return
        ident = (st.st_dev, st.st_ino)
        if ident != self.ident or st.st_size < self.scanned:
            self._reset(ident)  # replaced, or cut back by a resume's repair
        if st.st_size == self.scanned:
            return
        with open(self.path, "rb") as fh:
            fh.seek(self.scanned)
            position = self.scanned
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # the writer is in the middle of this line
                match = _STEP_PREFIX.match(line, 0, 48)
                if match is not None:
                    step = int(match.group(1))
                else:
                    try:
                        step = json.loads(line)["step"]
                    except (ValueError, KeyError, TypeError):
                        break
                if step != len(self.offsets):
                    break  # not the next step: a repair is under way; read again later
                self.offsets.append(position)
                position += len(line)
            self.scanned = position

    def read(self, step: int) -> dict | None:
        """The pages.jsonl record of ``step`` (None if the file does not hold it yet)."""
        with self._lock:
            for attempt in range(2):
                self._extend()
                if not 0 <= step < len(self.offsets):
                    return None
                try:
                    with open(self.path, "rb") as fh:
                        fh.seek(self.offsets[step])
                        record = json.loads(fh.readline())
                    if record.get("step") == step:
                        return record
                except (OSError, ValueError, AttributeError):
                    pass
                self._reset(None)  # the file changed under the index: rebuild it once
            return None


# -- the aggregates of a crawl ---------------------------------------------------------------------------
class RunReader:
    """Everything the crawl page shows, kept up to date from the store by ``refresh``. Thread-safe."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.pages = PagesIndex(self.folder / PAGES_FILE)
        self._lock = threading.RLock()
        self._config_cache: tuple[float, dict] | None = None
        self.read_error = ""
        self._reset()

    def _reset(self) -> None:
        self.store_ident: tuple | None = None
        self.fetched_at = array("d")
        self.relevant = array("q")          # cumulative relevant pages after each step
        self.domains = array("q")           # cumulative relevant domains after each step
        self.frontier = array("q")
        self.relevant_hosts: set[str] = set()
        self.hosts: dict[str, list[int]] = {}  # host -> [pages, relevant, errors]
        self.problems: dict[str, dict[str, Any]] = {}
        # defence verdict kind -> pages fetched with it, URLs it kept out of the frontier, the latest step
        self.defences: dict[str, dict[str, Any]] = {}
        self.errors = 0
        self.latest: deque[tuple] = deque(maxlen=LATEST)  # the rows as read: made into dicts when shown
        self.meta: dict[str, Any] = {}

    @property
    def steps(self) -> int:
        return len(self.fetched_at)

    # -- refresh ---------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the steps committed since the last refresh (all of them after the store was replaced)."""
        with self._lock:
            path = self.folder / STATE_FILE
            try:
                st = os.stat(path)
            except OSError:
                if self.steps:
                    self._reset()
                self.read_error = ""
                return
            try:
                store = StoreReader(path)
            except sqlite3.Error as exc:
                self.read_error = f"state.sqlite not readable yet ({exc})"
                return
            try:
                self._read(store, (st.st_dev, st.st_ino))
                self.read_error = ""
            except sqlite3.Error as exc:  # a store being created, or damaged: keep what was read, try again
                self.read_error = f"state.sqlite not readable now ({exc})"
            finally:
                store.close()

    def _read(self, store: StoreReader, ident: tuple) -> None:
        meta = store.meta()
        ident = (*ident, meta.get("created"))
        if ident != self.store_ident:
            self._reset()
            self.store_ident = ident
        try:
            self.meta = {key: json.loads(value) for key, value in meta.items() if key != "identity"}
            self.meta["identity"] = json.loads(meta.get("identity", "{}"))
        except ValueError:
            pass
        with store.snapshot():  # one for both queries
            last = store.last_step()
            if last is None or last < self.steps - 1:
                if self.steps:
                    self._reset()  # repaired to fewer steps: start again
                    self.store_ident = ident
                if last is None:
                    return
            for row in store.step_rows(self.steps):
                if row.step != self.steps:
                    break
                self._add(row)

    def _add(self, row: StepRow) -> None:
        self._count_defences(row.step, row.url, row.verdict, row.skipped)
        relevant = row.reward > 0  # as harvest.csv counts it
        counts = self.hosts.setdefault(row.host, [0, 0, 0])
        counts[0] += 1
        if relevant:
            counts[1] += 1
            self.relevant_hosts.add(row.host)
        problem = problem_kind(row.status, row.error)
        if problem is not None:
            kind, is_error = problem
            entry = self.problems.setdefault(kind, {"kind": kind, "error": is_error, "count": 0})
            entry["count"] += 1
            entry.update(last_url=row.url, last_step=row.step, last_message=(row.error or "")[:200])
            if is_error:
                self.errors += 1
                counts[2] += 1
        self.fetched_at.append(row.fetched_at)
        self.relevant.append((self.relevant[-1] if self.relevant else 0) + int(relevant))
        self.domains.append(len(self.relevant_hosts))
        self.frontier.append(row.frontier_size)
        self.latest.append(row)

    def _count_defences(self, step: int, url: str, verdict: str, skipped: str) -> None:
        def entry(kind: str) -> dict[str, Any]:
            return self.defences.setdefault(kind, {"kind": kind, "pages": 0, "skipped": 0})

        if verdict:
            counts = entry(verdict_kind(verdict))
            counts["pages"] += 1
            counts.update(last_step=step, last_url=url, last_verdict=verdict)
        try:
            kept_out = json.loads(skipped) if skipped else []
        except ValueError:
            kept_out = []
        for item in kept_out:
            counts = entry(verdict_kind(str(item[1])))
            counts["skipped"] += 1
            counts.setdefault("last_step", step)
            counts.setdefault("last_url", str(item[0]))

    @staticmethod
    def _latest_record(row: StepRow) -> dict:
        problem = problem_kind(row.status, row.error)
        record = row._asdict()
        del record["fetch_s"], record["skipped"], record["warc_end"]
        return {**record, "fetch_ms": round(row.fetch_s * 1000.0, 1), "problem": problem[0] if problem else None}

    # -- the folder's other files ------------------------------------------------------------------------
    def config(self) -> dict:
        """config.yml (the effective configuration), re-read when it changes; {} when absent or unreadable."""
        path = self.folder / CONFIG_FILE
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return {}
        if self._config_cache is None or self._config_cache[0] != mtime:
            try:
                data = yaml.safe_load(path.read_text())
            except (OSError, yaml.YAMLError):
                data = None
            self._config_cache = (mtime, data if isinstance(data, dict) else {})
        return self._config_cache[1]

    def summary_file(self) -> dict | None:
        try:
            data = json.loads((self.folder / SUMMARY_FILE).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def status(self) -> str:
        """starting | running | finished | interrupted | stopped (killed) | waiting (no crawl yet)."""
        running = crawl_running(self.folder)
        if running:
            return "running" if self.steps else "starting"
        summary = self.summary_file()
        if summary is not None and summary.get("steps") == self.steps:
            return "interrupted" if summary.get("stopped") == "interrupted" else "finished"
        if self.steps or (self.folder / STATE_FILE).exists():
            return "stopped"
        return "waiting"

    # -- one page ----------------------------------------------------------------------------------------
    def page(self, step: int) -> dict | None:
        """A step's record with its text as the crawler saw it: from pages.jsonl, else from the store."""
        record = self.pages.read(step)
        if record is not None:
            record["source"] = PAGES_FILE
            return record
        record = self._read_one(lambda store: store.step(step))
        if record is None:
            return None
        return {"step": record.step, "url": record.url, "final_url": record.final_url, "status": record.status,
                "fetched_at": record.fetched_at, "fetch_ms": round(record.fetch_s * 1000.0, 1),
                "content_type": record.content_type, "title": record.title, "text": record.text,
                "relevance": record.relevance, "reward": record.reward, "depth": record.depth,
                "parent": record.parent, "strategy": self.meta.get("strategy"), "score": record.score,
                "reason": record.reason, "error": record.error, "outlinks": len(record.outlinks),
                "source": STATE_FILE}

    def step_of(self, url: str) -> int | None:
        """The step that fetched ``url`` (to link a page to its parent)."""
        return self._read_one(lambda store: store.step_of(url)) if url else None

    def _read_one(self, query: Callable[[StoreReader], T]) -> T | None:
        """One answer from the store, read-only; None when there is no store, no answer or it cannot be read."""
        path = self.folder / STATE_FILE
        if not path.exists():
            return None
        try:
            with StoreReader(path) as store:
                return query(store)
        except sqlite3.Error:
            return None

    # -- the figures -------------------------------------------------------------------------------------
    def pages_per_s(self, now: float | None) -> float:
        """Pages per second over the last few seconds (up to ``now``; None: up to the last page)."""
        n = self.steps
        if n < 2:
            return 0.0
        end = self.fetched_at[-1] if now is None else now
        start = end - RATE_WINDOW_S
        # fetch times follow commit order, so they are sorted (up to clock adjustments: close enough here)
        i = min(bisect_left(self.fetched_at, start), n - 1)
        count = n - i
        if self.fetched_at[-1] < start:
            return 0.0  # nothing fetched for a whole window: stalled (or between runs)
        if i > 0 or count < 2:
            return count / RATE_WINDOW_S
        # the whole crawl fits in the window: the rate over the time it has run
        span = end - self.fetched_at[0]
        return (count - 1) / span if span > 0 else 0.0

    def series(self, limit: int = 400) -> dict[str, list]:
        """The per-step curves, thinned to ``limit`` points: x is pages fetched (step + 1)."""
        from focuscrawl.dashboard.charts import thin

        n = self.steps
        idx = thin(n, limit)
        rate_window = max(20, n // 40)
        pages_per_s = []
        for i in idx:
            j = max(0, i - rate_window)
            dt = self.fetched_at[i] - self.fetched_at[j]
            pages_per_s.append(round((i - j) / dt, 3) if i > j and dt > 0 else None)
        return {
            "fetched": [i + 1 for i in idx],
            "relevant": [self.relevant[i] for i in idx],
            "harvest_rate": [round(self.relevant[i] / (i + 1), 5) for i in idx],
            "recent_harvest_rate": [round((self.relevant[i] - (self.relevant[i - WINDOW] if i >= WINDOW else 0))
                                          / min(i + 1, WINDOW), 5) for i in idx],
            "relevant_domains": [self.domains[i] for i in idx],
            "frontier_size": [self.frontier[i] for i in idx],
            "pages_per_s": pages_per_s,
        }

    def host_tables(self, limit: int = TOP_HOSTS) -> dict[str, list[dict]]:
        def row(host: str) -> dict:
            pages, relevant, errors = self.hosts[host]
            return {"host": host, "pages": pages, "relevant": relevant, "errors": errors,
                    "harvest_rate": round(relevant / pages, 4) if pages else 0.0}

        busiest = heapq.nlargest(limit, self.hosts, key=lambda h: (self.hosts[h][0], self.hosts[h][1]))
        relevant = heapq.nlargest(limit, (h for h in self.hosts if self.hosts[h][1]),
                                  key=lambda h: (self.hosts[h][1], -self.hosts[h][0]))
        return {"busiest": [row(h) for h in busiest], "most_relevant": [row(h) for h in relevant]}

    def snapshot(self, now: float | None = None, status: str | None = None) -> dict[str, Any]:
        """Everything the page shows, as plain JSON-able data (refresh first)."""
        with self._lock:
            now = time.time() if now is None else now
            status = status or self.status()
            config = self.config()
            n = self.steps
            live = status in ("running", "starting")
            budget = config.get("budget") or self.meta.get("context_budget")
            first = self.fetched_at[0] if n else None
            last = self.fetched_at[-1] if n else None
            summary = self.summary_file() if not live else None
            problems = sorted(self.problems.values(), key=lambda p: (not p["error"], -p["count"], p["kind"]))
            defences = sorted((dict(d) for d in self.defences.values()),
                              key=lambda d: (-d["pages"] - d["skipped"], d["kind"]))
            return {
                "kind": "crawl",
                "folder": str(self.folder),
                "name": self.folder.name,
                "status": status,
                "read_error": self.read_error,
                "strategy": self.meta.get("strategy") or config.get("strategy"),
                "topic": config.get("topic"),
                "source": config.get("web") or ("a loopback web" if config.get("hosts_map") else "the web"),
                "budget": budget,
                "created": self.meta.get("created"),
                "stopped": summary.get("stopped") if summary else None,
                "now": now,
                "totals": {
                    "steps": n,
                    "relevant": self.relevant[-1] if n else 0,
                    "harvest_rate": round(self.relevant[-1] / n, 5) if n else 0.0,
                    "recent_harvest_rate": (round((self.relevant[-1] - (self.relevant[-WINDOW - 1] if n > WINDOW
                                                                        else 0)) / min(n, WINDOW), 5) if n else 0.0),
                    "relevant_domains": len(self.relevant_hosts),
                    "hosts": len(self.hosts),
                    "frontier_size": self.frontier[-1] if n else 0,
                    "pages_per_s": round(self.pages_per_s(now if live else None), 2),
                    "errors": self.errors,
                    "error_rate": round(self.errors / n, 5) if n else 0.0,
                    "caught": sum(d["pages"] for d in self.defences.values()),
                    "kept_out": sum(d["skipped"] for d in self.defences.values()),
                    "first_fetch": first,
                    "last_fetch": last,
                    "crawl_s": round(last - first, 3) if n else 0.0,
                    "since_last_s": round(now - last, 3) if n else None,
                },
                "series": self.series(),
                "problems": problems,
                "defences": defences,
                "hosts": self.host_tables(),
                "latest": [self._latest_record(row) for row in reversed(self.latest)],
                "files": {name: (self.folder / name).exists() for name in (STATE_FILE, PAGES_FILE, HARVEST_FILE,
                                                                           SUMMARY_FILE, CONFIG_FILE)},
            }
