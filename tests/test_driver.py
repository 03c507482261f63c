"""The crawl driver and a fetcher's politeness slots: one slow host the policy keeps choosing does not hold every
fetch in flight."""

from __future__ import annotations

import asyncio
import threading
import time
from urllib.parse import urlsplit

from conftest import BIRD_WORDS, _text
from test_defences import _topic_dir

from focuscrawl.types import Link, Page

SLOW = [f"http://slow.test/p{i}" for i in range(8)]
FAST = [f"http://fast.test/p{i}" for i in range(8)]


class SlottedFetcher:
    """A web of a seed linking to eight slow.test pages first, then eight fast.test pages; one slot per host.

    slow.test answers only once every fast.test page has been asked for, or (so that a driver without slots cannot
    hang the test) once two of its requests wait at the same time, which the test then reports."""

    slot_capacity = 1

    def __init__(self):
        self.asked: list[str] = []
        self.slow_waiting = 0
        self.most_slow_waiting = 0
        self.open = asyncio.Event()

    def slot(self, url: str) -> str:
        return urlsplit(url).hostname

    async def fetch(self, url: str) -> Page:
        self.asked.append(url)
        if url.startswith("http://slow.test/"):
            self.slow_waiting += 1
            self.most_slow_waiting = max(self.most_slow_waiting, self.slow_waiting)
            if self.slow_waiting >= 2:
                self.open.set()
            await self.open.wait()
            self.slow_waiting -= 1
        elif all(u in self.asked for u in FAST):
            self.open.set()
        links = [Link(u, "more") for u in SLOW + FAST] if url == "http://fast.test/" else []
        return Page(url=url, final_url=url, status=200, content_type="text/html", title=url,
                    text=_text(BIRD_WORDS, len(self.asked)), outlinks=links)

    async def aclose(self) -> None:
        pass


def test_a_busy_slot_waits_in_the_driver_while_other_hosts_are_fetched(tmp_path):
    from focuscrawl.crawl import Crawler

    fetcher = SlottedFetcher()

    async def go():
        crawler = Crawler(topic=_topic_dir(tmp_path / "topic", ["http://fast.test/"]), out=tmp_path / "run",
                          progress="none", plot=False, fetcher=fetcher, strategy="bfs", budget=17, concurrency=4)
        return [record.url async for record in crawler.run()]

    fetched = asyncio.run(go())
    assert fetcher.most_slow_waiting == 1, "the driver gave the slow host more fetches than its slot serves"
    assert sorted(fetched) == sorted(["http://fast.test/", *SLOW, *FAST])  # nothing lost, nothing twice
    asked = fetcher.asked
    assert max(asked.index(u) for u in FAST) < asked.index(SLOW[1]), "the fast host went on while the slow one waited"


HOSTS = [f"http://h{i}.test" for i in range(6)]
DUE_WEB = [f"{host}/p{k}" for host in HOSTS for k in range(3)]  # host by host: a breadth-first crawl keeps coming back


class DueFetcher(SlottedFetcher):
    """One slot per host and a delay of ``DELAY`` s between a host's requests, which ``fetch`` waits out as the HTTP
    fetcher does; ``ready_in`` and ``prepare`` say when a host is due, as the HTTP fetcher's do."""

    DELAY = 0.15

    def __init__(self):
        super().__init__()
        self.last_end: dict[str, float] = {}
        self.in_flight = 0
        self.waited_beside_others: list[str] = []  # fetches that sat out a delay while others were in flight
        self.prepared: list[str] = []

    def ready_in(self, slot: str) -> float:
        return max(0.0, self.last_end.get(slot, float("-inf")) + self.DELAY - time.monotonic())

    def prepare(self, url: str) -> None:
        self.prepared.append(url)

    async def fetch(self, url: str) -> Page:
        self.asked.append(url)
        self.in_flight += 1
        wait = self.ready_in(self.slot(url))
        if wait > 0:
            if self.in_flight > 1:
                self.waited_beside_others.append(url)
            await asyncio.sleep(wait)
        await asyncio.sleep(0.005)
        self.last_end[self.slot(url)] = time.monotonic()
        self.in_flight -= 1
        links = [Link(u, "more") for u in DUE_WEB] if url == "http://seed.test/" else []
        return Page(url=url, final_url=url, status=200, content_type="text/html", title=url,
                    text=_text(BIRD_WORDS, len(self.asked)), outlinks=links)


def _crawl_due_web(tmp_path, fetcher: DueFetcher, strategy: str) -> list[str]:
    """The URLs a crawl of ``DUE_WEB`` from its seed fetched, 4 in flight."""
    from focuscrawl.crawl import Crawler

    async def go():
        crawler = Crawler(topic=_topic_dir(tmp_path / "topic", ["http://seed.test/"]), out=tmp_path / "run",
                          progress="none", plot=False, fetcher=fetcher, strategy=strategy, budget=19, concurrency=4)
        return [record.url async for record in crawler.run()]

    return asyncio.run(go())


def test_a_fetch_starts_when_its_host_is_due_not_to_wait_in_flight(tmp_path):
    """With other fetches in flight, a selection whose host is still within its delay waits in the driver (its
    robots.txt prepared meanwhile) rather than holding a place in flight through the delay."""
    fetcher = DueFetcher()
    fetched = _crawl_due_web(tmp_path, fetcher, "bfs")
    assert sorted(fetched) == sorted(["http://seed.test/", *DUE_WEB])  # nothing lost, nothing twice
    assert fetcher.waited_beside_others == [], "a fetch sat out its host's delay in flight"
    assert set(fetcher.prepared) <= set(DUE_WEB) and fetcher.prepared, "what waits is prepared"


class SiteFetcher(DueFetcher):
    """``DueFetcher`` that names a site's slots, so that the driver tells the policy which hosts are ready."""

    def __init__(self):
        super().__init__()
        self.busy: set[str] = set()

    def site_slots(self, site: str) -> tuple[str, ...]:
        return (site,)

    async def fetch(self, url: str) -> Page:
        host = self.slot(url)
        self.busy.add(host)
        try:
            return await super().fetch(url)
        finally:
            self.busy.discard(host)


def test_a_polite_crawl_tells_the_policy_which_hosts_a_fetch_could_start_on(tmp_path, monkeypatch):
    """With fetches in flight the driver asks ``select_ready``; a host it calls ready has no fetch in flight and is
    past its delay. Adaptive's choice among ready hosts is checked in test_frontier; here, that the hint is true."""
    from focuscrawl.strategies.adaptive import AdaptivePolicy

    fetcher = SiteFetcher()
    calls: list[tuple[str, bool]] = []
    select_ready = AdaptivePolicy.select_ready

    def recording(self, ready):
        if ready is None:  # ``select``: nothing in flight
            return select_ready(self, ready)
        for host in ["seed.test", *(urlsplit(h).hostname for h in HOSTS)]:
            truly = host not in fetcher.busy and fetcher.ready_in(host) == 0
            said = ready(host)
            calls.append((host, said))
            assert not said or truly, f"{host} called ready while busy or within its delay"
        return select_ready(self, ready)

    monkeypatch.setattr(AdaptivePolicy, "select_ready", recording)
    fetched = _crawl_due_web(tmp_path, fetcher, "adaptive")
    assert sorted(fetched) == sorted(["http://seed.test/", *DUE_WEB])  # nothing lost, nothing twice
    assert calls, "the policy was never told which hosts are ready"
    assert any(said for _, said in calls) and not all(said for _, said in calls)
    assert fetcher.waited_beside_others == []


def test_a_polite_breadth_first_crawl_takes_the_first_url_on_a_ready_host(tmp_path):
    """``bfs`` told which hosts are ready takes the first queued URL on one of them, else its first."""
    from focuscrawl.policy import CrawlContext
    from focuscrawl.strategies.baselines import BreadthFirstPolicy
    from focuscrawl.types import Observation, Outlink, Selection

    policy = BreadthFirstPolicy()
    policy.reset(CrawlContext(topic=None, classifier=None, seeds=["http://a.test/"], budget=10))
    links = [Outlink(f"http://{host}.test/{k}", "", f"{host}.test", True) for host in "ab" for k in range(2)]
    policy.observe(Observation(0, Selection("http://a.test/"), Page("http://a.test/", "http://a.test/", 200), 1.0,
                               1.0, links=links))
    waiting = {"a.test"}
    assert policy.select_ready(lambda host: host not in waiting).url == "http://b.test/0"
    assert policy.select_ready(lambda host: False).url == "http://a.test/"  # none ready: the first
    assert [policy.select().url for _ in range(3)] == ["http://a.test/0", "http://a.test/1", "http://b.test/1"]
    assert policy.select() is None


def test_a_polite_crawl_stopped_midway_resumes_by_replaying_its_choices(tmp_path):
    """Which hosts were ready decided a polite crawl's choices, and the clock decided that. The replay tells the policy
    that only each logged URL's host was ready, and gets the same choices: the crawl resumes, with no checkpoint
    (the whole log replayed), and every page is fetched once."""
    from focuscrawl.crawl import Crawler

    topic = _topic_dir(tmp_path / "topic", ["http://seed.test/"])
    settings = dict(progress="none", plot=False, strategy="adaptive", budget=19, concurrency=4, checkpoint_every=0,
                    options={"adaptive": {"ready_score": 0.0, "explore": 0.0}})  # every ready host's URL is taken

    async def first_half():
        crawler = Crawler(topic=topic, out=tmp_path / "run", fetcher=SiteFetcher(), **settings)
        fetched = []
        async for record in crawler.run():
            fetched.append(record.url)
            if len(fetched) == 10:
                crawler.stop()
        return fetched

    async def second_half():
        crawler = Crawler.resume(tmp_path / "run", fetcher=SiteFetcher())
        return [record.url async for record in crawler.run()]

    fetched = asyncio.run(first_half())
    fetched += asyncio.run(second_half())
    assert sorted(fetched) == sorted(["http://seed.test/", *DUE_WEB])  # nothing lost, nothing twice


class ResolvingFetcher(DueFetcher):
    """``DueFetcher`` whose slots are addresses, as the HTTP fetcher's with ``politeness="ip"``: a host is its own
    slot until its first fetch has resolved it, then its address's (``h0``, ``h2``, ``h4`` share one)."""

    def __init__(self):
        super().__init__()
        self.resolved: set[str] = set()

    def slot(self, url: str) -> str:
        host = urlsplit(url).hostname
        return f"address-{int(host[1]) % 2}" if host in self.resolved and host.startswith("h") else host

    async def fetch(self, url: str) -> Page:
        self.resolved.add(urlsplit(url).hostname)
        return await super().fetch(url)


def test_a_fetch_frees_the_slot_it_was_counted_in_though_its_slot_changed_meanwhile(tmp_path):
    """A host's slot moves to its address's once a fetch resolves it: the fetch, when it ends, frees the slot it
    took (the host's), or the selections waiting behind it there would never start."""
    fetcher = ResolvingFetcher()
    fetched: list[str] = []
    # A driver that frees the wrong slot spins forever with nothing in flight: a thread lets the test end anyway.
    crawl = threading.Thread(target=lambda: fetched.extend(_crawl_due_web(tmp_path, fetcher, "bfs")), daemon=True)
    crawl.start()
    crawl.join(60)
    assert not crawl.is_alive(), "the crawl hung: selections wait behind a slot that is never freed"
    assert sorted(fetched) == sorted(["http://seed.test/", *DUE_WEB])
    assert {fetcher.slot(u) for u in DUE_WEB} == {"address-0", "address-1"}
