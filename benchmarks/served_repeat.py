"""Issue 32's steadiness over HTTP: the same crawl of a served web repeated, to see how far its runs swing.

    python -m benchmarks.served_repeat webs --web debian --topic topic.biology [--run 0] [--repeats 5] \
        [--budget 2000] [--concurrency 16] [--strategies adaptive,best-first] [--keywords] [--workdir DIR]

The web (``WEBS/WEB``, a labelled offline web) is served by ``focuscrawl web serve`` on loopback, and a topic
directory is written as ``focuscrawl bench`` gives an agent run ``--run``'s inputs (``init_from_web``: the 20 + 80
example pages and the row's seeds, drawn for ``--budget``; with ``--keywords``, the topic's keywords alone and the
same seeds, as ``topic init --keywords`` writes it). Each strategy then crawls it ``--repeats`` times with
``focuscrawl crawl``'s machinery, ``--concurrency`` requests in flight (default politeness), the same seeds and
settings every time: what differs between repeats is only which answers come back first, the race of a crawl
with many fetches in flight. Labels score each ``pages.jsonl``: relevant pages and relevant hosts at the budget
(example pages held out, as in the benchmark), and per strategy the median, the worst repeat and worst / median
(issue 32 asks that a served crawl never fall below half its median).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.served import serve_web
from focuscrawl.bench.protocol import init_from_web, load_topic
from focuscrawl.crawl import Crawler
from focuscrawl.topic.topic_dir import init_from_words
from focuscrawl.urls import site_of
from focuscrawl.webs.store import OfflineWeb


def score(out: Path, relevant: frozenset[str]) -> tuple[int, int, int]:
    """(relevant pages, relevant hosts, requests) of a run folder's pages.jsonl, a page counted once."""
    pages, hosts, requests = set(), set(), 0
    for line in (out / "pages.jsonl").read_text().splitlines():
        page = json.loads(line)
        requests += 1
        url = page["url"] if page["url"] in relevant else page.get("final_url")
        if url in relevant:
            pages.add(url)
            hosts.add(site_of(url))
    return len(pages), len(hosts), requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs")
    parser.add_argument("--web", default="debian")
    parser.add_argument("--topic", default="topic.biology")
    parser.add_argument("--run", type=int, default=0, help="the benchmark run whose seeds the topic gets")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per run, as the suite row has it")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--strategies", default="adaptive,best-first")
    parser.add_argument("--keywords", action="store_true", help="the topic's keywords alone, no example page")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    web_dir = f"{args.webs}/{args.web}"
    work = args.workdir or Path(tempfile.mkdtemp(prefix="served-repeat-"))
    topic_dir = work / "topic"
    inputs = init_from_web(topic_dir, web_dir, args.topic, seeds=args.seeds, run=args.run, budget=args.budget,
                           overwrite=True)
    if args.keywords:
        init_from_words(topic_dir, keywords=inputs.keywords, seeds=inputs.seeds, overwrite=True)
    web = OfflineWeb(web_dir)
    truth = load_topic(web, args.topic, budget=args.budget).truth
    web.close()
    print(f"{args.web} {args.topic}, run {args.run}'s {len(inputs.seeds)} seeds, "
          f"{'keywords only' if args.keywords else 'examples'}, budget {args.budget}, {args.concurrency} in flight")
    print("strategy | repeat | relevant pages | relevant hosts | requests")
    with serve_web(sys.executable, web_dir, "127.0.40.1") as mapping:
        hosts_map = work / "hosts.json"
        hosts_map.write_text(json.dumps(mapping))
        for strategy in [s for s in args.strategies.split(",") if s]:
            found = []
            for repeat in range(args.repeats):
                out = work / "runs" / f"{strategy}-{repeat}"
                Crawler(topic=topic_dir, out=out, hosts_map=hosts_map, budget=args.budget, strategy=strategy,
                        progress="none", plot=False, concurrency=args.concurrency).crawl()
                pages, hosts, requests = score(out, truth.relevant)
                found.append(pages)
                print(f"{strategy} | {repeat} | {pages} | {hosts} | {requests}", flush=True)
            median = statistics.median(found)
            print(f"{strategy}: median {median:g}, worst {min(found)}, worst / median {min(found) / median:.2f}",
                  flush=True)
    print(f"folders in {work}")


if __name__ == "__main__":
    main()
