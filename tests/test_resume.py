"""Resume after crashes: SIGKILL a crawl at random moments, resume it, and check nothing was lost or redone.

The big test forks children that run the ``focuscrawl crawl`` command (the typer app, in a process that
already imported scikit-learn: interpreter start-up costs ~2 s of CPU, twenty of them would blow the time
budget) and SIGKILLs them; ``test_console_script_kill_and_resume`` does the same with the real console
script in a subprocess, fewer times.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from focuscrawl.builder import build_crawl
from focuscrawl.config import RunSettings
from focuscrawl.crawl import Crawler
from focuscrawl.storage.state import StateStore
from focuscrawl.topic.topic_dir import load_topic_dir, write_topic_dir
from focuscrawl.webs import embedded_web_dir
from focuscrawl.webs.store import OfflineWeb

TOPIC = "subject.Science.Biology"


@pytest.fixture(scope="module")
def small_topic(tmp_path_factory) -> Path:
    """The benchmark's inputs for Biology on the embedded web, thinned so that training takes no time."""
    from focuscrawl.bench.protocol import load_topic

    web = OfflineWeb(embedded_web_dir())
    bench = load_topic(web, TOPIC, seed=0)
    web.close()
    inputs = bench.inputs
    pos = [t for t, y in zip(inputs.example_texts, inputs.example_labels) if y][:20]
    neg = [t for t, y in zip(inputs.example_texts, inputs.example_labels) if not y][:40]
    inputs.example_texts, inputs.example_labels = pos + neg, [1] * len(pos) + [0] * len(neg)
    inputs.seeds = bench.seeds_for_run(0, 1)
    return write_topic_dir(tmp_path_factory.mktemp("topic") / "bio", inputs)


def reference_sequence(topic_dir: Path, strategy: str, budget: int, seed: int = 0) -> list[str]:
    """The in-process ``CrawlEngine.run`` on the offline web, which a concurrency-1 crawl must reproduce."""
    topic = load_topic_dir(topic_dir)
    events = []
    crawl = build_crawl(RunSettings(budget=budget, seed=seed), strategy, topic, topic.seeds, sinks=[events.append])
    web = OfflineWeb(embedded_web_dir())
    crawl.engine.run(web)
    web.close()
    return [e.url for e in events]


def read_pages(run: Path) -> list[dict]:
    lines = (run / "pages.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def check_run_folder(run: Path) -> list[str]:
    """Invariants of a finished or resumed run folder; returns the fetched URLs in step order."""
    records = read_pages(run)
    urls = [r["url"] for r in records]
    assert [r["step"] for r in records] == list(range(len(records)))
    assert len(urls) == len(set(urls)), "a URL was recorded twice"
    store = StateStore(run / "state.sqlite")
    try:
        assert [s.url for s in store.steps()] == urls, "pages.jsonl differs from the state store"
        closure = store.closure()
        assert set(urls) <= closure
        finals = {r["final_url"] for r in records}
        assert closure <= set(urls) | finals
    finally:
        store.close()
    harvest = (run / "harvest.csv").read_text().splitlines()
    assert len(harvest) == len(records) + 1
    return urls


@pytest.mark.slow
def test_concurrency_one_matches_engine_run(small_topic, tmp_path):
    budget = 60
    crawler = Crawler(topic=small_topic, out=tmp_path / "run", web="embedded", budget=budget, concurrency=1,
                      strategy="best-first", progress="none", plot=False)
    urls = [record.url for record in _collect(crawler)]
    assert urls == reference_sequence(small_topic, "best-first", budget)
    assert check_run_folder(tmp_path / "run") == urls


@pytest.mark.slow
def test_stop_and_resume_with_concurrency(small_topic, tmp_path):
    """Stop with fetches in flight, resume with another concurrency: no loss, no duplicate, budget spent."""
    run = tmp_path / "run"
    settings = dict(topic=small_topic, out=run, web="embedded", budget=80, strategy="bfs", progress="none",
                    plot=False, offline_latency_s=0.002, checkpoint_every=7)
    crawler = Crawler(concurrency=6, **settings)
    seen = []
    for record in _collect(crawler, stop_after=23, immediate=True):
        seen.append(record.url)
    assert 23 <= len(seen) < 80
    Crawler(concurrency=3, **settings).crawl()
    urls = check_run_folder(run)
    assert len(urls) == 80 and urls[: len(seen)] == seen


@pytest.mark.slow
def test_tres_crawls_and_resumes_a_run_folder(small_topic, tmp_path):
    """The README's real-crawl strategy end to end: KwBiLSTM reward, the default anchor feature (its TF-IDF
    model trained from the topic folder's examples), stop, resume, budget spent with no duplicate."""
    run = tmp_path / "run"
    settings = dict(topic=small_topic, out=run, web="embedded", budget=40, strategy="tres", progress="none",
                    plot=False, checkpoint_every=5)
    first = [record.url for record in _collect(Crawler(concurrency=2, **settings), stop_after=15)]
    assert 15 <= len(first) < 40
    Crawler(concurrency=2, **settings).crawl()
    urls = check_run_folder(run)
    assert len(urls) == 40 and urls[: len(first)] == first
    scores = [r.get("score") for r in read_pages(run)]
    assert any(score is not None for score in scores), "TRES records its Q-value for greedy choices"


@pytest.mark.slow
def test_a_checkpoint_the_log_diverges_from_is_skipped_for_the_whole_log(small_topic, tmp_path):
    """A latest checkpoint that holds an older state than its place in the log (as a checkpoint missing part of
    a policy's state would): the resume replays the whole log instead and ends where an uninterrupted crawl
    does."""
    def copy_first_onto_last(db):
        seqs = [seq for (seq,) in db.execute("SELECT seq FROM checkpoints ORDER BY seq")]
        assert len(seqs) >= 2
        db.execute("UPDATE checkpoints SET blob = (SELECT blob FROM checkpoints WHERE seq = ?) WHERE seq = ?",
                   (seqs[0], seqs[-1]))

    _resume_after_editing_checkpoints(small_topic, tmp_path, copy_first_onto_last)


def _resume_after_editing_checkpoints(small_topic: Path, tmp_path: Path, edit) -> None:
    """A best-first crawl stopped at step 23 whose checkpoints ``edit(db)`` changes, then resumed: it must end as an
    uninterrupted crawl does."""
    import sqlite3

    run = tmp_path / "run"
    settings = dict(topic=small_topic, out=run, web="embedded", budget=40, strategy="best-first", progress="none",
                    plot=False, checkpoint_every=5)
    first = [record.url for record in _collect(Crawler(concurrency=1, **settings), stop_after=23)]
    db = sqlite3.connect(run / "state.sqlite")
    with db:
        edit(db)
    db.close()
    Crawler(concurrency=1, **settings).crawl()
    urls = check_run_folder(run)
    assert urls[: len(first)] == first
    assert urls == reference_sequence(small_topic, "best-first", 40), "the same crawl as one without a stop"


def _collect(crawler: Crawler, stop_after: int | None = None, immediate: bool = False):
    import asyncio

    async def main():
        out = []
        async for record in crawler.run():
            out.append(record)
            if stop_after is not None and len(out) == stop_after:
                crawler.stop(immediate=immediate)
        return out

    return asyncio.run(main())


def _count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n")
    except FileNotFoundError:
        return 0


def _crawl_args(topic: Path, run: Path, budget: int, extra: list[str]) -> list[str]:
    return ["crawl", "--topic", str(topic), "-o", str(run), "--web", "embedded", "--budget", str(budget),
            "--progress", "none", "-s", "plot=false", *extra]


def _forked_crawl(args: list[str]) -> int:
    pid = os.fork()
    if pid == 0:  # child: run the command line app, never return into pytest
        code = 1
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            from focuscrawl.cli.main import app

            app(args, standalone_mode=False)
            code = 0
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    return pid


def _kill_at_random_moment(pid: int, pages: Path, rng: random.Random, timeout: float = 30.0) -> str:
    """SIGKILL ``pid`` either during start-up/replay or after a random number of new pages, mid-step."""
    before = _count_lines(pages)
    if rng.random() < 0.3:
        time.sleep(rng.uniform(0.0, 0.4))
        how = "early"
    else:
        target = before + rng.randint(1, 12)
        deadline = time.monotonic() + timeout
        while _count_lines(pages) < target and time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                return "finished"
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.02))
        how = "mid-crawl"
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    return how if os.WIFSIGNALED(status) else "finished"


@pytest.mark.slow
@pytest.mark.parametrize(("concurrency", "kills", "warc"), [(1, 20, False), (4, 8, True)])
def test_sigkill_at_random_moments_then_resume(small_topic, tmp_path, concurrency, kills, warc):
    """SIGKILLs at seeded random moments; every resume continues; the result is the uninterrupted crawl.

    (WARC writing renders every offline page to HTML, which is slow, so only the shorter case does it.)
    """
    run = tmp_path / "run"
    budget = 150
    extra = ["--strategy", "best-first", "--concurrency", str(concurrency), "--warc" if warc else "--no-warc",
             "-s", "checkpoint_every=10", "-s", "offline_latency_s=0.001"]
    args = _crawl_args(small_topic, run, budget, extra)
    rng = random.Random(1234 + concurrency)
    outcomes = []
    for _ in range(kills):
        outcomes.append(_kill_at_random_moment(_forked_crawl(args), run / "pages.jsonl", rng))
        if outcomes[-1] == "finished":
            break
        _assert_resumable_state(run)
    pid = _forked_crawl(args)
    deadline = time.monotonic() + 300
    while (waited := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    if waited == (0, 0):  # never hang the test run
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the final, uninterrupted crawl did not finish")
    status = waited[1]
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert outcomes.count("mid-crawl") >= kills // 4, outcomes
    urls = check_run_folder(run)
    assert len(urls) == budget
    if concurrency == 1:
        assert urls == reference_sequence(small_topic, "best-first", budget)
    if warc:
        _check_warc(run / "crawl.warc.gz", urls)


def _assert_resumable_state(run: Path) -> None:
    """Right after a kill: the store is readable and consistent with itself (the files may lag)."""
    if not (run / "state.sqlite").exists():
        return
    store = StateStore(run / "state.sqlite")
    try:
        steps = [s.url for s in store.steps()]
        assert len(steps) == len(set(steps))
        assert sum(1 for _, kind, _ in store.ops() if kind == "R") == len(steps)
    finally:
        store.close()


def _check_warc(path: Path, urls: list[str]) -> None:
    from warcio.archiveiterator import ArchiveIterator

    responses = []
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type in ("response", "metadata"):
                responses.append(record.rec_headers.get_header("WARC-Target-URI"))
            record.content_stream().read()
    assert responses == urls


@pytest.mark.slow
def test_console_script_kill_and_resume(small_topic, tmp_path):
    """The real ``focuscrawl crawl`` entry point, killed mid-crawl, then resumed to the end."""
    exe = Path(sys.executable).with_name("focuscrawl")
    if not exe.exists():
        pytest.skip("focuscrawl console script not installed next to the interpreter")
    run = tmp_path / "run"
    args = [str(exe), *_crawl_args(small_topic, run, 120, ["--strategy", "bfs", "--concurrency", "2"])]
    rng = random.Random(7)
    for _ in range(1):  # each start of the console script costs seconds of imports
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        target = _count_lines(run / "pages.jsonl") + rng.randint(5, 30)
        deadline = time.monotonic() + 60
        while _count_lines(run / "pages.jsonl") < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)  # a hang guard, not a time limit
    assert done.returncode == 0, done.stderr
    assert len(check_run_folder(run)) == 120


def _html_copy(src: Path, dst: Path) -> Path:
    """The web with each page stored as the HTML the server would render, so HTTP and offline fetches agree."""
    from focuscrawl.html import parse_html, render_html
    from focuscrawl.webs.store import WebWriter

    web = OfflineWeb(src)
    labels = web.labels()
    with WebWriter(dst, {"name": "tiny-html"}) as writer:
        for record in web.records():
            page = web.fetch(record.url)
            if not page.ok:
                writer.add_page(record.url, status=record.status, content_type="")
                continue
            html = render_html(page.title, page.text, page.outlinks)
            title, text, links = parse_html(html, record.url)
            writer.add_page(record.url, title=title, text=text, html=html, labels=labels.get(record.url, "").split(","))
            for link in links:
                writer.add_link(record.url, link.url, link.anchor)
    web.close()
    return dst


def test_loopback_http_crawl_matches_engine_run(tiny_web, tmp_path):
    """Over the loopback server and the real HTTP fetcher, concurrency 1 crawls what CrawlEngine.run crawls."""
    import asyncio

    from focuscrawl.bench.protocol import init_from_web
    from focuscrawl.http.fetcher import HttpFetcher
    from focuscrawl.http.settings import FetchConfig
    from focuscrawl.webs.serve import serve_web

    web_dir = _html_copy(tiny_web, tmp_path / "web")
    topic_dir = tmp_path / "topic"
    init_from_web(topic_dir, web_dir, "topic.birds", seeds=1)
    budget = 30

    topic = load_topic_dir(topic_dir)
    events = []
    crawl = build_crawl(RunSettings(budget=budget), "best-first", topic, topic.seeds, sinks=[events.append])
    offline = OfflineWeb(web_dir)
    crawl.engine.run(offline)
    offline.close()

    async def crawl() -> list[str]:
        async with serve_web(web_dir, base_ip="127.0.6.1") as server:
            async with HttpFetcher(FetchConfig.loopback(server.hosts, min_delay=0)) as fetcher:
                crawler = Crawler(topic=topic_dir, out=tmp_path / "run", budget=budget, concurrency=1,
                                  strategy="best-first", warc=True, progress="none", plot=False, fetcher=fetcher)
                return [record.url async for record in crawler.run()]

    urls = asyncio.run(asyncio.wait_for(crawl(), 600))  # a hang guard, not a time limit
    assert urls == [e.url for e in events]
    assert check_run_folder(tmp_path / "run") == urls
    _check_warc(tmp_path / "run" / "crawl.warc.gz", urls)  # real response headers and bodies


@pytest.mark.slow
@pytest.mark.parametrize("strategy, options", [
    ("adaptive", {}), ("best-first", {}), ("tres", {"explore_steps": 3, "batch_size": 8}), ("lr-sl", {}),
    ("mab-var", {}), ("han-sync", {}), ("hybrid-decay", {})])
def test_a_policy_restored_mid_crawl_selects_as_the_live_one(strategy, options):
    """A checkpoint is a pickle of the policy mid-crawl, learning under way: the restored copy must make the
    same next selections with the same scores. (TRES's network once came back as frozen copies of its
    weights.)"""
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.builder import Classifiers, build_crawl
    from focuscrawl.config import RunSettings
    from focuscrawl.webs import embedded_web_dir
    from focuscrawl.webs.store import OfflineWeb

    web = OfflineWeb(embedded_web_dir())
    topic = load_topic(web, "subject.Science.Biology")
    settings = RunSettings(budget=150, seed=3, options={strategy: options})

    def crawl():
        return build_crawl(settings, strategy, topic.inputs, topic.seeds_for_run(0, 1),
                           classifiers=Classifiers(topic.inputs, 0), judge=topic.truth).engine

    live = crawl()
    for _ in range(40):
        _step(live, web)
    restored = crawl()
    restored.restore(live.snapshot())
    steps = [(_step(live, web), _step(restored, web)) for _ in range(60)]
    assert all(a == b for a, b in steps)
    assert sum(a is not None for a, _ in steps) == 60


def _step(engine, web):
    selection = engine.next_selection()
    if selection is None:
        return None
    engine.record(selection.url, web.fetch(selection.url))
    return selection.url, selection.score


class _Input:
    """A stand-in for a crawl's shared input (a topic, a classifier)."""


class _PersistentIdPickler(pickle.Pickler):
    """Names the shared inputs through ``persistent_id``, as ``_InputsPickler`` does when one of them is of a type it
    cannot dispatch on (a list, a number): the unpickler answers both forms."""

    def __init__(self, file, shared):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._ids = {id(obj): i for i, obj in enumerate(shared) if obj is not None}

    def persistent_id(self, obj):
        return self._ids.get(id(obj))


@pytest.mark.parametrize("pickler", ["dispatch table", "persistent_id"])
def test_a_checkpoint_names_the_shared_inputs_and_gets_the_restoring_engines_own(pickler):
    from focuscrawl.engine.checkpoint import _InputsPickler, _InputsUnpickler

    shared, other = _Input(), _Input()
    other.payload = "x" * 1000
    shared.payload = "y" * 100_000
    graph = {"policy": [shared, other, shared], "frontier": ["http://a.test/"] * 3}
    buffer = io.BytesIO()
    (_InputsPickler if pickler == "dispatch table" else _PersistentIdPickler)(buffer, [shared, None]).dump(graph)
    assert len(buffer.getvalue()) < 10_000, "the shared input is named, not copied"
    live = _Input()
    back = _InputsUnpickler(io.BytesIO(buffer.getvalue()), [live, None]).load()
    assert back["policy"][0] is live and back["policy"][2] is live
    assert back["policy"][1] is not other and back["policy"][1].payload == other.payload  # not shared: a copy
    assert back["frontier"] == graph["frontier"]


def _other_format(blob: bytes, found: int) -> bytes:
    """``blob`` as a checkpoint of format ``found`` would be (1: one written before checkpoints had a format)."""
    from focuscrawl.engine import checkpoint

    body = blob.partition(b"\n")[2]
    return body if found == 1 else checkpoint._HEADER + b"%d\n" % found + body


def test_a_checkpoint_of_another_format_is_refused_in_one_line():
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.engine import CheckpointFormatError, checkpoint

    web = OfflineWeb(embedded_web_dir())
    topic = load_topic(web, TOPIC)
    engine = build_crawl(RunSettings(budget=20, seed=3), "bfs", topic.inputs, topic.seeds_for_run(0, 1)).engine
    for _ in range(5):
        _step(engine, web)
    blob = engine.snapshot()
    assert blob.startswith(b"focuscrawl checkpoint format %d\n" % checkpoint.FORMAT)
    for found in (1, checkpoint.FORMAT + 1):
        with pytest.raises(CheckpointFormatError) as caught:
            engine.restore(_other_format(blob, found))
        expected = f"checkpoint format {found}, this version reads {checkpoint.FORMAT}: replaying the log"
        assert str(caught.value) == expected
    engine.restore(blob)
    assert engine.stats.steps == 5


@pytest.mark.parametrize("found", [1, 99])
def test_a_checkpoint_of_another_format_resumes_by_replaying_the_log(small_topic, tmp_path, caplog, found):
    """Every checkpoint of a run folder from another version: the resume says so in one line, replays the whole
    log and ends where an uninterrupted crawl does."""
    import logging

    from focuscrawl.engine import checkpoint

    def other_format(db):
        rows = db.execute("SELECT seq, blob FROM checkpoints").fetchall()
        assert rows
        for seq, blob in rows:
            db.execute("UPDATE checkpoints SET blob = ? WHERE seq = ?", (_other_format(blob, found), seq))

    with caplog.at_level(logging.WARNING, logger="focuscrawl.crawl.resume"):
        _resume_after_editing_checkpoints(small_topic, tmp_path, other_format)
    said = [r.getMessage() for r in caplog.records if r.name == "focuscrawl.crawl.resume"]
    assert said == [f"checkpoint format {found}, this version reads {checkpoint.FORMAT}: replaying the log"]
