"""TRES's time per decision against the number of hosts, and the share of the web-domain feature refresh in it.

    python -m benchmarks.tres_hosts                                  # synthetic webs of 10, 50, 200, 1000 hosts
    python -m benchmarks.tres_hosts --hosts 200 --pages 48000 --budget 5000 --out-degree 40
    python -m benchmarks.tres_hosts --hosts '' --web webs/wikispeedia --topic subject.Science.Physics

The question it answers: does TRES slow down on webs of many large hosts because, after a fetch changes its
host's bucketed relevance ratio, ``TreeFrontier.update_host`` rewrites and re-routes every frontier sample of
that host? Per web and strategy it crawls once (run 0's seeds, seed 0, one fetch at a time, as ``focuscrawl
bench``) and prints:

- ms/decision: the engine's ``decision_ms`` (select + observe, wall clock: what ``bench`` reports);
- cpu ms: the policy's own select + observe in thread CPU time, which other processes on the machine do not
  inflate (on a busy machine, wall-clock decisions include the time the process waited for a core);
- update_host: its CPU ms per step, calls per step, frontier samples rewritten ("touched") and moved to
  another leaf per step, and the largest single call (samples, ms);
- with ``--sections``, below each crawl: wall-clock ms per step of the policy's main methods, the section
  timers of ``policy_step_sections.py`` (nested sections overlap), to see where a slow web's time goes.

``tres-nh`` (no web-domain features, so no ``update_host``) runs next to ``tres``: their difference indicates what
the host features cost in all (only indicates: the two crawl different pages).

Synthetic webs (``focuscrawl.webs.synth``): the same pages, seed and out-degree for every host count, so pages
per host shrink as hosts grow. ``--off-topic`` defaults to 0.5, not synth's 0.1: with one topic per host and
few strays, a host's relevance ratio sits at 0 or 1 and its bucket almost never changes, which would hide the
cost measured here; half the pages off their host's topic keep ratios mid-range, where buckets do change. The
topic crawled is the web's most frequent label. Webs are built under ``--workdir`` (default: a temporary
directory, removed at exit) and reused from there when they exist.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks.policy_step_sections import SECTIONS, wrap
from focuscrawl.bench.protocol import load_topic
from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.config import RunSettings
from focuscrawl.strategies.tres.agent import TresPolicy
from focuscrawl.strategies.tres.tree_frontier import TreeFrontier
from focuscrawl.webs.store import OfflineWeb
from focuscrawl.webs.synth import synthesize


@dataclass
class Meter:
    """CPU time of the policy's decisions and what ``update_host`` did, accumulated over one crawl."""

    policy_s: float = 0.0
    update_s: float = 0.0
    calls: int = 0
    touched: int = 0
    moved: int = 0
    largest: tuple[int, float] = (0, 0.0)  # (samples, seconds) of the call that rewrote most samples


METER = Meter()
SECTION_S: dict[str, float] = defaultdict(float)


def install_meters() -> None:
    """Wrap the policy's decision methods and ``update_host`` (class-wide: this process only runs benchmarks)."""
    for name in ("select", "observe"):
        method = getattr(TresPolicy, name)

        def timed(self, *args, _method=method, **kwargs):
            started = time.thread_time()
            try:
                return _method(self, *args, **kwargs)
            finally:
                METER.policy_s += time.thread_time() - started

        setattr(TresPolicy, name, timed)
    update_host = TreeFrontier.update_host

    def counted(self: TreeFrontier, host: str, columns: slice, values) -> int:
        hid = self.host_index.get(host)
        touched = len(self.host_samples[hid]) if hid is not None else 0
        started = time.thread_time()
        moved = update_host(self, host, columns, values)
        spent = time.thread_time() - started
        METER.update_s += spent
        METER.calls += 1
        METER.touched += touched
        METER.moved += moved
        if touched > METER.largest[0]:
            METER.largest = (touched, spent)
        return moved

    TreeFrontier.update_host = counted


def crawl(web: OfflineWeb, label: str, strategy: str, budget: int, seeds_per_run: int) -> dict:
    """One crawl, one fetch at a time; the meters' figures per step."""
    global METER
    topic = load_topic(web, label, seed=0)
    seeds = topic.seeds_for_run(0, seeds_per_run)
    engine = build_crawl(RunSettings(budget=budget), strategy, topic.inputs, seeds,
                         classifiers=Classifiers(topic.inputs, 0), judge=topic.truth).engine
    METER = Meter()
    SECTION_S.clear()
    decision_ms, steps = 0.0, 0
    while not engine.done:
        selection = engine.next_selection()
        if selection is None:
            break
        decision_ms += engine.record(selection.url, web.fetch(selection.url)).decision_ms
        steps += 1
    steps = max(steps, 1)
    return {"ms": decision_ms / steps, "cpu_ms": 1000 * METER.policy_s / steps,
            "update_ms": 1000 * METER.update_s / steps, "calls": METER.calls / steps,
            "touched": METER.touched / steps, "moved": METER.moved / steps,
            "largest": METER.largest, "sections": {k: 1000 * v / steps for k, v in SECTION_S.items()}}


def synthetic_web(workdir: Path, pages: int, hosts: int, out_degree: float, off_topic: float) -> Path:
    out = workdir / f"synth-{pages}p-{hosts}h-d{out_degree:g}-o{off_topic:g}"
    if not (out / "web.sqlite").exists():
        synthesize(out, pages, hosts=hosts, out_degree=out_degree, off_topic=off_topic, overwrite=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", default="10,50,200,1000", help="synthetic webs: comma-separated host counts")
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--out-degree", type=float, default=20.0)
    parser.add_argument("--off-topic", type=float, default=0.5)
    parser.add_argument("--web", action="append", default=[], help="an offline web to measure too (repeatable)")
    parser.add_argument("--topic", action="append", default=[], help="its label, one per --web")
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=1, help="seed pages per crawl")
    parser.add_argument("--strategies", default="tres,tres-nh")
    parser.add_argument("--workdir", type=Path, help="where synthetic webs are built and reused")
    parser.add_argument("--sections", action="store_true", help="print where each crawl's decisions spend time")
    args = parser.parse_args()
    if len(args.web) != len(args.topic):
        parser.error("give one --topic per --web")
    install_meters()
    if args.sections:
        for cls, name in SECTIONS:
            wrap(cls, name, SECTION_S)

    with tempfile.TemporaryDirectory(prefix="tres_hosts_") as scratch:
        workdir = args.workdir or Path(scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        webs = [(Path(w), t) for w, t in zip(args.web, args.topic)]
        for hosts in (int(h) for h in args.hosts.split(",") if h):
            webs.append((synthetic_web(workdir, args.pages, hosts, args.out_degree, args.off_topic), None))
        print(f"budget {args.budget}, {args.seeds} seed(s); update_host figures per step; "
              "largest = the call rewriting most samples (samples, ms)")
        print(f"{'web':<34} {'hosts':>5} {'strategy':<8} {'ms/decision':>11} {'cpu ms':>7} {'update_host ms':>14} "
              f"{'calls':>5} {'touched':>7} {'moved':>6} {'largest':>14}")
        for directory, label in webs:
            web = OfflineWeb(directory)
            stats = web.stats()
            label = label or max(stats["labels"], key=stats["labels"].get)
            for strategy in args.strategies.split(","):
                r = crawl(web, label, strategy, args.budget, args.seeds)
                largest = f"{r['largest'][0]}, {1000 * r['largest'][1]:.2f}"
                print(f"{directory.name[:34]:<34} {stats['hosts']:>5} {strategy:<8} {r['ms']:>11.3f} "
                      f"{r['cpu_ms']:>7.3f} {r['update_ms']:>14.3f} {r['calls']:>5.2f} {r['touched']:>7.0f} "
                      f"{r['moved']:>6.1f} {largest:>14}", flush=True)
                for name, ms in sorted(r["sections"].items(), key=lambda item: -item[1]):
                    print(f"    {name:<40} {ms:7.3f} ms/step")
            web.close()


if __name__ == "__main__":
    main()
