"""focuscrawl inside Scrapy (focuscrawl.scrapy): real Scrapy crawls a small web served on loopback.

Scrapy's reactor starts once per process, so each crawl runs ``scrapy runspider`` in a subprocess; the web is
served by ``focuscrawl.webs.serve`` (in a thread), whose request log says what was fetched and in which order.

The web: a hub links first to a section about cars, then to one about birds, each with leaves about its subject.
A crawl that takes the hub's links in order (breadth first) fetches the car leaves first; a policy that learns
where relevant pages are fetches the bird leaves first. Besides: a page missing (404), a redirect, a path
robots.txt disallows, a request the spider gives a priority (Scrapy's to order) whose page links to a bird page
nothing else links to, and an image.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("scrapy")

from focuscrawl.topic.topic_dir import write_topic_dir  # noqa: E402
from focuscrawl.types import TopicInputs  # noqa: E402
from focuscrawl.webs.serve import serve_web  # noqa: E402
from focuscrawl.webs.store import WebWriter  # noqa: E402

HOST = "http://wild.test"
BIRDS = ["heron wading in the marsh", "kingfisher diving for fish", "owl hunting at night", "swallow migrating south"]
CARS = ["diesel engine torque", "gearbox and clutch repair", "brake pads and discs", "tyre pressure on the motorway"]


def bird_text(what: str) -> str:
    return f"The {what}. Birds nest, sing, fly and lay eggs; feathers, wings and beaks of wild birds. " * 3


def car_text(what: str) -> str:
    return f"Car maintenance: {what}. Engines, wheels, fuel and the garage mechanic's tools. " * 3


def build_web(directory: Path) -> None:
    with WebWriter(directory, {"name": "birds-and-cars"}) as w:
        w.add_page(f"{HOST}/", title="Hub", text="A hub of pages about many things.")
        w.add_link(f"{HOST}/", f"{HOST}/cars/", "more pages")
        w.add_link(f"{HOST}/", f"{HOST}/birds/", "other pages")
        w.add_link(f"{HOST}/", f"{HOST}/about", "about")
        w.add_page(f"{HOST}/cars/", title="Cars", text=car_text("all about cars"))
        w.add_page(f"{HOST}/birds/", title="Birds", text=bird_text("all about birds"))
        for i, (bird, car) in enumerate(zip(BIRDS, CARS)):
            w.add_link(f"{HOST}/cars/", f"{HOST}/cars/{i}", f"page {i}")
            w.add_link(f"{HOST}/birds/", f"{HOST}/birds/{i}", f"page {i}")
            w.add_page(f"{HOST}/cars/{i}", title=f"Car page {i}", text=car_text(car))
            w.add_page(f"{HOST}/birds/{i}", title=f"Bird page {i}", text=bird_text(bird))
        w.add_link(f"{HOST}/birds/", f"{HOST}/birds/missing", "page 9")
        w.add_link(f"{HOST}/birds/", f"{HOST}/old-birds", "page 8")
        w.add_link(f"{HOST}/birds/", f"{HOST}/private/nest", "page 7")
        w.add_link(f"{HOST}/birds/", f"{HOST}/birds/photo.png", "photo")
        w.add_page(f"{HOST}/old-birds", status=301, location=f"{HOST}/birds/moved", content_type="")
        w.add_page(f"{HOST}/birds/moved", title="Moved bird page", text=bird_text("crane dancing"))
        w.add_page(f"{HOST}/birds/photo.png", content_type="image/png", text="")
        w.add_page(f"{HOST}/about", title="About", text="Who wrote this web.")
        w.add_link(f"{HOST}/about", f"{HOST}/birds/hidden", "a page")
        w.add_page(f"{HOST}/birds/hidden", title="Hidden bird page", text=bird_text("wren in the hedge"))


SPIDER = '''
import json, os, scrapy

class Wild(scrapy.Spider):
    name = "wild"
    start_urls = ["http://wild.test/"]

    def parse(self, response):
        with open(os.environ["SEEN"], "a") as seen:
            seen.write(json.dumps({"url": response.url, "status": response.status}) + "\\n")
        yield {"url": response.url}
        if not hasattr(response, "css"):
            return
        for href in response.css("a::attr(href)").getall():
            if href.endswith("/about"):
                yield response.follow(href, priority=5)  # the spider's own priority: Scrapy orders it
            else:
                yield response.follow(href)
'''


def _serve_in_thread(web_dir: Path, root: Path, **options):
    """``serve_web`` in a thread of this process: (hosts map file, request log file, a function that stops it)."""
    map_file, log_file = root / "hosts.json", root / "requests.jsonl"
    ready, box = threading.Event(), {}

    async def serve() -> None:
        box["loop"], box["stop"] = asyncio.get_running_loop(), asyncio.Event()
        async with serve_web(web_dir, log_file=log_file, **options) as server:
            map_file.write_text(json.dumps(server.hosts))
            ready.set()
            await box["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(60)

    def stop() -> None:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(10)

    return map_file, log_file, stop


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The web served on loopback by a thread of this process: (hosts map file, request log file)."""
    root = tmp_path_factory.mktemp("wild")
    build_web(root / "web")
    map_file, log_file, stop = _serve_in_thread(root / "web", root, base_ip="127.0.33.1", disallow=["/private/"])
    yield map_file, log_file
    stop()


@pytest.fixture(scope="module")
def topic(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("topic") / "birds"
    write_topic_dir(directory, TopicInputs(
        name="birds", keywords=["birds"],
        example_texts=[bird_text(b) for b in ("robin", "eagle soaring", "duck on the pond", "sparrow")] +
                      [car_text(c) for c in ("oil change", "spark plugs", "car wash", "headlights")] +
                      ["Who wrote this web.", "A hub of pages about many things."],
        example_labels=[1, 1, 1, 1, 0, 0, 0, 0, 0, 0]))
    return directory


def crawl(tmp_path: Path, served, topic: Path, *settings: str, name: str = "run", spider_text: str = SPIDER,
          env: dict | None = None) -> tuple[subprocess.CompletedProcess, list[dict], list[dict]]:
    """Run the spider with the focused scheduler: (the process, the server's log of this crawl, pages.jsonl)."""
    map_file, log_file = served
    spider = tmp_path / "wild_spider.py"
    spider.write_text(spider_text)
    before = len(log_file.read_text().splitlines()) if log_file.exists() else 0
    pages = tmp_path / f"{name}-pages.jsonl"
    argv = [sys.executable, "-m", "scrapy", "runspider", str(spider),
            "-s", "ADDONS={\"focuscrawl.scrapy.FocusedCrawl\": 0}",
            "-s", f"FOCUSCRAWL_TOPIC={topic}", "-s", f"FOCUSCRAWL_HOSTS_MAP={map_file}",
            "-s", f"FOCUSCRAWL_PAGES={pages}", "-s", "CONCURRENT_REQUESTS=1",
            "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO", "-s", "RETRY_ENABLED=False", *settings]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "SEEN": str(tmp_path / f"{name}-seen.jsonl"), **(env or {})})
    log = [json.loads(line) for line in log_file.read_text().splitlines()[before:]]
    rows = [json.loads(line) for line in pages.read_text().splitlines()] if pages.exists() else []
    return proc, log, rows


def paths(log: list[dict]) -> list[str]:
    return [entry["path"] for entry in log if entry["path"] != "/robots.txt"]


LEAVES = {f"/birds/{i}" for i in range(4)} | {f"/cars/{i}" for i in range(4)}


@pytest.mark.slow
def test_the_policy_orders_the_spiders_requests_and_sees_every_response(tmp_path, served, topic):
    proc, log, rows = crawl(tmp_path, served, topic, "-s", "FOCUSCRAWL_STRATEGY=best-first", name="best-first")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    fetched = paths(log)
    # The hub's first link is the car section, fetched first; then the birds' pages, relevant, come before the cars'.
    assert fetched.index("/cars/") < fetched.index("/birds/")
    leaves = [path for path in fetched if path in LEAVES]
    assert leaves == sorted(leaves, key=lambda path: path.startswith("/cars/")) and len(leaves) == 8
    # A request the spider gave a priority is Scrapy's to order: right after the hub, and not the policy's page; the
    # page it found (linked from nowhere else) is the policy's to fetch.
    assert fetched[:2] == ["/", "/about"] and "/birds/hidden" in fetched
    assert len(fetched) == len(set(fetched))  # nothing fetched twice
    # Every answer to the policy's requests reached it, in the order fetched: a 404, a redirect (one step), a page
    # robots.txt forbids (no request), an image (no text); the spider's own parse saw each 2xx page.
    steps = {row["url"].removeprefix(HOST): row for row in rows}
    assert [row["step"] for row in rows] == list(range(len(rows))) and len(rows) == 16
    assert [path for path in steps if path != "/private/nest"] == [
        path for path in fetched if path not in ("/about", "/birds/moved")]
    assert steps["/birds/missing"]["status"] == 404
    assert steps["/old-birds"]["final_url"] == f"{HOST}/birds/moved" and steps["/old-birds"]["relevance"] > 0.5
    assert steps["/private/nest"]["status"] == 0 and "robots.txt" in steps["/private/nest"]["error"]
    assert steps["/birds/photo.png"]["relevance"] == 0 and steps["/birds/photo.png"]["status"] == 200
    assert all(steps[f"/birds/{i}"]["relevance"] > 0.5 > steps[f"/cars/{i}"]["relevance"] for i in range(4))
    assert "/about" not in steps and steps["/birds/hidden"]["status"] == 200
    seen = [json.loads(line)["url"] for line in (tmp_path / "best-first-seen.jsonl").read_text().splitlines()]
    assert sorted(url.removeprefix(HOST) for url in seen) == sorted(
        path for path in fetched if path not in ("/birds/missing", "/old-birds"))
    # The same spider and web, breadth first: the car leaves first. The order is the policy's, not Scrapy's.
    proc, log, _ = crawl(tmp_path, served, topic, "-s", "FOCUSCRAWL_STRATEGY=bfs", name="bfs")
    assert proc.returncode == 0
    leaves = [path for path in paths(log) if path in LEAVES]
    assert leaves == sorted(leaves, key=lambda path: path.startswith("/birds/"))


@pytest.mark.slow
def test_the_reader_process_makes_the_crawl_of_the_reader_in_scrapys_thread(tmp_path, served, topic):
    """At one request in flight the crawl is the policy's alone: the same pages in the same order, with the same
    scores, whether the engine is in the page reader's process (FOCUSCRAWL_READ_QUEUE 32) or in Scrapy's thread (0)."""
    crawls = {}
    for queue in ("32", "0"):
        proc, log, rows = crawl(tmp_path, served, topic, "-s", f"FOCUSCRAWL_READ_QUEUE={queue}", name=f"q{queue}")
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        assert "'focuscrawl/pages': 16" in proc.stderr
        crawls[queue] = (paths(log), [{key: row[key] for key in ("step", "url", "status", "relevance", "score",
                                                                   "reason", "error")} for row in rows])
    assert crawls["32"] == crawls["0"] and len(crawls["0"][1]) == 16


ALL_PATHS = {"/", "/about", "/cars/", "/birds/", "/birds/hidden", "/birds/missing", "/old-birds", "/birds/moved",
             "/birds/photo.png"} | LEAVES


@pytest.mark.slow
@pytest.mark.parametrize("queue", ["32", "0"])
def test_a_crawl_stopped_and_resumed_with_its_jobdir_fetches_nothing_again(tmp_path, served, topic, queue):
    """Stopped after 6 answers and resumed, through the page reader's process (32) or in Scrapy's thread (0)."""
    jobdir = ("-s", f"JOBDIR={tmp_path / 'job'}", "-s", f"FOCUSCRAWL_READ_QUEUE={queue}")
    first, log1, rows1 = crawl(tmp_path, served, topic, *jobdir, "-s", "CLOSESPIDER_PAGECOUNT=6", name="job")
    assert first.returncode == 0 and "closespider_pagecount" in first.stderr, first.stderr[-3000:]
    assert (tmp_path / "job" / "focuscrawl.state").exists() and 3 <= len(rows1) < 16
    second, log2, rows = crawl(tmp_path, served, topic, *jobdir, name="job")  # the same pages file, appended
    assert second.returncode == 0 and "resuming a crawl of" in second.stderr, second.stderr[-3000:]
    fetched = paths(log1) + paths(log2)
    assert len(fetched) == len(set(fetched)) and set(fetched) == ALL_PATHS  # all of it, nothing twice
    assert [row["step"] for row in rows] == list(range(16)) and len({row["url"] for row in rows}) == 16


def bad_settings(tmp_path: Path, topic: Path) -> list[tuple[dict, str]]:
    other = tmp_path / "hosts.json"
    other.write_text('{"wild.test": "10.0.0.1:80"}')
    return [
        ({"FOCUSCRAWL_STRATEGY": "nonsense"}, "unknown strategy 'nonsense'"),
        ({"FOCUSCRAWL_TOPIC": str(tmp_path / "missing")}, f"topic directory {tmp_path / 'missing'} not found"),
        ({"FOCUSCRAWL_TOPIC": None}, "FOCUSCRAWL_TOPIC is not set"),
        ({"FOCUSCRAWL_TOPICS": "x"}, "unknown setting FOCUSCRAWL_TOPICS"),
        ({"FOCUSCRAWL_BUDGET": 0}, "setting budget: Input should be greater than 0"),
        ({"FOCUSCRAWL_SETTINGS": {"max_per_domain": 5, "max_outlink": 3}}, "setting max_outlink: unknown setting"),
        ({"FOCUSCRAWL_SETTINGS": {"options": {"adaptive": {"explore": 2}}}}, "strategy 'adaptive' option explore=2"),
        ({"ADDONS": {}, "SCHEDULER": "focuscrawl.scrapy.FocusedScheduler"}, "SPIDER_MIDDLEWARES lacks"),
        ({"FOCUSCRAWL_HOSTS_MAP": str(other)}, "maps to 10.0.0.1:80, not a loopback address"),
        ({"FOCUSCRAWL_READ_QUEUE": -1}, "FOCUSCRAWL_READ_QUEUE is -1: give the pages"),
        ({"FOCUSCRAWL_READ_QUEUE": "many"}, "FOCUSCRAWL_READ_QUEUE is 'many'"),
    ]


def refused(topic: Path, settings: dict) -> bool:
    """Whether a FocusedScheduler opened in this process (no reactor, nothing fetched) refuses the settings."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from focuscrawl.scrapy import FocusedScheduler

    settings = {"ADDONS": {"focuscrawl.scrapy.FocusedCrawl": 0}, "FOCUSCRAWL_TOPIC": str(topic), **settings}
    crawler = get_crawler(Spider, {key: value for key, value in settings.items() if value is not None})
    scheduler = FocusedScheduler.from_crawler(crawler)
    scheduler.open(Spider.from_crawler(crawler, name="s"))
    return scheduler.refused


@pytest.mark.slow
def test_bad_settings_are_one_error_line_and_close_the_spider(tmp_path, topic, caplog):
    for settings, message in bad_settings(tmp_path, topic):
        caplog.clear()
        assert refused(topic, settings), settings
        errors = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
        assert len(errors) == 1 and "\n" not in errors[0] and message in errors[0], (settings, errors)


def test_a_jobdir_of_other_settings_or_damaged_is_refused(tmp_path, topic, caplog):
    from focuscrawl.scrapy.jobdir import STATE_FILE, STATE_VERSION

    state = tmp_path / "job" / STATE_FILE
    state.parent.mkdir()
    state.write_bytes(b"not a state")
    assert refused(topic, {"JOBDIR": str(state.parent)})
    assert "cannot be read" in caplog.records[-1].getMessage()
    state.write_bytes(pickle.dumps({"version": STATE_VERSION, "identity": {"strategy": "bfs"}}))
    assert refused(topic, {"JOBDIR": str(state.parent)})
    message = caplog.records[-1].getMessage()
    assert "JOBDIR holds a focused crawl with another topic and strategy and settings" in message


@pytest.mark.slow
def test_a_bad_setting_under_scrapy_runspider_is_one_error_line(tmp_path, served, topic):
    proc, log, rows = crawl(tmp_path, served, topic, "-s", "FOCUSCRAWL_STRATEGY=nonsense", name="bad")
    errors = [line for line in proc.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and "focuscrawl: unknown strategy 'nonsense'" in errors[0], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "focuscrawl_bad_settings" in proc.stderr
    assert log == [] and rows == []


GUARDED_SPIDER = '''
import os, scrapy

class Guarded(scrapy.Spider):
    name = "guarded"
    start_urls = [os.environ["START"]]

    def parse(self, response):
        yield {"url": response.url}
'''


@pytest.mark.slow
def test_the_address_guard_refuses_a_loopback_host_unless_allowed(tmp_path, served, topic):
    """Without a hosts map the web's loopback address is an address like any other: refused, in one line and a
    stat, before anything (robots.txt included) is asked of it; FOCUSCRAWL_ALLOW_LOOPBACK lets it through."""
    map_file, log_file = served
    start = "http://" + json.loads(map_file.read_text())["wild.test"] + "/"
    spider = tmp_path / "guarded_spider.py"
    spider.write_text(GUARDED_SPIDER)
    argv = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-s", "FOCUSCRAWL_BUDGET=2",
            "-s", "ADDONS={\"focuscrawl.scrapy.FocusedCrawl\": 0}", "-s", f"FOCUSCRAWL_TOPIC={topic}",
            "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO", "-s", "RETRY_ENABLED=False"]
    for allow, reached in (("False", False), ("True", True)):
        before = len(log_file.read_text().splitlines()) if log_file.exists() else 0
        proc = subprocess.run([*argv, "-s", f"FOCUSCRAWL_ALLOW_LOOPBACK={allow}"], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path, env={**os.environ, "START": start})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        log = [json.loads(line) for line in log_file.read_text().splitlines()[before:]]
        refusals = [line for line in proc.stderr.splitlines() if f"focuscrawl: refused {start}" in line]
        if reached:
            # robots.txt asked first: the add-on's default
            assert [entry["path"] for entry in log][:2] == ["/robots.txt", "/"] and not refusals, proc.stderr[-3000:]
        else:
            assert log == [] and len(refusals) == 1 and "'focuscrawl/refused_address': 1" in proc.stderr, \
                proc.stderr[-3000:]


def test_robots_txt_is_obeyed_unless_the_user_says_otherwise():
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    addon = {"ADDONS": {"focuscrawl.scrapy.FocusedCrawl": 0}}

    class Disobeying(Spider):
        name = "disobeying"
        custom_settings = {"ROBOTSTXT_OBEY": False}

    assert get_crawler(Spider, addon).settings.getbool("ROBOTSTXT_OBEY")
    assert not get_crawler(Spider, {**addon, "ROBOTSTXT_OBEY": False}).settings.getbool("ROBOTSTXT_OBEY")
    assert not get_crawler(Disobeying, addon).settings.getbool("ROBOTSTXT_OBEY")


def test_a_robots_or_address_refusal_is_not_a_host_failure():
    from scrapy.exceptions import IgnoreRequest

    from focuscrawl.engine.defences.hosts import is_failure
    from focuscrawl.scrapy.reader import download_error
    from focuscrawl.types import Page

    def failure(exception: BaseException) -> bool:
        return is_failure(Page(url="http://a.test/", final_url="http://a.test/", status=0,
                               error=download_error(exception)))

    assert not failure(IgnoreRequest("Forbidden by robots.txt"))
    assert not failure(IgnoreRequest("refused address: a.test resolves to a refused address (10.0.0.1)"))
    assert not failure(IgnoreRequest("not a host of the served web: b.test"))
    assert failure(ConnectionRefusedError("connection refused")) and failure(TimeoutError("timed out"))


FLAKY_SPIDER = SPIDER.replace('name = "wild"', 'name = "flaky"').replace("http://wild.test/", "http://hub.test/")


@pytest.mark.slow
def test_the_add_on_keeps_the_host_breaker_in_seconds(tmp_path, topic):
    """The add-on's engine has the wall clock: flaky.test answers its first 8 requests 503 (all in flight at once)
    and then recovers. A burst closes no host: the breaker opens after 3 failures, its URLs found meanwhile wait (the
    others go first), and are fetched when it is tried again."""
    from aiohttp import web as aioweb

    with WebWriter(tmp_path / "web", {"name": "flaky"}) as w:
        w.add_page("http://hub.test/", title="Hub", text="A hub of pages about many things.")
        urls = [f"http://flaky.test/f{i}" for i in range(12)] + [f"http://hub.test/g{i}" for i in range(12)]
        for i, url in enumerate(urls):
            w.add_link("http://hub.test/", url, f"page {i}")
            w.add_page(url, title=f"Bird page {i}", text=bird_text(BIRDS[i % 4]))
    failed: list[str] = []

    async def flaky(request, host: str, url: str):
        if host == "flaky.test" and request.path.startswith("/f") and len(failed) < 8:  # not robots.txt, sitemaps
            failed.append(url)
            return aioweb.Response(status=503)
        return None

    map_file, log_file, stop = _serve_in_thread(tmp_path / "web", tmp_path, base_ip="127.0.34.1", hook=flaky)
    try:
        proc, _, rows = crawl(tmp_path, (map_file, log_file), topic, "-s", "FOCUSCRAWL_STRATEGY=bfs",
                              "-s", "CONCURRENT_REQUESTS=8", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
                              spider_text=FLAKY_SPIDER, name="flaky")
    finally:
        stop()
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert not any(row["verdict"] == "host failing" or row["skipped"] for row in rows), "no host closed for good"
    flaky_rows = [row for row in rows if "flaky.test" in row["url"]]
    # the first 8 requests failed; their answers may be recorded in another order than they were sent
    assert sorted(row["status"] for row in flaky_rows) == [200] * 4 + [503] * 8
    # Whether the URLs parked by the open breaker come after the other host's pages depends on timing: the add-on
    # releases parked URLs early, before the 60 s are up, when Scrapy has nothing else in flight for a moment (an open
    # point of issue 44), and on a busy machine that moment can come before any other page. What holds whatever the
    # timing is above: the burst closed no host and every parked URL was fetched once it recovered.


def test_the_address_guard_checks_dns_answers_and_pins_the_checked_one(monkeypatch):
    from scrapy import Request, Spider
    from scrapy.exceptions import IgnoreRequest
    from scrapy.resolver import dnscache
    from scrapy.utils.test import get_crawler

    from focuscrawl.scrapy.guard import AddressGuardMiddleware

    answers = {"inside.test": ["2002:c0a8:101::1", "10.0.0.1"], "outside.test": ["2001:db8::1", "93.184.216.34"],
               "v6only.test": ["2606:4700::1111"]}

    async def fake_getaddrinfo(host, port, **kwargs):
        return [(10 if ":" in ip else 2, 1, 6, "", (ip, port)) for ip in answers[host]]

    crawler = get_crawler(Spider, {})
    crawler.stats.open_spider()
    guard = AddressGuardMiddleware.from_crawler(crawler)
    guard.pins = True  # as under Scrapy's default resolver

    async def go():
        monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", fake_getaddrinfo)
        for url in ("http://inside.test/", "http://[64:ff9b::a00:1]/", "http://v6only.test/"):
            with pytest.raises(IgnoreRequest, match="refused address"):
                await guard.process_request(Request(url))
        await guard.process_request(Request("http://outside.test/"))

    asyncio.run(go())
    assert dnscache["outside.test"] == "93.184.216.34" and "inside.test" not in dnscache
    assert crawler.stats.get_value("focuscrawl/refused_address") == 3


# The add-on's page reader made slow (each record 0.15 s, its process and interval logged), or failing at the third
# page; the spider logs when its own callback runs, in Scrapy's process. The recorder is the scheduler's class
# attribute: a child process imports this spider's module to unpickle it.
READER_SPIDER = SPIDER.replace('name = "wild"', 'name = "reader"').replace(
    "    def parse(self, response):\n",
    "    def parse(self, response):\n"
    "        with open(os.environ['SEEN'] + '.times', 'a') as times:\n"
    "            times.write(json.dumps(time.time()) + '\\n')\n") + '''
import multiprocessing, time
from focuscrawl.scrapy import FocusedScheduler
from focuscrawl.scrapy.reader import Recorder


class SlowRecorder(Recorder):
    def __init__(self, spec):
        super().__init__(spec)
        self.calls = 0
        with open(os.environ["SEEN"] + ".pids", "a") as pids:
            pids.write(json.dumps(os.getpid()) + "\\n")

    def _record(self, url, page, fetch_s=0.0):
        self.calls += 1
        if os.environ.get("FAIL_AT") and self.calls == int(os.environ["FAIL_AT"]):
            raise RuntimeError("a bug in recording")
        started = time.time()
        time.sleep(0.15)
        with open(os.environ["SEEN"] + ".records", "a") as records:
            records.write(json.dumps([multiprocessing.current_process().name, started, time.time()]) + "\\n")
        super()._record(url, page, fetch_s)


FocusedScheduler.recorder = SlowRecorder
'''


@pytest.mark.slow
def test_scrapy_runs_the_spider_while_the_reader_records_a_page(tmp_path, served, topic):
    """Off the reactor: while the reader's process records a page, Scrapy goes on (a spider's callback runs in the
    meantime); with FOCUSCRAWL_READ_QUEUE=0 (reading in Scrapy's thread) never. The same pages either way."""
    overlaps, fetched = {}, {}
    for queue in ("8", "0"):
        proc, log, rows = crawl(tmp_path, served, topic, "-s", "FOCUSCRAWL_STRATEGY=bfs",
                                "-s", f"FOCUSCRAWL_READ_QUEUE={queue}", "-s", "CONCURRENT_REQUESTS=8",
                                "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
                                spider_text=READER_SPIDER, name=f"reader{queue}")
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        seen = tmp_path / f"reader{queue}-seen.jsonl"
        records = [json.loads(line) for line in Path(f"{seen}.records").read_text().splitlines()]
        times = [json.loads(line) for line in Path(f"{seen}.times").read_text().splitlines()]
        assert len(records) == len(rows) == 16
        assert {name for name, _, _ in records} == ({"focuscrawl-reader"} if queue != "0" else {"MainProcess"})
        overlaps[queue] = sum(any(start < t < end for t in times) for _, start, end in records)
        fetched[queue] = sorted(row["url"] for row in rows)
    assert overlaps["8"] >= 2 and overlaps["0"] == 0, overlaps
    assert fetched["8"] == fetched["0"]


@pytest.mark.slow
@pytest.mark.parametrize("queue", ["32", "0"])
def test_a_failure_in_the_reader_is_one_error_and_closes_the_spider(tmp_path, served, topic, queue):
    proc, _, rows = crawl(tmp_path, served, topic, "-s", f"JOBDIR={tmp_path / 'job'}",
                          "-s", f"FOCUSCRAWL_READ_QUEUE={queue}", spider_text=READER_SPIDER, name="failing",
                          env={"FAIL_AT": "3"})
    errors = [line for line in proc.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and "reading and recording pages failed: RuntimeError: a bug in recording" in errors[0], \
        proc.stderr[-3000:]
    assert "'finish_reason': 'focuscrawl_reader_failed'" in proc.stderr and len(rows) == 2
    assert "not written to JOBDIR" in proc.stderr and not (tmp_path / "job" / "focuscrawl.state").exists()
    assert "Traceback" not in proc.stderr and proc.returncode == 0
    # the recorder's process (Scrapy's own with queue 0) is gone once Scrapy's is: not orphaned, not a zombie
    pids = [json.loads(line) for line in (tmp_path / "failing-seen.jsonl.pids").read_text().splitlines()]
    assert len(pids) == 1 and not Path(f"/proc/{pids[0]}").exists()

