"""Pages each run's seeds can reach, before and after the benchmark's seed rule (issue 30), for a suite's rows.

    python -m benchmarks.seed_reach --webs webs            # the dev suite; --suite FILE for another

Per row: the seed-rule threshold, how many candidate seeds reach it, and per run the pages a crawl from that run's
seeds can fetch, with every candidate allowed (the draw before the rule: ``seed_reach_share`` 0) and with the
rule; ``same`` when the rule draws the same seeds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.bench.protocol import load_topic
from focuscrawl.bench.suite import find_suite, load_suite, plan_rows
from focuscrawl.webs.store import OfflineWeb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="dev")
    parser.add_argument("--webs", type=Path, default=Path("webs"))
    args = parser.parse_args()
    suite = load_suite(find_suite(args.suite))
    print("| row | threshold | seed pool / candidates | reach per run before the rule | with the rule |")
    print("|---|---|---|---|---|")
    for item in plan_rows(suite, webs=args.webs, out=Path("/nonexistent")):
        config = item.config
        web = OfflineWeb(config.web)
        try:
            runs = {}
            for share in (0.0, config.seed_reach_share):
                topic = load_topic(web, config.topic, seed=config.seed, budget=config.budget, reach_share=share,
                                   examples_irrelevant=config.examples_irrelevant)
                seeds = [topic.seeds_for_run(run, config.seeds_per_run) for run in range(config.runs)]
                runs[share] = (topic, seeds, [topic.reach(s) for s in seeds])
        finally:
            web.close()
        (_, old_seeds, old_reach), (topic, new_seeds, new_reach) = runs[0.0], runs[config.seed_reach_share]
        after = "same" if old_seeds == new_seeds else ", ".join(f"{n:,}" for n in new_reach)
        print(f"| {item.row.label} | {topic.reach_threshold:,} | {len(topic.seed_pool)} / {len(topic.candidates)} | "
              f"{', '.join(f'{n:,}' for n in old_reach)} | {after} |")


if __name__ == "__main__":
    main()
