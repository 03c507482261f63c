"""CPU time of one engine checkpoint (``CrawlEngine.snapshot``) after a crawl of N pages, offline.

    python -m benchmarks.checkpoint_cost WEB_DIR [--topic synth.topic0] [--strategy bfs] [--pages 4000]

Crawls WEB_DIR in-process (the benchmark protocol's topic, run 0's 5 seeds, seed 0) for ``--pages`` pages, then
takes three snapshots and prints the fastest's CPU time and its size. A crawl writes one every
``checkpoint_every`` (500) pages; run it with ``PYTHONPATH`` pointing at another checkout's src to compare.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.builder import Classifiers, build_crawl
    from focuscrawl.config import RunSettings
    from focuscrawl.webs.store import OfflineWeb

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("web_dir")
    parser.add_argument("--topic", default="synth.topic0")
    parser.add_argument("--strategy", default="bfs")
    parser.add_argument("--pages", type=int, default=4000)
    args = parser.parse_args()
    web = OfflineWeb(args.web_dir)
    topic = load_topic(web, args.topic)
    engine = build_crawl(RunSettings(budget=args.pages), args.strategy, topic.inputs, topic.seeds_for_run(0, 5),
                         classifiers=Classifiers(topic.inputs, 0)).engine
    while (selection := engine.next_selection()) is not None:
        engine.record(selection.url, web.fetch(selection.url))
    best, blob = float("inf"), b""
    for _ in range(3):
        started = time.process_time()
        blob = engine.snapshot()
        best = min(best, time.process_time() - started)
    print(f"{args.strategy} after {engine.stats.steps} pages, frontier {engine.frontier_size}: snapshot "
          f"{1000 * best:.1f} ms CPU, {len(blob) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
