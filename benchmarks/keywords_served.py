"""A real crawl from a few words: a topic made with ``topic init --keywords --description`` only, crawled over
HTTP from a loopback-served offline web, against the same crawl with the benchmark's example pages.

For each chosen dev-suite row and run, two topic directories are written the way a user would: one from
the row's keywords and a one-line description (``init_from_words``, no example page), one from the
benchmark's example pages (``init_from_web``, what ``focuscrawl bench`` gives an agent); both get run i's
seeds. Each is crawled with ``focuscrawl crawl``'s machinery (``Crawler``: HTTP fetcher, HTML parsing, run
folder) against the web served by ``focuscrawl web serve`` on 127.0.0.x, politeness delay 0 (it is our own
loopback server). The labels then score ``pages.jsonl``: relevant pages found (example pages held out, as in
the benchmark) and the area under the relevant-pages curve. The ratio keywords / examples of that area is
the figure issue 14 asks for (>= 0.9, median over topics); the oracle, the same for both, cancels out.

    python -m benchmarks.keywords_served webs [--rows REGEX] [--runs 2] [--budget 1000] [--strategy adaptive] \
        [--description "Wikipedia articles about {keyword}"] [--page-encoder]

``--description`` is the one-line description the keyword topic gets, ``{keyword}`` standing for the row's
first keyword; ``--description ""`` gives none (keywords only, as ``bench -s keyword_only=true`` does).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.served import serve_web
from focuscrawl.bench.protocol import init_from_web, load_topic
from focuscrawl.bench.suite import find_suite, load_suite
from focuscrawl.crawl import Crawler
from focuscrawl.topic.topic_dir import init_from_words
from focuscrawl.webs.store import OfflineWeb

DEFAULT_ROWS = r"Physics|Countries|Religion|Citizenship"  # two tuning and two held-out rows, mid-sized topics


def crawl_curve(topic_dir: Path, out: Path, hosts_map: Path, budget: int, strategy: str, relevant: frozenset[str],
                page_encoder: bool = False) -> tuple[int, float]:
    Crawler(topic=topic_dir, out=out, hosts_map=hosts_map, budget=budget, strategy=strategy, progress="none",
            plot=False, concurrency=4, fetch={"min_delay": 0.0, "per_host_concurrency": 4},
            page_encoder=page_encoder).crawl()
    found, area = 0, 0.0
    for line in (out / "pages.jsonl").read_text().splitlines():
        page = json.loads(line)
        found += page["url"] in relevant or page.get("final_url") in relevant
        area += found
    return found, area


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs")
    parser.add_argument("--rows", default=DEFAULT_ROWS)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--page-encoder", action="store_true",
                        help="the keyword topic's pages judged by the MiniLM transformer too (needs the neural extra)")
    parser.add_argument("--description", default="Wikipedia articles about {keyword}",
                        help="the keyword topic's description; {keyword} is the row's first keyword; '' for none")
    args = parser.parse_args()
    try:
        args.description.format(keyword="")
    except (KeyError, IndexError, ValueError) as error:
        parser.error(f"--description may hold only {{keyword}}: {error!r} in {args.description!r}")

    rows = [row for row in load_suite(find_suite("dev")).rows
            if row.web == "wikispeedia" and re.search(args.rows, row.topic)]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="keywords-served-"))
    web_dir = f"{args.webs}/wikispeedia"
    ratios = []  # one per topic: keywords' mean area over runs / examples' mean area
    print("topic | run | relevant (examples) | relevant (keywords) | AUC ratio keywords / examples")
    with serve_web(sys.executable, web_dir, "127.0.20.1") as mapping:
        hosts_map = work / "hosts.json"
        hosts_map.write_text(json.dumps(mapping))
        for row in rows:
            web = OfflineWeb(web_dir)
            bench = load_topic(web, row.topic)
            web.close()
            words = ", ".join(bench.inputs.keywords)
            description = args.description.format(keyword=bench.inputs.keywords[0])
            areas: dict[str, list[float]] = {"examples": [], "keywords": []}
            for run in range(args.runs):
                slug = f"{row.topic}-{run}"
                examples = init_from_web(work / "topics" / f"{slug}-examples", web_dir, row.topic, run=run,
                                         overwrite=True)
                init_from_words(work / "topics" / f"{slug}-keywords", keywords=bench.inputs.keywords,
                                description=description, seeds=examples.seeds, overwrite=True)
                results = {}
                for kind in ("examples", "keywords"):
                    results[kind] = crawl_curve(work / "topics" / f"{slug}-{kind}", work / "runs" / f"{slug}-{kind}",
                                                hosts_map, args.budget, args.strategy, bench.truth.relevant,
                                                args.page_encoder)
                for kind, (_, area) in results.items():
                    areas[kind].append(area)
                ratio = results["keywords"][1] / max(results["examples"][1], 1.0)
                print(f"{row.topic} | {run} | {results['examples'][0]} | {results['keywords'][0]} | {ratio:.2f}",
                      flush=True)
            ratios.append(statistics.mean(areas["keywords"]) / max(statistics.mean(areas["examples"]), 1.0))
            print(f"{row.topic} | all runs | | | {ratios[-1]:.2f}   (keywords: {words}; description: "
                  f"{description!r})", flush=True)
    print(f"median over {len(ratios)} topics of the ratio keywords / examples: {statistics.median(ratios):.3f}; "
          f"folders in {work}")


if __name__ == "__main__":
    main()
