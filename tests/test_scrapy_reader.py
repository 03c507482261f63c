"""The Scrapy add-on's page reader (focuscrawl.scrapy.reader): the recorder in a child process answers the same jobs
with the same replies as in the caller's thread; a failure in the child is reported once and the child is reaped;
the child never outlives the process that started it. The add-on's crawls with it are in test_scrapy.py.

Nothing here waits for a duration to pass: the waits are for an event (a reply, a process's end), with bounds far
above what they take, so that a busy machine slows these tests without failing them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("scrapy")
pytestmark = pytest.mark.slow  # every test here starts the page reader's process, or another

from focuscrawl.config import RunSettings  # noqa: E402
from focuscrawl.scrapy.reader import (  # noqa: E402
    Answer,
    InlineReader,
    PageReader,
    ReaderError,
    Recorder,
    RecorderSpec,
)
from focuscrawl.topic.topic_dir import write_topic_dir  # noqa: E402
from focuscrawl.types import Page, TopicInputs  # noqa: E402

HOST = "http://nest.test"


def html(title: str, text: str, links: list[str]) -> bytes:
    anchors = "".join(f'<a href="{link}">page {i}</a> ' for i, link in enumerate(links))
    return f"<html><head><title>{title}</title></head><body><p>{text}</p><p>{anchors}</p></body></html>".encode()


BIRD = "Birds nest, sing, fly and lay eggs; feathers, wings and beaks of wild birds. " * 3
CAR = "Engines, wheels, fuel and the garage mechanic's tools for car maintenance. " * 3


@pytest.fixture(scope="module")
def topic(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("topic") / "birds"
    write_topic_dir(directory, TopicInputs(
        name="birds", keywords=["birds"], example_texts=[BIRD + w for w in "abcd"] + [CAR + w for w in "abcd"],
        example_labels=[1, 1, 1, 1, 0, 0, 0, 0]))
    return directory


class Reactor:
    """Stands for Scrapy's reactor: what a reader asks to run there is kept, run by ``run_pending``."""

    def __init__(self):
        self.calls: list = []
        self.woken = 0
        self.failures: list[ReaderError] = []

    def run_pending(self) -> None:
        while self.calls:
            self.calls.pop(0)()

    def reader(self, kind: type, spec: RecorderSpec, recorder: type[Recorder] = Recorder):
        return kind(spec, recorder, 32, self.calls.append, self.wake, self.failures.append)

    def wake(self) -> None:
        self.woken += 1


def spec(topic: Path, tmp_path: Path, name: str, in_flight: int = 2) -> RecorderSpec:
    return RecorderSpec(RunSettings(budget=20), "best-first", topic, in_flight, str(tmp_path / f"{name}.jsonl"))


def crawl(reader) -> list:
    """A small crawl driven by hand: every reply, and the reader's pages.jsonl lines."""
    replies = [reader.call(("start", ([f"{HOST}/", f"{HOST}/"],)))]
    hub = [f"{HOST}/cars", f"{HOST}/birds", f"{HOST}/birds/0"]
    pages = {f"{HOST}/": html("Hub", "A hub of pages.", hub), f"{HOST}/cars": html("Cars", CAR, []),
             f"{HOST}/birds": html("Birds", BIRD, [f"{HOST}/birds/{i}" for i in range(3)])}
    done: set[str] = set()
    while True:
        selections = [(url, probe) for reply in replies for url, probe in reply[1] if url not in done]
        if not selections:
            return replies
        url, probe = selections[0]
        done.add(url)
        if probe:  # the engine's soft-404 probe: a page that is not there
            answer = Answer(url, 404, "text/html", html("Not found", "No such page.", []), None, "")
            replies.append(reader.call(("ended", (url, answer, True))))
            continue
        if url == f"{HOST}/birds/2":
            replies.append(reader.call(("ended", (url, Page(url=url, final_url=url, status=0, error="refused")))))
            continue
        body = pages.get(url, html("Bird page", BIRD, []))
        links = [link for link in hub if url == f"{HOST}/"] or [f"{HOST}/birds/{i}" for i in range(3)
                                                                if url == f"{HOST}/birds"]
        replies.append(reader.call(("page", (url, Answer(url, 200, "text/html", body, None, ""), links, 0.01))))


def test_the_child_process_answers_as_the_recorder_in_this_thread(topic, tmp_path):
    reactor = Reactor()
    inline = reactor.reader(InlineReader, spec(topic, tmp_path, "inline"))
    child = reactor.reader(PageReader, spec(topic, tmp_path, "child"))
    assert inline.open() == child.open() == {"probes": [], "steps": 0, "frontier": 0}
    here, there = crawl(inline), crawl(child)
    finished = [reader.call(("finish", (True,))) for reader in (inline, child)]
    child.close()
    inline.close()
    assert here == there and len(here) > 4 and any(probe for _, chosen in here for _, probe in chosen)
    # the start URLs: the hub (the scheduler keeps the first request for it), selected first
    assert here[0] == ([f"{HOST}/", f"{HOST}/"], [(f"{HOST}/", False)])
    lines = [(tmp_path / f"{name}.jsonl").read_text().splitlines() for name in ("inline", "child")]
    assert len(lines[0]) == len(here) - 1 and [line.split('"fetched_at"')[0] for line in lines[0]] == [
        line.split('"fetched_at"')[0] for line in lines[1]]
    assert finished[0]["stats"]["pages"] == finished[1]["stats"]["pages"] == len(here) - 1
    assert finished[0]["state"]["in_flight"] == finished[1]["state"]["in_flight"] == []
    assert child.process.exitcode == 0 and not child.failed and child.pending == 0


class Failing(Recorder):
    """A recorder with a bug: its second page fails."""

    def _record(self, url, page, fetch_s=0.0):
        if self.engine.stats.steps == 1:
            raise RuntimeError("a bug in recording")
        super()._record(url, page, fetch_s)


@pytest.mark.parametrize("kind", [InlineReader, PageReader])
def test_a_failure_is_reported_once_and_the_child_is_reaped(topic, tmp_path, kind):
    reactor = Reactor()
    reader = reactor.reader(kind, spec(topic, tmp_path, "failing", in_flight=1), Failing)
    reader.open()
    _, selections = reader.call(("start", ([f"{HOST}/"],)))
    answer = Answer(f"{HOST}/", 200, "text/html", html("Hub", "A hub.", [f"{HOST}/a", f"{HOST}/b"]), None, "")
    _, selections = reader.call(("page", (selections[0][0], answer, [f"{HOST}/a", f"{HOST}/b"], 0.0)))
    broken = Answer(selections[0][0], 200, "text/html", html("A", BIRD, []), None, "")
    reader.submit(("page", (selections[0][0], broken, [], 0.0)), lambda reply: pytest.fail("no reply expected"))
    reader.submit(("ended", ("x", Page(url="x", final_url="x", status=0))), lambda reply: pytest.fail("none"))
    if kind is PageReader:
        reader.receiver.join(120)  # the child reported its failure and ended: the receiver has handed it over
        assert not reader.receiver.is_alive()
    reactor.run_pending()
    assert len(reactor.failures) == 1 and str(reactor.failures[0]) == "RuntimeError: a bug in recording"
    assert "_record" in reactor.failures[0].traceback and reader.failed is reactor.failures[0]
    with pytest.raises(ReaderError):
        reader.call(("finish", (False,)))
    reader.close()
    if kind is PageReader:
        assert reader.process.exitcode == 0 and not reader.process.is_alive()
    assert len((tmp_path / "failing.jsonl").read_text().splitlines()) == 1


def test_a_recorder_that_cannot_start_is_a_refusal_in_one_line(topic, tmp_path):
    reactor = Reactor()
    missing = RecorderSpec(RunSettings(budget=20), "best-first", tmp_path / "missing", 1)
    for kind in (InlineReader, PageReader):
        reader = reactor.reader(kind, missing)
        with pytest.raises(ReaderError) as refusal:
            reader.open()
        reader.close()
        assert refusal.value.refused and "missing" in str(refusal.value) and "\n" not in str(refusal.value)
        reader = reactor.reader(kind, spec(topic, tmp_path, "noseeds"))
        reader.open()
        with pytest.raises(ReaderError) as refusal:
            reader.call(("start", ([],)))
        reader.close()
        assert refusal.value.refused and "no seeds" in str(refusal.value)
    assert reactor.failures == []


ORPHAN = textwrap.dedent('''
    import sys
    from focuscrawl.config import RunSettings
    from focuscrawl.scrapy.reader import PageReader, Recorder, RecorderSpec
    if __name__ == "__main__":
        spec = RecorderSpec(RunSettings(budget=20), "best-first", sys.argv[1], 1)
        reader = PageReader(spec, Recorder, 32, lambda call: None, lambda: None, lambda exc: None)
        reader.open()
        print(reader.process.pid, flush=True)
        sys.stdin.read()  # until killed
''')


def test_the_child_ends_when_the_scrapy_process_is_killed(topic, tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(ORPHAN)
    parent = subprocess.Popen([sys.executable, str(script), str(topic)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)  # no atexit, no close: the child sees its pipe close
        parent.wait(60)
        deadline = time.monotonic() + 120
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, reparented to init and not reaped yet, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"
