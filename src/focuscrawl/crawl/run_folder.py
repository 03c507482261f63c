"""A run folder: one crawl's files, its lock, and the checks that keep two crawls from mixing in it.

    state.sqlite    the crawl-state store: the source of truth (``focuscrawl.storage.state``)
    config.yml      the effective configuration, the base of the next command on this folder
    model.pkl       the trained relevance classifier, so a resumed crawl scores pages exactly as before
    pages.jsonl, harvest.csv, crawl.warc.gz     derived from the store, repaired against it on open
    summary.json, harvest.png                   the final report
    .lock           held while a crawl runs (an flock: a killed process releases it); a crawl that finds it
                    removed or replaced stops (``check_lock``), since another crawl may have taken the folder

A distributed crawl (``--workers N``) keeps one such folder per shard in ``shards/K/`` (its own store,
lock and derived files) and, at the top, the config, the classifier, ``distributed.json`` (N) and the
merged pages.jsonl, harvest.csv, summary.json and plot.
"""

from __future__ import annotations

import fcntl
import json
import os
import pickle
from dataclasses import asdict, dataclass
from pathlib import Path

from focuscrawl.config import CrawlConfig, write_effective_config
from focuscrawl.crawl.resume import ResumeError
from focuscrawl.storage import (
    HARVEST_FILE,
    PAGES_FILE,
    STATE_FILE,
    WARC_FILE,
    HarvestWriter,
    PagesWriter,
    StateStore,
    WarcOutput,
    repair_pages,
)
from focuscrawl.storage.failures import MachineError, StoreDamagedError, store_failure
from focuscrawl.storage.harvest import plot_harvest_csv
from focuscrawl.storage.layout import DISTRIBUTED_FILE, is_distributed
from focuscrawl.storage.repair import RepairReport, check_store, repair_run_folder
from focuscrawl.topic.models import ModelOptions, train_relevance_model
from focuscrawl.types import RelevanceModel, TopicInputs

MODEL_FILE = "model.pkl"
SUMMARY_FILE = "summary.json"
PLOT_FILE = "harvest.png"
LOCK_FILE = ".lock"


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


@dataclass
class Outputs:
    """The files derived from the store, open for appending."""

    pages: PagesWriter
    harvest: HarvestWriter
    warc: WarcOutput | None
    repaired: dict[str, int]

    def close(self) -> None:
        for output in (self.pages, self.harvest, self.warc):
            if output is not None:
                output.close()


class RunFolder:
    """A locked run folder. ``with RunFolder(path) as folder:`` creates it if needed and takes the lock."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = None

    def __enter__(self) -> RunFolder:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fh = open(self.path / LOCK_FILE, "w")
        except OSError as exc:  # a read-only folder, a full disk: said as such
            raise store_failure(exc, self.path / STATE_FILE) from None
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise ResumeError(f"another crawl is running in {self.path}") from None
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._lock = fh
        return self

    def __exit__(self, *exc) -> None:
        if self._lock is not None:
            self._lock.close()  # closing releases the flock
            self._lock = None

    def check_lock(self, steps: int | None = None) -> None:
        """Raise ``MachineError`` when the lock file is no longer the one this folder locked (removed, or replaced
        and maybe locked by another crawl): a crawl goes on writing only while the folder is its own."""
        try:
            held = os.fstat(self._lock.fileno())
            now = os.stat(self.path / LOCK_FILE)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                return
        except (OSError, AttributeError):  # removed, or never taken
            pass
        raise MachineError("lock lost", self.path, steps=steps)

    def open_store(self, identity: dict, **meta) -> StateStore:
        """The state store; a new one records ``identity``, an existing one must have been made with it (and be
        readable: a damaged one is refused with the way out, ``--repair``)."""
        if (self.path / STATE_FILE).exists():
            check_store(self.path / STATE_FILE)
        store = StateStore(self.path / STATE_FILE)
        if store.is_new:
            store.initialise(identity=identity, **meta)
            return store
        recorded = store.get_meta("identity", {})
        changed = sorted(k for k in set(recorded) | set(identity) if recorded.get(k) != identity.get(k))
        if changed:
            store.close()
            raise ResumeError(f"{self.path} holds a different crawl (changed: {', '.join(changed)}); "
                              "use another run folder, or the same settings to resume it")
        return store

    def recorded_seeds(self) -> list[str] | None:
        """The seeds the crawl in this folder started from (None: it holds none yet); a crawl whose seeds were read
        from sitemaps resumes with these, whatever the sitemaps list now."""
        if not (self.path / STATE_FILE).exists():
            return None
        check_store(self.path / STATE_FILE)
        store = StateStore(self.path / STATE_FILE)
        try:
            return None if store.is_new else list(store.get_meta("identity", {}).get("seeds", []))
        finally:
            store.close()

    def repair(self) -> RepairReport | None:
        """Salvage a damaged state store (``focuscrawl crawl --repair``); None when it is readable as it is."""
        if not (self.path / STATE_FILE).exists():
            return repair_run_folder(self.path)  # the clear "nothing to repair" error
        try:
            check_store(self.path / STATE_FILE)
        except StoreDamagedError:
            return repair_run_folder(self.path)
        return None

    def write_config(self, config: CrawlConfig) -> None:
        write_effective_config(self.path, config)

    def classifier(self, name: str, topic: TopicInputs, seed: int, page_encoder: bool = False) -> RelevanceModel:
        """Trained once per run folder and kept, so that a resumed crawl scores pages exactly as before."""
        path = self.path / MODEL_FILE
        if path.exists():
            try:
                with open(path, "rb") as fh:
                    return pickle.load(fh)
            except Exception:  # noqa: BLE001 - retraining is deterministic, so a bad file is only slower
                pass
        model = train_relevance_model(name, topic, seed, ModelOptions(page_encoder))
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
        return model

    def open_outputs(self, store: StateStore, strategy: str, warc: bool) -> Outputs:
        """pages.jsonl, harvest.csv and (if asked) the WARC, each first brought in line with the store."""
        dropped, appended = repair_pages(self.path / PAGES_FILE, store, strategy)
        pages = PagesWriter(self.path / PAGES_FILE, strategy)
        harvest = HarvestWriter(self.path / HARVEST_FILE)
        harvest.rewrite(store)
        warc_output = None
        if warc:
            path = self.path / WARC_FILE
            end = store.warc_end()
            if end is None:
                path.unlink(missing_ok=True)  # no committed record: start over with a fresh warcinfo
            else:
                WarcOutput.truncate_to(path, end)
            warc_output = WarcOutput(path)
        return Outputs(pages, harvest, warc_output, {"pages_dropped": dropped, "pages_appended": appended})

    def write_summary(self, summary: CrawlSummary, plot_title: str | None = None, **extra) -> None:
        """summary.json (``extra``: more of the report, a distributed crawl's shards) and, with a title, the
        harvest plot."""
        tmp = self.path / (SUMMARY_FILE + ".tmp")
        tmp.write_text(json.dumps({**asdict(summary), **extra}, indent=2) + "\n")
        tmp.replace(self.path / SUMMARY_FILE)
        if plot_title is not None and summary.steps:
            try:
                plot_harvest_csv(self.path / HARVEST_FILE, self.path / PLOT_FILE, title=plot_title)
            except Exception:  # noqa: BLE001 - a missing plot must not fail a finished crawl
                pass


def check_crawl_kind(path: Path, workers: int | None) -> None:
    """Refuse to mix two kinds of crawl in one folder: a single-process crawl (``workers`` None) of a distributed
    one, a distributed crawl of a single-process one, or another number of shards."""
    marker = path / DISTRIBUTED_FILE
    if workers is None:
        if is_distributed(path):
            raise ResumeError(f"{path} is a distributed crawl (--workers): run it with "
                              "focuscrawl.crawl.distributed.DistributedCrawler or `focuscrawl crawl --workers N`")
    elif marker.exists():
        recorded = json.loads(marker.read_text())["workers"]
        if recorded != workers:
            raise ResumeError(f"{path} was crawled with --workers {recorded}; resume it with --workers "
                              f"{recorded} (hosts belong to shards by a hash of N: another N is not supported)")
    elif (path / STATE_FILE).exists():
        raise ResumeError(f"{path} holds a single-process crawl; resume it without --workers, or use another run "
                          "folder")
