"""The async crawl driver: ``CrawlEngine`` steps with N fetches in flight, each step committed to the store.

Per completed fetch, in this order: ``engine.record`` (closure, reward, policy update), the WARC records
(flushed, their end offset kept in the step), one store transaction (the selections logged since the last
commit, the step's page, maybe a checkpoint), then pages.jsonl and harvest.csv. The transaction is the
commit point: a kill before it loses the fetch (it is redone on resume, and the WARC is cut back), a
kill after it loses nothing (the derived files are repaired from the store).

Completions are recorded in selection order when several finish together, and with ``concurrency=1``
the driver makes exactly the calls ``CrawlEngine.run`` makes, so it crawls the same sequence.

A fetcher with politeness slots (``slot`` and ``slot_capacity``: the HTTP fetcher's hosts) gets no more fetches
for a slot than it serves at once. A selection for a busy slot waits in the driver (up to ``4 * concurrency`` of
them behind another of their slot's, ``_waiting_full``) and the next selection is asked for, as Scrapy's
downloader keeps a queue per slot: otherwise one slow or backing-off host the policy keeps choosing holds every
fetch in flight, and the crawl stalls behind it. A waiting selection is in flight for the engine and in the op
log, so a crash or a stop leaves it to be fetched on resume.

A fetcher that also says when a slot's politeness lets a request start (``ready_in(slot)``, and ``prepare(url)``
to fetch what a request will need first: the HTTP fetcher's robots.txt) gets, while other fetches are in flight,
only fetches that can send at once: a selection whose host is still within its delay waits in the driver the same
way, and the driver wakes when the first waiting host is due. Otherwise each such fetch would sit out its host's
delay (1 s by default) holding one of the ``concurrency`` places, and a crawl whose policy keeps choosing hosts it
has just fetched would go at ``concurrency`` pages per delay, whatever the network and the CPU allow. With nothing
in flight a selection starts at once, ready or not, so that ``concurrency=1`` keeps the calls of
``CrawlEngine.run``.

Such a fetcher that also names the slots of a site (``site_slots``) lets the driver say, when it asks for a
selection while fetches are in flight, which hosts a fetch could start on now (``CrawlEngine.next_selection(ready)``,
``Policy.select_ready``): a policy that takes the hint picks its best URL among those, instead of its best URLs
waiting here one per host per delay.

Readings besides the fetches (``sitemaps``: a site's sitemap, read when the crawl first enters the site,
``focuscrawl.crawl.sitemaps``) run as tasks the driver waits for with its fetches: the crawl is not over while one
may still bring links (unless the budget is spent or it is stopping), and each one's links reach the engine, and
the log, as soon as it ends.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Protocol

from focuscrawl.crawl.resume import CLOCK, wall_clock
from focuscrawl.engine import CrawlEngine
from focuscrawl.storage.harvest import HarvestWriter
from focuscrawl.storage.pages import PagesWriter
from focuscrawl.storage.state import StateStore, StepRecord
from focuscrawl.storage.warc import WarcOutput
from focuscrawl.types import Page, StepEvent


class Fetcher(Protocol):
    """What the driver needs from a fetcher (``focuscrawl.http.fetcher.HttpFetcher``, ``OfflineFetcher``).

    A fetcher whose ``fetch_result`` also returns the response headers and body (the HTTP fetcher) gets
    them into the WARC; otherwise the WARC holds the page rendered from its text. One with ``slot(url)`` and
    ``slot_capacity`` (the HTTP fetcher's politeness) gets at most that many fetches per slot at once. One with
    ``real_time`` True (the HTTP fetcher) gives the crawl the wall clock (``CrawlEngine.record``'s ``at``).
    """

    async def fetch(self, url: str) -> Page: ...

    async def aclose(self) -> None: ...


class SideReadings(Protocol):
    """Readings a crawl makes besides its fetches, whose links reach the policy when they end (a site's sitemap on
    entering it: ``focuscrawl.crawl.sitemaps.SitemapOffers``). ``tasks``: those in flight."""

    tasks: dict[asyncio.Task, object]

    def recorded(self, url: str, page: Page, event: StepEvent) -> None: ...

    def offer(self, task: asyncio.Task) -> int: ...

    async def aclose(self) -> None: ...


class CrawlDriver:
    """Runs the engine with ``concurrency`` fetches in flight and writes every step to the run folder."""

    def __init__(
        self,
        engine: CrawlEngine,
        fetcher: Fetcher,
        store: StateStore,
        pages: PagesWriter,
        harvest: HarvestWriter,
        warc: WarcOutput | None = None,
        *,
        concurrency: int = 8,
        checkpoint_every: int = 0,
        before_commit: Callable[[], None] | None = None,
        sitemaps: SideReadings | None = None,
    ):
        self.engine = engine
        self.fetcher = fetcher
        self.store = store
        self.pages = pages
        self.harvest = harvest
        self.warc = warc
        self.concurrency = max(1, concurrency)
        self.checkpoint_every = checkpoint_every
        self.before_commit = before_commit  # raises to keep a step from being committed (a lost lock)
        self.sitemaps = sitemaps  # a site's sitemap offered to the policy on entering it (crawl.sitemaps)
        # A fetch in flight: (its order, its URL, the slot it was counted in). The slot is kept rather than asked again
        # at the end: a per-address slot changes once the fetch has resolved its host.
        self.pending: dict[asyncio.Task, tuple[int, str, str | None]] = {}
        self.stopping = False
        self.stopped_at_once = False
        self._order = 0
        self._checkpoints_work = True
        self._slot = getattr(fetcher, "slot", None)
        self._capacity = max(1, int(getattr(fetcher, "slot_capacity", 1)))
        self._ready_in = getattr(fetcher, "ready_in", None) if self._slot is not None else None
        self._prepare = getattr(fetcher, "prepare", None) if self._ready_in is not None else None
        self._site_slots = getattr(fetcher, "site_slots", None) if self._ready_in is not None else None
        self._busy: Counter[str] = Counter()  # fetches started per slot, not yet completed
        self._waiting: dict[str, deque[str]] = {}  # a busy slot's selected URLs, oldest first
        self._waiting_count = 0
        self._due: dict[str, float] = {}  # a waiting slot's earliest start (monotonic) when last asked: not before
        # A fetcher of real time (HTTP) gives a new crawl the wall clock (its steps' ``fetched_at``, replayed on
        # resume); a crawl keeps the clock it began with.
        if store.get_meta(CLOCK) is None and engine.stats.steps == 0:
            store.set_meta(**{CLOCK: "wall" if getattr(fetcher, "real_time", False) else "steps"})
        self._wall_clock = wall_clock(store)

    def stop(self, immediate: bool = False) -> None:
        """Graceful: start no new fetch, record those in flight. Immediate: abandon them (they are redone)."""
        self.stopping = True
        if immediate:
            self.stopped_at_once = True
            for task in self.pending:
                task.cancel()

    @property
    def in_flight(self) -> int:
        return len(self.pending)

    async def run(self) -> AsyncIterator[StepRecord]:
        """Crawl until the budget or frontier is spent or ``stop`` is called, yielding each committed step.

        URLs the engine has in flight when this starts (selected before a crash, already in the op log)
        are fetched first.
        """
        queue = self.engine.in_flight
        try:
            while True:
                due = self._start_fetches(queue)
                # sitemaps being read may bring links: the crawl is not over while one is (unless it is stopping,
                # or its budget is spent)
                side = (list(self.sitemaps.tasks) if self.sitemaps is not None and not self.stopping
                        and not self.engine.done else [])
                if not self.pending and not side:
                    if self._waiting_count and not self.stopping and self._may_start():
                        continue  # a waiting selection starts now, ready or not: nothing else is in flight
                    break
                done, _ = await asyncio.wait([*self.pending, *side], timeout=due,
                                             return_when=asyncio.FIRST_COMPLETED)
                for task in side:
                    if task in done:
                        self.sitemaps.offer(task)
                for record in self._record_done({task for task in done if task in self.pending}):
                    yield record
                if self.stopped_at_once:
                    break
        finally:
            await self._abandon_pending()
            if self.sitemaps is not None:
                await self.sitemaps.aclose()

    def _start_fetches(self, queue: list[str]) -> float | None:
        """Start fetches while fewer than ``concurrency`` are in flight: waiting selections whose host is ready, then
        ``queue``'s (the engine's in flight at the start), then new selections; a selection for a busy host, or one
        within its delay, waits. Returns the seconds until the first waiting host is due (None: none, or unknown)."""
        due: float | None = None
        while not self.stopping and len(self.pending) < self.concurrency and self._may_start():
            url, due = self._ready_waiting()
            if url is None:
                url = self._next_url(queue)
                if url is None:
                    break
            slot = self._slot(url) if self._slot is not None else None
            if slot is not None and (self._busy[slot] >= self._capacity or self._must_wait(url, slot)):
                self._waiting.setdefault(slot, deque()).append(url)
                self._waiting_count += 1
                continue
            if slot is not None:
                self._busy[slot] += 1
            task = asyncio.create_task(self._fetch(url))
            self.pending[task] = (self._order, url, slot)
            self._order += 1
        return due

    def _next_url(self, queue: list[str]) -> str | None:
        """The next URL to fetch besides the waiting ones: ``queue``'s first while the budget allows, else the
        engine's next selection (logged); None when there is none or too many wait already."""
        if queue and self.engine.stats.steps + len(self.pending) < self.engine.budget:
            return queue.pop(0)
        if self._waiting_full():
            return None
        polite = self._site_slots is not None and bool(self.pending)
        selection = self.engine.next_selection(self._site_ready if polite else None)
        if selection is None:
            return None
        self.store.log_select(selection.url)
        return selection.url

    def _record_done(self, done: set[asyncio.Task]) -> Iterator[StepRecord]:
        """Record the completed fetches ``done``, in selection order, each committed as it is yielded."""
        for task in sorted(done, key=lambda t: self.pending[t][0]):
            _, url, slot = self.pending.pop(task)
            if slot is not None:
                self._busy[slot] -= 1
                self._due.pop(slot, None)
            if task.cancelled():
                continue
            page, fetch_s, result = task.result()
            yield self._complete(url, page, fetch_s, result)

    async def _abandon_pending(self) -> None:
        for task in self.pending:
            task.cancel()
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
        self.pending.clear()
        # Waiting selections stay in flight for the engine: a later run (a shard's next lease) starts them
        # from ``engine.in_flight``, a resume from the op log. Kept here too, they would be fetched twice.
        self._waiting.clear()
        self._waiting_count = 0
        self._busy.clear()
        self._due.clear()

    def _waiting_full(self) -> bool:
        """Whether the driver asks for no more selections until some waiting ones start: ``4 * concurrency`` of
        them queue behind another of their slot's (a host the policy keeps choosing holds no more), and
        ``16 * concurrency`` wait in all (each the first of its slot: hosts the policy spreads over; about
        ``concurrency`` x delay / response time are needed to keep every fetch busy without undercutting a delay)."""
        queued = self._waiting_count - len(self._waiting)
        return queued >= 4 * self.concurrency or self._waiting_count >= 16 * self.concurrency

    def _site_ready(self, site: str) -> bool:
        """Whether a fetch from ``site`` (a policy's host) could start now: none of its slots full, with selections
        waiting, or within its politeness delay."""
        for slot in self._site_slots(site):
            if self._busy[slot] >= self._capacity or slot in self._waiting or self._ready_in(slot) > 0:
                return False
        return True

    def _must_wait(self, url: str, slot: str) -> bool:
        """Whether ``url`` waits in the driver for its host's politeness, other fetches being in flight."""
        if self._ready_in is None or not self.pending:
            return False
        self._prepare(url)
        return self._ready_in(slot) > 0

    def _ready_waiting(self) -> tuple[str | None, float | None]:
        """The first-waiting URL of the first slot (in the order slots began waiting) that has room and whose
        politeness lets it start now (with nothing in flight: room is enough), if any; and otherwise the seconds
        until the first of those with room is due (None: none, or a fetcher that does not say)."""
        check = self._ready_in is not None and bool(self.pending)
        now = time.monotonic() if check else 0.0
        due = None
        for slot, urls in self._waiting.items():
            if self._busy[slot] >= self._capacity:
                continue
            if check:
                # A slot's schedule only moves later until its own fetch ends (which forgets this): the fetcher is
                # asked again once the time it gave has passed, not at every start, over hundreds of waiting slots.
                not_before = self._due.get(slot)
                if not_before is None or not_before <= now:
                    wait = self._ready_in(slot)
                    not_before = now + wait
                    if wait > 0:
                        self._due[slot] = not_before
                if not_before > now:
                    due = not_before - now if due is None else min(due, not_before - now)
                    continue
            url = urls.popleft()
            if not urls:
                del self._waiting[slot]
            self._waiting_count -= 1
            self._due.pop(slot, None)
            return url, None
        return None, due

    async def _fetch(self, url: str) -> tuple[Page, float, object]:
        started = time.perf_counter()
        result = None
        try:
            fetch_result = getattr(self.fetcher, "fetch_result", None) if self.warc is not None else None
            if fetch_result is not None:
                result = await fetch_result(url)
                page = result.page
            else:
                page = await self.fetcher.fetch(url)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - fetchers should not raise; if one does, it is a failed fetch
            page = Page(url=url, final_url=url, status=0, error=f"{type(exc).__name__}: {exc}")
        return page, time.perf_counter() - started, result

    def _complete(self, url: str, page: Page, fetch_s: float, result=None) -> StepRecord:
        fetched_at = time.time()
        event = self.engine.record(url, page, fetch_s, at=fetched_at if self._wall_clock else None)
        if self.sitemaps is not None:
            self.sitemaps.recorded(url, page, event)
        record = StepRecord.of(event, page, fetch_s, fetched_at)
        if self.warc is not None:
            record.warc_end = self.warc.write(url, page, result)
        if self.before_commit is not None:
            self.before_commit()
        self.store.commit_step(record, self._checkpoint(event.step), self._outbox(event.step))
        self.pages.write(record)
        self.harvest.append(record.step, record.fetched_at, record.reward, record.host, record.frontier_size)
        return record

    # Hooks of a distributed crawl's shard (focuscrawl.crawl.distributed); a single-process crawl keeps these.
    def _may_start(self) -> bool:
        """Whether another fetch may start now (a shard: only with pages leased from the global budget)."""
        return True

    def _outbox(self, step: int) -> list[tuple[str, int, bytes]]:
        """Messages to other shards committed with ``step``: the links it found on their hosts."""
        return []

    def _checkpoint(self, step: int) -> bytes | None:
        if not (self.checkpoint_every and self._checkpoints_work and (step + 1) % self.checkpoint_every == 0):
            return None
        try:
            return self.engine.snapshot()
        except Exception:  # noqa: BLE001 - a policy that cannot be pickled: resume replays the whole log
            self._checkpoints_work = False
            return None
