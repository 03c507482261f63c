"""What ``--render auto`` finds and costs: crawls of a served messy web with ``--render never``, ``auto`` and
``always``, and, on saved real pages, which pages the ``auto`` rule picks and which ones a render helps.

    focuscrawl web mess webs/wikispeedia /tmp/wiki-mess
    python -m benchmarks.render_cost /tmp/wiki-mess [--topic subject.Science.Physics] [--budget 1000] \
        [--strategy adaptive] [--runs 1] [--pages 'DIR/*.html']

The messy web moves half the links of a tenth of its pages into a script (``script_links``); served, those
pages write them from a ``<script>``. Each mode crawls the web served by ``focuscrawl web serve`` on loopback
(its timeout and slow hosts cut to 1 s, politeness delay 0: our own server) with ``focuscrawl crawl``'s
machinery and the benchmark topic's example pages and run-0 seed. Per mode: pages rendered (and failed
renders), the links found only by rendering against those the fetched pages' scripts hold (the web's
``script_links``, ground truth), how many rendered pages had any, ms of render per rendered page (wall
time from when the render has its slot; ``render_concurrency`` 2), pages/s (from the first to the last fetch;
4 fetches in flight), and relevant pages found. Run i of each mode starts from the topic's run-i seed.

``--pages`` (a glob of saved HTML files, e.g. real pages from the web) reports, for each file rendered as
the crawler would render it (no request leaves the browser): whether ``auto`` picks it, whether the render
added links, and the render's time. This is how the ``auto`` rule was chosen (docs/crawl.md, "JavaScript").
``--stored WEB`` counts the pages of an offline web's stored HTML that the rule picks (``webs/webkb``: 1997).
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.served import serve_web
from focuscrawl.bench.protocol import init_from_web, load_topic
from focuscrawl.crawl import Crawler
from focuscrawl.html import parse_html
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.render import (
    MENTIONS_LINKS,
    WRITES_TO_PAGE,
    Renderer,
    RenderError,
    inline_scripts,
    needs_rendering,
)
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import Page
from focuscrawl.webs.store import OfflineWeb

MODES = ("never", "auto", "always")
_APPENDS = re.compile(r"\.\s*(?:appendChild|insertBefore|append|prepend|replaceChildren|replaceWith|after|before)\s*\(")
# The rules auto's was chosen against (--pages): how many pages each picks, and of those a render helps.
RULES = {
    "auto's: an inline script writes to the page and mentions links": lambda html: needs_rendering(html) is not None,
    "... or appends elements (appendChild and the like)": lambda html: any(
        (WRITES_TO_PAGE.search(text) or _APPENDS.search(text)) and MENTIONS_LINKS.search(text)
        for text in inline_scripts(html)),
    "an inline script writes to the page, links mentioned or not": lambda html: any(
        WRITES_TO_PAGE.search(text) for text in inline_scripts(html)),
    "any inline script": lambda html: bool(inline_scripts(html)),
}


@dataclass
class Recorder:
    """The crawl's fetcher, remembering each page it fetched: its final URL, and whether its mode rendered it."""

    fetcher: HttpFetcher
    pages: list[tuple[str, bool]] = field(default_factory=list)

    async def fetch(self, url: str) -> Page:
        page = await self.fetcher.fetch(url)
        if page.ok and page.html is not None:
            mode = self.fetcher.config.render
            self.pages.append((page.final_url, mode == "always" or (mode == "auto" and needs_rendering(page.html)
                                                                     is not None)))
        return page

    async def aclose(self) -> None:
        await self.fetcher.aclose()


async def crawl(mode: str, topic_dir: Path, out: Path, hosts: dict[str, str], budget: int, strategy: str
                ) -> tuple[Recorder, list[dict]]:
    config = FetchConfig.loopback(hosts, min_delay=0.0, per_host_concurrency=4, render=mode)
    recorder = Recorder(HttpFetcher(config))
    crawler = Crawler(topic=topic_dir, out=out, budget=budget, strategy=strategy, progress="none", plot=False,
                      concurrency=4, fetcher=recorder)
    try:
        async for _ in crawler.run():
            pass
    finally:
        await recorder.aclose()  # in the crawl's event loop, where the browser was started
    pages = [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]
    return recorder, pages


def crawl_table(args: argparse.Namespace) -> None:
    web_dir = str(Path(args.web).resolve())
    work = args.workdir or Path(tempfile.mkdtemp(prefix="render-cost-"))
    web = OfflineWeb(web_dir)
    truth = load_topic(web, args.topic).truth.relevant
    print(f"{args.web}: topic {args.topic}, {args.strategy}, budget {args.budget}; run folders in {work}")
    print("run | mode | pages | rendered (failed) | pages with script links rendered / fetched | links only rendering "
          "found / script links on fetched pages | ms per render | pages/s | relevant")
    with serve_web(sys.executable, web_dir, "127.0.30.1", extra=("--hang-s", "1", "--slow-body-s", "1")) as hosts:
        for run in range(args.runs):
            topic_dir = work / f"topic-{run}"
            init_from_web(topic_dir, web_dir, args.topic, run=run, overwrite=True)
            for mode in MODES:
                out = work / f"{mode}-{run}"
                recorder, pages = asyncio.run(crawl(mode, topic_dir, out, hosts, args.budget, args.strategy))
                stats = recorder.fetcher.render_stats
                scripted = [(url, rendered) for url, rendered in recorder.pages if web.script_links(url)]
                hidden = sum(len(web.script_links(url)) for url, _ in scripted)
                times = sorted(page["fetched_at"] for page in pages)
                rate = (len(times) - 1) / max(times[-1] - times[0], 1e-9)
                relevant = sum(page["url"] in truth or page.get("final_url") in truth for page in pages)
                print(f"{run} | {mode} | {len(pages)} | {stats.pages} ({stats.failures}) | "
                      f"{sum(rendered for _, rendered in scripted)} of {len(scripted)} | "
                      f"{stats.links_added} / {hidden} | {stats.ms_per_page:.0f} | {rate:.1f} | {relevant}", flush=True)
    web.close()


async def rule_table(pattern: str, concurrency: int) -> None:
    files = sorted(glob.glob(pattern))
    renderer = Renderer(timeout=20, concurrency=concurrency)
    turns = asyncio.Semaphore(concurrency)  # so that a page's time is its render's, not its wait for a slot
    rows: list[tuple[str, bool, int, float, str]] = []
    rules: dict[str, list[tuple[bool, bool]]] = {name: [] for name in RULES}  # (picked, helped) per page

    async def one(path: str) -> None:
        html = Path(path).read_text(encoding="utf-8", errors="replace")
        url = "http://saved.test/dir/page.html"  # relative links resolve somewhere; nothing is fetched
        _, _, links = parse_html(html, url)
        async with turns:
            started = time.monotonic()
            try:
                dom, error = await renderer.render(url, html), ""
            except RenderError as exc:
                dom, error = "", str(exc)
            seconds = time.monotonic() - started
        rendered = parse_html(dom, url)[2] if dom else links
        known = {link.url for link in links}
        added = sum(link.url not in known for link in rendered)
        rows.append((Path(path).name, needs_rendering(html) is not None, added, seconds, error))
        for name, rule in RULES.items():
            rules[name].append((rule(html), added > 0))

    try:
        await asyncio.gather(*(one(path) for path in files))
    finally:
        await renderer.aclose()
    picked = [row for row in rows if row[1]]
    helped = [row for row in rows if row[2] > 0]
    print(f"\n{len(rows)} saved pages ({pattern}): auto picks {len(picked)}; a render adds links to {len(helped)}, "
          f"{sum(row[1] for row in helped)} of them picked; renders failed: {sum(bool(row[4]) for row in rows)}")
    print(f"ms per render ({concurrency} at once): median {1000 * statistics.median(r[3] for r in rows):.0f}, "
          f"mean {1000 * statistics.mean(r[3] for r in rows):.0f}, max {1000 * max(r[3] for r in rows):.0f}")
    for name, verdicts in rules.items():
        print(f"  rule {name}: picks {sum(p for p, _ in verdicts)}, of the pages a render helps "
              f"{sum(p and h for p, h in verdicts)}")
    for name, chosen, added, _, error in sorted(rows, key=lambda row: -row[2]):
        if added or error:
            print(f"  {name}: {added} links added, {'picked' if chosen else 'NOT picked'} {error}")


def stored_table(web_dir: str) -> None:
    """How often ``auto`` would render an offline web's stored HTML (no render: the rule alone)."""
    web = OfflineWeb(web_dir)
    documents = [html for html in (web.html(record.url) for record in web.records()) if html is not None]
    web.close()
    scripted = sum(bool(re.search(r"<script\b", html, re.IGNORECASE)) for html in documents)
    print(f"\n{web_dir}: {len(documents)} pages with stored HTML, {scripted} with a <script>, "
          f"auto picks {sum(needs_rendering(html) is not None for html in documents)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web", nargs="?", help="a messy web (focuscrawl web mess) to crawl served")
    parser.add_argument("--topic", default="subject.Science.Physics")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--runs", type=int, default=1, help="crawls per mode; run i starts from the topic's run-i seed")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--pages", help="a glob of saved HTML pages: which ones auto picks and a render helps")
    parser.add_argument("--concurrency", type=int, default=2, help="renders at once, for --pages")
    parser.add_argument("--stored", help="an offline web with stored HTML: how many of its pages auto picks")
    args = parser.parse_args()
    if not (args.web or args.pages or args.stored):
        parser.error("give a messy web, --pages or --stored")
    if args.web:
        crawl_table(args)
    if args.pages:
        asyncio.run(rule_table(args.pages, args.concurrency))
    if args.stored:
        stored_table(args.stored)


if __name__ == "__main__":
    main()
