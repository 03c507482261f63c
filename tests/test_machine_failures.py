"""The machine's failures said as they are: a full disk, a read-only folder, a lost lock or memory running out
stops a crawl with one line naming the cause and the next step (never ``--repair``: nothing is damaged), and the
same crawl again resumes and ends with every page once, as an uninterrupted crawl has them.

Most causes are raised where the machine raises them (sqlite3's result codes, an ``OSError``'s errno, a
``MemoryError`` from the policy) by a patch at step ``FAIL_AT``; the lock is really removed or replaced. Where
this process may mount (root, as in CI), a real tiny tmpfs fills up and a real read-only mount refuses writes;
elsewhere those two tests are skipped.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import gzip
import json
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from focuscrawl.bench.protocol import init_from_web
from focuscrawl.cli.main import main
from focuscrawl.crawl import Crawler
from focuscrawl.storage.failures import MachineError, store_failure
from focuscrawl.storage.pages import PagesWriter
from focuscrawl.storage.state import StateStore
from focuscrawl.storage.warc import WarcOutput
from focuscrawl.strategies.baselines import BreadthFirstPolicy
from focuscrawl.webs import embedded_web_dir

BUDGET = 40
FAIL_AT = 20
pytestmark = pytest.mark.slow  # every test crawls 40 pages, twice or more (~3 s a crawl)


@pytest.fixture(scope="module")
def topic(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("machine") / "topic"
    init_from_web(path, embedded_web_dir(), "subject.Science.Biology", seeds=1)
    return path


def settings(topic: Path, run: Path) -> dict:
    return dict(topic=topic, out=run, web="embedded", strategy="bfs", progress="none", plot=False, concurrency=1,
                warc=True, checkpoint_every=7, budget=BUDGET)


@pytest.fixture(scope="module")
def reference(topic, tmp_path_factory) -> list[str]:
    """The URLs of the uninterrupted crawl, in order."""
    run = tmp_path_factory.mktemp("reference") / "run"
    Crawler(**settings(topic, run)).crawl()
    return [page["url"] for page in read_pages(run)]


def read_pages(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def assert_whole(run: Path, reference: list[str]) -> None:
    """Every page once, as the uninterrupted crawl has them, in the store and in every file derived from it."""
    pages = read_pages(run)
    assert [p["step"] for p in pages] == list(range(BUDGET))
    assert [p["url"] for p in pages] == reference
    assert len((run / "harvest.csv").read_text().splitlines()) == BUDGET + 1  # its header
    with gzip.open(run / "crawl.warc.gz", "rt", errors="replace") as fh:
        targets = [line.split(": ", 1)[1].strip() for line in fh if line.startswith("WARC-Target-URI:")]
    responses = targets[::2] if len(targets) == 2 * BUDGET else sorted(set(targets))
    assert sorted(set(responses)) == sorted(reference)
    assert json.loads((run / "summary.json").read_text())["steps"] == BUDGET


def assert_said_as_it_is(message: str, run: Path, words: str) -> None:
    assert words in message and str(run) in message
    assert "run the same command again" in message and "--repair" not in message and "damaged" not in message
    assert len(message.splitlines()) == 1


def sqlite_error(code: int, text: str) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorcode = code  # as sqlite3 sets it
    return exc


def fail_once_at(monkeypatch, cls, name: str, exc: BaseException, step_of) -> None:
    """Patch ``cls.name`` to raise ``exc`` once, when called for step ``FAIL_AT``, then undo the patch."""
    original = getattr(cls, name)

    def failing(self, *args, **kwargs):
        if step_of(*args) == FAIL_AT:
            monkeypatch.setattr(cls, name, original)
            raise exc
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, failing)


def record_step(record, *rest) -> int:
    return record.step


CAUSES = {
    # (patched class, method, the step its call is for, the error, the cause, words of the line)
    "sqlite full": (StateStore, "commit_step", record_step,
                    sqlite_error(sqlite3.SQLITE_FULL, "database or disk is full"), "disk full", "is full"),
    "pages.jsonl full": (PagesWriter, "write", record_step, OSError(errno.ENOSPC, "No space left on device"),
                         "disk full", "is full"),
    "sqlite read-only": (StateStore, "commit_step", record_step,
                         sqlite_error(sqlite3.SQLITE_READONLY, "attempt to write a readonly database"), "read-only",
                         "cannot be written"),
    "WARC read-only": (WarcOutput, "write", None, OSError(errno.EROFS, "Read-only file system"), "read-only",
                       "make it writable"),
    "out of memory": (BreadthFirstPolicy, "observe", lambda observation: observation.step, MemoryError(),
                      "out of memory", "out of memory"),
}


@pytest.mark.parametrize("case", list(CAUSES))
def test_a_machine_failure_is_one_line_and_the_same_crawl_resumes_whole(topic, reference, tmp_path, monkeypatch,
                                                                      case):
    cls, name, step_of, exc, cause, words = CAUSES[case]
    if step_of is None:  # the WARC is written before the step is made: count its calls
        calls = iter(range(10**6))
        step_of = lambda *args: next(calls)  # noqa: E731
    fail_once_at(monkeypatch, cls, name, exc, step_of)
    run = tmp_path / "run"
    with pytest.raises(MachineError) as failure:
        Crawler(**settings(topic, run)).crawl()
    assert failure.value.cause == cause
    assert_said_as_it_is(str(failure.value), run, words)
    assert f"after {FAIL_AT} page(s)" in str(failure.value)
    summary = Crawler(**settings(topic, run)).crawl()
    assert summary.steps == BUDGET and summary.resumed_steps == FAIL_AT + (case == "pages.jsonl full")
    assert_whole(run, reference)


async def _crawl_until_lock_lost(crawler: Crawler, lose_lock) -> int:
    seen = 0
    async for page in crawler.run():
        seen += 1
        if page.step == FAIL_AT - 1:
            lose_lock()
    return seen


@pytest.mark.parametrize("how", ["removed", "taken"])
def test_a_lost_lock_stops_the_crawl_before_its_next_commit_and_it_resumes_whole(topic, reference, tmp_path, how):
    run = tmp_path / "run"
    taken = []

    def lose_lock() -> None:
        (run / ".lock").unlink()
        if how == "taken":  # another crawl's lock: a new file, locked by another open file
            fh = open(run / ".lock", "w")
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            taken.append(fh)

    with pytest.raises(MachineError) as failure:
        asyncio.run(_crawl_until_lock_lost(Crawler(**settings(topic, run)), lose_lock))
    assert failure.value.cause == "lock lost"
    assert_said_as_it_is(str(failure.value), run, "lock")
    for fh in taken:  # the other crawl ends
        fh.close()
    summary = Crawler(**settings(topic, run)).crawl()
    assert summary.resumed_steps == FAIL_AT  # nothing was committed once the lock was lost
    assert_whole(run, reference)


def test_damage_alone_is_told_to_repair(tmp_path):
    for code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        said = str(store_failure(sqlite_error(code, "database disk image is malformed"), tmp_path / "state.sqlite"))
        assert "--repair" in said and "damaged" in said
    for code in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM,
                 sqlite3.SQLITE_CANTOPEN):
        said = store_failure(sqlite_error(code, "x"), tmp_path / "state.sqlite")
        assert isinstance(said, MachineError) and "--repair" not in str(said)
    other = OSError(errno.ENOENT, "No such file or directory")
    assert store_failure(other, tmp_path / "state.sqlite") is other  # not the machine's: left as it is


# -- real filesystems: a tmpfs that fills up, a read-only mount ------------------------------------------------------
def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs mounted at a fresh folder, and the function that remounts it with other options; skipped where this
    process may not mount."""
    where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    try:
        _mount("-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where))
    except (OSError, subprocess.SubprocessError):
        pytest.skip("mounting a tmpfs is not permitted here: the full-disk and read-only folder tests need it")
    try:
        yield where, lambda options: _mount("-o", f"remount,{options}", str(where))
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def _cli_args(topic: Path, run: Path, budget: int = BUDGET) -> list[str]:
    return ["crawl", "-o", str(run), "--topic", str(topic), "--web", "embedded", "--strategy", "bfs", "--progress",
            "none", "--concurrency", "1", "--warc", "--budget", str(budget), "-s", "plot=false",
            "-s", "checkpoint_every=7"]


def test_a_real_full_disk_says_free_space_and_the_same_command_resumes(topic, reference, small_disk, capsys):
    disk, remount = small_disk
    run = disk / "run"
    assert main(_cli_args(topic, run, FAIL_AT)) == 0
    used = sum(p.stat().st_size for p in run.iterdir())
    remount(f"size={used + 600_000}")  # room for a few more pages, not for 20
    capsys.readouterr()
    assert main(_cli_args(topic, run)) == 75
    said = capsys.readouterr().err.strip()
    assert_said_as_it_is(" ".join(said.split()), run, "is full")
    remount("size=64m")  # space freed
    assert main(_cli_args(topic, run)) == 0
    assert_whole(run, reference)


def test_a_real_read_only_folder_says_make_it_writable_and_the_same_command_resumes(topic, reference, small_disk,
                                                                                   capsys):
    disk, remount = small_disk
    run = disk / "run"
    assert main(_cli_args(topic, run, FAIL_AT)) == 0
    remount("ro")
    capsys.readouterr()
    assert main(_cli_args(topic, run)) == 75
    said = " ".join(capsys.readouterr().err.split())
    assert_said_as_it_is(said, run, "cannot be written")
    remount("rw")
    assert main(_cli_args(topic, run)) == 0
    assert_whole(run, reference)
    shutil.rmtree(run)
