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

from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.config import CrawlConfig
from focuscrawl.crawl.base import BaseCrawler, ProgressCallback, RunStats, recorded_config
from focuscrawl.crawl.distributed import DistributedCrawler
from focuscrawl.crawl.driver import CrawlDriver, Fetcher
from focuscrawl.crawl.inputs import CrawlInputs, make_fetcher
from focuscrawl.crawl.resume import resume
from focuscrawl.crawl.run_folder import Outputs, RunFolder
from focuscrawl.engine import CrawlEngine
from focuscrawl.storage import STATE_FILE, StateStore, StepRecord
from focuscrawl.storage.state import StoreDamagedError, damage_message


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
        """Start or resume the crawl and yield each page once it is committed to the run folder."""
        config = self.config
        inputs = self.check()  # before the folder is made, so that a mistyped command leaves nothing behind
        store: StateStore | None = None
        outputs: Outputs | None = None
        fetcher = self._fetcher
        owns_fetcher = fetcher is None
        engine: CrawlEngine | None = None
        started = time.monotonic()
        damaged = False
        with RunFolder(self.out) as folder:
            try:
                store = folder.open_store({**config.identity(), "seeds": inputs.seeds}, strategy=config.strategy,
                                          context_budget=config.budget)
                engine = self._engine(folder, store, inputs)
                folder.write_config(config)
                outputs = folder.open_outputs(store, config.strategy, config.warc)
                self.repaired = outputs.repaired
                resumed = store.step_count()
                self.stats = RunStats(steps=resumed, resumed_steps=resumed, relevant=outputs.harvest.relevant,
                                      relevant_domains=len(outputs.harvest.domains), errors=store.error_count(),
                                      frontier_size=engine.frontier_size)
                if fetcher is None:
                    fetcher = make_fetcher(config, inputs.hosts)
                self._driver = CrawlDriver(engine, fetcher, store, outputs.pages, outputs.harvest, outputs.warc,
                                           concurrency=config.concurrency, checkpoint_every=config.checkpoint_every)
                if self._stop_requested:
                    self._driver.stop(self._stop_requested > 1)
                async with aclosing(self._driver.run()) as steps:
                    async for record in steps:
                        self._count(record, outputs)
                        yield record
            except sqlite3.DatabaseError as exc:
                damaged = True
                raise StoreDamagedError(damage_message(self.out / STATE_FILE, str(exc))) from None
            finally:
                if self._driver is not None:
                    self._driver.stop(immediate=True)
                if outputs is not None:
                    outputs.close()
                if fetcher is not None and owns_fetcher:
                    await fetcher.aclose()
                if store is not None:
                    # prepared and readable: a refused resume must not overwrite the folder's report
                    if outputs is not None and not damaged:
                        s = self.stats
                        self.summary = self._summary(
                            steps=store.step_count(), resumed_steps=s.resumed_steps, relevant=s.relevant,
                            relevant_domains=s.relevant_domains, errors=s.errors,
                            frontier_size=engine.frontier_size if engine is not None else store.last_frontier_size(),
                            elapsed_s=time.monotonic() - started)
                        folder.write_summary(self.summary, f"{config.strategy}: {self.summary.steps} pages"
                                             if config.plot else None)
                    store.close()
                self._driver = None

    def _engine(self, folder: RunFolder, store: StateStore, inputs: CrawlInputs) -> CrawlEngine:
        """A fresh engine for this crawl, brought to the store's last commit."""
        config, topic, plan = self.config, inputs.topic, inputs.strategy
        reward_model = plan.reward_model(topic)
        classifiers = Classifiers(topic, config.seed,
                                  trained={reward_model: folder.classifier(reward_model, topic, config.seed,
                                                                           config.page_encoder)})
        # The policy is told the first run's budget: it may plan with it, and the replay must match.
        context_budget = store.get_meta("context_budget", config.budget)

        def fresh() -> CrawlEngine:
            return build_crawl(config, plan, topic, inputs.seeds, classifiers=classifiers,
                               context_budget=context_budget).engine

        return resume(fresh, store, use_checkpoint=config.checkpoint_every > 0)

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
