"""The async crawl driver: ``CrawlEngine`` steps with N fetches in flight, each step committed to the store.

Per completed fetch, in this order: ``engine.record`` (closure, reward, policy update), the WARC records
(flushed, their end offset kept in the step), one store transaction (the step's engine ops, the page, new
URLs, closure, hosts, maybe a checkpoint), then pages.jsonl and harvest.csv. The transaction is the
commit point: a kill before it loses the fetch (it is redone on resume, and the WARC is cut back), a
kill after it loses nothing (the derived files are repaired from the store).

Completions are recorded in selection order when several finish together, and with ``concurrency=1``
the driver makes exactly the calls ``CrawlEngine.run`` makes, so it crawls the same sequence.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import AsyncIterator
from typing import Protocol

from focuscrawl.engine.engine import CrawlEngine
from focuscrawl.storage.harvest import HarvestWriter
from focuscrawl.storage.pages import PagesWriter
from focuscrawl.storage.state import StateStore, StepRecord
from focuscrawl.storage.warc import WarcOutput
from focuscrawl.types import Page


class Fetcher(Protocol):
    """What the driver needs from a fetcher (``focuscrawl.web.http.HttpFetcher``, ``OfflineFetcher``)."""

    async def fetch(self, url: str) -> Page: ...

    async def aclose(self) -> None: ...

    def host_ready_in(self, url: str) -> float: ...


class ResumeError(RuntimeError):
    """The run folder cannot be resumed as it is (replay diverged, config changed, ...)."""


# Engine attributes that are wiring or settings (a resume may raise the budget), not crawl state:
# never checkpointed, kept from the live engine.
_NOT_STATE = {"classifier", "sinks", "judge", "changes", "budget"}


class RecordingEngine(CrawlEngine):
    """A ``CrawlEngine`` that notes what each step changed (discovered URLs, closure, hosts) for the store."""

    def __init__(self, *args, **kwargs):
        self.changes = _Changes()
        super().__init__(*args, **kwargs)

    def _discover(self, url, parent, host):
        super()._discover(url, parent, host)
        self.changes.discovered.append((url, host, parent, self.depth[url]))

    def _mark_fetched(self, url, host):
        if url not in self.fetched:
            self.changes.fetched.append((url, host))
        super()._mark_fetched(url, host)
        self.changes.hosts.add(host)

    def _cap_host(self, host):
        super()._cap_host(host)
        self.changes.hosts.add(host)

    def take_changes(self):
        changes, self.changes = self.changes, _Changes()
        hosts = [(h, self.fetches_per_host[h], h in self.capped_hosts) for h in sorted(changes.hosts)]
        return changes.discovered, changes.fetched, hosts

    # -- checkpoints -----------------------------------------------------------------------------
    def snapshot(self) -> bytes | None:
        """Pickle of the crawl state (engine and policy); None if the policy cannot be pickled."""
        state = {k: v for k, v in self.__dict__.items() if k not in _NOT_STATE}
        try:
            return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - any unpicklable policy just means "resume by full replay"
            return None

    def restore(self, blob: bytes) -> None:
        self.__dict__.update(pickle.loads(blob))


class _Changes:
    def __init__(self):
        self.discovered: list[tuple[str, str, str | None, int]] = []
        self.fetched: list[tuple[str, str]] = []
        self.hosts: set[str] = set()


def replay(engine: RecordingEngine, store: StateStore, *, use_checkpoint: bool = True) -> tuple[list[str], int]:
    """Bring a freshly started engine to the store's last commit. Returns (in-flight URLs, steps replayed).

    In-flight URLs are those the log shows selected but not recorded: the crashed process was fetching
    them. They are still in the engine's in-flight set and the driver fetches them first.
    """
    after, first_step = 0, 0
    checkpoint = store.latest_checkpoint() if use_checkpoint else None
    if checkpoint is not None:
        seq, step, blob = checkpoint
        engine.restore(blob)  # the caller falls back to a full replay on a fresh engine if this raises
        after, first_step = seq, step + 1
    sinks, engine.sinks = engine.sinks, []
    steps = store.steps(start=first_step)
    replayed = 0
    try:
        for seq, kind, url in store.ops(after=after):
            if kind == "S":
                selected = engine.next_url()
                if selected != url:
                    raise ResumeError(
                        f"replay diverged at op {seq}: the policy selected {selected!r} where the log has {url!r}; "
                        "the strategy, its options or the topic changed, or the strategy is not deterministic")
            else:
                record = next(steps, None)
                if record is None or record.url != url:
                    raise ResumeError(f"state store is inconsistent at op {seq} ({url})")
                engine.record(url, record.page(), record.fetch_s)
                replayed += 1
    finally:
        engine.sinks = sinks
    engine.take_changes()
    pending: dict[str, None] = {}
    for _, kind, url in store.ops():
        if kind == "S":
            pending[url] = None
        else:
            pending.pop(url, None)
    return list(pending), replayed


class CrawlDriver:
    """Runs the engine with ``concurrency`` fetches in flight and writes every step to the run folder."""

    def __init__(
        self,
        engine: RecordingEngine,
        fetcher: Fetcher,
        store: StateStore,
        pages: PagesWriter,
        harvest: HarvestWriter,
        warc: WarcOutput | None = None,
        *,
        concurrency: int = 8,
        checkpoint_every: int = 0,
    ):
        self.engine = engine
        self.fetcher = fetcher
        self.store = store
        self.pages = pages
        self.harvest = harvest
        self.warc = warc
        self.concurrency = max(1, concurrency)
        self.checkpoint_every = checkpoint_every
        self.pending: dict[asyncio.Task, tuple[int, str]] = {}
        self.stopping = False
        self.stopped_at_once = False
        self._order = 0
        self._checkpoints_work = True
        self._scores: dict[str, float] = {}

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

    async def run(self, resume_first: list[str] = ()) -> AsyncIterator[StepRecord]:
        """Crawl until the budget or frontier is spent or ``stop`` is called, yielding each committed step."""
        queue = list(resume_first)
        try:
            while True:
                while not self.stopping and len(self.pending) < self.concurrency:
                    if queue and self.engine.stats.steps + len(self.pending) < self.engine.budget:
                        url = queue.pop(0)  # selected before the crash, already in the op log
                    else:
                        url = self.engine.next_url()
                        if url is None:
                            break
                        self.store.log_select(url)
                        # Optional policy attribute: the priority the URL was selected with.
                        score = getattr(self.engine.policy, "selected_score", None)
                        if score is not None:
                            self._scores[url] = float(score)
                    task = asyncio.create_task(self._fetch(url))
                    self.pending[task] = (self._order, url)
                    self._order += 1
                if not self.pending:
                    break
                done, _ = await asyncio.wait(self.pending, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=lambda t: self.pending[t][0]):
                    _, url = self.pending.pop(task)
                    if task.cancelled():
                        continue
                    page, fetch_s, result = task.result()
                    yield self._complete(url, page, fetch_s, result)
                if self.stopped_at_once:
                    break
        finally:
            for task in self.pending:
                task.cancel()
            if self.pending:
                await asyncio.gather(*self.pending, return_exceptions=True)
            self.pending.clear()

    async def _fetch(self, url: str) -> tuple[Page, float, object]:
        started = time.perf_counter()
        result = None
        try:
            # The HTTP fetcher's fetch_result also gives the response headers and body, for the WARC.
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
        score = self._scores.pop(url, None)
        event = self.engine.record(url, page, fetch_s)
        discovered, fetched, hosts = self.engine.take_changes()
        record = StepRecord(
            step=event.step, url=url, final_url=page.final_url or url, host=event.host, status=page.status,
            content_type=page.content_type, title=page.title, error=page.error, text=page.text,
            outlinks=list(page.outlinks), fetched_at=time.time(), fetch_s=fetch_s, relevance=event.relevance,
            reward=event.reward, depth=event.depth, parent=event.parent,
            score=score, frontier_size=event.frontier_size,
        )
        if self.warc is not None:
            record.warc_end = self.warc.write(url, page, result)
        checkpoint = None
        if self.checkpoint_every and self._checkpoints_work and (event.step + 1) % self.checkpoint_every == 0:
            checkpoint = self.engine.snapshot()
            self._checkpoints_work = checkpoint is not None
        self.store.commit_step(record, discovered, fetched, hosts, checkpoint)
        self.pages.write(record)
        self.harvest.append(record.step, record.fetched_at, record.reward, record.host, record.frontier_size)
        return record
