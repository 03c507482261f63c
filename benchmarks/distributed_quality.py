"""Harvest of a distributed crawl against the single-process one, scored against an offline web's labels.

    python benchmarks/distributed_quality.py webs/wikispeedia subject.Science.Biology --budget 1000 \
        --strategy adaptive --runs "0 1 4 4:avg50" [--out DIR]

Each run crawls the web's topic (the benchmark protocol's examples and run 0's seeds) with `--web DIR`
into its own run folder: `0` the single-process crawl, `N` N shards, `N:avgK` N shards averaging the
strategy's parameters every K pages. Printed per run: pages, ground-truth relevant pages among them
(final URL labelled with the topic), harvest rate, wall-clock seconds.
"""

from __future__ import annotations

import argparse
import json
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
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--runs", default="0 1 4 4:avg50")
    parser.add_argument("--crawl-seeds", default="0", help="crawl seeds (the settings' seed), e.g. 0,1,2")
    parser.add_argument("--seeds", type=int, default=1, help="seed pages (run 0's of the benchmark protocol)")
    parser.add_argument("--out")
    args = parser.parse_args()

    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.crawl import Crawler
    from focuscrawl.crawl.distributed import DistributedCrawler
    from focuscrawl.topic.topic_dir import write_topic_dir
    from focuscrawl.web.store import OfflineWeb

    out = Path(args.out or tempfile.mkdtemp(prefix="distributed-quality-"))
    web = OfflineWeb(args.web)
    topic = load_topic(web, args.topic)
    topic_dir = out / "topic"
    if not topic_dir.exists():
        write_topic_dir(topic_dir, replace(topic.inputs, seeds=topic.seeds_for_run(0, args.seeds)))
    results = []
    for crawl_seed, spec in [(int(c), spec) for c in args.crawl_seeds.split(",") for spec in args.runs.split()]:
        workers, _, average = spec.partition(":avg")
        workers = int(workers)
        run = out / f"run-{spec.replace(':', '-')}-seed{crawl_seed}"
        settings = {"topic": topic_dir, "out": run, "web": str(Path(args.web).resolve()), "budget": args.budget,
                    "strategy": args.strategy, "concurrency": args.concurrency, "progress": "none", "plot": False,
                    "seed": crawl_seed}
        started = time.monotonic()
        if workers == 0:
            Crawler(**settings).crawl()
        else:
            DistributedCrawler(**settings, workers=workers, average_every=int(average or 0)).crawl()
        elapsed = time.monotonic() - started
        pages = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
        relevant = sum(1 for p in pages if p["status"] == 200 and topic.truth(p["final_url"]))
        row = {"run": spec, "seed": crawl_seed, "pages": len(pages), "relevant": relevant,
               "harvest": round(relevant / max(len(pages), 1), 3), "seconds": round(elapsed, 1)}
        results.append(row)
        print(json.dumps(row), flush=True)
    (out / "quality.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
