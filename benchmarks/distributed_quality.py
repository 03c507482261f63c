"""AUC/oracle of a distributed crawl against the single-process one, scored against an offline web's labels.

    python -m benchmarks.distributed_quality webs/webkb course --seeds 10 --budget 1000 \
        --strategy adaptive --runs "0 4 4:p0.5" --protocol-runs 0,1,2 [--out DIR]

For each protocol run r (the benchmark protocol's seeds of run r, its examples, its held-out pages), the
topic is written as a user's topic folder and crawled with `--web DIR` (once per crawl seed, the settings'
`seed`) into its own run folder: `0` the single-process crawl, `N` N shards, `N:avgK` N shards averaging
the strategy's parameters every K pages, `N:pP` N shards leasing with priority P (`lease_priority`);
options combine (`4:avg50:p0.5`). `-s KEY=VALUE` sets a setting for every crawl and the oracle, as `focuscrawl
crawl -s` does (e.g. `-s scope.denied_domains=cornell.edu`).
The `oracle` crawls the same seeds in the benchmark's engine, so AUC/oracle is the figure `focuscrawl bench`
reports. Printed per crawl: pages, relevant pages (the benchmark's judge: held-out example pages do not
count), harvest rate, AUC/oracle, wall-clock seconds; at the end the mean AUC/oracle per run spec and per
crawl seed, and each spec against the first one paired crawl by crawl (same protocol run and crawl seed).
``--report`` prints that summary again from a finished ``--out`` folder's quality.json, without crawling.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("web")
    parser.add_argument("topic")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--concurrency", type=int, default=1, help="fetches in flight per process or shard")
    parser.add_argument("--runs", default="0 4")
    parser.add_argument("--protocol-runs", default="0", help="the benchmark protocol's runs (seed pages), e.g. 0,1,2")
    parser.add_argument("--crawl-seeds", default="0", help="the crawl settings' seeds, e.g. 0,1,2")
    parser.add_argument("--seeds", type=int, default=1, help="seed pages per run")
    parser.add_argument("--out")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting for every crawl and the oracle, as `focuscrawl crawl -s` (repeatable)")
    parser.add_argument("--report", action="store_true", help="summarise --out's quality.json; crawl nothing")
    args = parser.parse_args()
    if args.report:
        report(json.loads((Path(args.out) / "quality.json").read_text()), args.topic)
        return

    from pydantic import ValidationError

    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.bench.runner import ORACLE, crawl_once
    from focuscrawl.builder import Classifiers
    from focuscrawl.cli.common import describe_validation_error
    from focuscrawl.config import CrawlConfig, RunSettings, load_config
    from focuscrawl.crawl import Crawler
    from focuscrawl.crawl.distributed import DistributedCrawler
    from focuscrawl.topic.topic_dir import write_topic_dir
    from focuscrawl.webs.store import OfflineWeb

    try:  # a bad -s is one line before anything is crawled, not a traceback after the oracle
        oracle_settings = load_config(RunSettings, None, args.set, budget=args.budget)
    except ValidationError as exc:
        parser.error(describe_validation_error(exc))

    out = Path(args.out or tempfile.mkdtemp(prefix="distributed-quality-"))
    web = OfflineWeb(args.web)
    topic = load_topic(web, args.topic)
    results = []
    for protocol_run in [int(r) for r in args.protocol_runs.split(",")]:
        seeds = topic.seeds_for_run(protocol_run, args.seeds)
        oracle = crawl_once(web, topic, Classifiers(topic.inputs, 0), oracle_settings, ORACLE, protocol_run, seeds)
        topic_dir = out / f"topic-run{protocol_run}"
        if not topic_dir.exists():
            write_topic_dir(topic_dir, replace(topic.inputs, seeds=seeds))
        for crawl_seed, spec in [(int(c), spec) for c in args.crawl_seeds.split(",") for spec in args.runs.split()]:
            workers, *options = spec.split(":")
            workers = int(workers)
            extra = {"average_every": int(o[3:]) for o in options if o.startswith("avg")}
            extra |= {"lease_priority": float(o[1:]) for o in options if o.startswith("p")}
            run = out / f"run{protocol_run}-{spec.replace(':', '-')}-seed{crawl_seed}"
            settings = {"topic": topic_dir, "out": run, "web": str(Path(args.web).resolve()),
                        "budget": args.budget, "strategy": args.strategy, "concurrency": args.concurrency,
                        "progress": "none", "plot": False, "seed": crawl_seed}
            config = load_config(CrawlConfig, None, args.set, **settings)
            started = time.monotonic()
            if workers == 0:
                Crawler(config).crawl()
            else:
                DistributedCrawler(config, workers=workers, **extra).crawl()
            elapsed = time.monotonic() - started
            pages = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
            curve = relevant_curve(pages, topic.truth)
            found = curve[-1] if curve else 0
            auc = sum(curve) + found * (args.budget - len(pages))
            row = {"topic": args.topic, "protocol_run": protocol_run, "crawl_seed": crawl_seed, "run": spec,
                   "pages": len(pages), "relevant": found, "harvest": round(found / max(len(pages), 1), 3),
                   "oracle_relevant": oracle.relevant_pages,
                   "auc_oracle": round(auc / oracle.auc, 4) if oracle.auc else None, "seconds": round(elapsed, 1)}
            results.append(row)
            print(json.dumps(row), flush=True)
    (out / "quality.json").write_text(json.dumps(results, indent=1) + "\n")
    report(results, args.topic)


def relevant_curve(pages: list[dict], truth) -> list[int]:
    """Relevant pages found after each page of a run folder's pages.jsonl, counted as the benchmark counts
    them: a live page whose final URL is relevant, each URL once."""
    found, seen, curve = 0, set(), []
    for page in pages:
        url = page["final_url"] or page["url"]
        if page["status"] == 200 and url not in seen and truth(url):
            found += 1
        seen.add(url)
        curve.append(found)
    return curve


def report(results: list[dict], topic: str) -> None:
    """Mean AUC/oracle per run spec, per crawl seed, and each spec against the first, paired crawl by crawl."""
    specs = list(dict.fromkeys(r["run"] for r in results))
    for spec in specs:
        ratios = [r["auc_oracle"] for r in results if r["run"] == spec and r["auc_oracle"] is not None]
        print(f"{topic} {spec}: mean AUC/oracle {statistics.mean(ratios):.4f} over {len(ratios)} runs", flush=True)
    for seed in sorted({r["crawl_seed"] for r in results}):
        means = [statistics.mean(r["auc_oracle"] for r in results if r["run"] == spec and r["crawl_seed"] == seed
                                 and r["auc_oracle"] is not None) for spec in specs]
        print(f"{topic} crawl seed {seed}: " + ", ".join(f"{s} {m:.3f}" for s, m in zip(specs, means)))
    first = {(r["protocol_run"], r["crawl_seed"]): r["auc_oracle"] for r in results if r["run"] == specs[0]}
    for spec in specs[1:]:
        diffs = [r["auc_oracle"] - first[(r["protocol_run"], r["crawl_seed"])] for r in results
                 if r["run"] == spec and first.get((r["protocol_run"], r["crawl_seed"])) is not None
                 and r["auc_oracle"] is not None]
        print(f"{topic} {spec} - {specs[0]}, paired: mean {statistics.mean(diffs):+.4f}, higher in "
              f"{sum(d > 0 for d in diffs)}, lower in {sum(d < 0 for d in diffs)} of {len(diffs)}")


if __name__ == "__main__":
    main()
