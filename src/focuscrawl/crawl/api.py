"""``Crawler``: the Python API of ``focuscrawl crawl``, streaming each committed page.

    from focuscrawl.crawl import Crawler

    crawler = Crawler(seeds_file="seeds.txt", topic="topics/birds", out="runs/birds", budget=500)
    async for page in crawler.run():          # resumes if runs/birds holds an unfinished crawl
        print(page.step, page.url, page.relevance)

    summary = Crawler(...).crawl()            # or synchronously, with Ctrl+C handling, to the end

A run folder holds one crawl; running the same crawl on it again continues it (see docs/crawl.md).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.builder import Classifiers, build_crawl, check_strategies, reward_model_for
from focuscrawl.config import CrawlConfig, load_config, read_effective_config
from focuscrawl.crawl.driver import CrawlDriver, Fetcher
from focuscrawl.crawl.offline import OfflineFetcher
from focuscrawl.crawl.resume import ResumeError, resume
from focuscrawl.crawl.run_folder import SHARDS_DIR, CrawlSummary, Outputs, RunFolder
from focuscrawl.engine import CrawlEngine
from focuscrawl.storage import STATE_FILE, StateStore, StepRecord
from focuscrawl.storage.state import StoreDamagedError, damage_message
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.web import resolve_web_dir
from focuscrawl.web.http import FetchConfig, HttpFetcher


@dataclass
class RunStats:
    """Live counters of a real crawl run (including steps from before a resume), for progress displays.
    (The engine's own per-crawl counters are ``focuscrawl.engine.CrawlStats``.)"""

    steps: int = 0
    resumed_steps: int = 0
    relevant: int = 0
    relevant_domains: int = 0
    errors: int = 0
    frontier_size: int = 0
    in_flight: int = 0
    started: float = field(default_factory=time.monotonic)
    recent: list[float] = field(default_factory=list, repr=False)  # monotonic times of the last fetches

    @property
    def harvest_rate(self) -> float:
        return self.relevant / self.steps if self.steps else 0.0

    @property
    def fetch_rate(self) -> float:
        """Pages per second over the last few seconds."""
        now = time.monotonic()
        window = [t for t in self.recent if now - t <= 10.0]
        if len(window) < 2:
            return 0.0
        return len(window) / max(now - window[0], 1e-6)


def crawl_config(config: CrawlConfig | None, settings: dict) -> CrawlConfig:
    """The crawl's settings: ``config``, or the defaults, with keyword ``settings`` over them; it needs ``out``."""
    if config is None:
        config = load_config(CrawlConfig, **settings)
    elif settings:
        config = CrawlConfig.model_validate({**config.model_dump(), **settings})
    if config.out is None:
        raise ValueError("a crawl needs a run folder (out)")
    return config


class Crawler:
    """One crawl in one run folder. ``run()`` may be called again after a stop to continue it."""

    def __init__(self, config: CrawlConfig | None = None, /, *, fetcher: Fetcher | None = None, **settings):
        config = crawl_config(config, settings)
        self.config = config
        self.out = Path(config.out)
        self.stats = RunStats()
        self._fetcher = fetcher
        self._driver: CrawlDriver | None = None
        self._stop_requested = 0
        self.summary: CrawlSummary | None = None
        self.repaired: dict[str, int] = {}

    @classmethod
    def resume(cls, out: str | Path, *, fetcher: Fetcher | None = None, **overrides) -> Crawler:
        """Continue the crawl in ``out`` with its recorded config (``overrides`` e.g. a larger budget)."""
        stored = read_effective_config(Path(out))
        if stored is None:
            raise FileNotFoundError(f"{out} holds no crawl (no config.yml)")
        return cls(CrawlConfig.model_validate({**stored.model_dump(), **overrides, "out": out}), fetcher=fetcher)

    # -- control -----------------------------------------------------------------------------------
    def stop(self, immediate: bool = False) -> None:
        """Graceful stop (finish the fetches in flight), or immediate; either way the run stays resumable."""
        self._stop_requested = max(self._stop_requested, 2 if immediate else 1)
        immediate = immediate or self._stop_requested >= 2
        if self._driver is not None:
            self._driver.stop(immediate)

    def crawl(self, on_page: Callable[[StepRecord], None] | None = None) -> CrawlSummary:
        """Run to the end synchronously. First Ctrl+C (or SIGTERM) stops gracefully, a second one at once.

        "At once" raises KeyboardInterrupt wherever the crawl is, even in a long computation such as
        training the classifier: every step is one transaction, so the folder stays resumable.
        """
        loop_box: list[asyncio.AbstractEventLoop] = []

        def on_signal(signum, frame) -> None:
            self._stop_requested += 1
            if self._stop_requested >= 2:
                raise KeyboardInterrupt
            if loop_box:
                # Python runs this handler between bytecodes: hand the stop to the loop, do not act here.
                loop_box[0].call_soon_threadsafe(self.stop)

        async def main() -> None:
            loop_box.append(asyncio.get_running_loop())
            async with aclosing(self.run()) as pages:
                async for page in pages:
                    if on_page is not None:
                        on_page(page)

        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except ValueError:  # not the main thread: the caller handles signals
                pass
        try:
            asyncio.run(main())
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        assert self.summary is not None
        return self.summary

    # -- the run ------------------------------------------------------------------------------------
    async def run(self) -> AsyncIterator[StepRecord]:
        """Start or resume the crawl and yield each page once it is committed to the run folder."""
        config = self.config
        if config.topic is None or not Path(config.topic).is_dir():
            # Checked before the folder is made, so that a mistyped command leaves nothing behind.
            raise FileNotFoundError(f"topic directory {config.topic} not found" if config.topic else
                                    "a crawl needs a topic directory (see `focuscrawl topic init`)")
        check_strategies(config, [config.strategy])
        topic = load_topic_dir(config.topic)
        seeds = config.all_seeds() or list(topic.seeds)
        if not seeds:
            raise ValueError("no seeds: give --seeds FILE or put seeds.txt in the topic directory")
        store: StateStore | None = None
        outputs: Outputs | None = None
        fetcher = self._fetcher
        owns_fetcher = fetcher is None
        engine: CrawlEngine | None = None
        started = time.monotonic()
        new_steps = 0
        damaged = False
        if config.workers is not None or (self.out / SHARDS_DIR).is_dir():
            raise ResumeError(f"{self.out} is a distributed crawl (--workers): run it with "
                              "focuscrawl.crawl.distributed.DistributedCrawler or `focuscrawl crawl --workers N`")
        with RunFolder(self.out) as folder:
            try:
                store = folder.open_store({**config.identity(), "seeds": seeds}, strategy=config.strategy,
                                          context_budget=config.budget)
                engine = self._engine(folder, store, topic, seeds)
                folder.write_config(config)
                outputs = folder.open_outputs(store, config.strategy, config.warc)
                self.repaired = outputs.repaired
                resumed = store.step_count()
                self.stats = RunStats(steps=resumed, resumed_steps=resumed, relevant=outputs.harvest.relevant,
                                      relevant_domains=len(outputs.harvest.domains), errors=store.error_count(),
                                      frontier_size=engine.frontier_size)
                if fetcher is None:
                    fetcher = self._make_fetcher()
                self._driver = CrawlDriver(engine, fetcher, store, outputs.pages, outputs.harvest, outputs.warc,
                                           concurrency=config.concurrency, checkpoint_every=config.checkpoint_every)
                if self._stop_requested:
                    self._driver.stop(self._stop_requested > 1)
                async with aclosing(self._driver.run()) as steps:
                    async for record in steps:
                        new_steps += 1
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
                        self.summary = self._summary(store, engine, new_steps, time.monotonic() - started)
                        folder.write_summary(self.summary, f"{config.strategy}: {self.summary.steps} pages"
                                             if config.plot else None)
                    store.close()
                self._driver = None

    def _engine(self, folder: RunFolder, store: StateStore, topic, seeds: list[str]) -> CrawlEngine:
        """A fresh engine for this crawl, brought to the store's last commit."""
        config = self.config
        reward_model = reward_model_for(config, config.strategy, topic)
        classifiers = Classifiers(topic, config.seed,
                                  trained={reward_model: folder.classifier(reward_model, topic, config.seed,
                                                                           config.page_encoder)})
        # The policy is told the first run's budget: it may plan with it, and the replay must match.
        context_budget = store.get_meta("context_budget", config.budget)

        def fresh() -> CrawlEngine:
            return build_crawl(config, config.strategy, topic, seeds, classifiers=classifiers,
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
        s.recent.append(time.monotonic())
        if len(s.recent) > 2000:
            del s.recent[:1000]

    def _make_fetcher(self) -> Fetcher:
        return make_fetcher(self.config)

    def _summary(self, store: StateStore, engine: CrawlEngine | None, new_steps: int, elapsed: float) -> CrawlSummary:
        steps = store.step_count()
        if self._stop_requested:
            stopped = "interrupted"
        elif steps >= self.config.budget:
            stopped = "budget"
        else:
            stopped = "frontier"
        s = self.stats
        frontier = engine.frontier_size if engine is not None else store.last_frontier_size()
        return CrawlSummary(out=str(self.out), steps=steps, new_steps=new_steps, resumed_steps=s.resumed_steps,
                            relevant=s.relevant, harvest_rate=s.relevant / steps if steps else 0.0,
                            relevant_domains=s.relevant_domains, errors=s.errors, frontier_size=frontier,
                            elapsed_s=elapsed, stopped=stopped)


def make_fetcher(config: CrawlConfig, hosts: dict[str, str] | None = None) -> Fetcher:
    """The fetcher a crawl's settings ask for: an offline web's, or HTTP (a loopback web's with a hosts map;
    ``hosts`` is that map already read)."""
    if config.web:
        return OfflineFetcher(resolve_web_dir(config.web), latency_s=config.offline_latency_s)
    settings = dict(config.fetch)
    if config.scope.content_types is not None:
        settings.setdefault("content_types", tuple(config.scope.content_types))
    if hosts is None and config.hosts_map is not None:
        hosts = json.loads(Path(config.hosts_map).read_text())
    if hosts is not None:
        # A web served on loopback: its host names resolve through the server's mapping.
        settings["resolve_overrides"] = {**hosts, **settings.get("resolve_overrides", {})}
        settings.setdefault("allow_loopback", True)
    return HttpFetcher(FetchConfig(**settings))
