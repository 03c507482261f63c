"""The largest share of a crawl that one host took which holds no relevant page (in the whole web, by its labels).

    python -m benchmarks.barren_hosts webs/debian-docs topic.biology --seeds-per-run 5 --budget 2000 \
        --strategy adaptive,best-first,han-sync --runs 0,1

Each chosen protocol run of the row (the suite's seeds and crawl seed, as ``crawl_probe`` crawls them) is crawled
once per strategy; printed per crawl: relevant pages and hosts, the share of its fetches on pages labelled by
kind (``kind.*``: the Debian docs web's documentation pages), and the three busiest barren hosts with their share
of the crawl's fetches. Issue 43 asks that no such host take over a fifth of a crawl.
"""

from __future__ import annotations

from collections import Counter

from benchmarks.row_args import crawl_run, row_config, row_parser
from focuscrawl.bench.runner import bench_topic, draw_seeds
from focuscrawl.builder import Classifiers
from focuscrawl.config import BenchConfig, load_config
from focuscrawl.urls import site_of
from focuscrawl.webs.store import OfflineWeb, label_matches


def main() -> None:
    parser = row_parser(__doc__)
    parser.add_argument("--runs", default="0", help="protocol runs to crawl, comma-separated")
    args = parser.parse_args()
    runs = [int(r) for r in args.runs.split(",")]
    config = load_config(BenchConfig, base=row_config(args, runs=max(runs) + 1))
    web = OfflineWeb(args.web)
    topic = bench_topic(web, config)
    run_seeds = draw_seeds(topic, config)
    classifiers = Classifiers(topic.inputs, config.seed, page_encoder=config.page_encoder)
    labels = web.labels()
    fruitful = {site_of(url) for url, page_labels in labels.items() if label_matches(page_labels, args.topic)}
    # pages a builder labelled by kind (the Debian docs web's documentation pages): the crawl's share on them
    kinded = {url for url, page_labels in labels.items() if "kind." in page_labels}
    worst: dict[str, float] = {}
    for strategy in args.strategy.split(","):
        for run in runs:
            stats, events = crawl_run(web, topic, config, strategy, run, run_seeds[run], classifiers)
            barren = Counter(site_of(e.url) for e in events if site_of(e.url) not in fruitful)
            top = barren.most_common(3)
            share = top[0][1] / len(events) if top and events else 0.0
            on_kinds = sum(e.url in kinded for e in events) / max(len(events), 1)
            worst[strategy] = max(worst.get(strategy, 0.0), share)
            print(f"{args.topic} {strategy} run {run}: {stats.relevant} relevant on {len(stats.relevant_hosts)} "
                  f"hosts in {len(events)} steps, {on_kinds:.1%} on pages labelled kind.*; busiest barren hosts: "
                  + ", ".join(f"{h} {n / len(events):.1%}" for h, n in top), flush=True)
    for strategy, share in worst.items():
        print(f"{args.topic} {strategy}: largest barren-host share {share:.1%}")
    web.close()


if __name__ == "__main__":
    main()
