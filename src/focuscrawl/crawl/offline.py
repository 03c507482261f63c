"""An async fetcher over an offline web, with the HTTP fetcher's interface.

It lets the async driver, run folders and resume be exercised (and benchmarked against the in-process
``CrawlEngine.run``) without a network. ``latency_s`` simulates a server's response time so that
concurrency behaves as it would against real hosts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from focuscrawl.types import Page
from focuscrawl.webs.store import OfflineWeb


class OfflineFetcher:
    def __init__(self, web: OfflineWeb | str | Path, latency_s: float = 0.0):
        self.web = web if isinstance(web, OfflineWeb) else OfflineWeb(web)
        self._owns_web = not isinstance(web, OfflineWeb)
        self.latency_s = latency_s

    async def fetch(self, url: str) -> Page:
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        page = self.web.fetch(url)
        if page.ok:
            page.html = self.web.html(page.final_url)
        return page

    async def aclose(self) -> None:
        if self._owns_web:
            self.web.close()
