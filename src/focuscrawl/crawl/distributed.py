"""Distributed crawls on Ray: host-partitioned shards, a budget coordinator, links sent through outboxes.

    crawler = DistributedCrawler(topic="topics/birds", seeds_file="seeds.txt", out="runs/birds",
                                 budget=100_000, workers=8)                  # or ray_address="head:6379"
    summary = crawler.crawl()

Each shard is a Ray actor running an ordinary crawl (the builder's engine and policy, the async driver, a
state store, resume) in ``RUN/shards/K/`` over the hosts it owns: those with ``shard_of(host, N) == K``, a
stable hash. So the closure, frontier, politeness and per-domain cap of a host live in one shard and are
never shared. A link to a host owned elsewhere is committed to the finding shard's ``outbox`` with the step
that found it, carried (batched) by the driver to its owner, which stores it in its ``inbox`` (logged as an
operation, so its replay re-adopts it) before the sender forgets it: neither side's death loses it, and a
re-sent message is recognised by its id. The coordinator leases pages of the global budget
(``lease_pages`` at a time) against each shard's claim (pages committed + in flight + leased), so the
budget is exceeded by nothing: a shard only fetches pages it holds a lease for.

docs/distributed.md has the picture, the guarantees and the limits.
"""

from __future__ import annotations

import asyncio
import csv
import json
import logging
import math
import os
import pickle
import socket
import time
import zlib
from collections import deque
from dataclasses import asdict, dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any

from focuscrawl.builder import Classifiers, build_crawl, check_strategies, make_strategy_policy, reward_model_for
from focuscrawl.config import CrawlConfig, read_effective_config
from focuscrawl.crawl.api import RunStats, crawl_config, make_fetcher
from focuscrawl.crawl.driver import CrawlDriver
from focuscrawl.crawl.resume import ResumeError, resume
from focuscrawl.crawl.run_folder import PLOT_FILE, SHARDS_DIR, SUMMARY_FILE, CrawlSummary, RunFolder
from focuscrawl.engine import CrawlEngine
from focuscrawl.policy import Policy, ShardAware
from focuscrawl.storage import HARVEST_FILE, PAGES_FILE, STATE_FILE, StateStore
from focuscrawl.storage.harvest import COLUMNS, plot_harvest_csv
from focuscrawl.topic.extras import MissingExtra
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import ForeignLinks, Link, Page, TopicInputs
from focuscrawl.urls import domain_of
from focuscrawl.web.domains import registered_domain

DISTRIBUTED_FILE = "distributed.json"
INSTALL_HINT = "pip install 'focuscrawl[distributed]'"


def require_ray():
    """``import ray``, or the one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise MissingExtra(f"--workers and --ray-address need the 'distributed' extra ({INSTALL_HINT}): ray is not "
                           "installed") from None
    return ray


def shard_of(url: str, workers: int) -> int:
    """The shard owning ``url``: blake2b of its registered domain (the same in every process and every run), so
    that every host of a domain, and with it per-host and per-domain politeness and the per-host cap, stays in
    one shard."""
    digest = blake2b(registered_domain(domain_of(url)).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % workers


# -- messages between shards ----------------------------------------------------------------------
def encode_links(message: ForeignLinks) -> bytes:
    page = message.page
    payload = {"parent": message.parent, "relevance": message.relevance, "reward": message.reward,
               "depth": message.depth, "links": message.links, "fetched": message.fetched,
               "page": {"url": page.url, "final_url": page.final_url, "status": page.status,
                        "content_type": page.content_type, "title": page.title, "text": page.text,
                        "outlinks": [(link.url, link.anchor) for link in page.outlinks]}}
    return zlib.compress(json.dumps(payload).encode("utf-8"), 3)


PARAMETERS_PREFIX = "avg:"


def apply_message(engine: CrawlEngine, message_id: str, blob: bytes) -> int:
    """A stored message, as when it arrived (and on replay): links to adopt, or averaged parameters to load."""
    if message_id.startswith(PARAMETERS_PREFIX):
        policy = engine.policy
        if isinstance(policy, ShardAware):
            policy.load_parameters(pickle.loads(blob))
        return 0
    return engine.adopt(decode_links(blob))


def decode_links(blob: bytes) -> ForeignLinks:
    payload = json.loads(zlib.decompress(blob))
    p = payload["page"]
    page = Page(url=p["url"], final_url=p["final_url"], status=p["status"], content_type=p["content_type"],
                title=p["title"], text=p["text"], outlinks=[Link(u, a) for u, a in p["outlinks"]])
    return ForeignLinks(payload["parent"], page, payload["relevance"], payload["reward"], payload["depth"],
                        [(u, a) for u, a in payload["links"]], payload.get("fetched", []))  # none in older stores


class Outlook:
    """A running mean of the last values, about ``pages`` of them (exponentially weighted once it has them)."""

    def __init__(self, pages: int = 20):
        self.pages, self.count, self.mean = pages, 0, None

    def add(self, value: float) -> None:
        self.count += 1
        self.mean = value if self.mean is None else self.mean + (value - self.mean) / min(self.count, self.pages)


# -- the coordinator: leases of the global budget -------------------------------------------------
class Coordinator:
    """Hands out pages of the global budget. A shard's claim is what it has committed, has in flight and holds
    leased; the claims never add up to more than the budget, so neither do the pages fetched.

    Its state is the shards' claims, rebuilt by a resumed driver from the shards' stores (their committed
    pages): nothing of it needs to survive the driver. Those counts may be stale: a killed driver's shards
    can still commit the pages they held leased while they die. So in a resumed crawl each shard that has
    not asked yet (and so not reported its own count, read once its predecessor has let go of its store)
    is assumed to hold ``reserve`` more pages than the driver counted."""

    # Until every shard has asked once (or this long has passed), none may claim more than its share of
    # the budget: the first shard up must not take a small budget before the others have started.
    STARTUP_S = 30.0

    # A shard that has not asked for this long (its frontier is spent, or it is restarting) does not compete
    # for the budget's priority.
    ASKING_S = 2.0

    def __init__(self, budget: int, committed: dict[int, int], inputs: tuple | None = None, workers: int = 1,
                 priority: float = 0.0, reserve: int = 0):
        self.budget = budget
        self.claims = dict(committed)
        self.reserve = reserve if any(committed.values()) else 0  # a fresh crawl has no predecessors
        self._inputs = inputs
        self.workers = workers
        self.priority = priority
        self.outlooks: dict[int, tuple[float | None, float]] = {}  # shard -> (outlook, when it last asked)
        self.denied = 0
        self._asked: set[int] = set()
        self._created = time.monotonic()

    def inputs(self) -> tuple:
        """What every shard crawls with, made once by the driver: (topic, seeds, trained classifier, hosts map).

        Kept here rather than in the shards' constructor arguments, so that an actor Ray restarts fetches them
        again from a live actor."""
        return self._inputs

    def lease(self, shard: int, claim: int, want: int, outlook: float | None = None) -> int:
        """Shard ``shard`` now claims ``claim`` pages and asks for ``want`` more: how many it gets.

        ``outlook`` is how promising the shard's frontier looks (``Shard.outlook``; None before its first
        pages). With ``priority`` p > 0, a shard whose outlook lies in the lower p of the range from the worst
        to the best outlook among the shards asking gets nothing for now (the best is always served): the
        budget goes where the crawl expects relevant pages, as one process's frontier would send it, instead
        of in equal parts to shards with good and poor frontiers. A shard without an outlook yet is always
        served, so that every shard gets tried."""
        now = time.monotonic()
        self.claims[shard] = claim
        self._asked.add(shard)
        # a shard giving its lease back (want 0: its frontier is spent) stops competing at once
        self.outlooks[shard] = (outlook, now if want else -math.inf)
        unreported = self.reserve * sum(1 for k in self.claims if k not in self._asked)
        grant = max(0, min(want, self.budget - sum(self.claims.values()) - unreported))
        if self.priority and grant and outlook is not None:
            # Where the outlook lies between the worst and the best asking shard's: scores have no common
            # scale or sign (adaptive's predictions go below 0), so a ratio to the best would mean nothing.
            asking = [o for o, asked in self.outlooks.values() if o is not None and now - asked <= self.ASKING_S]
            worst, best = min(asking), max(asking)
            if outlook - worst < self.priority * (best - worst):
                self.denied += 1
                grant = 0
        if len(self._asked) < self.workers and time.monotonic() - self._created < self.STARTUP_S:
            grant = max(0, min(grant, -(-self.budget // self.workers) - claim))
        self.claims[shard] += grant
        return grant

    def claimed(self) -> int:
        return sum(self.claims.values())


# -- one shard --------------------------------------------------------------------------------------
class _ShardDriver(CrawlDriver):
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

    Started by its first ``poll`` (so an actor Ray restarts after a crash starts again by itself, resuming
    from its store). States: starting, crawling, starved (no lease left in the budget), empty (frontier
    spent: it waits for links from other shards), stopped.
    """

    def __init__(self, index: int, workers: int, config: dict, coordinator: str):
        self.index, self.workers = index, workers
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
        self.scores = Outlook()  # the policy's scores of this shard's last selections
        self.relevances = Outlook()  # the relevance of its last pages: the outlook of a policy without scores

    # -- life cycle ------------------------------------------------------------------------------
    async def _start(self) -> None:
        self._lease_lock, self._wake = asyncio.Lock(), asyncio.Event()
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
        self.store = self.folder.open_store({**config.identity(), "seeds": self.seeds, "shard": self.index,
                                             "workers": self.workers}, strategy=config.strategy,
                                            context_budget=config.budget)
        self.restarts = int(self.store.get_meta("starts", 0))
        self.store.set_meta(starts=self.restarts + 1)
        self.engine = self._engine()
        self.folder.write_config(config)
        self.outputs = self.folder.open_outputs(self.store, config.strategy, config.warc)
        self.committed_at_start = self.store.step_count()
        self.errors = self.store.error_count()
        self.relevant = self.outputs.harvest.relevant
        self.relevant_domains = set(self.outputs.harvest.domains)
        self.fetcher = make_fetcher(config, self.hosts)
        self.driver = _ShardDriver(self, self.engine, self.fetcher, self.store, self.outputs.pages,
                                   self.outputs.harvest, self.outputs.warc, concurrency=config.concurrency,
                                   checkpoint_every=config.checkpoint_every)
        self._task = asyncio.create_task(self._loop())

    def _engine(self) -> CrawlEngine:
        config = self.config
        reward_model = reward_model_for(config, config.strategy, self.topic)
        classifiers = Classifiers(self.topic, config.seed, trained={reward_model: self.classifier})
        context_budget = self.store.get_meta("context_budget", config.budget)

        def owns(url: str) -> bool:
            return shard_of(url, self.workers) == self.index

        def fresh() -> CrawlEngine:
            return build_crawl(config, config.strategy, self.topic, self.seeds, classifiers=classifiers,
                               context_budget=context_budget, owns=owns).engine

        return resume(fresh, self.store, use_checkpoint=config.checkpoint_every > 0, on_message=apply_message)

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

    # -- the driver's calls ---------------------------------------------------------------------------
    async def poll(self, max_messages: int = 200) -> tuple[dict, list[tuple[str, int, bytes]]]:
        """This shard's status, and messages of its outbox not yet acknowledged (oldest first)."""
        await self._ensure_started()
        if self._task.done() and not self._task.cancelled() and self._task.exception() is not None:
            raise self._task.exception()  # the crawl loop failed: the driver says why
        return self.status(), self.store.outbox(max_messages)

    def status(self) -> dict:
        now = time.monotonic()
        window = [t for t in self.recent if now - t <= 10.0]
        rate = len(window) / max(now - window[0], 1e-6) if len(window) >= 2 else 0.0
        return {"shard": self.index, "state": self.state, "committed": self.store.step_count(),
                "in_flight": self.driver.in_flight, "held": max(self.driver.held, 0),
                "frontier": self.engine.frontier_size, "outbox": self.store.outbox_count(),
                "idle": self.state == "empty" and not self.driver.in_flight and not self._wake.is_set(),
                "rate": rate, "relevant": self.relevant, "relevant_domains": len(self.relevant_domains),
                "errors": self.errors, "starts": self.restarts + 1, "pid": os.getpid(),
                "outlook": self.outlook()}

    async def receive(self, messages: list[tuple[str, bytes]]) -> list[str]:
        """Store and adopt other shards' links; returns the ids now stored (new or already there)."""
        await self._ensure_started()
        stored = []
        adopted = 0
        for message_id, blob in messages:
            if not self.store.has_message(message_id):
                adopted += apply_message(self.engine, message_id, blob)  # the engine call, then its op in the log
                self.store.commit_adopt(message_id, blob)
            stored.append(message_id)
        if adopted:
            self._wake.set()
        return stored

    async def parameters(self) -> tuple[int, dict] | None:
        """(pages fetched, the policy's learned parameters), or None when it has none or has fetched nothing."""
        await self._ensure_started()
        committed = self.store.step_count()
        policy = self.engine.policy
        parameters = policy.parameters() if isinstance(policy, ShardAware) else None
        return None if parameters is None or committed == 0 else (committed, parameters)

    async def load_parameters(self, message_id: str, parameters: dict) -> None:
        """Combined parameters from the driver: loaded and logged as a message, so a replay loads them again."""
        await self._ensure_started()
        if not self.store.has_message(message_id):
            policy = self.engine.policy
            if isinstance(policy, ShardAware):
                policy.load_parameters(parameters)
            self.store.commit_adopt(message_id, pickle.dumps(parameters, protocol=pickle.HIGHEST_PROTOCOL))

    async def acknowledge(self, message_ids: list[str]) -> None:
        await self._ensure_started()
        self.store.acknowledge(message_ids)

    async def stop(self) -> dict:
        """Finish the fetches in flight, close everything; returns the final status."""
        await self._ensure_started()
        self._stopping = True
        self.driver.stop()
        self._wake.set()
        await self._task
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


# -- the driver ----------------------------------------------------------------------------------------
@dataclass
class DistributedStats(RunStats):
    """RunStats of the whole crawl, and each shard's status as last polled."""

    rate: float = 0.0
    shards: list[dict] = field(default_factory=list)

    @property
    def fetch_rate(self) -> float:
        return self.rate


class ClusterUnreachable(ValueError):
    """``--ray-address`` names no Ray cluster that answers."""


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail in seconds, with the address, when nothing listens at ``--ray-address HOST:PORT``: ``ray.init``
    itself retries for minutes, printing its own warnings. Other forms (``auto``, ``ray://``) go to Ray as given."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or address.startswith("ray://"):
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ClusterUnreachable(f"no Ray cluster answers at {address} ({exc.strerror or exc}): start one with "
                                 "`ray start --head` and give the address it prints") from None


class DistributedCrawler:
    """A crawl over N shards (Ray actors) in one run folder; the same settings as ``Crawler`` plus ``workers``
    (and ``ray_address``). Re-running it on the folder resumes it, with the same N only."""

    POLL_S = 0.1
    GIVE_UP_S = 60.0

    def __init__(self, config: CrawlConfig | None = None, /, **settings):
        config = crawl_config(config, settings)
        if config.workers is None:
            config = CrawlConfig.model_validate({**config.model_dump(), "workers": 1})
        require_ray()
        self.config = config
        self.out = Path(config.out)
        self.workers = config.workers
        self.stats = DistributedStats()
        self.shards: list[Any] = []
        self.coordinator = None
        self.summary: CrawlSummary | None = None
        self._stop_requested = 0
        self.restarted_shards = 0
        self.averaging_rounds = 0
        self._combined_at = 0
        self._policy_class: type[Policy] | None = None  # crawl() builds the strategy's policy once to learn it
        self._combine_every = 0

    @classmethod
    def resume(cls, out: str | Path, **overrides) -> DistributedCrawler:
        stored = read_effective_config(Path(out))
        if stored is None:
            raise FileNotFoundError(f"{out} holds no crawl (no config.yml)")
        return cls(CrawlConfig.model_validate({**stored.model_dump(), **overrides, "out": out}))

    def stop(self, immediate: bool = False) -> None:
        self._stop_requested = max(self._stop_requested, 2 if immediate else 1)

    # -- setup -----------------------------------------------------------------------------------------
    def _check_folder(self) -> None:
        marker = self.out / DISTRIBUTED_FILE
        if marker.exists():
            recorded = json.loads(marker.read_text())["workers"]
            if recorded != self.workers:
                raise ResumeError(f"{self.out} was crawled with --workers {recorded}; resume it with --workers "
                                  f"{recorded} (hosts belong to shards by a hash of N: another N is not supported)")
        elif (self.out / STATE_FILE).exists():
            raise ResumeError(f"{self.out} holds a single-process crawl; resume it without --workers, or use "
                              "another run folder")

    def _init_ray(self):
        ray = require_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False,
                                       "include_dashboard": False, "configure_logging": True}
            if self.config.ray_address:
                # the cluster's workers import focuscrawl as installed on their node; a PYTHONPATH of the driver
                # (a source checkout on a shared filesystem) goes with the job
                path = os.environ.get("PYTHONPATH")
                runtime_env = {"env_vars": {"PYTHONPATH": path}} if path else None
                ray.init(address=self.config.ray_address, runtime_env=runtime_env, **options)
            else:
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                # "local": a private runtime even when `ray start` left a cluster running on this machine
                ray.init(address="local", num_cpus=max(self.workers + 1, os.cpu_count() or 1), **options)
            self._owns_ray = True
        return ray

    # -- the run ---------------------------------------------------------------------------------------
    def crawl(self, on_poll=None) -> CrawlSummary:
        """Run to the end (budget spent, or every frontier and outbox empty). ``on_poll(self)`` after each poll.

        Ctrl+C (SIGINT/SIGTERM) stops gracefully: the shards finish their fetches, the outputs are merged."""
        import signal

        def on_signal(signum, frame) -> None:
            self._stop_requested += 1
            if self._stop_requested >= 2:
                raise KeyboardInterrupt

        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except ValueError:
                pass
        try:
            return self._crawl(on_poll)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _crawl(self, on_poll) -> CrawlSummary:
        config = self.config
        if config.topic is None or not Path(config.topic).is_dir():
            raise FileNotFoundError(f"topic directory {config.topic} not found" if config.topic else
                                    "a crawl needs a topic directory (see `focuscrawl topic init`)")
        check_strategies(config, [config.strategy])
        # how the shards' learned parameters combine, and how often (the settings', else the strategy's choice)
        # A strategy's factory may be a function (presets, `module:attribute` names): the class is the policy's.
        self._policy_class = type(make_strategy_policy(config, config.strategy))
        shares = issubclass(self._policy_class, ShardAware)  # a policy without the mixin shares nothing
        self._combine_every = 0 if not shares else (config.average_every if config.average_every is not None
                                                    else self._policy_class.combine_every)
        self._owns_ray = False
        ray = require_ray()
        if config.ray_address:  # before anything is written to the run folder
            check_reachable(config.ray_address)
        topic = load_topic_dir(config.topic)
        seeds = config.all_seeds() or list(topic.seeds)
        if not seeds:
            raise ValueError("no seeds: give --seeds FILE or put seeds.txt in the topic directory")
        self.out.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with RunFolder(self.out) as folder:
            self._check_folder()
            (self.out / DISTRIBUTED_FILE).write_text(json.dumps({"workers": self.workers}) + "\n")
            folder.write_config(config)
            # Trained once, here, and shipped to every shard (a resumed crawl reads it back from model.pkl).
            classifier = folder.classifier(reward_model_for(config, config.strategy, topic), topic, config.seed,
                                           config.page_encoder)
            hosts = json.loads(Path(config.hosts_map).read_text()) if config.hosts_map else None
            committed = {k: self._committed(k) for k in range(self.workers)}
            resumed = sum(committed.values())
            self.stats = DistributedStats(steps=resumed, resumed_steps=resumed)
            self._combined_at = resumed
            ray = self._init_ray()
            try:
                self._start_actors(ray, config, topic, seeds, classifier, hosts, committed)
                stopped = self._run(ray, on_poll)
                finals = self._stop_shards(ray)
            finally:
                for actor in [*self.shards, self.coordinator]:
                    if actor is not None:
                        try:
                            ray.kill(actor, no_restart=True)
                        except Exception:  # noqa: BLE001
                            pass
                if self._owns_ray:
                    ray.shutdown()
            self.summary = self._merge(stopped, resumed, time.monotonic() - started, finals)
        return self.summary

    def _committed(self, k: int) -> int:
        path = self.out / SHARDS_DIR / str(k) / STATE_FILE
        if not path.exists():
            return 0
        store = StateStore(path)
        try:
            return store.step_count()
        finally:
            store.close()

    def _start_actors(self, ray, config, topic, seeds, classifier, hosts, committed) -> None:
        name = f"focuscrawl-coordinator-{os.getpid()}-{time.time_ns()}"
        self.coordinator = ray.remote(num_cpus=0)(Coordinator).options(name=name).remote(
            config.budget, committed, (topic, seeds, classifier, hosts), self.workers, config.lease_priority,
            # what a shard can hold leased (a lease, refilled at half) plus its fetches in flight
            reserve=config.lease_pages + config.lease_pages // 2 + config.concurrency)
        shard_actor = ray.remote(Shard)
        self.shards = []
        for k in range(self.workers):
            shard_config = {**config.model_dump(mode="json"), "out": str(self.out / SHARDS_DIR / str(k)),
                            "progress": "none", "plot": False}
            self.shards.append(shard_actor.options(num_cpus=1, max_restarts=-1, max_task_retries=0).remote(
                k, self.workers, shard_config, name))

    def _run(self, ray, on_poll) -> str:
        """Poll the shards, carry their messages, until the budget or every frontier and outbox is spent.

        A shard that does not answer within a second (Ray restarting it, or a long replay) is left out of
        the round: messages to it wait in their senders' outboxes, and the crawl cannot end without it."""
        budget = self.config.budget
        statuses: list[dict | None] = [None] * self.workers
        pending: dict[int, Any] = {}
        failing: dict[int, float] = {}  # shard -> since when its polls fail
        while True:
            if self._stop_requested:
                return "interrupted"
            for k, shard in enumerate(self.shards):
                if k not in pending:
                    pending[k] = shard.poll.remote()
            ready, _ = ray.wait(list(pending.values()), num_returns=len(pending), timeout=1.0)
            ready = set(ready)
            outgoing: dict[int, list[tuple[str, int, bytes]]] = {}
            answered: set[int] = set()
            for k, ref in list(pending.items()):
                if ref not in ready:
                    continue
                del pending[k]
                try:
                    status, messages = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                    # Ray restarts it; its next poll starts it again from its store. One that keeps failing
                    # cannot run at all (focuscrawl missing on a node, say): say why instead of waiting forever.
                    failing.setdefault(k, time.monotonic())
                    if time.monotonic() - failing[k] > self.GIVE_UP_S:
                        raise RuntimeError(f"shard {k} keeps failing: {str(exc).strip().splitlines()[0]}") from None
                    continue
                except ray.exceptions.RayTaskError as exc:  # the shard could not start: say why, in one line
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, Exception):
                        raise cause from None
                    raise
                if statuses[k] is not None and status["starts"] != statuses[k]["starts"]:
                    self.restarted_shards += 1
                statuses[k] = status
                failing.pop(k, None)
                answered.add(k)
                if messages:
                    outgoing[k] = messages
            routed = self._route(ray, outgoing, answered)
            self._update_stats([s for s in statuses if s is not None])
            every = self._combine_every
            if every and len(answered) == self.workers and self.stats.steps - self._combined_at >= every:
                self._combine(ray)
            if on_poll is not None:
                on_poll(self)
            if len(answered) == self.workers:
                if self.stats.steps >= budget:
                    return "budget"
                if not routed and all(s["idle"] and not s["outbox"] for s in statuses):
                    return "frontier"
            time.sleep(self.POLL_S)

    def _combine(self, ray) -> None:
        """One round of learning across shards: the shards' parameters, combined by their policy's
        ``combine_parameters`` (an average, or for ``adaptive`` a pooling), loaded by every shard."""
        self._combined_at = self.stats.steps
        try:
            shared = [p for p in ray.get([shard.parameters.remote() for shard in self.shards], timeout=120) if p]
        except Exception:  # noqa: BLE001 - a shard died meanwhile: next round
            return
        if len(shared) < 2:
            return
        combined = self._policy_class.combine_parameters(shared)
        self.averaging_rounds += 1
        message_id = f"{PARAMETERS_PREFIX}{time.time_ns()}"
        refs = [shard.load_parameters.remote(message_id, combined) for shard in self.shards]
        for ref in refs:
            try:
                ray.get(ref, timeout=120)
            except Exception:  # noqa: BLE001 - a restarted shard continues with its own until the next round
                pass

    def _route(self, ray, outgoing: dict[int, list[tuple[str, int, bytes]]], answered: set[int]) -> int:
        """Each message to its destination (if it answered this round); acknowledged to its sender once stored
        there. Returns how many were delivered."""
        by_dest: dict[int, list[tuple[int, str, bytes]]] = {}
        for source, messages in outgoing.items():
            for message_id, dest, blob in messages:
                if dest in answered:
                    by_dest.setdefault(dest, []).append((source, message_id, blob))
        acks: dict[int, list[str]] = {}
        refs = {dest: self.shards[dest].receive.remote([(i, b) for _, i, b in batch])
                for dest, batch in by_dest.items()}
        routed = 0
        for dest, ref in refs.items():
            try:
                stored = set(ray.get(ref, timeout=120))
            except Exception:  # noqa: BLE001 - the destination died: the senders keep them, sent again next poll
                continue
            for source, message_id, _ in by_dest[dest]:
                if message_id in stored:
                    acks.setdefault(source, []).append(message_id)
                    routed += 1
        ack_refs = [self.shards[source].acknowledge.remote(ids) for source, ids in acks.items()]
        for ref in ack_refs:
            try:
                ray.get(ref, timeout=120)
            except Exception:  # noqa: BLE001 - the sender died: re-sent, recognised, acknowledged again
                pass
        return routed

    def _update_stats(self, statuses: list[dict]) -> None:
        s = self.stats
        s.shards = sorted(statuses, key=lambda st: st["shard"])
        s.steps = sum(st["committed"] for st in statuses)
        s.relevant = sum(st["relevant"] for st in statuses)
        s.relevant_domains = sum(st["relevant_domains"] for st in statuses)  # hosts are partitioned: no overlap
        s.errors = sum(st["errors"] for st in statuses)
        s.frontier_size = sum(st["frontier"] for st in statuses)
        s.in_flight = sum(st["in_flight"] for st in statuses)
        s.rate = sum(st["rate"] for st in statuses)

    def _stop_shards(self, ray) -> list[dict]:
        finals = []
        refs = [shard.stop.remote() for shard in self.shards]
        for ref in refs:
            try:
                finals.append(ray.get(ref, timeout=300))
            except Exception:  # noqa: BLE001 - its store holds every committed page; the merge reads that
                pass
        return finals

    # -- one view of the run ---------------------------------------------------------------------------
    def _merge(self, stopped: str, resumed: int, elapsed: float, finals: list[dict]) -> CrawlSummary:
        """The shards' pages in fetch order as the run folder's pages.jsonl, harvest.csv, summary.json, plot."""
        records = []
        frontier = 0
        for k in range(self.workers):
            path = self.out / SHARDS_DIR / str(k) / STATE_FILE
            if not path.exists():
                continue
            store = StateStore(path)
            try:
                records += [(r.fetched_at, k, r) for r in store.steps()]
                frontier += store.last_frontier_size()
            finally:
                store.close()
        records.sort(key=lambda item: (item[0], item[1], item[2].step))
        strategy = self.config.strategy
        relevant, domains, errors = 0, set(), 0
        pages_tmp = self.out / (PAGES_FILE + ".tmp")
        harvest_tmp = self.out / (HARVEST_FILE + ".tmp")
        with open(pages_tmp, "w") as pages, open(harvest_tmp, "w", newline="") as harvest:
            writer = csv.writer(harvest)
            writer.writerow(COLUMNS)
            start = records[0][0] if records else 0.0
            shard_frontier = [0] * self.workers
            for step, (fetched_at, k, record) in enumerate(records):
                line = record.to_json(strategy)
                line.update(step=step, shard=k, shard_step=record.step)
                pages.write(json.dumps(line, ensure_ascii=False) + "\n")
                if record.reward > 0:
                    relevant += 1
                    domains.add(record.host)
                errors += int(record.status == 0 or record.status >= 400)
                shard_frontier[k] = record.frontier_size
                writer.writerow([step, f"{fetched_at - start:.3f}", step + 1, relevant,
                                 f"{relevant / (step + 1):.4f}", len(domains), sum(shard_frontier)])
        pages_tmp.replace(self.out / PAGES_FILE)
        harvest_tmp.replace(self.out / HARVEST_FILE)
        steps = len(records)
        if self._stop_requested:
            stopped = "interrupted"
        summary = CrawlSummary(out=str(self.out), steps=steps, new_steps=steps - resumed, resumed_steps=resumed,
                               relevant=relevant, harvest_rate=relevant / steps if steps else 0.0,
                               relevant_domains=len(domains), errors=errors, frontier_size=frontier,
                               elapsed_s=elapsed, stopped=stopped)
        shards = {st["shard"]: st for st in finals}
        report = {**asdict(summary), "workers": self.workers, "restarted_shards": self.restarted_shards,
                  "averaging_rounds": self.averaging_rounds,
                  "shards": [{"shard": k, "steps": sum(1 for _, j, _ in records if j == k),
                              "frontier": shards.get(k, {}).get("frontier"),
                              "starts": shards.get(k, {}).get("starts")} for k in range(self.workers)]}
        tmp = self.out / (SUMMARY_FILE + ".tmp")
        tmp.write_text(json.dumps(report, indent=2) + "\n")
        tmp.replace(self.out / SUMMARY_FILE)
        if self.config.plot and steps:
            try:
                plot_harvest_csv(self.out / HARVEST_FILE, self.out / PLOT_FILE,
                                 title=f"{strategy} on {self.workers} shards: {steps} pages")
            except Exception:  # noqa: BLE001 - a missing plot must not fail a finished crawl
                pass
        return summary
