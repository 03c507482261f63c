"""What the agent saw against what the benchmark scored, crawl by crawl, for two or more strategies.

    python -m benchmarks.reward_vs_score webs/webkb faculty \
        runs/faculty-crawlseeds-adaptive runs/faculty-crawlseeds-han-sync

Each folder is a `benchmarks/distributed_quality.py --out` folder of one strategy, crawled on the same protocol
runs and crawl seeds (its single-process crawls, `run{R}-0-seed{S}`, are read). Per crawl: the fetches on the
web's train hosts (`topic_defaults.train_host_pattern`: every page there is held out, never scored), the pages
the agent's classifier rewarded (its `reward` in pages.jsonl, the only relevance signal a policy learns from)
over the whole crawl and off the train hosts, the classifier's summed probability off them, and the relevant
pages the benchmark scores. A policy can only prefer the crawl its reward prefers: where the columns disagree,
the difference in score is invisible to it. Last, per strategy over its crawls, the live pages off the train
hosts in each tenth of the classifier's probability and how many of them are relevant: pages the reward rates
alike may be relevant at different rates. Labels are read here to score, as the benchmark does.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from benchmarks.distributed_quality import relevant_curve  # the benchmark's count


def crawl_figures(folder: Path, truth, train_host) -> dict:
    rewarded = rewarded_off = train = fetched = 0
    buckets = np.zeros((10, 2), dtype=int)  # per tenth of probability: live pages off the train hosts, relevant
    probability_off = 0.0
    pages = [json.loads(line) for line in (folder / "pages.jsonl").read_text().splitlines()]
    for page in pages:
        url = page["final_url"] or page["url"]
        on_train = bool(train_host and train_host(url.split("/")[2]))
        fetched += 1
        train += on_train
        rewarded += page["reward"] > 0
        if not on_train:
            rewarded_off += page["reward"] > 0
            probability_off += page["relevance"]
            if page["status"] == 200:
                buckets[min(int(page["relevance"] * 10), 9)] += (1, truth(url))
    curve = relevant_curve(pages, truth)
    scored = curve[-1] if curve else 0
    return {"pages": fetched, "train_fetches": train, "rewarded": rewarded, "rewarded_off_train": rewarded_off,
            "probability_off_train": probability_off, "scored_relevant": scored, "buckets": buckets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("web")
    parser.add_argument("topic")
    parser.add_argument("folders", nargs="+", help="distributed_quality.py --out folders, one per strategy")
    args = parser.parse_args()
    for folder in map(Path, args.folders):
        if not (folder / "quality.json").is_file() or not any(folder.glob("run*-0-seed*/pages.jsonl")):
            parser.error(f"{folder} is not a distributed_quality.py --out folder with single-process crawls "
                         "(quality.json and run*-0-seed*/pages.jsonl)")

    from focuscrawl.bench.protocol import TopicError, load_topic
    from focuscrawl.webs.store import OfflineWeb

    web = OfflineWeb(args.web)
    try:
        truth = load_topic(web, args.topic).truth
    except TopicError as exc:
        parser.error(str(exc))
    pattern = (web.meta.get("topic_defaults") or {}).get("train_host_pattern")
    train_host = re.compile(pattern).search if pattern else None

    names, table = [], {}
    for folder in map(Path, args.folders):
        quality = {(q["protocol_run"], q["crawl_seed"]): q["auc_oracle"]
                   for q in json.loads((folder / "quality.json").read_text()) if q["run"] == "0"}
        strategy = json.loads((next(folder.glob("run*-0-seed*")) / "pages.jsonl").open().readline())["strategy"]
        names.append(strategy)
        for key in sorted(quality):
            run = folder / f"run{key[0]}-0-seed{key[1]}"
            table[strategy, key] = crawl_figures(run, truth, train_host) | {"auc_oracle": quality[key]}

    keys = sorted({key for _, key in table})
    columns = ("pages", "train_fetches", "rewarded", "rewarded_off_train", "probability_off_train", "scored_relevant",
               "auc_oracle")
    print("| run, crawl seed | strategy | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 2) + "|")
    for key in keys:
        for name in names:
            if (name, key) in table:
                row = table[name, key]
                print(f"| {key[0]}, {key[1]} | {name} | " + " | ".join(
                    f"{row[c]:.1f}" if c == "probability_off_train" else f"{row[c]:.3f}" if c == "auc_oracle"
                    else str(row[c]) for c in columns) + " |")
    print()
    for name in names:
        rows = [table[name, key] for key in keys if (name, key) in table]
        print(f"{name}: {len(rows)} crawls, totals " + ", ".join(
            f"{c} {sum(r[c] for r in rows):.1f}" if c == "probability_off_train" else f"{c} {sum(r[c] for r in rows)}"
            for c in columns[:-1]))
    print()
    for name in names:
        buckets = sum(table[name, key]["buckets"] for key in keys if (name, key) in table)
        print(f"{name}, live pages off the train hosts by probability (relevant / pages): " + ", ".join(
            f"{k / 10:.1f}-{(k + 1) / 10:.1f} {r}/{n}" for k, (n, r) in enumerate(buckets.tolist()) if n))
    first = names[0]
    for other in names[1:]:
        pairs = [(table[first, k], table[other, k]) for k in keys if (first, k) in table and (other, k) in table]
        decided = [(a, b) for a, b in pairs if a["scored_relevant"] != b["scored_relevant"]]
        agree = sum((a["rewarded"] > b["rewarded"]) == (a["scored_relevant"] > b["scored_relevant"])
                    for a, b in decided if a["rewarded"] != b["rewarded"])
        print(f"{first} vs {other}: of {len(decided)} pairs of crawls whose scored relevant pages differ, the "
              f"agent's reward ranks the two crawls as the score does in {agree}")


if __name__ == "__main__":
    main()
