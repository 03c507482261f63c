"""One shard of a distributed crawl: a Ray actor running an ordinary crawl over the hosts it owns.

Each shard crawls in ``RUN/shards/K/`` with the builder's engine and policy, the async driver, a state store and
resume, as a single-process crawl does, and three differences: it fetches only pages it holds a lease for
(``Coordinator``); links to hosts another shard owns are committed to its outbox with the step that found them and
sent from there straight to their owner (``Shard.receive``, an actor call between shards), which forgets nothing
it has not stored; and messages (another shard's links, the driver's pooled parameters) are stored in its inbox
and logged, so that a restarted shard replays them.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import time
from collections import deque
from pathlib import Path

from focuscrawl.builder import StrategyPlan
from focuscrawl.config import CrawlConfig
from focuscrawl.crawl.distributed.cluster import require_ray
from focuscrawl.crawl.distributed.messages import PARAMETERS_PREFIX, apply_message, encode_links, shard_of
from focuscrawl.crawl.driver import CrawlDriver
from focuscrawl.crawl.inputs import CrawlInputs
from focuscrawl.crawl.open_run import open_run
from focuscrawl.crawl.resume import ResumeError
from focuscrawl.crawl.run_folder import RunFolder
from focuscrawl.engine import CrawlEngine
from focuscrawl.policy import ShardAware
from focuscrawl.storage import StateStore
from focuscrawl.types import ForeignLinks, TopicInputs


class Outlook:
    """A running mean of the last values, about ``pages`` of them (exponentially weighted once it has them)."""

    def __init__(self, pages: int = 20):
        self.pages, self.count, self.mean = pages, 0, None

    def add(self, value: float) -> None:
        self.count += 1
        self.mean = value if self.mean is None else self.mean + (value - self.mean) / min(self.count, self.pages)


class ShardDriver(CrawlDriver):
    """The async driver of a shard: fetches only with a lease, commits other shards' links with each step."""

    def __init__(self, shard: Shard, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shard = shard
        self.allowed = 0  # pages leased to this actor since it started; self._order counts fetches started

    @property
    def held(self) -> int:
        return self.allowed - self._order

    def _may_start(self) -> bool:
        if self.held <= self.shard.lease_pages // 2:
            self.shard.refill()
        return self.held > 0

    def _outbox(self, step: int) -> list[tuple[str, int, bytes]]:
        out = self._messages(step)
        if out:
            self.shard.outbox_filled()  # committed with this step right after: the sender takes them from the store
        return out

    def _messages(self, step: int) -> list[tuple[str, int, bytes]]:
        out = []
        for found in self.engine.take_outgoing():
            by_shard: dict[int, tuple[list[tuple[str, str]], list[str]]] = {}
            for url, anchor in found.links:
                by_shard.setdefault(shard_of(url, self.shard.workers), ([], []))[0].append((url, anchor))
            for url in found.fetched:
                by_shard.setdefault(shard_of(url, self.shard.workers), ([], []))[1].append(url)
            for dest, (links, fetched) in sorted(by_shard.items()):
                message = ForeignLinks(found.parent, found.page, found.relevance, found.reward, found.depth, links,
                                       fetched)
                out.append((f"{self.shard.index}:{step}:{dest}", dest, encode_links(message)))
        return out


class Shard:
    """One shard's crawl in ``RUN/shards/K``; a Ray actor (async: its methods and its crawl share one loop).

    Started by its first call (the driver's ``poll`` or another shard's ``receive``), so an actor Ray restarts
    after a crash starts again by itself, resuming from its store and sending what its outbox still holds.
    States: starting, crawling, starved (no lease left in the budget), empty (frontier spent: it waits for links
    from other shards), stopped.

    Sending: a task of its own takes the outbox's messages (oldest first) and calls each destination's
    ``receive`` with its batch, one call per destination at a time; the ids that destination answers it has
    stored leave the outbox. A destination that fails (dead, restarting) is tried again ``RETRY_S`` later: its
    messages wait in the store meanwhile, whatever dies.
    """

    SEND_BATCH = 500  # messages in one receive call, at most
    # outbox rows read per pass, oldest first: a backlog for a destination that is down (restarting) can hold
    # back the others' for that long, but a pass never reads a large outbox whole
    SEND_WINDOW = 4000
    GATHER_S = 0.02  # after the first new message, wait this long for the next pages' before sending
    RETRY_S = 0.5  # a destination that failed is tried again after this
    FLUSH_S = 60.0  # at the end (stop), how long to try to empty the outbox

    def __init__(self, index: int, workers: int, config: dict, coordinator: str, peers: str):
        self.index, self.workers = index, workers
        # the other shards by name (``peers`` + their index): handles refreshed by name when a call fails, and,
        # like the coordinator's, kept out of the constructor's arguments
        self.peer_prefix = peers
        self._peers: dict[int, object] = {}
        self._sending: set[int] = set()  # destinations with a receive call under way
        self._retry_at: dict[int, float] = {}
        self._outbox_ready: asyncio.Event | None = None
        self._sender: asyncio.Task | None = None
        self.sent = 0  # messages this process had acknowledged by their destination
        self.send_calls = 0  # receive calls to other shards that answered
        self.received = 0  # messages from other shards this process stored (new ones)
        self.config = CrawlConfig.model_validate(config)
        # the coordinator by name: an actor handle among the constructor arguments would make Ray warn
        # that a restart depends on objects in its store
        self.coordinator_name = coordinator
        self.topic: TopicInputs | None = None
        self.lease_pages = self.config.lease_pages
        self.out = Path(self.config.out)
        self.state = "starting"
        self._started: asyncio.Task | None = None
        self._lease_lock: asyncio.Lock | None = None
        self._refill: asyncio.Task | None = None
        self._no_lease_until = 0.0  # after the coordinator said "nothing left", ask again only after a while
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self.recent: deque[float] = deque(maxlen=2000)
        self.errors = 0
        self.relevant = 0
        self.relevant_domains: set[str] = set()
        self.restarts = 0
        self.replayed_rounds: set[str] = set()  # pooled rounds this process loaded again from its log when it started
        self.scores = Outlook()  # the policy's scores of this shard's last selections
        self.relevances = Outlook()  # the relevance of its last pages: the outlook of a policy without scores

    # -- life cycle ------------------------------------------------------------------------------
    async def _start(self) -> None:
        self._lease_lock, self._wake, self._outbox_ready = asyncio.Lock(), asyncio.Event(), asyncio.Event()
        self.coordinator = require_ray().get_actor(self.coordinator_name)
        self.topic, self.seeds, self.classifier, self.hosts = await self.coordinator.inputs.remote()
        self.folder = RunFolder(self.out)
        for _ in range(300):  # a killed predecessor's process may hold the folder's lock for a moment
            try:
                self.folder.__enter__()
                break
            except ResumeError:
                await asyncio.sleep(0.1)
        else:
            self.folder.__enter__()
        config = self.config
        inputs = CrawlInputs(self.topic, self.seeds, StrategyPlan(config, config.strategy), self.hosts)
        opened = open_run(self.folder, config, inputs, classifier=self.classifier,
                          identity={"shard": self.index, "workers": self.workers}, owns=self._owns,
                          on_message=self._replay_message, on_store=self._count_start)
        self.store, self.engine = opened.store, opened.engine
        self.outputs, self.fetcher = opened.outputs, opened.fetcher
        self.committed_at_start = self.store.step_count()
        self.errors = self.store.error_count()
        self.relevant = self.outputs.harvest.relevant
        self.relevant_domains = set(self.outputs.harvest.domains)
        self.driver = ShardDriver(self, self.engine, self.fetcher, self.store, self.outputs.pages,
                                  self.outputs.harvest, self.outputs.warc, concurrency=config.concurrency,
                                  checkpoint_every=config.checkpoint_every)
        self._task = asyncio.create_task(self._loop())
        self._outbox_ready.set()  # what a predecessor left unacknowledged goes first
        self._sender = asyncio.create_task(self._send_loop())

    def _count_start(self, store: StateStore) -> None:
        self.restarts = int(store.get_meta("starts", 0))
        store.set_meta(starts=self.restarts + 1, pid=os.getpid())

    def _owns(self, url: str) -> bool:
        return shard_of(url, self.workers) == self.index

    def _replay_message(self, engine: CrawlEngine, message_id: str, blob: bytes) -> int:
        """A message applied again by the replay that brings this shard's engine up; counts the pooled rounds.
        A replay from a checkpoint that fails is followed by one of the whole log, which replays every message
        the first did: the rounds of the replay that succeeded are the ones counted once each."""
        if message_id.startswith(PARAMETERS_PREFIX):
            self.replayed_rounds.add(message_id)
        return apply_message(engine, message_id, blob)

    async def _ensure_started(self) -> None:
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)

    async def _loop(self) -> None:
        while not self._stopping:
            if self.driver.held <= 0:
                if await self._lease(self.lease_pages) == 0:
                    self.state = "starved"
                    await self._sleep(0.2)
                    continue
            self.state = "crawling"
            self._wake.clear()
            async for record in self.driver.run():
                self._count(record)
            if self._stopping:
                break
            if self.driver.held > 0:  # the policy had nothing left to select: give the lease back, wait for links
                self.state = "empty"
                await self._lease(0, give_back=True)
                if not self._wake.is_set():
                    await self._wake.wait()
        self.state = "stopped"

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._wake.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # -- leases ------------------------------------------------------------------------------------
    def refill(self) -> None:
        """Ask for the next lease in the background while the current one is being fetched."""
        if (self._refill is None or self._refill.done()) and not self._stopping \
                and time.monotonic() >= self._no_lease_until:
            self._refill = asyncio.ensure_future(self._lease(self.lease_pages))

    async def _lease(self, want: int, give_back: bool = False) -> int:
        async with self._lease_lock:  # one claim at a time, so that the coordinator sees them in order
            if give_back:
                self.driver.allowed = self.driver._order
            claim = self.committed_at_start + self.driver.allowed
            try:
                grant = await self.coordinator.lease.remote(self.index, claim, want, self.outlook())
            except Exception:  # noqa: BLE001 - coordinator unreachable (driver gone): fetch nothing more
                return 0
            self.driver.allowed += grant
            if grant:
                self._wake.set()
            elif want:
                self._no_lease_until = time.monotonic() + 0.2
            return grant

    # -- sending to the other shards ------------------------------------------------------------------
    def outbox_filled(self) -> None:
        """A step was committed with messages for other shards: wake the sender."""
        if self._outbox_ready is not None:
            self._outbox_ready.set()

    async def _send_loop(self) -> None:
        """Send the outbox, batched per destination, until the shard closes; wakes on new messages, and to retry."""
        while True:
            try:
                await asyncio.wait_for(self._outbox_ready.wait(), self.RETRY_S)
                await asyncio.sleep(self.GATHER_S)
            except asyncio.TimeoutError:
                pass
            self._outbox_ready.clear()
            now = time.monotonic()
            batches: dict[int, list[tuple[str, bytes]]] = {}
            for message_id, dest, blob in self.store.outbox(self.SEND_WINDOW):
                if dest in self._sending or self._retry_at.get(dest, 0.0) > now:
                    continue
                batch = batches.setdefault(dest, [])
                if len(batch) < self.SEND_BATCH:
                    batch.append((message_id, blob))
            for dest, batch in batches.items():
                self._sending.add(dest)
                asyncio.ensure_future(self._send(dest, batch))

    def _peer(self, dest: int):
        if dest not in self._peers:
            self._peers[dest] = require_ray().get_actor(f"{self.peer_prefix}{dest}")
        return self._peers[dest]

    async def _send(self, dest: int, batch: list[tuple[str, bytes]]) -> None:
        """One receive call to ``dest``; the ids it stored leave the outbox (a failure leaves them all there)."""
        try:
            stored = await self._peer(dest).receive.remote(batch)
            self.store.acknowledge(stored)
            self.sent += len(stored)
            self.send_calls += 1
            self._retry_at.pop(dest, None)
            if self.store.outbox_count():
                self._outbox_ready.set()  # what was written for it during this call, or past this batch
        except Exception:  # noqa: BLE001 - dead, restarting, not yet named, or this shard closing: later
            self._peers.pop(dest, None)  # looked up by name again at the next try
            self._retry_at[dest] = time.monotonic() + self.RETRY_S
        finally:
            self._sending.discard(dest)

    # -- the driver's and the other shards' calls ---------------------------------------------------------
    async def poll(self) -> dict:
        """This shard's status."""
        await self._ensure_started()
        if self._task.done() and not self._task.cancelled() and self._task.exception() is not None:
            raise self._task.exception()  # the crawl loop failed: the driver says why
        return self.status()

    def status(self) -> dict:
        now = time.monotonic()
        window = [t for t in self.recent if now - t <= 10.0]
        rate = len(window) / max(now - window[0], 1e-6) if len(window) >= 2 else 0.0
        return {"shard": self.index, "state": self.state, "committed": self.store.step_count(),
                "in_flight": self.driver.in_flight, "held": max(self.driver.held, 0),
                "frontier": self.engine.frontier_size, "outbox": self.store.outbox_count(),
                "idle": self.state == "empty" and not self.driver.in_flight and not self._wake.is_set(),
                "rate": rate, "relevant": self.relevant, "relevant_domains": len(self.relevant_domains),
                "errors": self.errors, "starts": self.restarts + 1, "replayed_rounds": len(self.replayed_rounds),
                "pid": os.getpid(), "sent": self.sent, "send_calls": self.send_calls, "received": self.received,
                "outlook": self.outlook()}

    async def receive(self, messages: list[tuple[str, bytes]]) -> list[str]:
        """Store and adopt another shard's links; returns the ids now stored (new or already there), which the
        sender may then forget."""
        await self._ensure_started()
        stored = []
        adopted = 0
        for message_id, blob in messages:
            if not self.store.has_message(message_id):
                adopted += apply_message(self.engine, message_id, blob)  # the engine call, then its op in the log
                self.store.commit_adopt(message_id, blob)
                self.received += 1
            stored.append(message_id)
        if adopted:
            self._wake.set()
        return stored

    async def parameters(self) -> tuple[int, dict | None, str | None]:
        """(pages fetched, the policy's learned parameters or None when it has none or has fetched nothing, the id
        of the last pooled round this shard stored)."""
        await self._ensure_started()
        committed = self.store.step_count()
        policy = self.engine.policy
        parameters = policy.parameters() if isinstance(policy, ShardAware) and committed else None
        return committed, parameters, self.store.get_meta("pooled", None)

    async def load_parameters(self, rounds: list[tuple[str, object]]) -> None:
        """Rounds of combined parameters from the driver (id, the object store's reference), oldest first, each
        loaded unless stored already and logged as a message, so that a replay loads it again."""
        await self._ensure_started()
        for message_id, ref in rounds:
            if self.store.has_message(message_id):
                continue
            parameters = await ref
            policy = self.engine.policy
            if isinstance(policy, ShardAware):
                policy.load_parameters(parameters)
            self.store.commit_adopt(message_id, pickle.dumps(parameters, protocol=pickle.HIGHEST_PROTOCOL))
            self.store.set_meta(pooled=message_id)

    async def stop(self) -> dict:
        """Finish the fetches in flight and try to empty the outbox (the other shards are stopping, not closing);
        returns the status."""
        await self._ensure_started()
        self._stopping = True
        self.driver.stop()
        self._wake.set()
        await self._task
        deadline = time.monotonic() + self.FLUSH_S
        while self.store.outbox_count() and time.monotonic() < deadline:
            self._outbox_ready.set()
            await asyncio.sleep(0.05)
        return self.status()

    async def close(self) -> dict:
        """Close everything (after every shard's ``stop``); returns the final status."""
        await self._ensure_started()
        if self._sender is not None:
            self._sender.cancel()
        status = self.status()
        self.outputs.close()
        await self.fetcher.aclose()
        self.store.close()
        self.folder.__exit__(None, None, None)
        return status

    def outlook(self) -> float | None:
        """How promising this shard's frontier looks: the mean score its policy gave its last selections (what
        the policy expects of the URLs it takes now; scores of one strategy compare across shards), or, for a
        policy that gives none, the mean relevance of its last pages; None before its first page."""
        return self.scores.mean if self.scores.mean is not None else self.relevances.mean

    def _count(self, record) -> None:
        self.recent.append(time.monotonic())
        if record.score is not None:
            self.scores.add(record.score)
        self.relevances.add(record.relevance)
        self.errors += int(record.status == 0 or record.status >= 400)
        if record.reward > 0:
            self.relevant += 1
            self.relevant_domains.add(record.host)

