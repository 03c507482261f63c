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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.bench.protocol import init_from_web, load_topic
from focuscrawl.config import CrawlConfig, load_config
from focuscrawl.crawl import Crawler
from focuscrawl.urls import registered_domain
from focuscrawl.webs.store import OfflineWeb
from focuscrawl.webs.testbed import UrlLabeller, read_manifest, serve_testbed
from focuscrawl.webs.testbed.spend import group_shares, relevant_urls, spend_of_run

APPS = ("web", "trac", "datasette", "pelican", "scheduler")
KIND_COLUMNS = ("web", "content", "history", "version", "diff", "timeline", "calendar", "occurrence", "translation",
                "query", "listing", "archive", "row", "export", "account", "help", "asset", "other")


@dataclass
class BedTopic:
    """A test bed made ready for crawls: the topic directory an agent gets and the ground truth to score with."""

    testbed: Path
    manifest: dict
    topic_dir: Path
    relevant: frozenset[str]
    labeller: UrlLabeller


@dataclass
class CrawlSetting:
    """How each crawl of the bed runs; ``overrides`` are ``focuscrawl crawl -s KEY=VALUE`` settings."""

    budget: int = 1000  # requests of a crawl
    in_flight: int = 8  # requests at once
    per_host: int = 4  # requests at once to one host
    min_delay: float = 0.05  # seconds between two requests to a host
    overrides: Sequence[str] = ()


def percent(count: int, total: int) -> str:
    return f"{100 * count / total:.0f}" if total else "-"


def prepare_bed(testbed: Path, work: Path, *, run: int, seeds: int, budget: int) -> BedTopic:
    """The topic directory ``focuscrawl bench`` would give an agent on the bed's web, with run ``run``'s seeds."""
    manifest = read_manifest(testbed)
    web_dir = testbed / manifest["web"]
    topic_dir = work / "topic"
    init_from_web(topic_dir, web_dir, manifest["topic"], seeds=seeds, run=run, budget=budget, overwrite=True)
    web = OfflineWeb(web_dir)
    try:
        relevant = relevant_urls(testbed, load_topic(web, manifest["topic"], budget=budget).truth.relevant)
    finally:
        web.close()
    return BedTopic(testbed, manifest, topic_dir, relevant, UrlLabeller.load(testbed))


def crawl_bed(bed: BedTopic, work: Path, strategies: Sequence[str], repeats: int,
              setting: CrawlSetting) -> Iterator[dict]:
    """Serve the bed once and crawl it ``repeats`` times per strategy; yield each run's figures as it ends."""
    with serve_testbed(bed.testbed) as hosts:
        hosts_map = work / "hosts.json"
        hosts_map.write_text(json.dumps(hosts))
        domains = sorted({registered_domain(host) or host for host in hosts})
        for strategy in strategies:
            for repeat in range(repeats):
                out = work / "runs" / f"{strategy}-{repeat}"
                config = load_config(CrawlConfig, None, setting.overrides, topic=bed.topic_dir, out=out,
                                     hosts_map=hosts_map, budget=setting.budget, strategy=strategy, progress="none",
                                     plot=False, concurrency=setting.in_flight, scope={"allowed_domains": domains},
                                     fetch={"min_delay": setting.min_delay,
                                            "per_host_concurrency": setting.per_host})
                started = time.monotonic()
                Crawler(config).crawl()
                wall = time.monotonic() - started
                spend = spend_of_run(out, bed.labeller, bed.relevant)
                yield {"strategy": strategy, "repeat": repeat, "wall_s": round(wall, 1),
                       "groups": group_shares(spend.by_kind, spend.requests), **spend.as_dict()}


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
    work = args.workdir or Path(tempfile.mkdtemp(prefix="testbed-bench-"))
    bed = prepare_bed(args.testbed, work, run=args.run, seeds=args.seeds, budget=args.budget)
    manifest = bed.manifest
    print(f"{args.testbed}: {manifest['topic']}, {len(bed.relevant)} relevant pages ({manifest['from']} and "
          f"{', '.join(manifest['apps'])}), run {args.run}'s {args.seeds} seeds, budget {args.budget}, "
          f"{args.in_flight} in flight, {args.per_host} per host, min delay {args.min_delay:g} s; folders in {work}")
    print("| strategy | repeat | relevant (in apps) | " + " | ".join(f"% {app}" for app in APPS) + " | "
          + " | ".join(KIND_COLUMNS) + " | wall s |")
    print("|---" * (4 + len(APPS) + len(KIND_COLUMNS)) + "|", flush=True)
    results = []
    setting = CrawlSetting(args.budget, args.in_flight, args.per_host, args.min_delay)
    for result in crawl_bed(bed, work, [name for name in args.strategies.split(",") if name], args.repeats, setting):
        results.append(result)
        requests = result["requests"]
        print(f"| {result['strategy']} | {result['repeat']} | {result['relevant']} ({result['relevant_in_apps']}) | "
              + " | ".join(percent(result["by_app"].get(app, 0), requests) for app in APPS) + " | "
              + " | ".join(percent(result["by_kind"].get(kind, 0), requests) for kind in KIND_COLUMNS)
              + f" | {result['wall_s']:.0f} |", flush=True)
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
