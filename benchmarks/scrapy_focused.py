"""Issue 33, Scrapy: a spider run by focuscrawl's policy (focuscrawl.scrapy) against ``focuscrawl crawl`` with the same
strategy and seeds, and against Scrapy's default scheduler, on dev-suite rows served over loopback.

    python -m benchmarks.scrapy_focused webs [--rows "Physics|Religion"] [--run 0] [--budget 1000] \
        [--concurrency 1,8] [--strategy adaptive] [--workdir DIR] [--read-queues 32,0]

For each chosen Wikispeedia row of the dev suite, a topic directory is written with the benchmark's inputs for run
``--run`` (``init_from_web``: its 20 + 80 example pages and its seed, drawn for ``--budget``), the web is served by
``focuscrawl web serve`` on loopback, and at each concurrency (requests in flight; no delay, robots.txt obeyed):

- ``focuscrawl crawl`` (``Crawler``, over the hosts map), ``--strategy``;
- ``focused scrapy``: the spider below (every link of every page, ``response.follow_all``) under ``scrapy
  runspider`` with the ``FocusedCrawl`` add-on, the same topic directory, strategy and budget;
- ``scrapy default``: the same spider with Scrapy's default scheduler, stopped after the budget's answers
  (``CLOSESPIDER_PAGECOUNT``, robots.txt's one answer included).

The labels score each crawl's pages in the order fetched (``focuscrawl crawl``'s pages.jsonl, the focused spider's
``FOCUSCRAWL_PAGES`` file, the default spider's own log), as ``focuscrawl bench`` scores a crawl: the area under
the relevant pages found per page fetched, over the oracle's on the same seeds (``bench.runner.crawl_once``, the
offline web). For the focused spider also the steps that fetched the URL ``focuscrawl crawl`` fetched at the same
step. Pages/s: for the spiders Scrapy's answers (robots.txt's included) over the time from the spider's opening
(after the focused scheduler has trained its classifier) to its closing; for ``focuscrawl crawl`` its steps over
the span of their fetch times in pages.jsonl. For the focused spider also the seconds focuscrawl spent in Scrapy's
reactor: reading pages (parse, main text) and recording them (classifier, defences, the policy's observe), and the
policy's decisions (its selects, and its observes, which recording includes); since issue 46 that reading and
recording can run in the add-on's page reader process (``FOCUSCRAWL_READ_QUEUE`` > 0; one focused crawl for each of
``--read-queues``; 0 reads and records in Scrapy's thread), whose seconds they then are. CPU s: the spider
process's user + system seconds, its page reader process's included.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import scrapy
from scrapy.http import TextResponse

from benchmarks.served import serve_web

BASE_IP = "127.0.46.1"
DEFAULT_ROWS = r"^wikispeedia/subject\.Science\.Physics$|^wikispeedia/subject\.Religion$"


class FollowEverything(scrapy.Spider):
    """A plain spider: an item per page, every link followed. ``-a seeds=FILE -a log=FILE -a stats=FILE``."""

    name = "follow-everything"

    def __init__(self, seeds: str = "", log: str = "", stats: str = "", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = Path(seeds).read_text().split()
        self.log_file, self.stats_file = open(log, "w", buffering=1), stats

    def parse(self, response):
        page = {"url": response.url, "final_url": response.url, "status": response.status}
        self.log_file.write(json.dumps(page) + "\n")
        if isinstance(response, TextResponse):
            yield {"url": response.url, "title": response.css("title::text").get()}
            yield from response.follow_all(css="a")

    def closed(self, reason):
        self.log_file.close()
        stats = self.crawler.stats.get_stats()  # Scrapy's elapsed time comes after this signal: ours, the same way
        elapsed = (datetime.now(tz=timezone.utc) - stats["start_time"]).total_seconds()
        Path(self.stats_file).write_text(json.dumps({**stats, "elapsed_s": elapsed}, default=str))


def scrapy_crawl(folder: Path, hosts_map: Path, seeds: Path, concurrency: int, focused: dict | None,
                 budget: int) -> tuple[list[dict], dict]:
    """Run FollowEverything in a subprocess: (its pages in fetch order, its Scrapy stats)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    settings = {"CONCURRENT_REQUESTS": concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency, "DOWNLOAD_DELAY": 0,
                "ROBOTSTXT_OBEY": True, "HTTPERROR_ALLOW_ALL": True, "RETRY_ENABLED": False,
                "TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "WARNING", "FOCUSCRAWL_HOSTS_MAP": str(hosts_map),
                "ADDONS": {"focuscrawl.scrapy.FocusedCrawl": 0}}
    if focused is None:  # Scrapy's own scheduler; the add-on only for its loopback download handler
        settings |= {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "CLOSESPIDER_PAGECOUNT": budget + 1}
    else:
        settings |= {**focused, "FOCUSCRAWL_PAGES": str(folder / "pages.jsonl"), "FOCUSCRAWL_BUDGET": budget}
    argv = [sys.executable, "-m", "scrapy", "runspider", __file__, "-a", f"seeds={seeds}",
            "-a", f"log={folder / 'log.jsonl'}", "-a", f"stats={folder / 'stats.json'}"]
    for key, value in settings.items():
        argv += ["-s", f"{key}={json.dumps(value) if isinstance(value, dict) else value}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(folder / "stderr.txt", "w") as err:
        subprocess.run(argv, check=True, stderr=err, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    name = "pages.jsonl" if focused is not None else "log.jsonl"
    pages = [json.loads(line) for line in (folder / name).read_text().splitlines()]
    cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return pages, {**json.loads((folder / "stats.json").read_text()), "cpu_s": cpu_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs")
    parser.add_argument("--rows", default=DEFAULT_ROWS, help="regular expression on the dev suite's row labels")
    parser.add_argument("--run", type=int, default=0, help="the benchmark run whose seed the topic gets")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--concurrency", default="1,8", help="requests in flight, one or more (comma-separated)")
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--read-queues", default="32,0", help="FOCUSCRAWL_READ_QUEUE of the focused spider, one or "
                        "more (comma-separated; 0: pages read in Scrapy's thread, > 0: in the page reader's process)")
    args = parser.parse_args()

    from benchmarks.distributed_quality import relevant_curve
    from focuscrawl.bench.protocol import init_from_web, load_topic
    from focuscrawl.bench.runner import ORACLE, crawl_once
    from focuscrawl.bench.suite import find_suite, load_suite
    from focuscrawl.builder import Classifiers
    from focuscrawl.config import RunSettings
    from focuscrawl.crawl import Crawler
    from focuscrawl.webs.store import OfflineWeb

    rows = [row for row in load_suite(find_suite("dev")).rows
            if row.web == "wikispeedia" and re.search(args.rows, row.label)]
    if not rows:
        sys.exit(f"error: no Wikispeedia row of the dev suite matches --rows {args.rows!r}")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="scrapy-focused-"))
    work.mkdir(parents=True, exist_ok=True)
    web_dir = Path(args.webs) / "wikispeedia"
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    read_queues = [int(q) for q in args.read_queues.split(",")]
    print(f"budget {args.budget}, strategy {args.strategy}, run {args.run}'s seed; folders in {work}\n")
    print("| row | in flight | crawler | pages | relevant | AUC/oracle | steps as focuscrawl crawl's | pages/s | "
          "CPU s | focuscrawl s: pages read + recorded (read, recorded, policy) of the crawl's |")
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    with serve_web(sys.executable, str(web_dir), BASE_IP) as hosts:
        hosts_map = work / "hosts.json"
        hosts_map.write_text(json.dumps(hosts))
        for row in rows:
            web = OfflineWeb(web_dir)
            bench = load_topic(web, row.topic, budget=args.budget)
            topic_dir = work / row.slug / "topic"
            inputs = init_from_web(topic_dir, web_dir, row.topic, run=args.run, budget=args.budget, overwrite=True)
            seeds = work / row.slug / "seeds.txt"
            seeds.write_text("\n".join(inputs.seeds) + "\n")
            oracle = crawl_once(web, bench, Classifiers(bench.inputs, 0), RunSettings(budget=args.budget), ORACLE,
                                args.run, inputs.seeds)
            web.close()

            def report(crawler: str, concurrency: int, pages: list[dict], rate: float, spent: str = "",
                       same: str = "", cpu_s: float | None = None) -> None:
                curve = relevant_curve(pages[:args.budget], bench.truth)
                found = curve[-1] if curve else 0
                auc = sum(curve) + found * (args.budget - len(curve))
                print(f"| {row.label} | {concurrency} | {crawler} | {len(pages)} | {found} | {auc / oracle.auc:.3f} | "
                      f"{same} | {rate:.0f} | {'' if cpu_s is None else f'{cpu_s:.1f}'} | {spent} |", flush=True)

            for concurrency in concurrencies:
                folder = work / row.slug / f"c{concurrency}"
                shutil.rmtree(folder / "focuscrawl", ignore_errors=True)  # a run folder would resume
                Crawler(topic=topic_dir, seeds_file=seeds, out=folder / "focuscrawl", hosts_map=hosts_map,
                        budget=args.budget, strategy=args.strategy, progress="none", plot=False,
                        concurrency=concurrency, warc=False,
                        fetch={"min_delay": 0.0, "per_host_concurrency": concurrency}).crawl()
                ours = [json.loads(line) for line in (folder / "focuscrawl" / "pages.jsonl").read_text().splitlines()]
                report("focuscrawl crawl", concurrency, ours,
                       len(ours) / (ours[-1]["fetched_at"] - ours[0]["fetched_at"] + ours[0]["fetch_ms"] / 1000))
                for read_queue in read_queues:
                    focused = {"FOCUSCRAWL_TOPIC": str(topic_dir), "FOCUSCRAWL_STRATEGY": args.strategy,
                               "FOCUSCRAWL_READ_QUEUE": read_queue}
                    pages, stats = scrapy_crawl(folder / f"focused-q{read_queue}", hosts_map, seeds, concurrency,
                                                focused, args.budget)
                    page_s, record_s = stats["focuscrawl/page_s"], stats["focuscrawl/record_s"]
                    report(f"focused scrapy, read queue {read_queue}", concurrency, pages,
                           stats["response_received_count"] / stats["elapsed_s"],
                           f"{page_s + record_s:.1f} ({page_s:.1f}, {record_s:.1f}, "
                           f"{stats['focuscrawl/decision_s']:.1f}) of {stats['elapsed_s']:.1f}",
                           str(sum(a["url"] == b["url"] for a, b in zip(ours, pages))), stats["cpu_s"])
                pages, stats = scrapy_crawl(folder / "default", hosts_map, seeds, concurrency, None, args.budget)
                report("scrapy default", concurrency, pages, stats["response_received_count"] / stats["elapsed_s"],
                       cpu_s=stats["cpu_s"])
    print(f"\nload average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
