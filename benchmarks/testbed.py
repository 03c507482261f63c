"""Issue 43: crawls of a test bed of real web applications (``focuscrawl web testbed build``) over HTTP, and
what each spent on each application and each kind of URL.

    python -m benchmarks.testbed OUT [--strategies adaptive,best-first] [--repeats 3] [--budget 1000] \
        [--in-flight 8] [--per-host 4] [--min-delay 0.05] [--seeds 5] [--run 0] [--json FILE] [--workdir DIR]

The test bed is served once (``serve_testbed``: its web with ``focuscrawl web serve``, Trac, Datasette, the blog
and the calendar as their own servers). The topic directory is what ``focuscrawl bench`` gives an agent on the
test bed's web (``init_from_web``: 20 + 80 example pages and run ``--run``'s seeds, all pages of the web: a
crawl meets the applications only through the web's links into them). Each strategy crawls it ``--repeats``
times with ``focuscrawl crawl``'s machinery, ``--in-flight`` requests at once, ``--per-host`` at once per host,
``--min-delay`` between a host's requests, the crawl kept to the test bed's hosts (``scope.allowed_domains``:
the applications link out, to trac.edgewall.org and others, which must not be fetched from here).

Per run: relevant pages (the web's, by its labels, and the applications' content pages made from texts of the
topic, ``relevant.txt``; each once), how many of those were in the applications, and the share of requests
on each application and on each kind of URL (``labels.json``; ``web`` for the web's own pages).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from focuscrawl.bench.protocol import init_from_web, load_topic
from focuscrawl.crawl import Crawler
from focuscrawl.urls import registered_domain
from focuscrawl.webs.store import OfflineWeb
from focuscrawl.webs.testbed import UrlLabeller, read_manifest, serve_testbed
from focuscrawl.webs.testbed.spend import relevant_urls, spend_of_run

APPS = ("web", "trac", "datasette", "pelican", "scheduler")
KIND_COLUMNS = ("web", "content", "history", "version", "diff", "timeline", "calendar", "occurrence", "translation",
                "query", "listing", "archive", "row", "export", "account", "help", "asset", "other")


def percent(count: int, total: int) -> str:
    return f"{100 * count / total:.0f}" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("testbed", type=Path)
    parser.add_argument("--strategies", default="adaptive,best-first")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--per-host", type=int, default=4, help="requests in flight per host")
    parser.add_argument("--min-delay", type=float, default=0.05, help="seconds between two requests to a host")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--run", type=int, default=0, help="the benchmark run whose seeds the topic gets")
    parser.add_argument("--json", type=Path, default=None, help="write every run's figures here")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    manifest = read_manifest(args.testbed)
    web_dir = args.testbed / manifest["web"]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="testbed-bench-"))
    topic_dir = work / "topic"
    init_from_web(topic_dir, web_dir, manifest["topic"], seeds=args.seeds, run=args.run, budget=args.budget,
                  overwrite=True)
    web = OfflineWeb(web_dir)
    relevant = relevant_urls(args.testbed, load_topic(web, manifest["topic"], budget=args.budget).truth.relevant)
    web.close()
    labeller = UrlLabeller.load(args.testbed)
    print(f"{args.testbed}: {manifest['topic']}, {len(relevant)} relevant pages ({manifest['from']} and "
          f"{', '.join(manifest['apps'])}), run {args.run}'s {args.seeds} seeds, budget {args.budget}, "
          f"{args.in_flight} in flight, {args.per_host} per host, min delay {args.min_delay:g} s; folders in {work}")
    print("| strategy | repeat | relevant (in apps) | " + " | ".join(f"% {app}" for app in APPS) + " | "
          + " | ".join(KIND_COLUMNS) + " | wall s |")
    print("|---" * (4 + len(APPS) + len(KIND_COLUMNS)) + "|", flush=True)
    results = []
    with serve_testbed(args.testbed) as hosts:
        hosts_map = work / "hosts.json"
        hosts_map.write_text(json.dumps(hosts))
        domains = sorted({registered_domain(host) or host for host in hosts})
        for strategy in [name for name in args.strategies.split(",") if name]:
            for repeat in range(args.repeats):
                out = work / "runs" / f"{strategy}-{repeat}"
                started = time.monotonic()
                Crawler(topic=topic_dir, out=out, hosts_map=hosts_map, budget=args.budget, strategy=strategy,
                        progress="none", plot=False, concurrency=args.in_flight,
                        scope={"allowed_domains": domains},
                        fetch={"min_delay": args.min_delay, "per_host_concurrency": args.per_host}).crawl()
                wall = time.monotonic() - started
                spend = spend_of_run(out, labeller, relevant)
                results.append({"strategy": strategy, "repeat": repeat, "wall_s": round(wall, 1), **spend.as_dict()})
                print(f"| {strategy} | {repeat} | {spend.relevant} ({spend.relevant_in_apps}) | "
                      + " | ".join(percent(spend.by_app[app], spend.requests) for app in APPS) + " | "
                      + " | ".join(percent(spend.by_kind[kind], spend.requests) for kind in KIND_COLUMNS)
                      + f" | {wall:.0f} |", flush=True)
    summarise(results)
    if args.json is not None:
        args.json.write_text(json.dumps({"testbed": str(args.testbed), "manifest": manifest, "args": {
            key: str(value) for key, value in vars(args).items()}, "runs": results}, indent=1))


def summarise(results: list[dict]) -> None:
    for strategy in dict.fromkeys(result["strategy"] for result in results):
        runs = [result for result in results if result["strategy"] == strategy]
        in_apps = [1 - result["by_app"].get("web", 0) / max(result["requests"], 1) for result in runs]
        print(f"{strategy}: relevant median {statistics.median(r['relevant'] for r in runs):g}, share of budget in "
              f"the applications median {100 * statistics.median(in_apps):.0f}% (runs: "
              f"{', '.join(f'{100 * share:.0f}%' for share in in_apps)})", flush=True)


if __name__ == "__main__":
    main()
