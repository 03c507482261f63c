"""The driver of a distributed crawl: ``DistributedCrawler`` starts the coordinator and the shards, carries the
shards' messages, pools what they learn, and merges their files into the run folder's."""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.config import CrawlConfig
from focuscrawl.crawl.base import BaseCrawler, ProgressCallback, RunStats
from focuscrawl.crawl.distributed.cluster import check_reachable, require_ray, start_ray
from focuscrawl.crawl.distributed.coordinator import Coordinator
from focuscrawl.crawl.distributed.messages import PARAMETERS_PREFIX
from focuscrawl.crawl.distributed.shard import Shard
from focuscrawl.crawl.inputs import CrawlInputs
from focuscrawl.crawl.run_folder import RunFolder
from focuscrawl.policy import ShardAware
from focuscrawl.storage import HARVEST_FILE, PAGES_FILE, STATE_FILE, StateStore
from focuscrawl.storage.harvest import COLUMNS
from focuscrawl.storage.layout import DISTRIBUTED_FILE, SHARDS_DIR


@dataclass
class DistributedStats(RunStats):
    """RunStats of the whole crawl, and each shard's status as last polled."""

    rate: float = 0.0
    shards: list[dict] = field(default_factory=list)

    @property
    def fetch_rate(self) -> float:
        return self.rate


class DistributedCrawler(BaseCrawler):
    """A crawl over N shards (Ray actors) in one run folder; the same settings as ``Crawler`` plus ``workers``
    (and ``ray_address``). Re-running it on the folder resumes it, with the same N only."""

    POLL_S = 0.1
    GIVE_UP_S = 60.0

    def __init__(self, config: CrawlConfig | None = None, /, **settings):
        super().__init__(config, **settings)
        if self.config.workers is None:
            self.config = CrawlConfig.model_validate({**self.config.model_dump(), "workers": 1})
        require_ray()
        self.workers = self.config.workers
        self.stats = DistributedStats()
        self.shards: list[Any] = []
        self.coordinator = None
        self.restarted_shards = 0
        self.averaging_rounds = 0
        self._combined_at = 0
        self._policy_class: type | None = None  # the strategy's, from its plan: how the shards' parameters combine
        self._combine_every = 0

    def check(self) -> CrawlInputs:
        inputs = super().check()
        if self.config.ray_address:  # before anything is written to the run folder
            check_reachable(self.config.ray_address)
        return inputs

    # -- the run ---------------------------------------------------------------------------------------
    def _crawl(self, on_progress: ProgressCallback | None) -> None:
        """Run to the end: the budget spent, or every frontier and outbox empty. A graceful stop lets the shards
        finish their fetches; either way the shards' files are merged into the run folder's."""
        config = self.config
        inputs = self.check()
        # how the shards' learned parameters combine, and how often (the settings', else the strategy's choice)
        self._policy_class = inputs.strategy.policy_class
        shares = issubclass(self._policy_class, ShardAware)  # a policy without the mixin shares nothing
        self._combine_every = 0 if not shares else (config.average_every if config.average_every is not None
                                                    else self._policy_class.combine_every)
        topic, seeds = inputs.topic, inputs.seeds
        started = time.monotonic()
        with RunFolder(self.out) as folder:
            (self.out / DISTRIBUTED_FILE).write_text(json.dumps({"workers": self.workers}) + "\n")
            folder.write_config(config)
            # Trained once, here, and shipped to every shard (a resumed crawl reads it back from model.pkl).
            classifier = folder.classifier(inputs.strategy.reward_model(topic), topic, config.seed,
                                           config.page_encoder)
            committed = {k: self._committed(k) for k in range(self.workers)}
            resumed = sum(committed.values())
            self.stats = DistributedStats(steps=resumed, resumed_steps=resumed)
            self._combined_at = resumed
            owns_ray = start_ray(config.ray_address, self.workers)
            ray = require_ray()
            try:
                self._start_actors(ray, config, topic, seeds, classifier, inputs.hosts, committed)
                self._run(ray, on_progress)
                finals = self._stop_shards(ray)
            finally:
                for actor in [*self.shards, self.coordinator]:
                    if actor is not None:
                        try:
                            ray.kill(actor, no_restart=True)
                        except Exception:  # noqa: BLE001
                            pass
                if owns_ray:
                    ray.shutdown()
            self._merge(folder, resumed, time.monotonic() - started, finals)

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

    def _run(self, ray, on_progress: ProgressCallback | None) -> None:
        """Poll the shards, carry their messages, until a stop, the budget or every frontier and outbox is spent.

        A shard that does not answer within a second (Ray restarting it, or a long replay) is left out of
        the round: messages to it wait in their senders' outboxes, and the crawl cannot end without it."""
        budget = self.config.budget
        statuses: list[dict | None] = [None] * self.workers
        pending: dict[int, Any] = {}
        failing: dict[int, float] = {}  # shard -> since when its polls fail
        while True:
            if self._stop_requested:
                return
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
            if on_progress is not None:
                on_progress(self.stats)
            if len(answered) == self.workers:
                if self.stats.steps >= budget:
                    return
                if not routed and all(s["idle"] and not s["outbox"] for s in statuses):
                    return
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
    def _merge(self, folder: RunFolder, resumed: int, elapsed: float, finals: list[dict]) -> None:
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
        self.summary = self._summary(steps=steps, resumed_steps=resumed, relevant=relevant,
                                     relevant_domains=len(domains), errors=errors, frontier_size=frontier,
                                     elapsed_s=elapsed)
        shards = {st["shard"]: st for st in finals}
        folder.write_summary(self.summary, f"{strategy} on {self.workers} shards: {steps} pages"
                             if self.config.plot else None,
                             workers=self.workers, restarted_shards=self.restarted_shards,
                             averaging_rounds=self.averaging_rounds,
                             shards=[{"shard": k, "steps": sum(1 for _, j, _ in records if j == k),
                                      "frontier": shards.get(k, {}).get("frontier"),
                                      "starts": shards.get(k, {}).get("starts")} for k in range(self.workers)])
