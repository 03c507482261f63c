"""The whole crawl, polite, against Scrapy: pages with status 200 per second and CPU per page, interleaved.

    python -m benchmarks.full_crawl_vs_scrapy [--pages 50000] [--hosts 2000] [--latency-ms 50] [--budget 4000] \
        [--concurrency 64] [--reps 3] [--kinds bfs,adaptive,scrapy] [--out DIR] [--profile KIND]

Builds a synthetic web (``focuscrawl web synth``: ``--pages`` pages on ``--hosts`` hosts, ``--web-seed``), serves it on
loopback (127.0.40.1 upwards, ``--latency-ms`` before each answer) in a subprocess, makes a topic of its topic 0 (the
benchmark protocol's examples and 5 seeds) and crawls it ``--reps`` times with each kind, the kinds in a rotated
order each repetition (A B C, B C A, C A B) so that a change in the machine's load falls on all of them:

- ``bfs``, ``adaptive``: ``focuscrawl crawl --strategy KIND --warc --concurrency 64`` with the default politeness
  (robots.txt obeyed, one request at a time per host, 1 s from the end of one to the start of the next), run as
  ``Crawler(config).run()`` in a subprocess: the policy, the defences, the state store, pages.jsonl, harvest.csv
  and the WARC, as the command writes them.
- ``scrapy``: Scrapy (the ``scrapy`` extra's) from the same seeds, following every link into the web's hosts,
  breadth-first with ``JOBDIR`` (disk queues and the seen-requests file), CONCURRENT_REQUESTS=64,
  CONCURRENT_REQUESTS_PER_DOMAIN=1, DOWNLOAD_DELAY=1 with RANDOMIZE_DOWNLOAD_DELAY off (Scrapy's default would
  draw 0.5-1.5 s: less polite than 1 s), ROBOTSTXT_OBEY; each response's title, body text and links extracted and
  its item (URL, status, title, text) written to a JSON-lines feed. Requests reach the loopback web through
  ``focuscrawl.scrapy.LoopbackDownloadHandler`` (the host's address, the Host header kept).

Each run stops after ``--budget`` responses to page requests (robots.txt not counted). Measured over the span from
its first to its last page, in the crawling process: pages with status 200 per second, and the process's CPU
seconds in that span per page (start-up, topic training and Scrapy's engine start are outside the span); and, by
the web's labels (the benchmark's scoring only: no crawler sees them), the relevant pages of topic 0 among the pages
with status 200 (held-out example pages not counted), and those per second.
``--profile KIND`` runs one more crawl of KIND under cProfile and prints its CPU per page by component.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.served import serve_web

BASE_IP = "127.0.40.1"
FOCUSCRAWL_KINDS = ("bfs", "adaptive")


# -- one crawl, in its own process -------------------------------------------------------------------------------
class Span:
    """Pages seen, those with status 200, and the wall and CPU clocks at the first and the last page."""

    def __init__(self, profiler=None):
        self.profiler = profiler  # enabled at the first page: start-up stays out of the profile
        self.pages = self.ok = 0
        self.first: tuple[float, float] | None = None
        self.last: tuple[float, float] | None = None
        self.hosts: set[str] = set()

    def page(self, status: int, host: str) -> None:
        now = (time.perf_counter(), time.process_time())
        if self.first is None:
            self.first = now
            if self.profiler is not None:
                self.profiler.enable()
        self.last = now
        self.pages += 1
        self.ok += status == 200
        self.hosts.add(host)

    def report(self, kind: str, **extra) -> dict:
        wall = self.last[0] - self.first[0] if self.first else 0.0
        cpu = self.last[1] - self.first[1] if self.first else 0.0
        return {"kind": kind, "pages": self.pages, "ok": self.ok, "hosts": len(self.hosts), "span_s": round(wall, 3),
                "cpu_s": round(cpu, 3), "ok_per_s": round(self.ok / wall, 1) if wall else 0.0,
                "cpu_ms_per_page": round(1000 * cpu / max(self.pages - 1, 1), 3), **extra}


def focuscrawl_crawl(args: argparse.Namespace, span: Span) -> dict:
    import asyncio

    from focuscrawl.config import CrawlConfig, load_config
    from focuscrawl.crawl import Crawler

    config = load_config(CrawlConfig, None, ["plot=false", *args.set], topic=args.topic, out=args.run,
                         strategy=args.kind,
                         budget=args.budget, hosts_map=args.hosts_map, concurrency=args.concurrency, warc=True,
                         progress="none")

    async def crawl() -> None:
        async for record in Crawler(config).run():
            span.page(record.status, record.host)

    asyncio.run(crawl())
    return span.report(args.kind)


def scrapy_crawl(args: argparse.Namespace, span: Span) -> dict:
    from urllib.parse import urlsplit

    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import CloseSpider
    from scrapy.http import TextResponse
    from scrapy.linkextractors import LinkExtractor

    hosts = json.loads(Path(args.hosts_map).read_text())
    from focuscrawl.topic.topic_dir import load_topic_dir

    seeds = list(load_topic_dir(args.topic).seeds)  # as focuscrawl's crawl reads them
    budget = args.budget

    class Everything(scrapy.Spider):
        """Breadth-first over every link into the web's hosts; each page's title, text and links read."""

        name = "full-crawl"
        extractor = LinkExtractor()

        async def start(self):
            for url in seeds:
                yield scrapy.Request(url)

        def parse(self, response):
            if span.pages >= budget:
                return
            span.page(response.status, urlsplit(response.url).hostname or "")
            if span.pages == budget:
                raise CloseSpider("budget")
            if not isinstance(response, TextResponse):
                yield {"url": response.url, "status": response.status}
                return
            yield {"url": response.url, "status": response.status, "title": response.css("title::text").get(),
                   "text": " ".join(response.xpath("//body//text()").getall())}
            for link in self.extractor.extract_links(response):
                if urlsplit(link.url).hostname in hosts:
                    yield scrapy.Request(link.url)

    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": args.concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 1.0, "RANDOMIZE_DOWNLOAD_DELAY": False, "ROBOTSTXT_OBEY": True,
        "JOBDIR": str(run / "job"), "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "FEEDS": {str(run / "items.jsonl"): {"format": "jsonlines"}},
        "HTTPERROR_ALLOW_ALL": True, "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
        "FOCUSCRAWL_HOSTS_MAP": args.hosts_map,
        # Every other scheme off: their handlers would resolve the web's host names on the network.
        "DOWNLOAD_HANDLERS": {"http": "focuscrawl.scrapy.LoopbackDownloadHandler",
                              "https": "focuscrawl.scrapy.LoopbackDownloadHandler",
                              "ftp": None, "s3": None, "file": None, "data": None},
    })
    process.crawl(Everything)
    process.start()
    return span.report("scrapy")


def one_crawl(args: argparse.Namespace) -> None:
    """The hidden ``--one KIND`` mode: one crawl, its figures as one JSON line on stdout."""
    crawl = scrapy_crawl if args.kind == "scrapy" else focuscrawl_crawl
    profiler = None
    if args.profile_to:
        import cProfile

        profiler = cProfile.Profile(time.process_time)  # CPU time: the event loop's idle wait is not the crawl's
    row = crawl(args, Span(profiler))
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile_to)
    print(json.dumps(row), flush=True)


# -- the benchmark ------------------------------------------------------------------------------------------------
def relevant_fetched(run: Path, relevant: frozenset[str]) -> int:
    """Relevant pages among a run's pages with status 200: focuscrawl's pages.jsonl, Scrapy's feed."""
    feed = run / "pages.jsonl" if (run / "pages.jsonl").exists() else run / "items.jsonl"
    fetched = set()
    with feed.open() as lines:
        for line in lines:
            page = json.loads(line)
            if page.get("status") == 200:
                fetched.add(page["url"])
    return len(fetched & relevant)


def run_one(label: str, run: Path, topic: Path, hosts_map: Path, args: argparse.Namespace,
            profile_to: Path | None = None, relevant: frozenset[str] = frozenset()) -> dict:
    """One crawl in a subprocess; ``label`` is a kind, or ``KIND@baseline`` for the kind with ``--baseline``'s code."""
    kind, _, baseline = label.partition("@")
    env = dict(os.environ)
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join([args.baseline, os.getcwd()])  # the baseline's focuscrawl, these scripts
    command = [sys.executable, "-m", "benchmarks.full_crawl_vs_scrapy", "--one", kind, "--run", str(run),
               "--topic", str(topic), "--hosts-map", str(hosts_map), "--budget", str(args.budget),
               "--concurrency", str(args.concurrency), *(f"--set={setting}" for setting in args.set)]
    if profile_to is not None:
        command += ["--profile-to", str(profile_to)]
    shutil.rmtree(run, ignore_errors=True)  # a run folder left from before would be resumed, its budget spent
    load = os.getloadavg()[0]
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["kind"] = label
    row["load"] = round(load, 2)
    row["relevant"] = relevant_fetched(run, relevant)
    row["relevant_per_s"] = round(row["relevant"] / row["span_s"], 1) if row["span_s"] else 0.0
    return row


def summary(rows: list[dict]) -> list[str]:
    """Per kind: each repetition's pages/s and CPU per page, their medians, and the ratio to Scrapy's median."""
    kinds = list(dict.fromkeys(row["kind"] for row in rows))
    medians = {kind: statistics.median(r["ok_per_s"] for r in rows if r["kind"] == kind) for kind in kinds}
    lines = ["| crawler | 200s/s per repetition | median | CPU ms/page per repetition | median | / Scrapy (200s/s) "
             "| relevant pages per repetition | relevant/s median |",
             "|---|---|---|---|---|---|---|---|"]
    for kind in kinds:
        mine = [r for r in rows if r["kind"] == kind]
        cpu = statistics.median(r["cpu_ms_per_page"] for r in mine)
        ratio = f"{medians[kind] / medians['scrapy']:.2f}" if medians.get("scrapy") else "-"
        rates = ", ".join(f"{r['ok_per_s']:.1f}" for r in mine)
        cpus = ", ".join(f"{r['cpu_ms_per_page']:.2f}" for r in mine)
        relevant = ", ".join(str(r["relevant"]) for r in mine)
        relevant_rate = statistics.median(r["relevant_per_s"] for r in mine)
        lines.append(f"| {kind} | {rates} | {medians[kind]:.1f} | {cpus} | {cpu:.2f} | {ratio} | {relevant} "
                     f"| {relevant_rate:.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--web-seed", type=int, default=0, help="the synthetic web's seed")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--kinds", default="bfs,adaptive,scrapy")
    parser.add_argument("--baseline", metavar="SRC", help="also crawl each focuscrawl kind with the focuscrawl "
                        "package in SRC (e.g. another checkout's src), as KIND@baseline, interleaved with the rest")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting of the focuscrawl crawls, as `focuscrawl crawl -s` (repeatable)")
    parser.add_argument("--out", help="working folder (default: a new temporary one); the web is kept there")
    parser.add_argument("--profile", metavar="KIND", help="then one crawl of KIND under cProfile: CPU by component")
    parser.add_argument("--one", dest="kind", help=argparse.SUPPRESS)
    for hidden in ("--run", "--topic", "--hosts-map", "--profile-to"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.kind:
        one_crawl(args)
        return
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for kind in kinds:
        if kind not in (*FOCUSCRAWL_KINDS, "scrapy"):
            sys.exit(f"error: unknown kind {kind!r} (bfs, adaptive, scrapy)")
    if args.baseline:
        if not (Path(args.baseline) / "focuscrawl").is_dir():
            sys.exit(f"error: --baseline {args.baseline} holds no focuscrawl package")
        kinds += [f"{kind}@baseline" for kind in kinds if kind in FOCUSCRAWL_KINDS]
    out = Path(args.out or tempfile.mkdtemp(prefix="full-crawl-"))
    web_dir = out / (f"web-{args.pages}-{args.hosts}" + (f"-seed{args.web_seed}" if args.web_seed else ""))
    if not (web_dir / "web.sqlite").exists():
        from focuscrawl.webs.synth import synthesize

        synthesize(web_dir, args.pages, hosts=args.hosts, seed=args.web_seed)
    topic_dir = web_dir.with_name(web_dir.name + "-topic")
    if not topic_dir.exists():
        from benchmarks.distributed_rate import make_topic

        make_topic(web_dir, topic_dir)
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.webs.store import OfflineWeb

    relevant = load_topic(OfflineWeb(web_dir), "synth.topic0").truth.relevant
    print(f"web {web_dir} ({args.pages} pages, {args.hosts} hosts), latency {args.latency_ms:g} ms, budget "
          f"{args.budget}, {args.concurrency} in flight, 1 s per host; load {os.getloadavg()}", flush=True)
    rows: list[dict] = []
    with serve_web(sys.executable, str(web_dir), BASE_IP, extra=("--latency-ms", str(args.latency_ms))) as hosts:
        hosts_map = out / "hosts.json"
        hosts_map.write_text(json.dumps(hosts))
        for rep in range(args.reps):
            for kind in kinds[rep % len(kinds):] + kinds[:rep % len(kinds)]:
                row = run_one(kind, out / f"run-{kind.replace('@', '-')}-{rep}", topic_dir, hosts_map, args,
                              relevant=relevant)
                rows.append(row)
                print(json.dumps(row), flush=True)
        if args.profile:
            stats_file = out / f"profile-{args.profile}.pstats"
            row = run_one(args.profile, out / f"run-{args.profile}-profile", topic_dir, hosts_map, args, stats_file,
                          relevant)
            print(json.dumps({**row, "profiled": True}), flush=True)
    for line in summary(rows) if rows else []:
        print(line)
    (out / "rows.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.profile:
        from benchmarks.crawl_profile import print_components

        print_components(stats_file, row["pages"])


if __name__ == "__main__":
    main()
