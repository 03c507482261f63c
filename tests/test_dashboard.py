"""The dashboard: its JSON endpoints and pages over plain HTTP, its read-only reading of a run folder beside the
crawl that writes it, the token rule, the CLI, and the page itself in a real headless Chromium (Debian's
``chromium``), driven over the DevTools protocol while a crawl of a served web runs, and with --dump-dom and
--screenshot for bench and suite folders. Screenshots are kept in test-artifacts/ (gitignored)."""

from __future__ import annotations

import asyncio
import base64
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import BIRD_WORDS, OTHER_WORDS, _text, build_tiny_web, needs_tool
from typer.testing import CliRunner

from focuscrawl.bench.runner import run_benchmark
from focuscrawl.cli import dashboard as cli_dashboard
from focuscrawl.cli.main import app, main
from focuscrawl.config import BenchConfig
from focuscrawl.crawl import Crawler
from focuscrawl.dashboard import DashboardError, DashboardServer, detect_kind, is_loopback, serve_dashboard
from focuscrawl.dashboard.charts import Line, line_chart, nice_ticks, thin
from focuscrawl.dashboard.run import PagesIndex, RunReader, lock_held, problem_kind
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.storage.reader import connect_readonly
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
CHROMIUM = shutil.which("chromium")
needs_chromium = needs_tool(CHROMIUM is not None, "Debian's chromium package is not installed (.ci/run installs it): "
                           "the browser tests need a real headless Chromium")
HOSTILE_TITLE = '<script>alert("x")</script> & <b>bold</b>'


# -- a web with several hosts and every kind of error --------------------------------------------------------
def build_live_web(directory: Path) -> Path:
    """Six hosts: three of bird pages (relevant), trains and news (not), and links into every kind of trouble:
    dead links (404), a robots.txt-disallowed folder, a flaky folder (503 by the hook), a slow one (timeouts)."""
    with WebWriter(directory, {"name": "live"}) as w:
        sites = {"birds.test": (BIRD_WORDS, "topic.birds", 60), "nest.test": (BIRD_WORDS, "topic.birds", 40),
                 "wings.test": (BIRD_WORDS, "topic.birds", 30), "trains.test": (OTHER_WORDS, "topic.trains", 60),
                 "news.test": (OTHER_WORDS, "topic.news", 40)}
        urls = {host: [f"http://{host}/p{i}" for i in range(n)] for host, (_, _, n) in sites.items()}
        for host, (words, label, n) in sites.items():
            others = [h for h in sites if h != host]
            for i, url in enumerate(urls[host]):
                title = HOSTILE_TITLE if (host, i) == ("birds.test", 1) else f"{host.split('.')[0]} page {i}"
                w.add_page(url, title=title, text=_text(words, i) + f" page {i} of {host}", labels=[label])
                w.add_link(url, urls[host][(i + 1) % n], "next")
                w.add_link(url, urls[host][(i + 2) % n], "after")
                other = others[i % len(others)]
                w.add_link(url, urls[other][i % len(urls[other])], other.split(".")[0])
                if i % 7 == 0:
                    w.add_link(url, f"http://{host}/gone{i}", "dead link")
                if i % 9 == 0:
                    w.add_link(url, f"http://{host}/private/p{i}", "private")
                    w.add_link(url, f"http://{host}/flaky/p{i}", "flaky")
                if i % 15 == 0:
                    w.add_link(url, f"http://{host}/slow/p{i}", "slow")
        for host in sites:
            for folder in ("private", "flaky", "slow"):
                for i in range(0, 60, 3):
                    w.add_page(f"http://{host}/{folder}/p{i}", title=f"{folder} {i}", text=_text(BIRD_WORDS, i),
                               labels=["topic.birds"])
    return directory


def birds_topic(directory: Path, seeds: list[str]) -> Path:
    texts = [_text(BIRD_WORDS, i) for i in range(6)] + [_text(OTHER_WORDS, i) for i in range(6)]
    write_topic_dir(directory, TopicInputs("birds", ["bird", "nest"], texts, [1] * 6 + [0] * 6, seeds=seeds))
    return directory


class GatedFetcher:
    """The HTTP fetcher behind a gate: while it is closed no fetch starts, so the crawl stays in progress (its
    lock held, nothing timing out) and its store does not change. It counts the fetches past the gate that have
    not returned (``active``) and those that have (``finished``: each becomes one committed step)."""

    def __init__(self, inner: HttpFetcher, gate: asyncio.Event):
        self.inner, self.gate = inner, gate
        self.active = self.finished = 0

    async def fetch(self, url: str):
        await self.gate.wait()
        self.active += 1
        try:
            return await self.inner.fetch(url)
        finally:
            self.active -= 1
            self.finished += 1

    async def aclose(self) -> None:
        await self.inner.aclose()


PROBLEM_KINDS = ("HTTP 404", "HTTP 503", "robots.txt", "timeout")  # what build_live_web's troubles are called


class LiveCrawl:
    """A crawl of the live web served on loopback, in a thread, that the test can pause and resume."""

    def __init__(self, tmp: Path, budget: int = 260, **settings):
        self.web = build_live_web(tmp / "web")
        self.topic = birds_topic(tmp / "topic", ["http://birds.test/p0", "http://trains.test/p0"])
        self.out = tmp / "run"
        self.budget = budget
        self.settings = settings
        self.loop: asyncio.AbstractEventLoop | None = None
        self.gate: asyncio.Event | None = None
        self.crawler: Crawler | None = None
        self.fetcher: GatedFetcher | None = None
        self.error: BaseException | None = None
        self.committed = 0
        self.problems: set[str] = set()  # the kinds of trouble the committed steps met, as the dashboard names them
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)

    async def _hook(self, request, host, url):
        from aiohttp import web

        if "/flaky/" in url:
            return web.Response(status=503, text="flaky\n")
        if "/slow/" in url:
            await asyncio.sleep(3)
        return None

    def _main(self) -> None:
        async def go() -> None:
            self.loop = asyncio.get_running_loop()
            self.gate = asyncio.Event()
            self.gate.set()
            disallow = {host: ["/private/"] for host in ("birds.test", "nest.test", "wings.test", "trains.test",
                                                           "news.test")}
            async with serve_web(self.web, base_ip="127.0.9.1", hook=self._hook, disallow=disallow) as server:
                config = FetchConfig.loopback(server.hosts, min_delay=0, total_timeout=1.0, throttle_retries=0)
                async with HttpFetcher(config) as fetcher:
                    self.fetcher = GatedFetcher(fetcher, self.gate)
                    self.crawler = Crawler(topic=self.topic, out=self.out, budget=self.budget, progress="none",
                                           plot=False, fetcher=self.fetcher, concurrency=4, **self.settings)
                    self.started.set()
                    async for record in self.crawler.run():
                        kind = problem_kind(record.status, record.error)
                        if kind is not None:
                            self.problems.add(kind[0])
                        self.committed = record.step + 1

        try:
            asyncio.run(go())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.started.set()

    def start(self) -> LiveCrawl:
        self.thread.start()
        assert self.started.wait(60)
        return self

    def wait_steps(self, n: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.committed < n:
            assert self.error is None, self.error
            assert self.thread.is_alive(), "the crawl ended early"
            assert time.monotonic() < deadline, f"the crawl did not reach {n} steps ({self.committed})"
            time.sleep(0.05)

    def wait_problems(self, kinds: tuple[str, ...], timeout: float = 120) -> None:
        """Until the crawl has met each kind of trouble: which it meets first depends on how its fetches race."""
        deadline = time.monotonic() + timeout  # a hang guard
        while not set(kinds) <= self.problems:
            assert self.error is None, self.error
            assert self.thread.is_alive(), f"the crawl ended before meeting {set(kinds) - self.problems}"
            assert time.monotonic() < deadline, f"the crawl did not meet {set(kinds) - self.problems}"
            time.sleep(0.05)

    def pause(self, timeout: float = 120) -> int:
        """Start no fetch, wait until every fetch that passed the gate has returned and been committed, and
        return the committed steps. Counted, not timed: however loaded the machine, nothing commits after."""

        async def close_gate() -> None:
            self.gate.clear()

        asyncio.run_coroutine_threadsafe(close_gate(), self.loop).result(timeout)
        deadline = time.monotonic() + timeout  # a hang guard, not a time limit on the crawl
        while self.fetcher.active or self.committed < self.fetcher.finished:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, "in-flight fetches did not commit"
            time.sleep(0.05)
        return self.committed

    def resume(self) -> None:
        self.loop.call_soon_threadsafe(self.gate.set)

    def stop(self) -> None:
        if self.loop is not None and self.crawler is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.crawler.stop)
            self.resume()
        self.thread.join(60)
        assert self.error is None, self.error


# -- plain HTTP helpers -----------------------------------------------------------------------------------------
def get(url: str, headers: dict | None = None, method: str = "GET") -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def get_json(url: str) -> dict:
    status, _, body = get(url)
    assert status == 200, body[:300]
    return json.loads(body)


def offline_run(tmp_path: Path, budget: int = 40, **settings) -> Path:
    """A finished crawl of the tiny offline web (conftest), in tmp_path/run."""
    web = build_tiny_web(tmp_path / "tiny")
    topic = birds_topic(tmp_path / "topic", ["http://birds.test/b0"])
    out = tmp_path / "run"
    Crawler(topic=topic, out=out, web=str(web), budget=budget, progress="none", plot=False, concurrency=2,
            **settings).crawl()
    return out


def folder_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of the folder: its content hash and modification time."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


# -- units -----------------------------------------------------------------------------------------------------
def test_problem_kinds_follow_the_fetchers_words():
    assert problem_kind(200, "") is None
    assert problem_kind(404, "not in this web") == ("HTTP 404", True)
    assert problem_kind(503, "") == ("HTTP 503", True)
    assert problem_kind(0, "disallowed by robots.txt") == ("robots.txt", True)
    assert problem_kind(0, "disallowed by robots.txt: unavailable (status 500), retried later") == ("robots.txt",
                                                                                                    True)
    assert problem_kind(0, "refused address: 10.0.0.1 is a private address") == ("refused: address", True)
    assert problem_kind(0, "looks like a spider trap (repeated or too deep path)") == ("refused: URL", True)
    assert problem_kind(0, "scheme 'ftp' is not http(s)") == ("refused: URL", True)
    assert problem_kind(0, "timeout after 60 s") == ("timeout", True)
    assert problem_kind(0, "cannot connect: [Errno 111] Connection refused") == ("connection failed", True)
    assert problem_kind(0, "ValueError: boom") == ("network: other", True)
    assert problem_kind(200, "not HTML (application/pdf)") == ("not HTML", False)
    assert problem_kind(301, "redirect loop") == ("redirect problem", False)


def test_chart_helpers():
    assert thin(10, 400) == list(range(10))
    idx = thin(100_000, 400)
    assert len(idx) <= 400 and idx[0] == 0 and idx[-1] == 99_999 and idx == sorted(idx)
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 730)[-1] >= 600
    svg = line_chart([Line("a <b>", [1, 2, 3], [0, 1, 2])], title="t & u", x_label="x", y_label="y", chart_id="c")
    assert svg.startswith("<svg") and "a &lt;b&gt;" in svg and "t &amp; u" in svg and 'data-last="2"' in svg
    assert "no data yet" in line_chart([], title="t", x_label="x", y_label="y")


def test_pages_per_second(tmp_path):
    from array import array

    reader = RunReader(tmp_path)
    assert reader.pages_per_s(None) == 0.0
    reader.fetched_at = array("d", [100.0 + 0.5 * i for i in range(41)])  # 2 pages/s for 20 s
    assert reader.pages_per_s(None) == pytest.approx(2.0, rel=0.1)
    assert reader.pages_per_s(121.0) == pytest.approx(2.0, rel=0.1)  # up to now, a second after the last page
    assert reader.pages_per_s(200.0) == 0.0  # nothing for a whole window: stalled
    reader.fetched_at = array("d", [100.0, 100.5, 101.0])  # younger than the window: over its own time
    assert reader.pages_per_s(None) == pytest.approx(2.0)


def test_pages_index_follows_a_growing_and_repaired_file(tmp_path):
    path = tmp_path / "pages.jsonl"
    index = PagesIndex(path)
    assert index.read(0) is None and len(index) == 0
    lines = [json.dumps({"step": i, "url": f"http://x/{i}", "text": "é" * i}, ensure_ascii=False) + "\n"
             for i in range(5)]
    path.write_text("".join(lines[:3]) + lines[3][:10])  # a line being written
    assert len(index) == 3 and index.read(2)["url"] == "http://x/2" and index.read(3) is None
    with open(path, "a") as fh:
        fh.write(lines[3][10:] + lines[4])
    assert len(index) == 5 and index.read(4)["text"] == "é" * 4
    # a resume's repair cuts the file back and appends other records: the index is rebuilt
    path.write_text("".join(lines[:2]) + json.dumps({"step": 2, "url": "http://x/new"}) + "\n")
    assert index.read(2)["url"] == "http://x/new" and index.read(3) is None


def test_a_finished_run_is_read_as_its_summary_says_and_left_untouched(tmp_path):
    out = offline_run(tmp_path)
    before = folder_state(out)
    summary = json.loads((out / "summary.json").read_text())
    with serve_dashboard(out, port=0) as server:
        data = get_json(server.url + "api/run")
        for path in ("", "api/run?fragments=1", "page/0", "api/page/3", "page/9999", "favicon.ico"):
            get(server.url + path)
        assert get(server.url, method="HEAD")[0] == 200
    assert folder_state(out) == before, "the dashboard changed the run folder"
    assert not list(out.glob("state.sqlite-*")), "a finished store is read without creating -wal/-shm"
    t = data["totals"]
    assert data["status"] == "finished" and data["kind"] == "crawl" and data["strategy"] == "adaptive"
    assert (t["steps"], t["relevant"], t["relevant_domains"], t["errors"], t["frontier_size"]) == (
        summary["steps"], summary["relevant"], summary["relevant_domains"], summary["errors"],
        summary["frontier_size"])
    harvest = (out / "harvest.csv").read_text().splitlines()[1:]
    last = harvest[-1].split(",")
    assert data["series"]["relevant"][-1] == int(last[3]) and data["series"]["fetched"][-1] == int(last[2])
    assert data["budget"] == 40 and len(data["latest"]) == min(30, t["steps"])
    assert [p["step"] for p in data["latest"]] == sorted((p["step"] for p in data["latest"]), reverse=True)
    assert data["problems"] and data["problems"][0]["kind"] == "HTTP 404"  # the tiny web's dead links
    assert {h["host"] for h in data["hosts"]["busiest"]} <= {"birds.test", "trains.test", "far.test"}


def test_a_pages_relevance_is_coloured_by_the_crawls_reward_not_by_one_half(tmp_path):
    # a calibrated judge decides below 0.5 (types.decision_point): the colour follows what the crawl rewarded
    out = offline_run(tmp_path)
    with serve_dashboard(out, port=0) as server:
        data = json.loads(get(server.url + "api/run?fragments=1")[2])
    colours = re.findall(r'<span class="rel (hi|lo)">', data["html"]["latest"])
    assert colours == ["hi" if p["reward"] > 0 else "lo" for p in data["latest"]]
    assert {"hi", "lo"} <= set(colours)


def test_the_page_text_is_the_crawlers_and_endpoints_answer_as_documented(tmp_path):
    out = offline_run(tmp_path)
    records = [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]
    with serve_dashboard(out, port=0) as server:
        for record in (records[0], records[7], records[-1]):
            page = get_json(f"{server.url}api/page/{record['step']}")
            assert page["text"] == record["text"] and page["url"] == record["url"]
            assert page["source"] == "pages.jsonl"
            status, headers, body = get(f"{server.url}page/{record['step']}")
            assert status == 200 and headers["Content-Type"].startswith("text/html")
            assert record["url"] in body.decode()
        # pages.jsonl short of the store (a crash between commit and append): the text comes from the store
        (out / "pages.jsonl").write_text("\n".join(json.dumps(r) for r in records[:5]) + "\n")
        page = get_json(f"{server.url}api/page/{records[-1]['step']}")
        assert page["text"] == records[-1]["text"] and page["source"] == "state.sqlite"
        assert get(f"{server.url}api/page/100000")[0] == 404
        assert get(f"{server.url}nowhere")[0] == 404
        # an unchanged crawl costs a 304
        status, headers, _ = get(server.url + "api/run")
        assert get(server.url + "api/run", {"If-None-Match": headers["ETag"]})[0] == 304
        # read-only: nothing but GET and HEAD
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            status, headers, _ = get(server.url + "api/run", method=method)
            assert status == 405 and headers["Allow"] == "GET, HEAD"
        status, headers, _ = get(server.url)
        assert "script-src 'nonce-" in headers["Content-Security-Policy"]
        assert headers["Referrer-Policy"] == "no-referrer"


def test_the_token_rule(tmp_path):
    out = offline_run(tmp_path, budget=10)
    with serve_dashboard(out, port=0, token="s3cret/+") as server:
        base = f"http://127.0.0.1:{server.port}/"
        assert server.url.endswith("?token=s3cret%2F%2B")
        assert get(base + "api/run")[0] == 403
        assert get(base + "api/run?token=wrong")[0] == 403
        assert get(server.url)[0] == 200
        assert get(base + "api/run?token=s3cret%2F%2B")[0] == 200
        assert get(base + "api/run", {"X-Dashboard-Token": "s3cret/+"})[0] == 200
        assert get(base + "api/run", {"Authorization": "Bearer s3cret/+"})[0] == 200
        # the page's own links and its poll carry the token
        html = get(server.url)[2].decode()
        assert "/page/9?token=s3cret%2F%2B" in html and 'data-api="/api/run"' in html
    # beyond loopback a token is always required: generated when not given
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    with serve_dashboard(out, host="0.0.0.0", port=0) as server:
        assert server.token and len(server.token) >= 20 and f"token={server.token}" in server.url
        assert get(f"http://127.0.0.1:{server.port}/api/run")[0] == 403
        assert get(f"http://127.0.0.1:{server.port}/api/run?token={server.token}")[0] == 200
    # on loopback without a token, a page of another site (DNS rebinding) is refused by its Host header
    with serve_dashboard(out, port=0) as server:
        assert get(server.url + "api/run")[0] == 200
        assert get(server.url + "api/run", {"Host": f"localhost:{server.port}"})[0] == 200
        assert get(server.url + "api/run", {"Host": "evil.example"})[0] == 403


def test_the_store_is_read_only_and_the_lock_is_never_taken(tmp_path):
    out = offline_run(tmp_path, budget=10)
    db = connect_readonly(out / "state.sqlite")
    with pytest.raises(Exception):
        db.execute("DELETE FROM steps")
    db.close()
    assert lock_held(out / ".lock") is False
    import fcntl

    with open(out / ".lock") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert lock_held(out / ".lock") is True
        reader = RunReader(out)
        reader.refresh()
        assert reader.status() == "running"
    reader = RunReader(out)
    reader.refresh()
    assert reader.status() == "finished"


def test_a_dashboard_started_first_waits_for_the_crawl_and_never_blocks_it(tmp_path):
    web = build_tiny_web(tmp_path / "tiny")
    topic = birds_topic(tmp_path / "topic", ["http://birds.test/b0"])
    out = tmp_path / "run"
    with pytest.raises(DashboardError):
        detect_kind(out)
    with serve_dashboard(out, port=0, kind="crawl") as server:
        assert get_json(server.url + "api/run")["status"] == "waiting"
        out.mkdir()
        assert detect_kind(out) == "crawl"
        stop = threading.Event()
        seen: list[list[int]] = [[], []]

        def poll(mine: list[int]) -> None:  # a page polling far faster than the real one does
            while not stop.is_set():
                mine.append(get_json(server.url + "api/run?fragments=1")["totals"]["steps"])

        pollers = [threading.Thread(target=poll, args=(mine,)) for mine in seen]
        for thread in pollers:
            thread.start()
        try:
            summary = Crawler(topic=topic, out=out, web=str(web), budget=40, progress="none", plot=False,
                              offline_latency_s=0.01, concurrency=2).crawl()
        finally:
            stop.set()
            for thread in pollers:
                thread.join()
        final = get_json(server.url + "api/run")
    assert summary.steps == final["totals"]["steps"] and final["status"] == "finished"
    for mine in seen:
        assert mine == sorted(mine) and len(set(mine)) > 2, "polls see the crawl grow, never shrink"
    db = connect_readonly(out / "state.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


def test_a_half_written_or_damaged_folder_is_shown_not_fatal(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "state.sqlite").write_bytes(b"")  # the crawl has just created it
    (out / "pages.jsonl").write_text('{"step": 0, "url": "http://x/", "te')  # a line being written
    with serve_dashboard(out, port=0) as server:
        data = get_json(server.url + "api/run")
        assert data["totals"]["steps"] == 0 and data["read_error"]
        assert get(server.url)[0] == 200 and get(server.url + "api/page/0")[0] == 404
        (out / "state.sqlite").write_bytes(b"not a database at all" * 200)
        time.sleep(1.1)  # past the snapshot's reuse
        data = get_json(server.url + "api/run")
        assert "not readable" in data["read_error"] and data["status"] == "stopped"
        assert "not readable" in get(server.url)[2].decode()


# -- bench and suite folders over HTTP -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bench_folder(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("bench")
    web = build_tiny_web(tmp / "tiny")
    out = tmp / "bench"
    run_benchmark(BenchConfig(web=str(web), topic="topic.birds", strategies=["bfs", "best-first"], budget=25,
                              runs=2, seed=1, out=out, examples_irrelevant=5))
    return out


@pytest.fixture(scope="module")
def suite_folder(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("suite")
    suite = tmp / "suite.yml"
    suite.write_text("name: mini\ndescription: two topics of the embedded web\nwebs: [embedded]\n"
                     "strategies: [bfs, best-first]\ndefaults: {budget: 40, runs: 2, examples_irrelevant: 20}\n"
                     "rows:\n  - {web: embedded, topic: subject.Science.Biology, half: tuning}\n"
                     "  - {web: embedded, topic: subject.Everyday_life.Food_and_agriculture, half: held-out}\n")
    result = CliRunner().invoke(app, ["bench", "--suite", str(suite), "--jobs", "1", "--out", str(tmp / "out"),
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    return tmp / "out"


def test_bench_folder_endpoints(bench_folder):
    assert detect_kind(bench_folder) == "bench"
    with serve_dashboard(bench_folder, port=0) as server:
        data = get_json(server.url + "api/bench")
        assert data["order"] == ["oracle", "bfs", "best-first"]
        for name in data["order"]:
            curve = data["curves"][name]
            assert data["runs"][name] == 2 and curve["fetched"][-1] == 25
            assert all(lo <= m <= hi for lo, m, hi in zip(curve["min"], curve["mean"], curve["max"]))
        status, headers, svg = get(server.url + "harvest.svg?band=std")
        assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")
        assert svg.count(b'class="curve"') == 3 and b"mean \xc2\xb1 1 std" in svg
        html = get(server.url)[2].decode()
        assert "AUC/oracle" in html and "best-first" in html


@pytest.mark.slow
def test_suite_folder_endpoints(suite_folder):
    assert detect_kind(suite_folder) == "suite"
    with serve_dashboard(suite_folder, port=0) as server:
        data = get_json(server.url + "api/suite")
        slugs = [row["slug"] for row in data["rows"]]
        assert data["suite"]["suite"] == "mini" and len(slugs) == 2
        assert set(data["rows"][0]["auc"]) == {"oracle", "bfs", "best-first"}
        row = get_json(f"{server.url}api/row/{slugs[0]}")
        assert row["order"] == ["oracle", "bfs", "best-first"]
        assert get(f"{server.url}row/{slugs[1]}/harvest.svg")[0] == 200
        assert get(f"{server.url}row/..%2F..%2Fetc")[0] == 404
        assert get(f"{server.url}row/nope")[0] == 404
        html = get(server.url)[2].decode()
        assert "All rows" in html and "Held-out half" in html and slugs[0] in html
    # a suite still running: rows but no suite.json yet
    (suite_folder / "suite.json").rename(suite_folder / "suite.json.away")
    try:
        assert detect_kind(suite_folder) == "suite"
        with serve_dashboard(suite_folder, port=0) as server:
            data = get_json(server.url + "api/suite")
            assert data["suite"] is None and len(data["rows"]) == 2
            assert "not written yet" in get(server.url)[2].decode()
    finally:
        (suite_folder / "suite.json.away").rename(suite_folder / "suite.json")


# -- the command line -----------------------------------------------------------------------------------------------
def test_dashboard_flag_takes_an_optional_port():
    expand = cli_dashboard.with_dashboard_port
    assert expand(["crawl", "-o", "x", "--dashboard"]) == ["crawl", "-o", "x", "--dashboard=8765"]
    assert expand(["crawl", "--dashboard", "-o", "x"]) == ["crawl", "--dashboard=8765", "-o", "x"]
    assert expand(["crawl", "--dashboard", "9000", "-o", "x"]) == ["crawl", "--dashboard", "9000", "-o", "x"]
    assert expand(["crawl", "--dashboard=0"]) == ["crawl", "--dashboard=0"]
    assert expand(["bench", "--dashboard"]) == ["bench", "--dashboard"]  # only crawl has the flag


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["dashboard", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "does not exist" in err
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("x")
    assert main(["dashboard", str(tmp_path / "junk")]) == 2
    assert "is not a crawl run folder" in capsys.readouterr().err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = offline_run(tmp_path, budget=5)
        assert main(["dashboard", str(out), "--port", str(port)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"port {port} is in use" in err
        # crawl --dashboard on a busy port: one line, and no crawl started
        topic = tmp_path / "topic"
        assert main(["crawl", "--web", str(tmp_path / "tiny"), "--topic", str(topic), "-o", str(tmp_path / "new"),
                     "--budget", "5", "--progress", "none", "--dashboard", str(port)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "in use" in err
        assert not (tmp_path / "new").exists()


def test_crawl_with_dashboard_prints_its_url_and_serves_the_run(tmp_path, capsys, monkeypatch):
    web = build_tiny_web(tmp_path / "tiny")
    topic = birds_topic(tmp_path / "topic", ["http://birds.test/b0"])
    started: list[DashboardServer] = []
    real = cli_dashboard.DashboardServer.start

    def keep(self):
        started.append(self)
        return real(self)

    monkeypatch.setattr(cli_dashboard.DashboardServer, "start", keep)
    try:
        code = main(["crawl", "--web", str(web), "--topic", str(topic), "-o", str(tmp_path / "run"), "--budget",
                     "20", "--progress", "none", "--dashboard", "0"])
        assert code == 0
        err = capsys.readouterr().err
        url = re.search(r"dashboard: (http://127\.0\.0\.1:\d+/)", err).group(1)
        assert url == started[0].url
        assert get_json(url + "api/run")["totals"]["steps"] == 20
    finally:
        for server in started:
            server.stop()


@pytest.mark.slow
def test_dashboard_command_serves_until_interrupted(tmp_path):
    out = offline_run(tmp_path, budget=5)
    # Ctrl+C as a terminal delivers it: with SIGINT at its default in the child, even when the tests run as a
    # background job (whose shell starts children with SIGINT ignored, and Python then never raises for it)
    proc = subprocess.Popen([sys.executable, "-c", "from focuscrawl.cli.main import main; main()",
                             "dashboard", str(out), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", line).group(1)
        assert "(crawl folder)" in line
        assert get_json(url + "api/run")["totals"]["steps"] == 5
    finally:
        proc.send_signal(signal.SIGINT)
        try:  # communicate, not wait: it drains the pipes, so a chatty child cannot block on a full one
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            raise AssertionError(f"the dashboard did not stop on Ctrl+C; its stderr: {err[-2000:]}") from None
    assert proc.returncode in (0, 130), err


# -- the page in a real browser -------------------------------------------------------------------------------------
class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): no port, no
    websocket library, no browser download."""

    def __init__(self, width: int = 1400, height: int = 1000):
        self.profile = tempfile.mkdtemp(prefix="focuscrawl-chromium-")

        def high(fd: int) -> int:  # above 4, so that the shell's redirections below cannot clobber it
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            return moved

        to_child, self._to_w = map(high, os.pipe())
        self._from_r, from_child = map(high, os.pipe())
        # The protocol's pipe is the browser's fds 3 (commands in) and 4 (answers out): bash puts them there
        # (dash takes single-digit fds only).
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-',
             CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-extensions", "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            pass_fds=(to_child, from_child), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._replies: dict[int, dict] = {}
        self._cond = threading.Condition()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False}, session=True)

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._from_r, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for message in messages:
                    data = json.loads(message)
                    if "id" in data:
                        with self._cond:
                            self._replies[data["id"]] = data
                            self._cond.notify_all()

    def send(self, method: str, params: dict | None = None, session: bool = False, timeout: float = 60) -> dict:
        with self._cond:
            self._next += 1
            ident = self._next
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while ident not in self._replies:
                left = deadline - time.monotonic()
                assert left > 0, f"Chromium did not answer {method}"
                self._cond.wait(left)
            reply = self._replies.pop(ident)
        assert "error" not in reply, f"{method}: {reply['error']}"
        return reply["result"]

    def open(self, url: str) -> None:
        self.send("Page.navigate", {"url": url}, session=True)
        self.wait_for("document.readyState === 'complete' && !!document.body")

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 120) -> None:  # a hang guard, not a time limit
        deadline = time.monotonic() + timeout
        while not self.js(expression):
            assert time.monotonic() < deadline, f"timed out waiting for {expression}"
            time.sleep(0.1)

    def screenshot(self, path: Path) -> Path:
        height = self.js("document.documentElement.scrollHeight")
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0, "width": 1400, "height": height,
                                                             "scale": 1}}, session=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except AssertionError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        shutil.rmtree(self.profile, ignore_errors=True)


PAGE_STATE = """(() => {
  const curve = (id, name) => { const el = document.querySelector(`#${id} polyline[data-series="${name}"]`);
                                return el ? [Number(el.dataset.xLast), Number(el.dataset.last)] : null; };
  return {
    steps: Number(document.body.dataset.steps), polls: Number(document.body.dataset.polls || 0),
    status: document.body.dataset.status, marker: window.__marker || null,
    latest: [...document.querySelectorAll('#latest tbody tr td:first-child')]
              .map(td => Number(td.textContent.replace(/,/g, ''))),
    relevant: curve('chart-relevant', 'relevant pages'), frontier: curve('chart-frontier', 'frontier size'),
    problems: [...document.querySelectorAll('#problems tbody tr td:first-child')].map(td => td.textContent),
    hosts: [...document.querySelectorAll('#busiest tbody tr td:first-child')].map(td => td.textContent),
    relevantHosts: [...document.querySelectorAll('#relevant-hosts tbody tr td:first-child')].map(td => td.textContent),
    pages: document.querySelector('#kpis .kpi .v').textContent,
    scripts: document.querySelectorAll('script:not([nonce])').length,
  };
})()"""


def dump_dom(url: str, budget_ms: int = 3000) -> str:
    with tempfile.TemporaryDirectory(prefix="focuscrawl-chromium-") as profile:
        done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                               "--no-first-run", f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
                               "--dump-dom", url], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.decode()


def screenshot(url: str, path: Path, size: str = "1400,1400") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="focuscrawl-chromium-") as profile:
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={size}",
                        "--virtual-time-budget=2000", f"--screenshot={path}", url], capture_output=True, timeout=120,
                       check=True)
    assert path.stat().st_size > 10_000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


@pytest.mark.slow
@needs_chromium
def test_the_live_page_follows_a_crawl_of_a_served_web(tmp_path):
    crawl = LiveCrawl(tmp_path).start()
    browser = None
    try:
        with serve_dashboard(crawl.out, port=0, kind="crawl") as server:
            crawl.wait_steps(40)
            first = crawl.pause()
            browser = Chromium()
            browser.open(server.url)
            browser.js("window.__marker = 'no reload'")
            browser.wait_for("Number(document.body.dataset.polls) >= 1")
            one = browser.js(PAGE_STATE)
            assert one["status"] == "running" and one["steps"] == first
            assert one["latest"][0] == first - 1 and len(one["latest"]) == 30
            assert one["relevant"][0] == first and one["pages"] == f"{first:,}"

            crawl.resume()
            crawl.wait_steps(first + 60)
            crawl.wait_problems(PROBLEM_KINDS)
            second = crawl.pause()
            # the page polls by itself: no reload
            browser.wait_for(f"Number(document.body.dataset.steps) === {second}")
            two = browser.js(PAGE_STATE)
            assert two["marker"] == "no reload" and two["polls"] > one["polls"]
            assert two["latest"][0] == second - 1 and two["latest"] != one["latest"]
            assert two["relevant"][0] == second and two["relevant"][1] >= one["relevant"][1]
            assert two["frontier"][0] == second
            assert two["scripts"] == 0  # every script carries the CSP nonce
            # the served web's troubles, each in its own kind
            kinds = " | ".join(two["problems"])
            for kind in PROBLEM_KINDS:
                assert kind in kinds, kinds
            assert {"birds.test", "nest.test", "trains.test"} <= set(two["hosts"])
            assert {"birds.test", "nest.test"} <= set(two["relevantHosts"])
            assert "trains.test" not in two["relevantHosts"]
            api = get_json(server.url + "api/run")
            assert api["totals"]["steps"] == second and api["status"] == "running"
            assert any(p["reason"] for p in api["latest"]), "the strategy says why it chose its pages"
            shot = browser.screenshot(tmp_path / "dashboard-crawl.png")
            ARTIFACTS.mkdir(exist_ok=True)
            shutil.copy(shot, ARTIFACTS / "dashboard-crawl.png")

            # a page's text, as the crawler saw it, one click away; a hostile title stays text
            step = browser.js("document.querySelector('#latest tbody tr .title a').getAttribute('href')")
            browser.open(server.url.rstrip("/") + step)
            record = json.loads((crawl.out / "pages.jsonl").read_text().splitlines()[int(step.rsplit("/", 1)[1])])
            assert browser.js("document.getElementById('text').textContent") == (record["text"] or "(empty)")
            hostile = next(json.loads(line)["step"] for line in (crawl.out / "pages.jsonl").read_text().splitlines()
                           if json.loads(line)["title"] == HOSTILE_TITLE)
            browser.open(f"{server.url}page/{hostile}")
            assert browser.js("document.querySelector('h1').textContent") == HOSTILE_TITLE
            assert browser.js("document.querySelectorAll('h1 b, h1 script').length") == 0

            crawl.resume()
            crawl.stop()
            browser.open(server.url)
            assert browser.js("document.body.dataset.status") in ("finished", "interrupted")
    finally:
        if browser is not None:
            browser.close()
        crawl.stop()


@pytest.mark.slow
@needs_chromium
def test_bench_page_in_chromium(bench_folder, tmp_path):
    with serve_dashboard(bench_folder, port=0) as server:
        dom = dump_dom(server.url)
        assert 'id="chart-bench"' in dom
        for name in ("oracle", "bfs", "best-first"):
            assert re.search(rf'<polyline[^>]+data-series="{name} \(2 runs\)"', dom), name
            assert re.search(rf'<polygon[^>]+data-series="{name} \(2 runs\)"', dom), name
        assert dom.count("<tr") >= 4 and "AUC/oracle" in dom
        shot = screenshot(server.url, tmp_path / "dashboard-bench.png", "1200,1000")
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(shot, ARTIFACTS / "dashboard-bench.png")


@pytest.mark.slow
@needs_chromium
def test_suite_page_in_chromium(suite_folder, tmp_path):
    with serve_dashboard(suite_folder, port=0) as server:
        dom = dump_dom(server.url)
        assert 'id="chart-suite"' in dom and "All rows" in dom and "Tuning half" in dom
        slugs = re.findall(r'<a href="/row/([^"/?]+)">', dom)
        assert len(set(slugs)) == 2
        assert dom.count("<img") == 2  # each row's harvest curves
        row = dump_dom(f"{server.url}row/{slugs[0]}")
        assert 'id="chart-bench"' in row and 'data-series="best-first (2 runs)"' in row
        shot = screenshot(server.url, tmp_path / "dashboard-suite.png", "1400,1800")
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(shot, ARTIFACTS / "dashboard-suite.png")
