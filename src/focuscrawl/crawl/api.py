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
import fcntl
import json
import os
import pickle
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import asdict, dataclass, field
from pathlib import Path

from focuscrawl.crawl.config import CrawlConfig, load_config, read_effective_config, write_effective_config
from focuscrawl.crawl.driver import CrawlDriver, Fetcher, RecordingEngine, ResumeError, replay
from focuscrawl.storage import (HARVEST_FILE, PAGES_FILE, STATE_FILE, WARC_FILE, HarvestWriter, PagesWriter,
                                StateStore, StepRecord, WarcOutput, repair_pages)
from focuscrawl.strategies import STRATEGIES, CrawlContext, make_policy
from focuscrawl.topic.inputs import TopicInputs
from focuscrawl.urls import domain_of

MODEL_FILE = "model.pkl"
SUMMARY_FILE = "summary.json"
PLOT_FILE = "harvest.png"
LOCK_FILE = ".lock"


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


@dataclass
class CrawlSummary:
    out: str
    steps: int
    new_steps: int
    resumed_steps: int
    relevant: int
    harvest_rate: float
    relevant_domains: int
    errors: int
    frontier_size: int
    elapsed_s: float
    stopped: str  # budget | frontier | interrupted


class Crawler:
    """One crawl in one run folder. ``run()`` may be called again after a stop to continue it."""

    def __init__(self, config: CrawlConfig | None = None, /, *, fetcher: Fetcher | None = None, **settings):
        if config is None:
            config = load_config(**settings)
        elif settings:
            config = CrawlConfig.model_validate({**config.model_dump(), **settings})
        if config.out is None:
            raise ValueError("a crawl needs a run folder (out)")
        self.config = config
        self.out = Path(config.out)
        self.stats = RunStats()
        self._fetcher = fetcher
        self._driver: CrawlDriver | None = None
        self._stop_requested = 0
        self.summary: CrawlSummary | None = None

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
        if self.config.topic is None or not Path(self.config.topic).is_dir():
            # Checked before the folder is made, so that a mistyped command leaves nothing behind.
            raise FileNotFoundError(f"topic directory {self.config.topic} not found" if self.config.topic else
                                    "a crawl needs a topic directory (see `focuscrawl topic init`)")
        self.out.mkdir(parents=True, exist_ok=True)
        lock = _lock_folder(self.out)
        store = pages = harvest = warc = None
        fetcher = self._fetcher
        owns_fetcher = fetcher is None
        started = time.monotonic()
        new_steps = 0
        try:
            store = StateStore(self.out / STATE_FILE)
            engine, inflight = self._prepare_engine(store)
            write_effective_config(self.out, self.config)
            pages, harvest, warc = self._open_outputs(store)
            self.stats = RunStats(steps=store.step_count(), resumed_steps=store.step_count(),
                                    relevant=harvest.relevant, relevant_domains=len(harvest.domains),
                                    errors=store.db.execute("SELECT COUNT(*) FROM steps WHERE status = 0 OR "
                                                            "status >= 400").fetchone()[0],
                                    frontier_size=engine.frontier_size)
            if fetcher is None:
                fetcher = self._make_fetcher()
            self._driver = CrawlDriver(engine, fetcher, store, pages, harvest, warc,
                                       concurrency=self.config.concurrency,
                                       checkpoint_every=self.config.checkpoint_every)
            if self._stop_requested:
                self._driver.stop(self._stop_requested > 1)
            async with aclosing(self._driver.run(inflight)) as steps:
                async for record in steps:
                    new_steps += 1
                    self._count(record, harvest)
                    yield record
        finally:
            if self._driver is not None:
                self._driver.stop(immediate=True)
            for output in (pages, harvest, warc):
                if output is not None:
                    output.close()
            if fetcher is not None and owns_fetcher:
                await fetcher.aclose()
            if store is not None:
                if pages is not None:  # prepared: a refused resume must not overwrite the folder's report
                    self.summary = self._finish(store, new_steps, time.monotonic() - started)
                store.close()
            self._driver = None
            lock.close()

    def _count(self, record: StepRecord, harvest: HarvestWriter) -> None:
        s = self.stats
        s.steps = record.step + 1
        s.relevant = harvest.relevant
        s.relevant_domains = len(harvest.domains)
        s.errors += int(record.status == 0 or record.status >= 400)
        s.frontier_size = record.frontier_size
        s.in_flight = self._driver.in_flight if self._driver else 0
        s.recent.append(time.monotonic())
        if len(s.recent) > 2000:
            del s.recent[:1000]

    # -- assembly -----------------------------------------------------------------------------------
    def _prepare_engine(self, store: StateStore) -> tuple[RecordingEngine, list[str]]:
        config = self.config
        if config.topic is None:
            raise ValueError("a crawl needs a topic directory (see `focuscrawl topic init`)")
        from focuscrawl.topic.topic_dir import load_topic_dir

        topic = load_topic_dir(config.topic)
        seeds = config.all_seeds() or list(topic.seeds)
        if not seeds:
            raise ValueError("no seeds: give --seeds FILE or put seeds.txt in the topic directory")
        identity = {**config.identity(), "seeds": seeds}
        if not store.is_new:
            recorded = store.get_meta("identity", {})
            changed = sorted(k for k in set(recorded) | set(identity) if recorded.get(k) != identity.get(k))
            if changed:
                raise ResumeError(f"{self.out} holds a different crawl (changed: {', '.join(changed)}); "
                                  "use another run folder, or the same settings to resume it")
        strategy = STRATEGIES.get(config.strategy)
        if strategy is None:
            raise KeyError(f"unknown strategy {config.strategy!r}; known: {', '.join(sorted(STRATEGIES))}")
        classifier = self._classifier(topic, config.reward_model or strategy.reward_model)

        def fresh() -> RecordingEngine:
            policy = make_policy(config.strategy, **config.strategy_options)
            engine = RecordingEngine(policy, classifier, budget=config.budget, max_per_domain=config.max_per_domain,
                                     max_outlinks=config.max_outlinks)
            # The context budget is the first run's: a policy may plan with it, and replay must match.
            budget = store.get_meta("context_budget", config.budget)
            engine.start(CrawlContext(topic=topic, classifier=classifier, seeds=list(seeds), budget=budget,
                                      seed=config.seed, options=dict(config.strategy_options)))
            return engine

        engine = fresh()
        if store.is_new:
            normalised = list(engine.parent)  # the seeds, normalised, in order
            store.initialise(normalised, [domain_of(u) for u in normalised], identity=identity,
                             strategy=config.strategy, context_budget=config.budget)
            engine.take_changes()
            return engine, []
        try:
            inflight, _ = replay(engine, store, use_checkpoint=config.checkpoint_every > 0)
        except ResumeError:
            raise
        except Exception:  # noqa: BLE001 - an unreadable checkpoint: replay the whole log instead
            engine = fresh()
            inflight, _ = replay(engine, store, use_checkpoint=False)
        return engine, inflight

    def _classifier(self, topic: TopicInputs, model_name: str):
        """Trained once per run folder and kept, so that a resumed crawl scores pages exactly as before."""
        from focuscrawl.topic.models import train_relevance_model

        path = self.out / MODEL_FILE
        if path.exists():
            try:
                with open(path, "rb") as fh:
                    return pickle.load(fh)
            except Exception:  # noqa: BLE001 - retraining is deterministic, so a bad file is only slower
                pass
        model = train_relevance_model(model_name, topic, self.config.seed)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
        return model

    def _open_outputs(self, store: StateStore):
        strategy = self.config.strategy
        dropped, appended = repair_pages(self.out / PAGES_FILE, store, strategy)
        pages = PagesWriter(self.out / PAGES_FILE, strategy)
        harvest = HarvestWriter(self.out / HARVEST_FILE)
        harvest.rewrite(store)
        warc = None
        if self.config.warc:
            path = self.out / WARC_FILE
            end = store.db.execute("SELECT MAX(warc_end) FROM steps").fetchone()[0]
            if end is None:
                path.unlink(missing_ok=True)  # no committed record: start over with a fresh warcinfo
            else:
                WarcOutput.truncate_to(path, end)
            warc = WarcOutput(path)
        self.repaired = {"pages_dropped": dropped, "pages_appended": appended}
        return pages, harvest, warc

    def _make_fetcher(self) -> Fetcher:
        if self.config.web:
            from focuscrawl.crawl.offline import OfflineFetcher

            web = self.config.web
            if web in ("embedded", "demo"):
                from focuscrawl.web import embedded_web_dir

                web = embedded_web_dir()
            return OfflineFetcher(web, latency_s=self.config.offline_latency_s)
        try:
            from focuscrawl.web.http import FetchConfig, HttpFetcher
        except ImportError as exc:
            raise RuntimeError(f"the HTTP fetcher is not available ({exc}); crawl an offline web with --web") from exc
        settings = dict(self.config.fetch)
        if self.config.hosts_map is not None:
            # A web served on loopback: its host names resolve through the server's mapping.
            mapping = json.loads(Path(self.config.hosts_map).read_text())
            settings["resolve_overrides"] = {**mapping, **settings.get("resolve_overrides", {})}
            settings.setdefault("allow_loopback", True)
        return HttpFetcher(FetchConfig(**settings))

    def _finish(self, store: StateStore, new_steps: int, elapsed: float) -> CrawlSummary:
        steps = store.step_count()
        if self._stop_requested:
            stopped = "interrupted"
        elif steps >= self.config.budget:
            stopped = "budget"
        else:
            stopped = "frontier"
        s = self.stats
        summary = CrawlSummary(out=str(self.out), steps=steps, new_steps=new_steps, resumed_steps=s.resumed_steps,
                               relevant=s.relevant, harvest_rate=s.relevant / steps if steps else 0.0,
                               relevant_domains=s.relevant_domains, errors=s.errors,
                               frontier_size=store.frontier_count(), elapsed_s=elapsed, stopped=stopped)
        tmp = self.out / (SUMMARY_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(summary), indent=2) + "\n")
        tmp.replace(self.out / SUMMARY_FILE)
        if self.config.plot and steps:
            try:
                from focuscrawl.storage.harvest import plot_harvest_csv

                plot_harvest_csv(self.out / HARVEST_FILE, self.out / PLOT_FILE,
                                 title=f"{self.config.strategy}: {steps} pages")
            except Exception:  # noqa: BLE001 - a missing plot must not fail a finished crawl
                pass
        return summary


class _FolderLock:
    def __init__(self, fh):
        self.fh = fh

    def close(self) -> None:
        self.fh.close()  # closing releases the flock; a killed process releases it too


def _lock_folder(out: Path) -> _FolderLock:
    fh = open(out / LOCK_FILE, "w")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise ResumeError(f"another crawl is running in {out}") from None
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return _FolderLock(fh)
