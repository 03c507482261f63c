"""Pages/s of `focuscrawl crawl --workers N` over a served synthetic web, at equal per-worker concurrency.

    python -m benchmarks.distributed_rate --workers 1,2 --pages 20000 --hosts 2000 --latency-ms 50 \
        --budget 1500 --concurrency 8 --strategy best-first [-s lease_priority=0.9] [--out /tmp/rate]

Builds the synthetic web (`focuscrawl web synth`, 2,000 hosts), serves it on loopback in a subprocess
with the given latency, makes a topic of its topic 0 (the benchmark protocol's examples, 5 seeds), and crawls
it once per N into a fresh run folder with the default politeness (1 s between requests to a host).
Reported: pages / wall-clock seconds from the first to the last committed page (Ray start-up, the shards'
start and the final merge excluded), from the merged pages.jsonl; plus the whole command's time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.served import serve_web


def make_topic(web_dir: Path, topic_dir: Path) -> None:
    """The benchmark protocol's topic synth.topic0 (its example pages and 5 of its seeds) as a topic directory."""
    from dataclasses import replace

    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.topic.topic_dir import write_topic_dir
    from focuscrawl.webs.store import OfflineWeb

    topic = load_topic(OfflineWeb(web_dir), "synth.topic0")
    write_topic_dir(topic_dir, replace(topic.inputs, seeds=topic.seeds_for_run(0, 5)))


def synthetic_web(out: Path, pages: int, hosts: int) -> tuple[Path, Path]:
    """``out``/web, the synthetic web of ``pages`` pages on ``hosts`` hosts (seed 0), and ``out``/topic, its topic
    (``make_topic``); each made unless it is there already."""
    web_dir = out / "web"
    if not (web_dir / "web.sqlite").exists():
        from focuscrawl.webs.synth import synthesize

        synthesize(web_dir, pages, hosts=hosts, seed=0)
    topic_dir = out / "topic"
    if not topic_dir.exists():
        make_topic(web_dir, topic_dir)
    return web_dir, topic_dir


def add_crawl_arguments(parser: argparse.ArgumentParser, *, workers: str, budget: int, concurrency: int,
                        strategy: str) -> None:
    """The options ``crawl_command`` reads (and ``--workers``, ``--out``), with a script's defaults."""
    parser.add_argument("--workers", default=workers, help="0: the single-process crawl")
    parser.add_argument("--budget", type=int, default=budget)
    parser.add_argument("--concurrency", type=int, default=concurrency)
    parser.add_argument("--strategy", default=strategy)
    parser.add_argument("--set", "-s", action="append", default=[], metavar="KEY=VALUE",
                        help="a crawl setting for the distributed runs, e.g. lease_priority=0 (repeatable)")
    parser.add_argument("--out")


def crawl_command(source: list[str], topic_dir: Path, run: Path, args: argparse.Namespace, workers: int) -> list[str]:
    """The `focuscrawl crawl` command of one run: ``source`` says what it crawls (``--hosts-map`` or ``--web``),
    ``args`` its budget, concurrency, strategy and, for ``workers`` > 0, the distributed settings."""
    command = [sys.executable, "-m", "focuscrawl.cli.main", "crawl", "--topic", str(topic_dir), *source, "-o", str(run),
               "--budget", str(args.budget), "--concurrency", str(args.concurrency), "--strategy", args.strategy,
               "--progress", "none", "-s", "plot=false"]
    if workers > 0:
        command += ["--workers", str(workers)] + [a for setting in args.set for a in ("-s", setting)]
    return command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_crawl_arguments(parser, workers="0,1,2", budget=1500, concurrency=8, strategy="best-first")
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="distributed-rate-"))
    web_dir, topic_dir = synthetic_web(out, args.pages, args.hosts)
    python = sys.executable
    results = []
    with serve_web(python, str(web_dir), "127.0.20.1", extra=("--latency-ms", str(args.latency_ms))) as hosts:
        map_file = out / "hosts.json"
        map_file.write_text(json.dumps(hosts))
        for n in [int(x) for x in args.workers.split(",")]:
            run = out / f"run-n{n}{'-' + '-'.join(args.set) if n and args.set else ''}"
            command = crawl_command(["--hosts-map", str(map_file)], topic_dir, run, args, n)
            started = time.monotonic()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env={**os.environ})
            total_s = time.monotonic() - started
            times = [json.loads(line)["fetched_at"] for line in (run / "pages.jsonl").read_text().splitlines()]
            crawl_s = max(times) - min(times)
            row = {"workers": n, "pages": len(times), "crawl_s": round(crawl_s, 1),
                   "pages_per_s": round(len(times) / max(crawl_s, 1e-9), 1), "command_s": round(total_s, 1)}
            results.append(row)
            print(json.dumps(row), flush=True)
    (out / "rates.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
