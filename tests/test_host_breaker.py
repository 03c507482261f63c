"""The host breaker in seconds (focuscrawl.engine.defences.hosts): back-off in time, half-open trials, failures told
apart, no host closed for good on a burst; on the engine with a wall clock given, and over HTTP on loopback.

The Scrapy add-on's crawl under the same rule is in test_scrapy.py (it needs a Scrapy process).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from pathlib import Path

import pytest
from aiohttp import web
from conftest import BIRD_WORDS
from test_defences import TOPIC, Wrapped, _topic_dir, page_text

from focuscrawl.bench.protocol import GroundTruth
from focuscrawl.builder import build_crawl
from focuscrawl.config import RunSettings
from focuscrawl.engine.defences import HOST_FAILING, DefenceSettings
from focuscrawl.engine.defences.hosts import DNS, NO_ANSWER, REFUSAL, SERVER_ERROR, THROTTLED, failure_kind
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import DNS_FAILURE, Page, retry_after_error, retry_after_of
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import OfflineWeb, WebWriter

HUB = "http://hub.test/"


def _web(directory: Path, bad: int = 8, good: int = 10, bad_host: str = "flaky.test") -> Path:
    """A hub linking first to ``bad`` pages of ``bad_host``, then to ``good`` pages of its own host."""
    with WebWriter(directory, {"name": "breaker"}) as w:
        w.add_page(HUB, title="hub", text=page_text(BIRD_WORDS, 0, 20), labels=["birds"])
        for i in range(bad):
            w.add_link(HUB, f"http://{bad_host}/f{i}", "bird")
            w.add_page(f"http://{bad_host}/f{i}", title=f"f{i}", text=page_text(BIRD_WORDS, 100 + i, 20),
                       labels=["birds"])
        for i in range(good):
            w.add_link(HUB, f"http://hub.test/g{i}", "bird")
            w.add_page(f"http://hub.test/g{i}", title=f"g{i}", text=page_text(BIRD_WORDS, i + 1, 20),
                       labels=["birds"])
    return directory


def _engine(web_dir: Path, budget: int = 60, **host_health):
    settings = RunSettings(budget=budget, seed=0, reward_model="tfidf",
                           defences=DefenceSettings(host_health=host_health))
    return build_crawl(settings, "bfs", TOPIC, [HUB], judge=GroundTruth("birds", frozenset())).engine


def _dns_failure(url: str) -> Page:
    # what the HTTP fetcher says, the same text each time while the resolver's negative cache answers
    return Page(url=url, final_url=url, status=0, error=f"{DNS_FAILURE} for flaky.test: [Errno -2] Name or service "
                                                        "not known")


def _failed(url: str) -> Page:
    return Page(url=url, final_url=url, status=503)


# -- on the engine, with a wall clock given ---------------------------------------------------------------------
def test_a_burst_of_dns_failures_counts_once_and_the_host_is_tried_again_after_the_back_off(tmp_path):
    web = OfflineWeb(_web(tmp_path / "w"))
    engine = _engine(tmp_path / "w")
    health, t = engine.defences["host_health"], 1000.0
    engine.record(engine.next_selection().url, web.fetch(HUB), at=t)
    burst = [engine.next_selection().url for _ in range(6)]  # six fetches in flight, failing within 0.5 s
    assert all("flaky.test" in url for url in burst)
    for i, url in enumerate(burst):
        engine.record(url, _dns_failure(url), at=t + 0.1 * i)
    assert "flaky.test" not in health.closed and health.breakers["flaky.test"].failures == 1
    # the host waits out the resolver's negative cache (dns_ttl_s): its next URL is parked, the good host goes on
    selection = engine.next_selection()
    assert selection.url.startswith("http://hub.test/") and engine.defences.holds_back("flaky.test", 0)
    engine.record(selection.url, web.fetch(selection.url), at=t + 1)
    selection = engine.next_selection()
    assert selection.url.startswith("http://hub.test/")
    engine.record(selection.url, web.fetch(selection.url), at=t + health.settings.dns_ttl_s + 0.5)
    trial = engine.next_selection()  # the back-off is over: one trial, the parked URL
    assert trial.url == "http://flaky.test/f6"
    other = engine.next_selection()  # while the trial is out, the host's other URLs wait
    assert other.url.startswith("http://hub.test/") and health.parked["flaky.test"][0][0].url.endswith("/f7")
    engine.record(trial.url, web.fetch(trial.url), at=t + 62)  # the resolver is back: the breaker closes
    engine.record(other.url, web.fetch(other.url), at=t + 62.5)
    assert "flaky.test" not in health.breakers and engine.next_selection().url == "http://flaky.test/f7"


def _fail_until_closed(engine, web, t0: float, seconds_per_good_fetch: float) -> list[tuple[float, str]]:
    """Crawl with the flaky host always failing, the clock moving ``seconds_per_good_fetch`` per fetch; returns
    (time, URL) of the flaky host's fetches, until it is closed or the crawl ends."""
    clock, flaky = t0, []
    while (selection := engine.next_selection()) is not None:
        failing = "flaky.test" in selection.url
        event = engine.record(selection.url, _failed(selection.url) if failing else web.fetch(selection.url),
                              at=clock)
        if failing:
            flaky.append((clock, event.verdict))
        clock += seconds_per_good_fetch
    return flaky


def test_a_host_failing_for_minutes_through_failed_trials_is_closed(tmp_path):
    web = OfflineWeb(_web(tmp_path / "w", bad=10, good=260))
    engine = _engine(tmp_path / "w", budget=260)
    settings = engine.defences["host_health"].settings
    flaky = _fail_until_closed(engine, web, 0.0, 2.0)
    times = [at for at, _ in flaky]
    # three failures in a row, then one trial after 60, 120 and 240 s (and the 2 s of the fetch that ended each
    # back-off: time moves at each record); closed at the third failed trial
    assert times[:3] == [2.0, 4.0, 6.0] and [b - a for a, b in zip(times[2:], times[3:])] == [62.0, 122.0, 242.0]
    assert [verdict for _, verdict in flaky] == [""] * 5 + [HOST_FAILING]
    assert times[-1] - times[0] >= settings.close_after_s
    assert "flaky.test" in engine.defences["host_health"].closed


def test_a_burst_of_failures_and_trials_closes_no_host_before_minutes_have_passed(tmp_path):
    """Nothing else left to fetch: the parked URLs are tried at once, every one a failed trial, yet the host is
    closed only once its failures have lasted ``close_after_s``."""
    web = OfflineWeb(_web(tmp_path / "w", bad=12, good=0))
    engine = _engine(tmp_path / "w", budget=40, close_after_s=30.0)
    flaky = _fail_until_closed(engine, web, 0.0, 4.0)
    times = [at for at, _ in flaky]
    closed = [at for at, verdict in flaky if verdict == HOST_FAILING]
    assert len(flaky) > 3 + 3, "three failed trials within 30 s did not close the host"
    assert closed == [times[-1]] and times[-2] - times[0] < 30.0 <= times[-1] - times[0]


def test_a_429_with_retry_after_waits_that_long_and_no_longer_than_the_cap(tmp_path):
    web = OfflineWeb(_web(tmp_path / "w", bad=4, good=10))
    engine = _engine(tmp_path / "w")
    health = engine.defences["host_health"]
    engine.record(engine.next_selection().url, web.fetch(HUB), at=0.0)
    url = engine.next_selection().url
    engine.record(url, Page(url=url, final_url=url, status=429, error=retry_after_error(600)), at=10.0)
    assert health.breakers["flaky.test"].until == 610.0, "600 s, not the breaker's 60: the server said so"
    for at, waits in ((11.0, True), (609.0, True), (610.0, False)):
        health.clock = at
        assert health.waiting("flaky.test", 0) == waits
    url = engine.next_selection().url  # the trial: throttled again, for longer than anyone waits
    engine.record(url, Page(url=url, final_url=url, status=503, error=retry_after_error(10 ** 6)), at=610.0)
    assert health.breakers["flaky.test"].until == 610.0 + health.settings.max_retry_after_s
    # without Retry-After a 429 is one failure of a few before the breaker opens
    engine2 = _engine(tmp_path / "w")
    engine2.record(engine2.next_selection().url, web.fetch(HUB), at=0.0)
    url = engine2.next_selection().url
    engine2.record(url, Page(url=url, final_url=url, status=429), at=1.0)
    assert not engine2.defences["host_health"].waiting("flaky.test", 0)


def test_failures_are_told_apart():
    def kind(status: int, error: str = "") -> str | None:
        return failure_kind(Page(url="http://a.test/", final_url="http://a.test/", status=status, error=error))

    assert kind(0, f"{DNS_FAILURE} for a.test: [Errno -2] Name or service not known") == DNS
    assert kind(0, "DNSLookupError: DNS lookup failed: no results for hostname lookup: a.test.") == DNS  # Scrapy's
    assert kind(0, "timeout after 30 s") == kind(0, "cannot connect: [Errno 111] Connection refused") == NO_ANSWER
    assert kind(500) == kind(503) == SERVER_ERROR
    assert kind(429) == kind(503, retry_after_error(30)) == THROTTLED
    assert retry_after_of(retry_after_error(30)) == 30.0 and retry_after_of("timeout after 30 s") is None
    assert kind(0, "disallowed by robots.txt") == kind(0, "refused address: a.test is private") == REFUSAL
    assert kind(200) is kind(404) is kind(301) is None


def test_a_robots_refusal_is_neither_a_failure_nor_a_success(tmp_path):
    """Failures with refusals between them are still in a row: the breaker opens after the third (offline: the
    breaker's clock is the crawl's steps)."""
    with WebWriter(tmp_path / "w", {"name": "refusals"}) as w:
        w.add_page(HUB, title="hub", text=page_text(BIRD_WORDS, 0, 20), labels=["birds"])
        for i in range(3):
            w.add_link(HUB, f"http://mixed.test/x{i}", "bird")
            w.add_link(HUB, f"http://mixed.test/private/p{i}", "bird")
        for i in range(10):
            w.add_link(HUB, f"http://hub.test/g{i}", "bird")
            w.add_page(f"http://hub.test/g{i}", title=f"g{i}", text=page_text(BIRD_WORDS, i + 1, 20))

    class Refusing(Wrapped):
        def fetch(self, url: str) -> Page:
            if "/private/" in url:
                return Page(url=url, final_url=url, status=0, error="disallowed by robots.txt")
            return super().fetch(url)

    web = Refusing(OfflineWeb(tmp_path / "w"), failing=("mixed.test",))
    engine = _engine(tmp_path / "w")
    for _ in range(6):  # the hub, then failure, refusal, failure, refusal, failure
        selection = engine.next_selection()
        engine.record(selection.url, web.fetch(selection.url))
    assert engine.defences["host_health"].waiting("mixed.test", engine.stats.steps)


# -- over HTTP, on loopback -----------------------------------------------------------------------------------------
def _crawl_served(tmp_path: Path, web_dir: Path, fetcher_for, budget: int, hook=None, concurrency: int = 8,
                  **settings) -> tuple[list[dict], list]:
    """Crawl the served web with ``focuscrawl.crawl.Crawler`` and the fetcher ``fetcher_for(hosts)`` gives: (the lines
    of pages.jsonl, the server's request log)."""
    from focuscrawl.crawl import Crawler

    run = tmp_path / "run"

    async def go():
        async with serve_web(web_dir, hook=hook) as server:
            crawler = Crawler(topic=_topic_dir(tmp_path / "topic", [HUB]), out=run, progress="none", plot=False,
                              fetcher=fetcher_for(server.hosts), strategy="bfs", budget=budget, concurrency=concurrency,
                              **settings)
            async for _ in crawler.run():
                pass
            return list(server.log)

    log = asyncio.run(go())
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()], log


def test_over_http_a_dns_burst_does_not_close_a_host_and_it_is_retried_after_the_back_off(tmp_path):
    """The resolver fails flaky.test for its first half second (the same answer each time, as its negative cache
    gives) and then recovers: eight fetches in flight fail at once; the host's URLs found next wait ``dns_ttl_s``,
    and are fetched. (No robots.txt: its lookups would keep some of the eight back, past the recovery.)"""
    with WebWriter(tmp_path / "w", {"name": "dns"}) as w:
        w.add_page(HUB, title="hub", text=page_text(BIRD_WORDS, 0, 20), labels=["birds"])
        pages = [f"http://flaky.test/f{i}" for i in range(8)] + [f"http://hub.test/g{i}" for i in range(25)]
        for url in pages:
            w.add_link(HUB, url, "bird")
        for i in range(4):  # found on g0, when the burst is over
            w.add_link("http://hub.test/g0", f"http://flaky.test/h{i}", "bird")
        for i in range(10):
            w.add_link("http://hub.test/g1", f"http://hub.test/k{i}", "bird")
        for i, url in enumerate(pages + [f"http://flaky.test/h{i}" for i in range(4)]
                                + [f"http://hub.test/k{i}" for i in range(10)]):
            w.add_page(url, title=f"p{i}", text=page_text(BIRD_WORDS, i + 1, 20), labels=["birds"])
    recovered: dict[str, float] = {}

    def fetcher_for(hosts):
        fetcher = HttpFetcher(FetchConfig.loopback(hosts, min_delay=0.05, per_host_concurrency=8,
                                                   obey_robots=False))
        addresses = fetcher.resolver.addresses

        async def flaky_resolver(host: str) -> list[str]:
            if host == "flaky.test" and time.monotonic() < recovered.setdefault("at", time.monotonic() + 0.5):
                raise OSError(f"{DNS_FAILURE} for flaky.test: [Errno -2] Name or service not known")
            return await addresses(host)

        fetcher.resolver.addresses = flaky_resolver  # what the fetcher's lookups and connections ask
        return fetcher

    lines, _ = _crawl_served(tmp_path, tmp_path / "w", fetcher_for, budget=48, concurrency=8,
                             defences={"host_health": {"dns_ttl_s": 1.5}})
    flaky = [line for line in lines if "flaky.test" in line["url"]]
    failed = [line for line in flaky if DNS_FAILURE in line["error"]]
    fetched = [line for line in flaky if line["status"] == 200]
    assert len(failed) == 8 and failed[-1]["fetched_at"] - failed[0]["fetched_at"] < 1.0, "a burst"
    assert not any(line["verdict"] == HOST_FAILING or any(why == HOST_FAILING for _, why in line["skipped"])
                   for line in lines), "not closed for good"
    assert sorted(line["url"] for line in fetched) == [f"http://flaky.test/h{i}" for i in range(4)]
    assert fetched[0]["fetched_at"] - failed[0]["fetched_at"] >= 1.5, "tried again after dns_ttl_s"


def test_over_http_a_429_retry_after_keeps_the_host_waiting_that_long(tmp_path):
    """busy.test answers its first request 429 with Retry-After: 2. The fetcher itself would retry after a second
    (``max_retry_after`` 0: it waits no Retry-After, only its 1 s back-off); the breaker keeps the host 2 s."""
    web_dir = _web(tmp_path / "w", bad=4, good=30, bad_host="busy.test")
    answered: list[str] = []

    async def throttle(request: web.Request, host: str, url: str):
        if host == "busy.test" and request.path.startswith("/f") and not answered:  # not robots.txt, sitemaps
            answered.append(url)
            return web.Response(status=429, headers={"Retry-After": "2"})
        return None

    def fetcher_for(hosts):
        return HttpFetcher(FetchConfig.loopback(hosts, min_delay=0.1, per_host_concurrency=8, throttle_retries=0,
                                                max_retry_after=0.0))

    # one fetch at a time: the host's next URL is the policy's next choice, which the breaker parks
    lines, log = _crawl_served(tmp_path, web_dir, fetcher_for, budget=35, hook=throttle, concurrency=1)
    busy = [entry.time for entry in log if entry.host == "busy.test" and entry.path.startswith("/f")]
    assert [line["error"] for line in lines if line["status"] == 429] == ["retry after 2 s"]
    assert len(busy) == 4 and busy[1] - busy[0] >= 2.0


def test_the_fetcher_reads_a_retry_after_date(tmp_path):
    web_dir = _web(tmp_path / "w", bad=1, good=0, bad_host="busy.test")

    async def throttle(request: web.Request, host: str, url: str):
        if request.path.startswith("/f"):
            when = email.utils.formatdate(time.time() + 30, usegmt=True)
            return web.Response(status=429, headers={"Retry-After": when})
        return None

    async def go():
        async with serve_web(web_dir, hook=throttle) as server:
            fetcher = HttpFetcher(FetchConfig.loopback(server.hosts, min_delay=0.0, throttle_retries=0))
            try:
                return await fetcher.fetch("http://busy.test/f0")
            finally:
                await fetcher.aclose()

    page = asyncio.run(go())
    assert page.status == 429 and 28.0 <= retry_after_of(page.error) <= 30.0
    assert failure_kind(page) == THROTTLED


@pytest.mark.parametrize("wall", [False, True])
def test_a_resumed_crawl_replays_the_breakers_decisions(tmp_path, wall):
    """The run folder keeps the clock each step was recorded at (``fetched_at``) when the crawl keeps the wall
    clock: a resume replays the breaker's holds and trials exactly, from the log alone too."""
    from test_defences import AsyncFetcher

    from focuscrawl.crawl import Crawler
    from focuscrawl.crawl.resume import replay
    from focuscrawl.storage.state import StateStore

    web = Wrapped(OfflineWeb(_web(tmp_path / "w", bad=10, good=30)), failing=("flaky.test",))
    fetcher = AsyncFetcher(web)
    fetcher.real_time = wall
    run = tmp_path / "run"

    async def go():
        crawler = Crawler(topic=_topic_dir(tmp_path / "topic", [HUB]), out=run, progress="none", plot=False,
                          fetcher=fetcher, strategy="bfs", budget=41, concurrency=3,
                          defences={"host_health": {"open_s": 0.01}})
        async for _ in crawler.run():
            pass

    asyncio.run(go())
    store = StateStore(run / "state.sqlite")
    try:
        assert store.get_meta("clock") == ("wall" if wall else "steps")
        engine = _engine(tmp_path / "w", budget=41, open_s=0.01)
        replay(engine, store, use_checkpoint=False)  # raises ResumeError where a selection differs
        assert engine.stats.steps == 41
    finally:
        store.close()
