"""``Crawler``: the Python API of ``focuscrawl crawl``, streaming each committed page; ``open_crawler``.

    from focuscrawl.crawl import Crawler, open_crawler

    crawler = Crawler(seeds_file="seeds.txt", topic="topics/birds", out="runs/birds", budget=500)
    async for page in crawler.run():          # resumes if runs/birds holds an unfinished crawl
        print(page.step, page.url, page.relevance)

    summary = Crawler(...).crawl()            # or synchronously, with Ctrl+C handling, to the end
    summary = open_crawler(config).crawl()    # one process, or shards on Ray when config.workers says so

A run folder holds one crawl; running the same crawl on it again continues it (see docs/crawl.md).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

from focuscrawl.config import CrawlConfig
from focuscrawl.crawl.base import BaseCrawler, ProgressCallback, RunStats, recorded_config
from focuscrawl.crawl.distributed import DistributedCrawler
from focuscrawl.crawl.distributed.messages import apply_message
from focuscrawl.crawl.driver import CrawlDriver, Fetcher
from focuscrawl.crawl.inputs import CrawlInputs, make_fetcher
from focuscrawl.crawl.open_run import OpenRun, open_run
from focuscrawl.crawl.run_folder import Outputs, RunFolder
from focuscrawl.crawl.sitemaps import SitemapOffers, sitemap_seeds
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.storage import STATE_FILE, StepRecord
from focuscrawl.storage.failures import MachineError, StoreDamagedError, store_failure


def open_crawler(config: CrawlConfig) -> BaseCrawler:
    """The crawler ``config`` asks for: shards on Ray (``workers``, or a cluster's ``ray_address``), else one
    process. Both crawl with ``crawl(on_progress=...)``."""
    if config.workers is not None or config.ray_address:
        return DistributedCrawler(config)
    return Crawler(config)


class Crawler(BaseCrawler):
    """One crawl in one process and one run folder. ``run()`` may be called again after a stop to continue it."""

    def __init__(self, config: CrawlConfig | None = None, /, *, fetcher: Fetcher | None = None, **settings):
        super().__init__(config, **settings)
        self._fetcher = fetcher
        self._driver: CrawlDriver | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.repaired: dict[str, int] = {}
        self._steps_known = False  # whether stats.steps counts the folder's pages yet (they are read on open)
        self._opened = False  # whether the run's parts were opened (then closing them closes the fetcher too)

    @classmethod
    def resume(cls, out: str | Path, *, fetcher: Fetcher | None = None, **overrides) -> Crawler:
        """Continue the crawl in ``out`` with its recorded config (``overrides`` e.g. a larger budget)."""
        return cls(recorded_config(out, overrides), fetcher=fetcher)

    def check(self) -> CrawlInputs:
        if self.config.workers is not None:
            raise ValueError(f"workers={self.config.workers} is a distributed crawl: use open_crawler(config) or "
                             "DistributedCrawler")
        return super().check()

    # -- control -----------------------------------------------------------------------------------
    def stop(self, immediate: bool = False) -> None:
        super().stop(immediate)
        if self._driver is not None:
            self._driver.stop(self._stop_requested >= 2)

    def _stop_on_signal(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.stop)

    def _crawl(self, on_progress: ProgressCallback | None) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            async with aclosing(self.run()) as pages:
                async for _ in pages:
                    if on_progress is not None:
                        on_progress(self.stats)

        try:
            asyncio.run(main())
        finally:
            self._loop = None

    # -- the run ------------------------------------------------------------------------------------
    async def run(self) -> AsyncIterator[StepRecord]:
        """Start or resume the crawl and yield each page once it is committed to the run folder.

        The machine's failures (a full disk, a read-only folder, a lost lock, memory running out) stop it with a
        ``MachineError``, a damaged store with ``StoreDamagedError``: each one line naming the cause and the way on
        (``storage.failures``). What was committed stays, and the same crawl again resumes from it."""
        inputs = self.check()  # before the folder is made, so that a mistyped command leaves nothing behind
        self._steps_known = False
        try:
            async with aclosing(self._run(inputs)) as steps:
                async for record in steps:
                    yield record
        except (sqlite3.DatabaseError, OSError, MemoryError) as exc:
            raise store_failure(exc, self.out / STATE_FILE, self.stats.steps if self._steps_known else None) from None

    async def _run(self, inputs: CrawlInputs) -> AsyncIterator[StepRecord]:
        fetcher = await self._sitemap_seeds(inputs)  # a new crawl's, before its folder is made: a mistake leaves none
        try:
            async with aclosing(self._run_in_folder(inputs, fetcher)) as steps:
                async for record in steps:
                    yield record
        finally:
            if fetcher is not None and self._fetcher is None and not self._opened:
                await fetcher.aclose()  # the folder could not be opened: nothing else closes it

    async def _run_in_folder(self, inputs: CrawlInputs, fetcher: Fetcher | None) -> AsyncIterator[StepRecord]:
        config = self.config
        started = time.monotonic()
        opened: OpenRun | None = None
        failed = False
        self._opened = False
        with RunFolder(self.out) as folder:
            try:
                if config.seeds_from_sitemap and fetcher is None:  # resumed: the seeds the crawl started from
                    inputs.seeds = folder.recorded_seeds() or inputs.seeds
                opened = open_run(folder, config, inputs, fetcher=fetcher or self._fetcher, on_message=apply_message)
                self._opened = True
                store, outputs = opened.store, opened.outputs
                self.repaired = outputs.repaired
                resumed = store.step_count()
                self.stats = RunStats(steps=resumed, resumed_steps=resumed, relevant=outputs.harvest.relevant,
                                      relevant_domains=len(outputs.harvest.domains), errors=store.error_count(),
                                      frontier_size=opened.engine.frontier_size)
                self._steps_known = True
                self._driver = CrawlDriver(opened.engine, opened.fetcher, store, outputs.pages, outputs.harvest,
                                           outputs.warc, concurrency=config.concurrency,
                                           checkpoint_every=config.checkpoint_every,
                                           before_commit=lambda: folder.check_lock(self.stats.steps),
                                           sitemaps=self._sitemap_offers(opened))
                if self._stop_requested:
                    self._driver.stop(self._stop_requested > 1)
                async with aclosing(self._driver.run()) as steps:
                    async for record in steps:
                        self._count(record, outputs)
                        yield record
            except (sqlite3.DatabaseError, OSError, MemoryError, MachineError, StoreDamagedError):
                failed = True  # the folder may take no summary now (its disk is full, ...): the next run writes it
                raise
            finally:
                if self._driver is not None:
                    self._driver.stop(immediate=True)
                if opened is not None:
                    await self._close(folder, opened, started, report=not failed)
                self._driver = None

    async def _sitemap_seeds(self, inputs: CrawlInputs) -> Fetcher | None:
        """For a new crawl with ``seeds_from_sitemap``: its seeds read from them (``inputs.seeds`` updated) with the
        fetcher it will crawl with, which is returned (None: nothing to read)."""
        config = self.config
        if not config.seeds_from_sitemap or (self.out / STATE_FILE).exists():
            return None
        fetcher = self._fetcher if self._fetcher is not None else make_fetcher(config, inputs.hosts)
        try:
            if not isinstance(fetcher, HttpFetcher):
                raise ValueError("--seeds-from-sitemap reads sitemaps over HTTP: this crawl's fetcher is not the "
                                 "HTTP one")
            inputs.seeds = await sitemap_seeds(fetcher, config.seeds_from_sitemap, inputs.seeds)
        except BaseException:
            if self._fetcher is None:
                await fetcher.aclose()
            raise
        return fetcher

    def _sitemap_offers(self, opened: OpenRun) -> SitemapOffers | None:
        """Each site's sitemap offered on entering it: crawls over HTTP whose ``fetch.sitemaps`` is on."""
        if self.config.web or not self.config.fetch.sitemaps or not isinstance(opened.fetcher, HttpFetcher):
            return None
        return SitemapOffers(opened.engine, opened.fetcher, opened.store)

    async def _close(self, folder: RunFolder, opened: OpenRun, started: float, report: bool) -> None:
        """Close the run; with ``report`` (it did not fail), write its summary (and plot) first."""
        try:
            try:
                opened.outputs.close()
            except OSError:
                if report:
                    raise  # else a failed run's files may not take their last bytes: resuming mends them
            if self._fetcher is None:  # ours, not the caller's
                await opened.fetcher.aclose()
            if report:
                s = self.stats
                self.summary = self._summary(
                    steps=opened.store.step_count(), resumed_steps=s.resumed_steps, relevant=s.relevant,
                    relevant_domains=s.relevant_domains, errors=s.errors, frontier_size=opened.engine.frontier_size,
                    elapsed_s=time.monotonic() - started)
                folder.write_summary(self.summary, f"{self.config.strategy}: {self.summary.steps} pages"
                                     if self.config.plot else None)
        finally:
            opened.store.close()

    def _count(self, record: StepRecord, outputs: Outputs) -> None:
        s = self.stats
        s.steps = record.step + 1
        s.relevant = outputs.harvest.relevant
        s.relevant_domains = len(outputs.harvest.domains)
        s.errors += int(record.status == 0 or record.status >= 400)
        s.frontier_size = record.frontier_size
        s.in_flight = self._driver.in_flight if self._driver else 0
        s.last_url = record.url
        s.recent.append(time.monotonic())
        if len(s.recent) > 2000:
            del s.recent[:1000]
