"""What the engine's defences cost an offline crawl in CPU time: the same crawl with them on and off, interleaved.

    python -m benchmarks.defences_cost webs/wikispeedia subject.Science.Biology
    python -m benchmarks.defences_cost webs/webkb course --seeds-per-run 10

One benchmark run's crawl (protocol run 0, ``--strategy``, budget 1,000), repeated ``--repeats`` times with the
defences on and off in turn; the classifier is trained once before, so each crawl's CPU time (this process's,
which other work on the machine does not inflate) is the crawl's alone: fetches from the offline web, the
classifier on every page, the policy and the defences. Best of the repeats, as the least disturbed.
"""

from __future__ import annotations

import time

from benchmarks.row_args import row_config, row_parser
from focuscrawl.bench.runner import bench_topic, crawl_once, draw_seeds
from focuscrawl.builder import Classifiers
from focuscrawl.engine.defences import DefenceSettings
from focuscrawl.webs.store import OfflineWeb


def main() -> None:
    parser = row_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    config = row_config(args, runs=1)
    web = OfflineWeb(args.web)
    topic = bench_topic(web, config)
    [seeds] = draw_seeds(topic, config)
    classifiers = Classifiers(topic.inputs, config.seed, memoize=False)  # every crawl classifies its own pages
    settings = config.run_settings(0)
    crawl_once(web, topic, classifiers, settings, args.strategy, 0, seeds)  # warm: models, caches, the web's pages
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    for _ in range(args.repeats):
        for name, defences in (("on", DefenceSettings()), ("off", DefenceSettings.off())):
            started = time.process_time()
            crawl_once(web, topic, classifiers, settings.model_copy(update={"defences": defences}), args.strategy,
                       0, seeds)
            cpu[name].append(time.process_time() - started)
    on, off = min(cpu["on"]), min(cpu["off"])
    print(f"{web.name} / {args.topic}, {args.strategy}, {args.budget} pages: CPU s best of {args.repeats}: "
          f"defences on {on:.2f}, off {off:.2f}: +{on / off - 1:.0%} ({1000 * (on - off) / args.budget:.2f} ms a page)")
    web.close()


if __name__ == "__main__":
    main()
