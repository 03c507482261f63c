"""The driver of a distributed crawl: ``DistributedCrawler`` starts the coordinator and the shards (which send
their links to each other), polls their status, pools what they learn, and merges their files into the run
folder's."""

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


def rounds_after(rounds: list[tuple[str, Any]], last: str | None) -> list[tuple[str, Any]]:
    """The pooled rounds (id, payload) a shard whose last stored round is ``last`` must load, oldest first: those
    after it, or all of ``rounds`` when it is not among them (a shard skips by id the ones it has)."""
    ids = [message_id for message_id, _ in rounds]
    return rounds[ids.index(last) + 1:] if last in ids else list(rounds)


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

    POLL_S = 0.5  # the shards send their messages themselves: the driver only watches, pools and ends the crawl
    GIVE_UP_S = 60.0
    KEEP_ROUNDS = 50  # pooled rounds kept to re-send to a shard that missed some

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
        self._rounds: list[tuple[str, Any]] = []  # the latest pooled rounds: (message id, object store reference)
        self.driver_cpu_s = 0.0  # this process's CPU time from the shards' start to their stop

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
            classifier = inputs.judge or folder.classifier(inputs.strategy.reward_model(topic), topic, config.seed,
                                                           config.page_encoder)
            committed = {k: self._committed(k) for k in range(self.workers)}
            resumed = sum(committed.values())
            self.stats = DistributedStats(steps=resumed, resumed_steps=resumed)
            self._combined_at = resumed
            owns_ray = start_ray(config.ray_address, self.workers)
            ray = require_ray()
            try:
                cpu = time.process_time()
                self._start_actors(ray, config, topic, seeds, classifier, inputs.hosts, committed)
                self._run(ray, on_progress)
                finals = self._stop_shards(ray)
                self.driver_cpu_s = time.process_time() - cpu
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
        run = f"focuscrawl-{os.getpid()}-{time.time_ns()}"  # this driver's actors: a resumed driver starts new ones
        name, peers = f"{run}-coordinator", f"{run}-shard-"
        self.coordinator = ray.remote(num_cpus=0)(Coordinator).options(name=name).remote(
            config.budget, committed, (topic, seeds, classifier, hosts), self.workers, config.lease_priority,
            # what a shard can hold leased (a lease, refilled at half) plus its fetches in flight
            reserve=config.lease_pages + config.lease_pages // 2 + config.concurrency)
        shard_actor = ray.remote(Shard)
        self.shards = []
        for k in range(self.workers):
            shard_config = {**config.model_dump(mode="json"), "out": str(self.out / SHARDS_DIR / str(k)),
                            "progress": "none", "plot": False}
            self.shards.append(shard_actor.options(name=f"{peers}{k}", num_cpus=1, max_restarts=-1,
                                                   max_task_retries=0).remote(k, self.workers, shard_config, name,
                                                                              peers))

    def _run(self, ray, on_progress: ProgressCallback | None) -> None:
        """Poll the shards' status until a stop, the budget, or every frontier and outbox is spent.

        A shard that does not answer within a second (Ray restarting it, or a long replay) is left out of
        the round; the crawl cannot end without it."""
        statuses: list[dict | None] = [None] * self.workers
        pending: dict[int, Any] = {}  # shard -> its poll under way
        failing: dict[int, float] = {}  # shard -> since when its polls fail
        quiet: list[tuple] | None = None  # every shard's counts at the last poll that found all of them idle
        while not self._stop_requested:
            for k, shard in enumerate(self.shards):
                if k not in pending:
                    pending[k] = shard.poll.remote()
            answered = self._answers(ray, pending, statuses, failing)
            self._update_stats([s for s in statuses if s is not None])
            every = self._combine_every
            if every and len(answered) == self.workers and self.stats.steps - self._combined_at >= every:
                self._combine(ray)
            if on_progress is not None:
                on_progress(self.stats)
            if len(answered) == self.workers:
                if self.stats.steps >= self.config.budget:
                    return
                # Done when every shard is idle with an empty outbox at two polls in a row and nothing moved
                # between them: a shard polled idle could otherwise receive links from one polled after it.
                counts = [(s["starts"], s["committed"], s["received"]) for s in statuses]
                if all(s["idle"] and not s["outbox"] for s in statuses):
                    if quiet == counts:
                        return
                    quiet = counts
                else:
                    quiet = None
            time.sleep(self.POLL_S)

    def _answers(self, ray, pending: dict[int, Any], statuses: list[dict | None],
                 failing: dict[int, float]) -> set[int]:
        """The shards whose polls in ``pending`` answered within a second, their statuses put in ``statuses``."""
        ready, _ = ray.wait(list(pending.values()), num_returns=len(pending), timeout=1.0)
        ready = set(ready)
        answered: set[int] = set()
        for k, ref in list(pending.items()):
            if ref not in ready:
                continue
            del pending[k]
            try:
                status = ray.get(ref)
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
        return answered

    def _combine(self, ray) -> None:
        """One round of learning across shards: the shards' parameters, combined by their policy's
        ``combine_parameters`` (an average, or for ``adaptive`` a pooling), put once in Ray's object store and
        loaded by every shard, with any earlier round it missed (it died while they were loaded)."""
        self._combined_at = self.stats.steps
        try:
            replies = ray.get([shard.parameters.remote() for shard in self.shards], timeout=120)
        except Exception:  # noqa: BLE001 - a shard died meanwhile: next round
            return
        shared = [(committed, parameters) for committed, parameters, _ in replies if parameters]
        if len(shared) < 2:
            return
        combined = self._policy_class.combine_parameters(shared)
        self.averaging_rounds += 1
        self._rounds = [*self._rounds, (f"{PARAMETERS_PREFIX}{time.time_ns()}", ray.put(combined))]
        self._rounds = self._rounds[-self.KEEP_ROUNDS:]
        refs = [shard.load_parameters.remote(rounds_after(self._rounds, pooled))
                for shard, (_, _, pooled) in zip(self.shards, replies)]
        for ref in refs:
            try:
                ray.get(ref, timeout=120)
            except Exception:  # noqa: BLE001 - a restarted shard gets this round again with the next one
                pass

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
        """Every shard finishes its fetches and sends what its outbox holds while the others still receive; then
        each closes. Returns the final statuses."""
        for ref in [shard.stop.remote() for shard in self.shards]:
            try:
                ray.get(ref, timeout=300)
            except Exception:  # noqa: BLE001 - its store holds every committed page and unsent message
                pass
        finals = []
        for ref in [shard.close.remote() for shard in self.shards]:
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
                             averaging_rounds=self.averaging_rounds, driver_cpu_s=round(self.driver_cpu_s, 3),
                             shards=[{"shard": k, "steps": sum(1 for _, j, _ in records if j == k),
                                      "frontier": shards.get(k, {}).get("frontier"),
                                      "starts": shards.get(k, {}).get("starts")} for k in range(self.workers)])
