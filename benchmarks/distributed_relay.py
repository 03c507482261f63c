"""Old against new: what a distributed crawl costs centrally, per N, with two source trees run interleaved.

    nice python -m benchmarks.distributed_relay --trees old=/work/main/src,new=src --workers 1,2,4,8 \
        --budget 800 --out /tmp/relay

Serves the synthetic web of `benchmarks/distributed_rate.py` (`--pages` on `--hosts` hosts, `--latency-ms`, the
default politeness of 1 s between requests to a host) and crawls it with `DistributedCrawler` (`--strategy`,
`--concurrency` per shard, `lease_priority=0` unless `-s` says otherwise, pooling every 100 pages as the strategy
chooses) once per N and per tree, the trees alternating within each N, each crawl in a child process whose
PYTHONPATH is that tree. Per crawl, one JSON line:

- ``pages_per_s``: pages over the seconds from the first to the last committed page (pages.jsonl);
- ``messages_per_page``: link messages the shards stored in their inboxes (one per page and other shard its
  links go to), over pages;
- ``driver_cpu_ms_per_page``: the driver process's CPU time (``time.process_time``: its Python and Ray's threads
  in it; not the shards', the coordinator's or Ray's own daemons) between its first progress call that saw a
  page and its last, over the pages committed between them: the central cost of the crawl under way;
- ``send_calls_per_page`` (shards that send to each other): the ``receive`` calls between shards, from the
  shards' status at the driver's last progress call, over the pages committed then;
- ``pooling_bytes_in_per_round`` / ``pooling_bytes_out_per_round``: the pickled size of what the shards sent the
  driver in a round (all of them) and of what went back (the combined parameters, once per shard), averaged over
  the rounds; measured by wrapping the strategy's ``combine_parameters`` in the driver.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.served import serve_web


def child(args: argparse.Namespace) -> None:
    """One crawl in this process (the tree on PYTHONPATH); prints its JSON line."""
    from focuscrawl.crawl.distributed import DistributedCrawler
    from focuscrawl.strategies.registry import STRATEGIES

    policy_class = STRATEGIES[args.strategy].factory  # a class for the strategies that pool (adaptive, tres)
    combine = policy_class.combine_parameters
    rounds: list[tuple[int, int]] = []

    def measured(shared):
        combined = combine(shared)
        size = len(pickle.dumps(combined, protocol=pickle.HIGHEST_PROTOCOL))
        rounds.append((sum(len(pickle.dumps(p, protocol=pickle.HIGHEST_PROTOCOL)) for _, p in shared),
                       size * args.workers))
        return combined

    policy_class.combine_parameters = measured
    marks: list[tuple[float, int]] = []
    shards: list[dict] = []

    def progress(stats) -> None:
        if stats.steps:
            marks.append((time.process_time(), stats.steps))
            shards[:] = stats.shards

    settings = dict(s.split("=", 1) for s in args.set)
    config = {"topic": args.topic, "hosts_map": args.hosts_map, "out": args.run, "budget": args.budget,
              "concurrency": args.concurrency, "strategy": args.strategy, "workers": args.workers,
              "progress": "none", "plot": False, "lease_priority": 0.0, **settings}
    DistributedCrawler(**config).crawl(on_progress=progress)
    run = Path(args.run)
    times = [json.loads(line)["fetched_at"] for line in (run / "pages.jsonl").read_text().splitlines()]
    messages = 0
    for k in range(args.workers):
        db = sqlite3.connect(run / "shards" / str(k) / "state.sqlite")
        messages += db.execute("SELECT COUNT(*) FROM inbox WHERE id NOT LIKE 'avg:%'").fetchone()[0]
        db.close()
    (cpu0, steps0), (cpu1, steps1) = marks[0], marks[-1]
    row = {"tree": args.tree, "workers": args.workers, "pages": len(times),
           "pages_per_s": round(len(times) / max(max(times) - min(times), 1e-9), 1),
           "messages_per_page": round(messages / len(times), 3),
           "driver_cpu_ms_per_page": round(1000 * (cpu1 - cpu0) / max(steps1 - steps0, 1), 3),
           "pooling_rounds": len(rounds)}
    if shards and "send_calls" in shards[0]:  # shards that send to each other: their receive calls, as last polled
        row["send_calls_per_page"] = round(sum(s["send_calls"] for s in shards) / max(steps1, 1), 3)
    if rounds:
        row["pooling_bytes_in_per_round"] = round(sum(i for i, _ in rounds) / len(rounds))
        row["pooling_bytes_out_per_round"] = round(sum(o for _, o in rounds) / len(rounds))
    print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", default="new=src", help="NAME=SRC_DIR,... (run alternately within each N)")
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--set", "-s", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--out")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for name in ("--tree", "--topic", "--hosts-map", "--run"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.workers = int(args.workers)
        child(args)
        return
    from benchmarks.distributed_rate import synthetic_web

    out = Path(args.out or tempfile.mkdtemp(prefix="distributed-relay-"))
    web_dir, topic_dir = synthetic_web(out, args.pages, args.hosts)
    trees = [tree.split("=", 1) for tree in args.trees.split(",")]
    rows = []
    with serve_web(sys.executable, str(web_dir), "127.0.21.1", extra=("--latency-ms", str(args.latency_ms))) as hosts:
        map_file = out / "hosts.json"
        map_file.write_text(json.dumps(hosts))
        for i, n in enumerate(int(x) for x in args.workers.split(",")):
            for name, src in (trees if i % 2 == 0 else trees[::-1]):  # which goes first alternates with N
                run = out / f"run-{name}-n{n}"
                shutil.rmtree(run, ignore_errors=True)  # a fresh crawl, not a resumed one
                command = [sys.executable, "-m", "benchmarks.distributed_relay", "--child", "--tree", name,
                           "--workers", str(n), "--topic", str(topic_dir), "--hosts-map", str(map_file),
                           "--run", str(run), "--budget", str(args.budget), "--concurrency", str(args.concurrency),
                           "--strategy", args.strategy, *[a for s in args.set for a in ("-s", s)]]
                env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "RAY_USAGE_STATS_ENABLED": "0"}
                done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
                row = json.loads(done.stdout.strip().splitlines()[-1])
                rows.append(row)
                print(json.dumps(row), flush=True)
    (out / "relay.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
