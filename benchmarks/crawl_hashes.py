"""Crawl hashes: one SHA-256 of the fetched URL sequence per (topic, strategy), to prove a refactor changes no crawl.

    python -m benchmarks.crawl_hashes webs/wikispeedia webs/webkb --out hashes.json [--budget 1000]
    python -m benchmarks.crawl_hashes ... --compare hashes.json     # exit 1 and list what differs

Each strategy crawls the four benchmark topics once (run 0's seeds, seed 0) through the engine's two
halves, twice: one fetch at a time, as the benchmark does, and with four fetches in flight recorded in
reverse order of selection, as a concurrent real crawl may complete them (what a policy remembers between
``select`` and ``observe`` is exercised there). ``--seed-reach-share 0`` draws seeds as before the benchmark's
seed rule (issue 30: every relevant page with outlinks qualifies), so hashes taken before that rule can be
compared with today's code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

TOPICS = [("wikispeedia", "subject.Science.Biology", 1), ("wikispeedia", "subject.Science.Physics", 1),
          ("wikispeedia", "subject.Everyday_life.Food_and_agriculture", 1), ("webkb", "course", 10)]


def crawl_urls(web, topic, classifiers, strategy: str, seeds: list[str], budget: int, in_flight: int) -> list[str]:
    from focuscrawl.builder import build_crawl
    from focuscrawl.config import RunSettings

    engine = build_crawl(RunSettings(budget=budget), strategy, topic.inputs, seeds, classifiers=classifiers,
                         judge=topic.truth).engine
    urls: list[str] = []
    while not engine.done:
        batch = []
        for _ in range(in_flight):
            selection = engine.next_selection()
            if selection is None:
                break
            batch.append(selection.url)
        if not batch:
            break
        for url in reversed(batch):
            engine.record(url, web.fetch(url))
            urls.append(url)
    return urls


def main() -> int:
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.builder import Classifiers
    from focuscrawl.strategies import names as strategy_names
    from focuscrawl.webs.store import OfflineWeb

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("wikispeedia")
    parser.add_argument("webkb")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--concurrent-budget", type=int, default=300)
    parser.add_argument("--strategies", default="", help="comma-separated (default: every registered one)")
    parser.add_argument("--seed-reach-share", type=float, default=None,
                        help="share of the web a seed must reach (default: the benchmark's; 0: any seed)")
    parser.add_argument("--out")
    parser.add_argument("--compare")
    args = parser.parse_args()
    names = [s for s in args.strategies.split(",") if s] or sorted(strategy_names())
    webs = {"wikispeedia": OfflineWeb(args.wikispeedia), "webkb": OfflineWeb(args.webkb)}
    hashes: dict[str, str] = {}
    for web_name, label, seeds_per_run in TOPICS:
        web = webs[web_name]
        share = {} if args.seed_reach_share is None else {"reach_share": args.seed_reach_share}
        topic = load_topic(web, label, seed=0, budget=args.budget, **share)
        seeds = topic.seeds_for_run(0, seeds_per_run)
        classifiers = Classifiers(topic.inputs, 0)
        for name in names:
            for in_flight, budget in ((1, args.budget), (4, args.concurrent_budget)):
                started = time.perf_counter()
                urls = crawl_urls(web, topic, classifiers, name, seeds, budget, in_flight)
                key = f"{label}|{name}|{in_flight}"
                hashes[key] = hashlib.sha256("\n".join(urls).encode()).hexdigest()[:16]
                print(f"{key:<60} {len(urls):>5} urls {hashes[key]} {time.perf_counter() - started:6.1f}s",
                      file=sys.stderr, flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(hashes, fh, indent=1, sort_keys=True)
    if args.compare:
        with open(args.compare) as fh:
            before = json.load(fh)
        differ = sorted(k for k in hashes if k in before and before[k] != hashes[k])
        missing = sorted(set(before) - set(hashes))
        print(f"{len(hashes)} crawls compared with {args.compare}: {len(differ)} differ, {len(missing)} not run")
        for key in differ:
            print(f"  DIFFERS {key}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
