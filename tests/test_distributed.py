"""Distributed crawls on a local Ray runtime over a web served on loopback: budget, no page twice, politeness,
robots, the same crawl at N=1, a shard killed mid-crawl, the driver SIGKILLed and resumed, a clear line for
another N and for a missing Ray."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import BIRD_WORDS, OTHER_WORDS, ThreadServedWeb, _text, write_birds_topic
from typer.testing import CliRunner

from focuscrawl.cli.main import app
from focuscrawl.crawl import Crawler
from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.webs.store import WebWriter

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

HOSTS = [f"h{i}.test" for i in range(8)]
PAGES = 14
MIN_DELAY = 0.03
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _web(directory: Path) -> Path:
    """Eight hosts of 14 pages; every page links within its host and to two other hosts; even hosts are on topic."""
    with WebWriter(directory, {"name": "hosts"}) as w:
        for h, host in enumerate(HOSTS):
            words = BIRD_WORDS if h % 2 == 0 else OTHER_WORDS
            for i in range(PAGES):
                url = f"http://{host}/p{i}"
                w.add_page(url, title=f"{host} {i}", text=_text(words, i + h), labels=["topic.birds" if h % 2 == 0
                                                                                      else "topic.other"])
                w.add_link(url, f"http://{host}/p{(i + 1) % PAGES}", "next")
                w.add_link(url, f"http://{host}/p{(i * 3 + 2) % PAGES}", "more birds")
                w.add_link(url, f"http://{HOSTS[(h + 1 + i) % len(HOSTS)]}/p{i}", "elsewhere")
                w.add_link(url, f"http://{HOSTS[(h + 3 * i + 2) % len(HOSTS)]}/p{(i + 5) % PAGES}", "bird nest")
    return directory


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("distributed")
    web = _web(root / "web")
    write_birds_topic(root / "topic", ["http://h0.test/p0", "http://h3.test/p0"])
    server = ThreadServedWeb(web, root / "hosts.json", base_ip="127.0.9.1", disallow={"h1.test": ["/p3"]})
    yield root, server
    server.close()


@pytest.fixture(scope="module")
def local_ray():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             runtime_env={"env_vars": {"PYTHONPATH": SRC}})
    yield
    ray.shutdown()


def _settings(root: Path, server: ThreadServedWeb, **extra) -> dict:
    return {"topic": root / "topic", "hosts_map": server.map_file, "progress": "none", "plot": False,
            "fetch": {"min_delay": MIN_DELAY}, "checkpoint_every": 20, **extra}


def _pages(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def test_three_shards_reach_the_budget_politely_without_fetching_a_url_twice(site, local_ray):
    from focuscrawl.crawl.distributed import DistributedCrawler, shard_of

    root, server = site
    before = len(server.requests())
    run = root / "n3"
    summary = DistributedCrawler(**_settings(root, server, out=run, budget=60, workers=3, concurrency=4,
                                             strategy="best-first")).crawl()
    assert summary.stopped == "budget" and summary.steps == 60
    pages = _pages(run)
    assert len(pages) == 60 and len({p["url"] for p in pages}) == 60
    # each page fetched by the shard owning its host; the shards' own files are beneath
    assert all(p["shard"] == shard_of(p["url"], 3) for p in pages)
    assert len({p["shard"] for p in pages}) > 1
    assert sum(len((run / "shards" / str(k) / "pages.jsonl").read_text().splitlines()) for k in range(3)) == 60
    assert json.loads((run / "summary.json").read_text())["workers"] == 3
    # the server saw each page once, robots.txt obeyed, and never two requests to a host closer than min_delay
    requests = server.requests()[before:]
    assert max(Counter((r.host, r.path) for r in requests).values()) == 1
    assert not [r for r in requests if r.host == "h1.test" and r.path == "/p3"]
    assert any(p["url"] == "http://h1.test/p3" and "robots" in p["error"] for p in pages) or \
        "http://h1.test/p3" not in {p["url"] for p in pages}
    by_host: dict[str, list[float]] = {}
    for r in requests:
        by_host.setdefault(r.host, []).append(r.time)
    gaps = [b - a for times in by_host.values() for a, b in zip(sorted(times), sorted(times)[1:])]
    assert gaps and min(gaps) >= MIN_DELAY - 0.002


def test_shards_that_run_out_of_links_end_the_crawl_with_every_reachable_page_once(site, local_ray):
    """A budget larger than the web: the crawl ends when every frontier and outbox is empty, and has fetched
    exactly what the single-process crawl fetches, so no link between shards was lost on the way."""
    from focuscrawl.crawl.distributed import DistributedCrawler

    root, server = site
    settings = _settings(root, server, budget=500, concurrency=4, strategy="bfs", fetch={"min_delay": 0.005})
    single = Crawler(**settings, out=root / "all-single").crawl()
    summary = DistributedCrawler(**settings, out=root / "all-n3", workers=3).crawl()
    assert summary.stopped == "frontier" == single.stopped
    urls = [p["url"] for p in _pages(root / "all-n3")]
    assert len(urls) == len(set(urls)) == summary.steps
    # the web's pages, each once, as the single crawl fetched them; soft-404 probes (the engine's own requests for
    # a path a host cannot have) depend on which pages each shard met first
    pages = {u for u, p in zip(urls, _pages(root / "all-n3")) if p["verdict"] != PROBE}
    assert pages == {p["url"] for p in _pages(root / "all-single") if p["verdict"] != PROBE}
    assert len(pages) == len(HOSTS) * PAGES


def test_one_shard_at_concurrency_one_crawls_as_the_single_process_crawl(site, local_ray):
    from focuscrawl.crawl.distributed import DistributedCrawler

    root, server = site
    settings = _settings(root, server, budget=40, concurrency=1, strategy="adaptive")
    Crawler(**settings, out=root / "single").crawl()
    DistributedCrawler(**settings, out=root / "n1", workers=1).crawl()
    assert [p["url"] for p in _pages(root / "n1")] == [p["url"] for p in _pages(root / "single")]


def _read_store(run: Path, shard: int, query: str) -> int:
    """One number from a shard's store, read while the crawl writes it (0 before the store exists)."""
    try:
        db = sqlite3.connect(f"file:{run / 'shards' / str(shard) / 'state.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute(query).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row and row[0] is not None else 0


def _pooled_rounds(run: Path, shard: int) -> int:
    """Rounds of pooled parameters a shard has stored (logged as messages, so that its replay loads them again)."""
    return _read_store(run, shard, "SELECT COUNT(*) FROM ops WHERE kind = 'A' AND url LIKE 'avg:%'")


def _starts(run: Path, shard: int) -> int:
    return _read_store(run, shard, "SELECT value FROM meta WHERE key = 'starts'")


def _restarted(shard, starts: int) -> dict:
    """The status of ``shard`` once Ray has restarted it as start number ``starts`` (its first call starts it)."""
    deadline = time.monotonic() + 600  # only so that a broken restart fails the test instead of hanging it
    while time.monotonic() < deadline:
        try:
            status = ray.get(shard.poll.remote(), timeout=30)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError):
            time.sleep(0.1)
            continue
        if status["starts"] == starts:
            return status
        time.sleep(0.1)
    pytest.fail(f"the shard did not come back as start {starts}")


def test_a_shard_killed_mid_crawl_is_restarted_and_nothing_is_lost_or_fetched_twice(site, local_ray):
    """Shard 1, then 0, then 1 again is killed once both have stored a round of pooled learning (adaptive's
    parameters), each once the one before is back: Ray restarts it, it resumes from its store and replays the
    pooled rounds stored there, and the crawl neither loses a page or a link nor fetches a page twice."""
    from focuscrawl.crawl.distributed import DistributedCrawler

    root, server = site
    run = root / "killed"
    kills: list[tuple[int, int, dict]] = []  # (shard, pooled rounds in its store when killed, its restart's status)

    def kill_shards(stats) -> None:
        if kills or min(_pooled_rounds(run, k) for k in range(2)) == 0:
            return
        # All three here, while the driver waits: how fast Ray restarts a shard decides nothing. The shards crawl
        # on meanwhile (their leases come from the coordinator), so the kills land mid-crawl.
        for shard in (1, 0, 1):
            stored, starts = _pooled_rounds(run, shard), _starts(run, shard)
            ray.kill(crawler.shards[shard], no_restart=False)
            kills.append((shard, stored, _restarted(crawler.shards[shard], starts + 1)))

    # checkpoint_every=0: a restart replays the whole log, so every pooled round it stored is loaded again through
    # the replay (a checkpoint would hold the rounds before it inside the pickled policy)
    settings = _settings(root, server, out=run, budget=100, workers=2, concurrency=1, strategy="adaptive",
                         average_every=10, checkpoint_every=0)
    settings["fetch"] = {"min_delay": 0.25}  # slow (about 8 pages/s): the crawl goes on after the kills
    crawler = DistributedCrawler(**settings)
    summary = crawler.crawl(on_progress=kill_shards)
    assert [shard for shard, _, _ in kills] == [1, 0, 1]
    for shard, stored, status in kills:
        assert stored >= 1 and status["replayed_rounds"] == stored, (shard, stored, status)
    assert summary.stopped == "budget" and summary.steps == 100
    pages = _pages(run)
    assert len(pages) == 100 and len({p["url"] for p in pages}) == 100
    assert [_starts(run, k) for k in range(2)] == [2, 3]  # each restart resumed its store
    # every link sent between shards arrived: no outbox is left with anything in it
    assert [_read_store(run, k, "SELECT COUNT(*) FROM outbox") for k in range(2)] == [0, 0]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from focuscrawl.cli.main import main; sys.exit(main())", *args]


def _committed(run: Path, workers: int = 2) -> int:
    return sum(_read_store(run, k, "SELECT COUNT(*) FROM steps") for k in range(workers))


def test_a_sigkilled_driver_resumes_with_the_same_command_and_refuses_another_n(site):
    root, server = site
    run = root / "sigkill"
    # min_delay 0.4: at most 20 pages/s over the 8 hosts, so the kill lands seconds before the budget is spent
    command = _cli("crawl", "--topic", str(root / "topic"), "--hosts-map", str(server.map_file), "-o", str(run),
                   "--budget", "80", "--workers", "2", "--concurrency", "2", "--strategy", "bfs", "--progress",
                   "none", "-s", "fetch.min_delay=0.4", "-s", "checkpoint_every=10", "-s", "plot=false")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "RAY_USAGE_STATS_ENABLED": "0"}
    log = root / "sigkill.log"
    with open(log, "w") as output:  # a file, not a pipe nobody reads: a full pipe would block the driver
        driver = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 600  # only so that a crawl that never starts fails instead of hanging
    while _committed(run) < 15 and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.1)
    assert driver.poll() is None, log.read_text()
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and what it started in its session (the local Ray)
    driver.wait(60)
    killed_at = _committed(run)
    assert 15 <= killed_at < 80

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    pages = _pages(run)
    assert len(pages) == 80 and len({p["url"] for p in pages}) == 80
    assert json.loads((run / "summary.json").read_text())["resumed_steps"] >= killed_at

    other = CliRunner().invoke(app, ["crawl", "-o", str(run), "--workers", "3", "--progress", "none"])
    assert other.exit_code == 2
    assert other.output.strip().count("\n") == 0 and "--workers 2" in other.output, other.output


def _sent_ids(run: Path, workers: int) -> set[str]:
    """The ids of every message the shards' committed pages made: one per page and other shard its links go to."""
    from focuscrawl.crawl.distributed import shard_of
    from focuscrawl.storage import StateStore

    ids = set()
    for k in range(workers):
        store = StateStore(run / "shards" / str(k) / "state.sqlite")
        try:
            for record in store.steps():
                dests = {shard_of(link.url, workers) for link in record.outlinks} - {k}
                ids |= {f"{k}:{record.step}:{dest}" for dest in dests}
        finally:
            store.close()
    return ids


def _adopted_ids(run: Path, workers: int) -> list[str]:
    """The ids of the link messages the shards stored, one entry per 'A' operation in their logs."""
    ids = []
    for k in range(workers):
        db = sqlite3.connect(run / "shards" / str(k) / "state.sqlite")
        try:
            ids += [row[0] for row in db.execute("SELECT url FROM ops WHERE kind = 'A' AND url NOT LIKE 'avg:%'")]
        finally:
            db.close()
    return ids


def test_direct_sends_survive_a_shard_killed_three_times_and_the_driver_killed_once(site):
    """Shards send their links to each other without the driver. Shard 1 is SIGKILLed three times mid-crawl (Ray
    restarts it; its peers' sends to it fail meanwhile and are retried, and it re-sends its own unacknowledged
    outbox), then the driver and everything it started: the same command resumes the crawl. Nothing is lost or
    done twice: no URL fetched twice, every message a committed page made stored at its destination exactly once,
    every outbox empty."""
    root, server = site
    run = root / "direct-kills"
    workers = 2
    # min_delay 1: at most 8 pages/s over the 8 hosts, so the kills land well before the budget is spent
    command = _cli("crawl", "--topic", str(root / "topic"), "--hosts-map", str(server.map_file), "-o", str(run),
                   "--budget", "80", "--workers", str(workers), "--concurrency", "2", "--strategy", "adaptive",
                   "--progress", "none", "-s", "fetch.min_delay=1.0", "-s", "checkpoint_every=10", "-s",
                   "average_every=10", "-s", "plot=false")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "RAY_USAGE_STATS_ENABLED": "0"}
    log = root / "direct-kills.log"
    deadline = time.monotonic() + 600  # only so that a crawl that never starts fails instead of hanging

    def wait_for(condition) -> None:
        while not condition() and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.1)
        assert driver.poll() is None, log.read_text()

    def shard_steps() -> int:
        return _read_store(run, 1, "SELECT COUNT(*) FROM steps")

    with open(log, "w") as output:  # a file, not a pipe nobody reads: a full pipe would block the driver
        driver = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    for kill in range(3):
        wait_for(lambda: shard_steps() >= 3 * (kill + 1) and _starts(run, 1) == kill + 1)
        os.kill(_read_store(run, 1, "SELECT value FROM meta WHERE key = 'pid'"), signal.SIGKILL)
    wait_for(lambda: _starts(run, 1) == 4 and _committed(run) >= 30)
    assert _committed(run) < 80
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and what it started in its session (the local Ray)
    driver.wait(60)

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert _starts(run, 1) == 5
    pages = _pages(run)
    assert len(pages) == 80 and len({p["url"] for p in pages}) == 80
    adopted = _adopted_ids(run, workers)
    assert max(Counter(adopted).values()) == 1, "a message stored twice"
    assert set(adopted) == _sent_ids(run, workers), "a message lost (or one no page made)"
    assert len(adopted) > 20
    assert [_read_store(run, k, "SELECT COUNT(*) FROM outbox") for k in range(workers)] == [0] * workers
    assert _pooled_rounds(run, 0) >= 2  # learning was pooled across the kills too


def test_without_ray_workers_is_one_line_naming_the_extra(site, monkeypatch, tmp_path):
    root, server = site
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = CliRunner().invoke(app, ["crawl", "--topic", str(root / "topic"), "-o", str(tmp_path / "run"),
                                      "--hosts-map", str(server.map_file), "--workers", "2", "--progress", "none"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0, result.output
    assert "pip install 'focuscrawl[distributed]'" in result.output


def test_a_ray_address_where_nothing_listens_is_one_line_before_ray_starts(site, tmp_path):
    # ray.init would retry for minutes; the crawl's own check says first that no cluster answers there (the
    # message is that check's, and nothing is written).
    import socket

    root, server = site
    with socket.socket() as probe:  # a loopback port that was free a moment ago: nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(app, ["crawl", "--topic", str(root / "topic"), "-o", str(tmp_path / "run"),
                                      "--hosts-map", str(server.map_file), "--workers", "2", "--progress", "none",
                                      "--ray-address", f"127.0.0.1:{port}"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0, result.output
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in result.output
    assert not (tmp_path / "run").exists()  # nothing written: the next command starts clean


def test_only_a_host_and_port_is_checked_before_ray_init():
    # `auto` and Ray Client addresses (`ray://`) are Ray's to resolve; a HOST:PORT is connected to first
    import socket

    from focuscrawl.crawl.distributed import ClusterUnreachable, check_reachable

    check_reachable("auto")
    check_reachable("ray://127.0.0.1:1")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_reachable(f"127.0.0.1:{listening.getsockname()[1]}")
        port = listening.getsockname()[1]
    with pytest.raises(ClusterUnreachable, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        check_reachable(f"127.0.0.1:{port}")
