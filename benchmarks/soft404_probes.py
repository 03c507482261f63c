"""What the soft-404 defence's rule for probing a host costs on clean webs and catches on messy ones.

    python -m benchmarks.soft404_probes /work/main/webs --rules copies,pages:2,pages:3 --strategies adaptive,bfs

Each (web, topic) crawls run 0's seeds once per rule: ``copies`` (the default: a host whose short pages are
near-copies of each other is probed) or ``pages:K`` (also every host with K pages). Printed per crawl: the probes
sent, the hosts they went to, the pages taken as soft 404s, and, on a messy web, its not-found pages fetched (the
generator's, known by their title) and how many of them were caught. On a clean web every soft 404 is a mistake.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROWS = [("wikispeedia", "subject.Science.Biology", 1, 1000), ("wikispeedia", "subject.Science.Physics", 1, 1000),
        ("webkb", "course", 10, 1000), ("webkb", "student", 10, 1000), ("debian", "topic.biology", 5, 2000),
        ("debian", "topic.geography", 5, 2000),
        ("wikispeedia-mess", "subject.Science.Biology", 1, 1000), ("webkb-mess", "course", 10, 1000)]


def defences_for(rule: str):
    from focuscrawl.engine.defences import DefenceSettings

    if not rule.startswith("pages:"):
        return DefenceSettings()  # the defaults (what a tree without the setting runs too)
    return DefenceSettings.model_validate({"soft_404": {"probe_after_pages": int(rule.partition(":")[2])}})


def crawl(web, topic, seeds, strategy: str, budget: int, rule: str) -> list:
    from focuscrawl.builder import build_crawl
    from focuscrawl.config import RunSettings

    events: list = []
    settings = RunSettings(budget=budget, defences=defences_for(rule))
    build_crawl(settings, strategy, topic.inputs, seeds, judge=topic.truth, sinks=[events.append]).engine.run(web)
    return events


def main() -> int:
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.engine.defences import PROBE, SOFT_404
    from focuscrawl.webs.behaviour import NOT_FOUND_TITLE
    from focuscrawl.webs.store import OfflineWeb

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("webs", type=Path, help="the folder of the offline webs")
    parser.add_argument("--rules", default="copies")
    parser.add_argument("--strategies", default="adaptive,bfs")
    parser.add_argument("--rows", default="", help="web names to keep, comma-separated (default: all)")
    args = parser.parse_args()
    keep = {w for w in args.rows.split(",") if w}
    print("web | topic | strategy | rule | probes | probe hosts (answered 200) | soft 404s | not-found fetched | "
          "caught")
    for web_name, label, seeds_per_run, budget in ROWS:
        if keep and web_name not in keep:
            continue
        web = OfflineWeb(args.webs / web_name)
        topic = load_topic(web, label, seed=0, budget=budget)
        seeds = topic.seeds_for_run(0, seeds_per_run)
        for strategy in args.strategies.split(","):
            for rule in args.rules.split(","):
                events = crawl(web, topic, seeds, strategy, budget, rule)
                probes = [e for e in events if e.verdict == PROBE]
                hosts = Counter(e.host for e in probes)
                answered = sum(e.status == 200 for e in probes)
                soft = sum(e.verdict == SOFT_404 for e in events)
                not_found = [e for e in events if e.verdict != PROBE and e.status == 200
                             and web.fetch(e.url).title == NOT_FOUND_TITLE]
                caught = sum(e.verdict == SOFT_404 for e in not_found)
                print(f"{web_name} | {label} | {strategy} | {rule} | {len(probes)} | {len(hosts)} ({answered}) | "
                      f"{soft} | {len(not_found)} | {caught}", flush=True)
        web.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
