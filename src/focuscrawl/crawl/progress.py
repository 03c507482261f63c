"""What a running crawl shows: a live rich panel on a terminal, periodic log lines otherwise."""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.live import Live
from rich.table import Table

from focuscrawl.crawl.base import BaseCrawler, RunStats
from focuscrawl.crawl.run_folder import CrawlSummary


class Progress:
    """A crawl's ``on_progress``: ``update`` after each page (or poll of the shards); ``close`` prints nothing,
    ``report`` prints the final summary."""

    def __init__(self, crawler: BaseCrawler, mode: str = "auto", console: Console | None = None,
                 every_s: float = 5.0):
        self.crawler = crawler
        self.console = console or Console(stderr=True)
        if mode == "auto":
            mode = "live" if self.console.is_terminal else "log"
        self.mode = mode
        self.every_s = every_s
        self._last_log = time.monotonic()
        self._live: Live | None = None

    def _line(self) -> str:
        s = self.crawler.stats
        return (f"pages {s.steps:,}/{self.crawler.config.budget:,}  relevant {s.relevant:,} "
                f"(harvest {s.harvest_rate:.3f})  relevant domains {s.relevant_domains:,}  "
                f"frontier {s.frontier_size:,}  {s.fetch_rate:.1f} pages/s  in flight {s.in_flight}  "
                f"errors {s.errors:,}" + self._shards())

    def _shards(self) -> str:
        """Each shard's pages/s (and state, when not crawling) in a distributed crawl; empty otherwise."""
        shards = getattr(self.crawler.stats, "shards", None)
        if not shards:
            return ""
        return "  shards " + " ".join(f"{st['shard']}:{st['rate']:.1f}"
                                      + ("" if st["state"] == "crawling" else f"({st['state']})") for st in shards)

    def _render(self) -> Table:
        s = self.crawler.stats
        table = Table(title=f"focuscrawl {self.crawler.config.strategy} -> {self.crawler.out}", show_header=False,
                      title_justify="left")
        table.add_column(justify="right", style="bold")
        table.add_column()
        table.add_row("pages", f"{s.steps:,} / {self.crawler.config.budget:,}"
                      + (f"  ({s.resumed_steps:,} before resume)" if s.resumed_steps else ""))
        table.add_row("relevant", f"{s.relevant:,}  harvest rate {s.harvest_rate:.3f}")
        table.add_row("relevant domains", f"{s.relevant_domains:,}")
        table.add_row("frontier", f"{s.frontier_size:,}")
        table.add_row("fetch rate", f"{s.fetch_rate:.1f} pages/s, {s.in_flight} in flight")
        table.add_row("errors", f"{s.errors:,}")
        if self._shards():
            table.add_row("shards (pages/s)", self._shards().split("shards ", 1)[1])
        table.add_row("last", s.last_url[:100])
        table.add_row("elapsed", f"{time.monotonic() - s.started:.0f} s")
        return table

    def update(self, stats: RunStats) -> None:
        """Show the crawl's counters as they are now (``stats`` is the crawler's own ``stats``)."""
        if self.mode == "live" and self._live is None:
            # Started on the first page, so that set-up errors are not printed over an empty panel.
            self._live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
            self._live.start()
        if self._live is not None:
            self._live.update(self._render())
        elif self.mode == "log" and time.monotonic() - self._last_log >= self.every_s:
            self._last_log = time.monotonic()
            self.console.print(self._line(), highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.stop()
            self._live = None

    def report(self, summary: CrawlSummary) -> None:
        out = Console(file=sys.stdout)
        out.print(f"[bold]crawl {summary.stopped}[/]: {summary.steps:,} pages ({summary.new_steps:,} this run), "
                  f"{summary.relevant:,} relevant (harvest rate {summary.harvest_rate:.3f}), "
                  f"{summary.relevant_domains:,} relevant domains, {summary.errors:,} errors, "
                  f"frontier {summary.frontier_size:,}, {summary.elapsed_s:.1f} s", highlight=False)
        if summary.stopped == "interrupted":
            out.print("run the same command again to resume", highlight=False)
        stored = "state.sqlite" if self.crawler.config.workers is None else "shards/*/state.sqlite"
        out.print(f"run folder: {summary.out} (pages.jsonl, harvest.csv, harvest.png, {stored})", highlight=False)
