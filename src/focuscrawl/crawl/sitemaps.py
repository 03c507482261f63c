"""Sitemaps in a crawl over HTTP: seeds read from them (``--seeds-from-sitemap``), and a site's sitemap offered to
the policy when the crawl first enters the site (``fetch.sitemaps``, on by default).

Both read through the crawl's own fetcher (``focuscrawl.http.sitemaps``: robots.txt, the address guard and the
host's politeness, as for any page). A site's sitemap URLs reach the policy the way the engine already takes links
it did not find on a page it selected (``CrawlEngine.adopt``: a Scrapy crawl's pages fetched outside the policy, a
distributed crawl's links from another shard): as links of the first page fetched on the site, in a ``foreign``
observation of that page, filtered as its own links are (fetched already, capped hosts, the scope, the defences).
The policy ranks them as it ranks any link; they carry no anchor text.

Each offer is committed to the run folder's operation log as a message (op ``A``, id ``sitemap:<site>``), so that a
resumed crawl replays it where it happened and selects as the crawl did. Offline webs and benchmarks have no HTTP
fetcher, and never meet any of this.
"""

from __future__ import annotations

import asyncio
import logging

from focuscrawl.crawl.distributed.messages import encode_links
from focuscrawl.engine import CrawlEngine
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.sitemaps import SitemapResult, read_sitemaps, site_sitemap_urls
from focuscrawl.storage.state import StateStore
from focuscrawl.types import ForeignLinks, Page, StepEvent

logger = logging.getLogger(__name__)
MESSAGE_PREFIX = "sitemap:"


async def sitemap_seeds(fetcher: HttpFetcher, sitemaps: list[str], seeds: list[str]) -> list[str]:
    """``seeds`` followed by the pages ``sitemaps`` list (sites, robots.txt files or sitemaps), read with
    ``fetcher``; each problem logged in one line. Raises ``ValueError`` (one line) when they list no page."""
    found = await read_sitemaps(fetcher, sitemaps)
    if not found.urls:
        reasons = "; ".join(found.problems + found.notes) or "no sitemap entries"
        raise ValueError(f"--seeds-from-sitemap {', '.join(sitemaps)}: no URL found ({reasons})")
    _log(found)
    return list(dict.fromkeys([*seeds, *found.urls]))


def _log(found: SitemapResult) -> None:
    for line in found.problems:
        logger.warning("%s", line)


class SitemapOffers:
    """Offers each site's sitemap URLs to the policy once, when a crawl driver records the site's first page.

    ``tasks`` are the readings in flight: the driver waits for them with its fetches (not once the budget is spent),
    and hands each finished one to ``offer``. A site whose offer is in the log was offered its sitemap; one whose
    reading did not end (the crawl stopped) or gave nothing is read again, once, when a resumed crawl records one
    of its pages."""

    def __init__(self, engine: CrawlEngine, fetcher: HttpFetcher, store: StateStore):
        self.engine, self.fetcher, self.store = engine, fetcher, store
        self.entered: set[str] = set()  # sites whose sitemaps this process read, or found in the log
        self.tasks: dict[asyncio.Task, tuple[str, Page, StepEvent]] = {}
        self.offered = 0  # links the engine took from sitemaps

    def recorded(self, url: str, page: Page, event: StepEvent) -> None:
        """``url``'s fetch was recorded as ``event``: if it is the first of its site that a server answered, start
        reading the site's sitemaps."""
        site = event.host
        if site in self.entered or page.status == 0:
            return
        self.entered.add(site)
        if self.store.has_message(f"{MESSAGE_PREFIX}{site}"):
            return  # offered before a resume
        task = asyncio.get_running_loop().create_task(site_sitemap_urls(self.fetcher, page.final_url or url))
        self.tasks[task] = (url, page, event)

    def offer(self, task: asyncio.Task) -> int:
        """A finished reading's URLs to the engine, as links of the site's first page, and the offer to the log;
        returns how many links the policy got."""
        url, page, event = self.tasks.pop(task)
        if task.cancelled():
            return 0
        try:
            found = task.result()
        except Exception as exc:  # noqa: BLE001 - a site's sitemap is a bonus: its failure is one line, no more
            logger.warning("sitemaps of %s: %s: %s", event.host, type(exc).__name__, exc)
            return 0
        _log(found)
        engine = self.engine
        links = list(dict.fromkeys(u for raw in found.urls if (u := engine.normalize(raw)) is not None))
        message_id = f"{MESSAGE_PREFIX}{event.host}"
        if not links or self.store.has_message(message_id):
            return 0
        parent = Page(url=page.url, final_url=page.final_url, status=page.status, content_type=page.content_type,
                      title=page.title, text=page.text, outlinks=list(page.outlinks))
        message = ForeignLinks(url, parent, event.relevance, event.reward, engine.depth.get(url, 0),
                               [(link, "") for link in links])
        adopted = engine.adopt(message)
        self.store.commit_adopt(message_id, encode_links(message))
        self.offered += adopted
        return adopted

    async def aclose(self) -> None:
        """Abandon the readings in flight."""
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()
