"""How far one suite row's figure moves by the crawl's own random seed alone, with the engine's defences on and off.

    python -m benchmarks.crawl_seed_spread webs/webkb student --seeds-per-run 10 --crawl-seeds 5 \
        --strategy adaptive

The row is the suite's (the same topic seed, the same seeds per protocol run, the same oracle); only the crawl
seed of each run changes: offset 0 is the suite's own crawl, offset k adds 7919 * k. For each offset the row's
mean AUC/oracle is printed with the defences on (the default) and off, then the spread of the row mean over the
offsets and the on - off difference at each. A move of the row's mean by the defences that lies inside the
spread the crawl seed alone gives is noise, not an effect of the defences (issue 31: "the suite's figures move
by less than 0.01").
"""

from __future__ import annotations

import statistics

from benchmarks.row_args import row_config, row_parser
from focuscrawl.bench.runner import ORACLE, bench_topic, crawl_once, draw_seeds
from focuscrawl.builder import Classifiers
from focuscrawl.engine.defences import DefenceSettings
from focuscrawl.webs.store import OfflineWeb

SEED_STEP = 7919  # a prime: offsets' crawl seeds never meet another run's


def main() -> None:
    parser = row_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-per-domain", type=int, default=None)
    parser.add_argument("--crawl-seeds", type=int, default=5, help="offsets 0..K-1 (0: the suite's crawl)")
    args = parser.parse_args()

    config = row_config(args, args.runs, args.max_per_domain)
    web = OfflineWeb(args.web)
    topic = bench_topic(web, config)
    run_seeds = draw_seeds(topic, config)
    classifiers = Classifiers(topic.inputs, config.seed, memoize=True)
    variants = {"on": config.defences, "off": DefenceSettings.off()}
    means: dict[str, list[float]] = {name: [] for name in variants}
    print(f"{web.name} / {args.topic}, {args.strategy}, {args.runs} runs: row mean AUC/oracle per crawl seed offset")
    print("| offset | defences on | defences off | on - off |")
    print("|---|---|---|---|")
    for offset in range(args.crawl_seeds):
        for name, defences in variants.items():
            ratios = []
            for run, seeds in enumerate(run_seeds):
                base = config.run_settings(run)
                settings = base.model_copy(update={"defences": defences})
                # the oracle as the suite computes it (its crawl seed is the run's); the strategy's seed moves
                oracle = crawl_once(web, topic, classifiers, settings, ORACLE, run, seeds).auc
                moved = settings.model_copy(update={"seed": base.seed + SEED_STEP * offset})
                ratios.append(crawl_once(web, topic, classifiers, moved, args.strategy, run, seeds).auc / oracle)
            means[name].append(statistics.fmean(ratios))
        on, off = means["on"][-1], means["off"][-1]
        print(f"| {offset} | {on:.3f} | {off:.3f} | {on - off:+.3f} |", flush=True)
    for name, values in means.items():
        print(f"defences {name}: row mean from {min(values):.3f} to {max(values):.3f} over {len(values)} crawl "
              f"seeds (spread {max(values) - min(values):.3f}, mean {statistics.fmean(values):.3f})")
    differences = [a - b for a, b in zip(means["on"], means["off"])]
    print(f"on - off: mean {statistics.fmean(differences):+.3f}, from {min(differences):+.3f} to "
          f"{max(differences):+.3f}")
    web.close()


if __name__ == "__main__":
    main()
