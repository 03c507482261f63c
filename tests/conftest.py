"""Shared fixtures: a tiny hand-made labelled web that every engine and strategy test can reason about, and a web
served on loopback by a thread, for crawls run in other processes."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# .ci/run sets this: there, a test that needs a tool the run installs (Debian's chromium) fails without it instead of
# skipping, so that a failed install cannot quietly take the browser tests away and leave CI green.
UNDER_CI = os.environ.get("FOCUSCRAWL_CI") == "1"


def needs_tool(available: bool, reason: str) -> pytest.MarkDecorator:
    """A mark for tests that need ``available``: skipped without it on a developer's machine, failed under CI."""
    if available:
        return pytest.mark.skipif(False, reason=reason)
    return pytest.mark.missing_under_ci(reason) if UNDER_CI else pytest.mark.skip(reason=reason)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "missing_under_ci(reason): a tool CI must have is missing; the test fails")


def pytest_runtest_setup(item) -> None:
    missing = item.get_closest_marker("missing_under_ci")
    if missing is not None:
        pytest.fail(f"FOCUSCRAWL_CI=1 (.ci/run) and this test cannot run: {missing.args[0]}", pytrace=False)


BIRD_WORDS = "bird feather wing nest egg beak flight migration songbird plumage"
OTHER_WORDS = "train railway station engine track locomotive carriage timetable signal freight"


_SHORT = ("the", "of", "a", "and", "in")


def _text(words: str, i: int) -> str:
    """40 of the topic's words from the ``i``-th on, each after a short word, as written text has them (a page of
    keywords alone reads as a link farm's: ``focuscrawl.engine.defences.farms``); the models drop the short ones
    as stop words."""
    w = words.split()
    return " ".join(f"{_SHORT[k % len(_SHORT)]} {w[(i + k) % len(w)]}" for k in range(40))


def write_birds_topic(directory: Path, seeds: list[str]) -> Path:
    """A topic folder: the keyword "bird", five examples of bird text and five of train text, and ``seeds``."""
    from focuscrawl.topic.topic_dir import write_topic_dir
    from focuscrawl.types import TopicInputs

    texts = [_text(BIRD_WORDS, i) for i in range(5)] + [_text(OTHER_WORDS, i) for i in range(5)]
    write_topic_dir(directory, TopicInputs("birds", ["bird"], texts, [1] * 5 + [0] * 5, seeds=seeds))
    return directory


def build_tiny_web(directory: Path) -> Path:
    """Three hosts. birds.test holds a relevant cluster; trains.test is irrelevant; a tunnel through
    trains.test leads to a second relevant cluster on far.test; some links are dead."""
    with WebWriter(directory, {"name": "tiny"}) as w:
        def page(url: str, label: str, words: str, i: int, links: list[tuple[str, str]]) -> None:
            w.add_page(url, title=url.rsplit("/", 1)[-1], text=_text(words, i), labels=[label])
            for target, anchor in links:
                w.add_link(url, target, anchor)

        birds = [f"http://birds.test/b{i}" for i in range(10)]
        trains = [f"http://trains.test/t{i}" for i in range(10)]
        far = [f"http://far.test/f{i}" for i in range(5)]
        for i, url in enumerate(birds):
            links = [(birds[(i + 1) % 10], "bird"), (trains[i], "train"), ("http://birds.test/missing%d" % i, "gone")]
            page(url, "topic.birds", BIRD_WORDS, i, links)
        for i, url in enumerate(trains):
            links = [(trains[(i + 1) % 10], "train")] + ([(far[0], "far birds")] if i == 9 else [])
            page(url, "topic.trains", OTHER_WORDS, i, links)
        for i, url in enumerate(far):
            page(url, "topic.birds.far", BIRD_WORDS, i + 3, [(far[(i + 1) % 5], "bird")])
    return directory


@pytest.fixture()
def tiny_web(tmp_path: Path) -> Path:
    return build_tiny_web(tmp_path / "tiny")


def tiny_crawl(web_dir, strategy: str, budget: int = 30, seed: int = 1, *, max_per_domain="inf",
               seeds=("http://birds.test/b0",), reward_model: str | None = "tfidf", sinks=(), defences=None, **options):
    """A started crawl of the tiny web from birds.test/b0 (TF-IDF reward unless told), built as every crawl is.
    The tiny web's pages are rotations of one sentence, near-copies at different URLs as a host's not-found pages
    are, so its crawls send soft-404 probes: steps of the engine's, never observed by the policy.

    Returns (crawl, step events, the open web)."""
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.builder import Classifiers, build_crawl
    from focuscrawl.config import RunSettings
    from focuscrawl.webs.store import OfflineWeb

    web = OfflineWeb(web_dir)
    topic = load_topic(web, "topic.birds")
    events = []
    settings = RunSettings(budget=budget, seed=seed, max_per_domain=max_per_domain, reward_model=reward_model,
                           options={strategy: options}, **({"defences": defences} if defences is not None else {}))
    crawl = build_crawl(settings, strategy, topic.inputs, list(seeds), classifiers=Classifiers(topic.inputs, 0),
                        judge=topic.truth, sinks=[events.append, *sinks])
    return crawl, events, web


def crawl_tiny(web_dir, strategy: str, budget: int = 30, seed: int = 1, **options):
    """Crawl the tiny web to the end of the budget; returns (policy, step events)."""
    crawl, events, web = tiny_crawl(web_dir, strategy, budget, seed, **options)
    crawl.engine.run(web)
    return crawl.policy, events


class ThreadServedWeb:
    """A web served on loopback by a thread of this process, so that other processes (Ray's workers) and
    synchronous crawls can fetch it; ``map_file`` is the hosts map a crawl's ``hosts_map`` takes. ``options``: those
    of ``serve_web``."""

    def __init__(self, web_dir: Path, map_file: Path, **options):
        self.loop = asyncio.new_event_loop()
        self.server = serve_web(web_dir, **options)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)
        map_file.write_text(json.dumps(self.server.hosts))
        self.map_file = map_file

    def requests(self) -> list:
        return [r for r in list(self.server.log) if r.path != "/robots.txt"]

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class OfflineFetcher:
    """An offline web with a fetcher's interface, for the run-folder crawls of ``focuscrawl.crawl.Crawler``."""

    def __init__(self, web_dir: Path):
        from focuscrawl.webs.store import OfflineWeb

        self.web = OfflineWeb(web_dir)

    async def fetch(self, url: str):
        return self.web.fetch(url)

    async def aclose(self) -> None:
        self.web.close()


def crawl_records(web_dir: Path, run: Path, *, served: bool, seeds: list[str], budget: int,
                  defences: dict | None = None, hook=None, strategy: str = "bfs") -> list[dict]:
    """A run-folder crawl of the birds topic (``write_birds_topic``), one page at a time, by the same driver
    (``focuscrawl.crawl.Crawler``) offline or over HTTP from the web served on loopback (``hook``: serve_web's);
    the records of its pages.jsonl. Served, a 503 is one answer with no wait after it, as offline."""
    from focuscrawl.crawl import Crawler

    topic_dir = write_birds_topic(run.parent / f"{run.name}-topic", seeds)
    settings = dict(topic=topic_dir, out=run, progress="none", plot=False, strategy=strategy, budget=budget,
                    concurrency=1, defences=defences if defences is not None else {})

    async def go() -> None:
        if served:
            async with serve_web(web_dir, base_ip="127.0.31.1", hook=hook) as server:
                hosts_map = run.parent / f"{run.name}-hosts.json"
                hosts_map.write_text(json.dumps(server.hosts))
                fetch = {"min_delay": 0, "main_text": False, "throttle_retries": 0, "max_retry_after": 0}
                crawler = Crawler(hosts_map=hosts_map, fetch=fetch, **settings)
                async for _ in crawler.run():
                    pass
        else:
            async for _ in Crawler(fetcher=OfflineFetcher(web_dir), **settings).run():
                pass

    asyncio.run(asyncio.wait_for(go(), 120))
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
