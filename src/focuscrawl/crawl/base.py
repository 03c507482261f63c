"""What both crawlers share (``Crawler``, one process; ``DistributedCrawler``, shards on Ray): the crawl's life.

    crawler = open_crawler(config)                # focuscrawl.crawl: the one the settings ask for
    summary = crawler.crawl(on_progress=show)     # show(stats) after each page (or each poll of the shards)

``BaseCrawler`` holds the settings and the live counters, does the cheap checks before anything expensive
(``check``: the inputs of ``focuscrawl.crawl.inputs`` and the kind of crawl the run folder holds), runs a crawl
to its end with Ctrl+C handling (the first stops gracefully, a second at once) and says why it stopped. A
crawler implements ``_crawl``, the run itself.
"""

from __future__ import annotations

import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.config import CrawlConfig, load_config, read_effective_config
from focuscrawl.crawl.inputs import CrawlInputs, read_inputs
from focuscrawl.crawl.run_folder import CrawlSummary, check_crawl_kind


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
    last_url: str = ""
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


ProgressCallback = Callable[[RunStats], None]


def crawl_config(config: CrawlConfig | None, settings: dict) -> CrawlConfig:
    """The crawl's settings: ``config``, or the defaults, with keyword ``settings`` over them; it needs ``out``."""
    if config is None:
        config = load_config(CrawlConfig, **settings)
    elif settings:
        config = CrawlConfig.model_validate({**config.model_dump(), **settings})
    if config.out is None:
        raise ValueError("a crawl needs a run folder (out)")
    return config


def recorded_config(out: str | Path, overrides: dict) -> CrawlConfig:
    """The config a run folder's crawl was made with, ``overrides`` over it."""
    stored = read_effective_config(Path(out))
    if stored is None:
        raise FileNotFoundError(f"{out} holds no crawl (no config.yml)")
    return CrawlConfig.model_validate({**stored.model_dump(), **overrides, "out": out})


class BaseCrawler(ABC):
    """One crawl in one run folder, from settings (a ``CrawlConfig`` and/or its fields as keywords)."""

    def __init__(self, config: CrawlConfig | None = None, /, **settings):
        self.config = crawl_config(config, settings)
        self.out = Path(self.config.out)
        self.stats = RunStats()
        self.summary: CrawlSummary | None = None
        self._stop_requested = 0  # 1: stop gracefully, 2: at once

    @classmethod
    def resume(cls, out: str | Path, **overrides):
        """Continue the crawl in ``out`` with its recorded config (``overrides`` e.g. a larger budget)."""
        return cls(recorded_config(out, overrides))

    def check(self) -> CrawlInputs:
        """The cheap checks, before anything is written or trained: the crawl's inputs, and that the run folder
        holds nothing or a crawl of the same kind (one process, or as many shards)."""
        inputs = read_inputs(self.config)
        check_crawl_kind(self.out, self.config.workers)
        return inputs

    def stop(self, immediate: bool = False) -> None:
        """Graceful stop (finish the fetches in flight), or immediate; either way the run stays resumable."""
        self._stop_requested = max(self._stop_requested, 2 if immediate else 1)

    def crawl(self, on_progress: ProgressCallback | None = None) -> CrawlSummary:
        """Run to the end (budget or frontier spent) synchronously; ``on_progress(stats)`` after each page, or
        each poll of the shards.

        The first Ctrl+C (or SIGTERM) stops gracefully; a second raises KeyboardInterrupt wherever the crawl
        is, even in a long computation such as training the classifier: every step is one transaction, so the
        folder stays resumable.
        """

        def on_signal(signum, frame) -> None:
            self._stop_requested += 1
            if self._stop_requested >= 2:
                raise KeyboardInterrupt
            self._stop_on_signal()

        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except ValueError:  # not the main thread: the caller handles signals
                pass
        try:
            self._crawl(on_progress)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        assert self.summary is not None
        return self.summary

    @abstractmethod
    def _crawl(self, on_progress: ProgressCallback | None) -> None:
        """Check, start or resume the crawl, run it to its end and set ``summary``."""

    def _stop_on_signal(self) -> None:
        """The first Ctrl+C: stop gracefully. Python runs a signal handler between any two bytecodes, so a crawler
        whose stop is not a plain flag hands it to its own loop."""
        self.stop()

    def _summary(self, *, steps: int, resumed_steps: int, relevant: int, relevant_domains: int, errors: int,
                 frontier_size: int, elapsed_s: float) -> CrawlSummary:
        if self._stop_requested:
            stopped = "interrupted"
        elif steps >= self.config.budget:
            stopped = "budget"
        else:
            stopped = "frontier"
        return CrawlSummary(out=str(self.out), steps=steps, new_steps=steps - resumed_steps,
                            resumed_steps=resumed_steps, relevant=relevant,
                            harvest_rate=relevant / steps if steps else 0.0, relevant_domains=relevant_domains,
                            errors=errors, frontier_size=frontier_size, elapsed_s=elapsed_s, stopped=stopped)
