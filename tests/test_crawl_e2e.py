"""End-to-end over loopback HTTP: a spider-trap host is held to its cap, and a crawl's WARC re-imports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from conftest import BIRD_WORDS, OTHER_WORDS, _text

from focuscrawl.crawl import Crawler
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import OfflineWeb, WebWriter
from focuscrawl.webs.warc_import import import_warc

TRAP_PAGES = 150


def _trap_web(directory: Path) -> Path:
    """birds.test: a small relevant site whose every page links into trap.test, an endless-looking
    calendar (each day links to the next) of irrelevant pages."""
    with WebWriter(directory, {"name": "trap"}) as w:
        for i in range(12):
            w.add_page(f"http://birds.test/b{i}", title=f"b{i}", text=_text(BIRD_WORDS, i), labels=["topic.birds"])
            for j in (i + 1, i + 2):
                if j < 12:
                    w.add_link(f"http://birds.test/b{i}", f"http://birds.test/b{j}", "bird nest")
            w.add_link(f"http://birds.test/b{i}", f"http://trap.test/day/{i}", "calendar")
        for d in range(TRAP_PAGES):
            url = f"http://trap.test/day/{d}"
            w.add_page(url, title=f"day {d}", text=_text(OTHER_WORDS, d), labels=["topic.other"])
            w.add_link(url, f"http://trap.test/day/{d + 1}", "next day")
            w.add_link(url, f"http://trap.test/day/{d + 2}", "day after")
    return directory


def _crawl(web_dir: Path, topic_dir: Path, run: Path, **settings) -> list[dict]:
    async def go() -> None:
        async with serve_web(web_dir, base_ip="127.0.7.1") as server:
            async with HttpFetcher(FetchConfig.loopback(server.hosts, min_delay=0)) as fetcher:
                crawler = Crawler(topic=topic_dir, out=run, progress="none", plot=False, fetcher=fetcher, **settings)
                async for _ in crawler.run():
                    pass

    asyncio.run(asyncio.wait_for(go(), 600))  # a hang guard, not a time limit
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def test_spider_trap_host_yields_at_most_its_cap_and_the_warc_reimports(tmp_path):
    web_dir = _trap_web(tmp_path / "web")
    topic_dir = tmp_path / "topic"
    texts = [_text(BIRD_WORDS, i) for i in range(5)] + [_text(OTHER_WORDS, i) for i in range(5)]
    write_topic_dir(topic_dir, TopicInputs("birds", ["bird"], texts, [1] * 5 + [0] * 5,
                                           seeds=["http://birds.test/b0"]))
    # bfs would walk into the calendar; the cap of 5 pages per host is what stops it.
    records = _crawl(web_dir, topic_dir, tmp_path / "run", strategy="bfs", budget=60, concurrency=4,
                     max_per_domain="5", warc=True)
    hosts = [r["url"].split("/")[2] for r in records]
    assert hosts.count("trap.test") == 5
    assert hosts.count("birds.test") == 5  # the cap is per host, for every host
    assert len(records) == 10  # then the frontier is exhausted: nothing else is reachable

    # The crawl's WARC is a valid archive that import-warc turns back into an offline web.
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{r['url']}\t{'topic.birds' if 'birds' in r['url'] else 'topic.other'}\n"
                              for r in records))
    report = import_warc(tmp_path / "run" / "crawl.warc.gz", labels, tmp_path / "reimported")
    web = OfflineWeb(tmp_path / "reimported")
    original = OfflineWeb(web_dir)
    for record in records:
        page, source = web.fetch(record["url"]), original.fetch(record["url"])
        assert page.status == 200 and page.title == source.title
        assert {link.url for link in page.outlinks} == {link.url for link in source.outlinks}
    assert web.stats()["pages"] == len(records), report
