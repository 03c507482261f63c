"""A look inside single crawls of one suite row: what each fetched, where, and (``adaptive``) what it learned.

    python -m benchmarks.crawl_probe webs/webkb course --seeds-per-run 10 --runs 0,1
    python -m benchmarks.crawl_probe webs/wikispeedia-mess-default subject.Everyday_life.Food_and_agriculture \
        --runs 1 -s defences.link_farms.farm_share=0.8 -s defences.link_farms.suspect_min_pages=20
    python -m benchmarks.crawl_probe webs/debian topic.biology --seeds-per-run 5 --budget 2000 --runs 0 \
        --strategy best-first -s options.best-first.link_weight=0

Each chosen protocol run of the row (the suite's seeds and crawl seed; ``-s KEY=VALUE`` overrides the benchmark's
settings as ``focuscrawl bench -s`` does, strategy options included) is crawled once and printed: relevant pages
(at 250, 500, 1,000 and 2,000 steps and at the end) and hosts, the fetches by HTTP status, on a messy web the
fetches by injected kind and the hosts each kind's fetches went to, and for ``adaptive`` its learned evidence
weights. For looking at a row while developing; the suite is what judges.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from benchmarks.row_args import row_config, row_parser
from focuscrawl.bench.runner import bench_topic, draw_seeds
from focuscrawl.builder import Classifiers, StrategyPlan, build_crawl
from focuscrawl.config import BenchConfig, load_config
from focuscrawl.types import StepEvent
from focuscrawl.webs.store import OfflineWeb

CHECKPOINTS = (250, 500, 1000, 2000)


def main() -> None:
    parser = row_parser(__doc__)
    parser.add_argument("--runs", default="0", help="protocol runs to crawl, comma-separated")
    parser.add_argument("-s", "--set", action="append", default=[], help="KEY=VALUE, as for focuscrawl bench")
    args = parser.parse_args()
    runs = [int(r) for r in args.runs.split(",")]
    config = load_config(BenchConfig, overrides=args.set, base=row_config(args, runs=max(runs) + 1))
    web = OfflineWeb(args.web)
    topic = bench_topic(web, config)
    run_seeds = draw_seeds(topic, config)
    classifiers = Classifiers(topic.inputs, config.seed)
    for run in runs:
        events: list[StepEvent] = []
        settings = config.run_settings(run)
        crawl = build_crawl(settings, StrategyPlan(settings, args.strategy, judge=topic.truth), topic.inputs,
                            run_seeds[run], classifiers=classifiers, judge=topic.truth.credit_once(),
                            sinks=[events.append])
        stats = crawl.engine.run(web)
        found, curve = 0, []
        for event in events:
            found += bool(event.relevant)
            curve.append(found)
        at = ", ".join(f"{c}: {curve[c - 1]}" for c in CHECKPOINTS if c <= len(curve))
        print(f"run {run}, {args.strategy}: {stats.relevant} relevant pages on {len(stats.relevant_hosts)} hosts "
              f"in {len(events)} steps (after {at})")
        print("  status:", dict(Counter(e.status for e in events).most_common()))
        kinds: defaultdict[str, Counter[str]] = defaultdict(Counter)
        for event in events:
            kind = web.pathology(event.url)
            if kind is not None:
                kinds[kind][event.host] += 1
        for kind, hosts in sorted(kinds.items(), key=lambda item: -item[1].total()):
            print(f"  {kind}: {hosts.total()} fetches;", ", ".join(f"{h} {n}" for h, n in hosts.most_common(4)))
        top = Counter(e.host for e in events)
        relevant = Counter(e.host for e in events if e.relevant)
        print("  busiest hosts (fetches, relevant):", ", ".join(f"{h} {n} ({relevant[h]})" for h, n in
                                                               top.most_common(6)))
        diagnostics = crawl.engine.policy.diagnostics()
        if diagnostics:
            print("  learned:", ", ".join(f"{k} {v:.3f}" for k, v in diagnostics.items()))
    web.close()


if __name__ == "__main__":
    main()
