"""Issue 31 over HTTP: a served messy web crawled by focuscrawl's strategies, by Scrapy and (when it runs) by
Crawl4AI's BestFirst crawler, every crawl scored from the server's own request log.

    python -m benchmarks.served_mess webs [--rows REGEX] [--runs 1] [--budget 1000] [--concurrency 16] \
        [--min-delay 0.05] [--timeout 5] [--hang-s 10] [--slow-body-s 2] [--strategies adaptive,best-first,bfs] \
        [--crawl-timeout 900] [--scrapy-python .bench-scrapy-venv/bin/python] [--crawl4ai-python PY] [--workdir DIR]

Each chosen row of the dev suite (default: Wikispeedia Biology and WebKB course) is crawled on its messy web,
``WEBS/NAME-mess-default`` as ``focuscrawl web mess`` made it (never rebuilt here), from run i's seeds and
with the benchmark's example pages: ``init_from_web`` on the messy web, what ``focuscrawl bench --mess`` gives
an agent on that row (the clean web's seeds: injected URLs are never seeds). Every crawl gets a fresh
``focuscrawl web serve --log`` of the web, its failing hosts as the web made them: 5xx in bursts, timeouts
(the server hangs ``--hang-s``, the crawlers give up after ``--timeout``), slow bodies (``--slow-body-s``),
redirect chains and loops, soft 404s. The crawlers, all at ``--concurrency`` requests in flight, one request
at a time per host and ``--min-delay`` seconds between a host's requests, robots.txt obeyed:

- ``focuscrawl crawl`` (the CLI, over the hosts map), ``adaptive`` with its defences on and off
  (``-s defences.enabled=false``), then ``best-first`` and ``bfs`` with the defences on;
- Scrapy in its own environment (``benchmarks/fetch_vs_scrapy.sh`` makes ``.bench-scrapy-venv``): a spider
  following every link into the web's hosts (``LinkExtractor``), Scrapy's default scheduler, dupefilter and
  retries, ``DOWNLOAD_DELAY`` = ``--min-delay`` not randomised, stopped after the budget's worth of requests
  (robots.txt aside: ``CLOSESPIDER_PAGECOUNT`` would count its answers, a third of the budget on WebKB); each
  request goes to its host's loopback address with the Host header kept, so the scheduler, dupefilter,
  redirects and per-host slots all see the web's own URLs;
- Crawl4AI's ``BestFirstCrawlingStrategy`` (keyword scorer with the topic's keywords, ``max_pages`` = the
  budget shared by the seeds, one deep crawl per seed; ``mean_delay`` = ``--min-delay``) when
  ``--crawl4ai-python`` names an environment with it. It fetches with its HTTP strategy
  (``AsyncHTTPCrawlerStrategy``, aiohttp) resolving the web's hosts to the loopback server: its browser
  strategy would reach the server only through Chromium, which speaks TLS to the web's ``https://`` URLs and
  cannot say which scheme it meant to a plain-HTTP server. Redirects are not followed (their Locations are
  ``https://`` URLs, which would need TLS): a redirect is a failed fetch for it.

The server's log gives each crawl's figures, the same way for every crawler: requests (robots.txt left out),
the share of them on what the mess injected (``OfflineWeb.pathology``: traps, farms, copies, soft 404s,
failing URLs, loops; each kind counted), the answers that failed (5xx, the hung ones included) as a share of
the budget, the share of requests on failing hosts, and each host's smallest gap between two request
arrivals against ``--min-delay`` (politeness is never undercut when no host's gap is below it). Relevant pages
come from the crawler's own 2xx pages, a copy of a relevant page counting once (``GroundTruth.credit_once``).

This module also runs inside Scrapy's and Crawl4AI's environments (``--scrapy-crawl``, ``--crawl4ai-crawl``),
where focuscrawl is not installed: it imports focuscrawl only in the functions that run in its own.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from benchmarks.served import serve_web  # stdlib only: Scrapy's and Crawl4AI's environments import this module

DEFAULT_ROWS = r"^wikispeedia/subject\.Science\.Biology$|^webkb/course N10$"
BASE_IP = "127.0.44.1"


@dataclass
class Crawl:
    """One crawl's records: its pages (final URL, status) in fetch order, how it ended and the server's log."""

    crawler: str
    pages: list[tuple[str, int]]
    ended: str  # "ok", or how it ended otherwise
    wall_s: float
    log: list[dict] = field(repr=False)


@dataclass
class Figures:
    crawler: str
    ended: str
    wall_s: float
    requests: int
    relevant: int
    failed: int  # answers 5xx (hangs included)
    on_failing_hosts: int
    spent: Counter
    min_gap_s: float
    hosts_undercut: int

    @property
    def relevant_per_1000(self) -> float:
        return 1000.0 * self.relevant / self.requests if self.requests else 0.0


# -- scoring (focuscrawl's environment) ------------------------------------------------------------------------
def score(crawl: Crawl, web, truth, min_delay: float) -> Figures:
    """The figures of one crawl (module docstring), from the server's log and the crawler's 2xx pages."""
    from focuscrawl.bench.runner import SPENT_KINDS

    requests = [entry for entry in crawl.log if entry["path"] != "/robots.txt"]
    spent = Counter(kind for kind in (web.pathology(entry["url"]) for entry in requests) if kind in SPENT_KINDS)
    failing = {host for host, behaviour in web.behaviours.items() if behaviour.failure is not None}
    arrivals: dict[str, list[float]] = defaultdict(list)
    for entry in crawl.log:  # robots.txt too: politeness holds for every request
        arrivals[entry["host"]].append(entry["time"])
    gaps = {host: min(b - a for a, b in zip(times, times[1:]))
            for host, times in ((host, sorted(times)) for host, times in arrivals.items()) if len(times) > 1}
    judge = truth.credit_once()
    relevant = sum(judge(url) for url, status in crawl.pages if 200 <= status < 300)
    return Figures(crawl.crawler, crawl.ended, crawl.wall_s, len(requests), relevant,
                   sum(entry["status"] >= 500 for entry in requests),
                   sum(entry["host"] in failing for entry in requests), spent,
                   min(gaps.values(), default=float("inf")), sum(gap < min_delay for gap in gaps.values()))


# -- the crawlers ----------------------------------------------------------------------------------------------
def served_crawl(name: str, web_dir: Path, work: Path, args: argparse.Namespace, command) -> Crawl:
    """Serve ``web_dir`` with a request log, run ``command(hosts_map_file)`` (an argv), read back its log."""
    log_file = work / "requests.jsonl"
    log_file.unlink(missing_ok=True)
    extra = ("--hang-s", str(args.hang_s), "--slow-body-s", str(args.slow_body_s), "--log", str(log_file))
    with serve_web(sys.executable, str(web_dir), BASE_IP, timeout_s=300, extra=extra) as hosts:
        hosts_map = work / "hosts.json"
        hosts_map.write_text(json.dumps(hosts))
        argv = command(hosts_map)
        started = time.monotonic()
        with open(work / "stderr.txt", "w") as err:
            try:
                proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=err, timeout=args.crawl_timeout)
                ended = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
            except subprocess.TimeoutExpired:  # killed: the table says so rather than wait for a stalled crawl
                ended = f"stopped after {args.crawl_timeout:.0f} s"
        wall = time.monotonic() - started
        time.sleep(args.hang_s)  # a request the crawler gave up on is logged when its hang ends
    if "Traceback" in (work / "stderr.txt").read_text(errors="replace"):
        ended = f"{ended}, traceback" if ended != "ok" else "traceback"
    log = [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()]
    pages = read_pages(work)
    return Crawl(name, pages, ended, wall, log)


def read_pages(work: Path) -> list[tuple[str, int]]:
    """(final URL, status) of each page a crawler fetched, in order: focuscrawl's pages.jsonl or the peers'."""
    for name, url_key in (("pages.jsonl", "final_url"), ("peer-pages.jsonl", "url")):
        path = work / "out" / name
        if path.exists():
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            return [(row.get(url_key) or row["url"], row["status"]) for row in rows]
    return []


def focuscrawl_command(topic_dir: Path, seeds: Path, out: Path, strategy: str, defences: bool,
                       args: argparse.Namespace):
    def argv(hosts_map: Path) -> list[str]:
        return [sys.executable, "-m", "focuscrawl.cli.main", "crawl", "--topic", str(topic_dir), "--seeds", str(seeds),
                "-o", str(out), "--strategy", strategy, "--budget", str(args.budget), "--hosts-map", str(hosts_map),
                "--concurrency", str(args.concurrency), "--progress", "none", "--no-warc",
                "-s", f"fetch.min_delay={args.min_delay}", "-s", "fetch.per_host_concurrency=1",
                "-s", f"fetch.total_timeout={args.timeout}",
                *([] if defences else ["-s", "defences.enabled=false"])]
    return argv


def peer_command(python: str, mode: str, seeds: Path, out: Path, keywords: list[str], args: argparse.Namespace):
    def argv(hosts_map: Path) -> list[str]:
        return [python, "-m", "benchmarks.served_mess", mode, "--hosts-map", str(hosts_map), "--seeds", str(seeds),
                "--out", str(out), "--budget", str(args.budget), "--concurrency", str(args.concurrency),
                "--min-delay", str(args.min_delay), "--timeout", str(args.timeout), "--keywords", ",".join(keywords)]
    return argv


# -- Scrapy (its own environment) ------------------------------------------------------------------------------
def scrapy_crawl(args: argparse.Namespace) -> None:
    import scrapy
    from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import IgnoreRequest
    from scrapy.http import TextResponse
    from scrapy.linkextractors import LinkExtractor
    from scrapy.utils.defer import deferred_from_coro

    hosts = json.loads(Path(args.hosts_map).read_text())
    seeds = [line.strip() for line in Path(args.seeds).read_text().splitlines() if line.strip()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pages = open(out / "peer-pages.jsonl", "w", buffering=1)

    sent_pages = [0]  # requests other than robots.txt: the budget counts them, as the server's log does

    class Loopback(HTTP11DownloadHandler):
        """Sends a request to the loopback address serving its host, the host in the Host header (https said
        with X-Forwarded-Proto), as DNS and TLS would on the web; a host the web does not have is refused here,
        so nothing leaves loopback. Past the budget it sends nothing and closes the spider."""

        async def download_request(self, request):
            parts = urlsplit(request.url)
            address = hosts.get(parts.hostname or "")
            if address is None:
                raise IgnoreRequest(f"not a host of the served web: {parts.hostname}")
            if parts.path != "/robots.txt":
                if sent_pages[0] >= args.budget:
                    raise IgnoreRequest("request budget spent")
                sent_pages[0] += 1
                if sent_pages[0] == args.budget:
                    deferred_from_coro(self._crawler.engine.close_spider_async(reason="request budget"))
            headers = request.headers.copy()
            headers["Host"] = parts.netloc
            if parts.scheme == "https":
                headers["X-Forwarded-Proto"] = "https"
            sent = request.replace(url=urlunsplit(("http", address, parts.path or "/", parts.query, "")),
                                   headers=headers)
            response = await super().download_request(sent)
            return response.replace(url=request.url)

    class Everything(scrapy.Spider):
        name = "served-mess"
        extractor = LinkExtractor()

        async def start(self):
            for url in seeds:
                yield scrapy.Request(url)

        def parse(self, response):
            pages.write(json.dumps({"url": response.url, "status": response.status}) + "\n")
            if not isinstance(response, TextResponse):
                return
            for link in self.extractor.extract_links(response):
                parts = urlsplit(link.url)
                if parts.scheme in ("http", "https") and parts.hostname in hosts:  # an ftp:// link would resolve
                    yield scrapy.Request(link.url)

    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": args.concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": args.min_delay, "RANDOMIZE_DOWNLOAD_DELAY": False, "DOWNLOAD_TIMEOUT": args.timeout,
        "ROBOTSTXT_OBEY": True,
        # Every other scheme off: their handlers would resolve the web's host names on the network.
        "DOWNLOAD_HANDLERS": {"http": Loopback, "https": Loopback, "ftp": None, "s3": None, "file": None,
                              "data": None},
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
    })
    crawler = process.create_crawler(Everything)
    process.crawl(crawler)
    process.start()
    pages.close()
    stats = {key: value for key, value in crawler.stats.get_stats().items() if isinstance(value, (int, float, str))}
    (out / "peer-stats.json").write_text(json.dumps(stats, indent=1, default=str))
    print(f"scrapy: {stats.get('finish_reason')}", file=sys.stderr)


# -- Crawl4AI (its own environment) ----------------------------------------------------------------------------
def crawl4ai_crawl(args: argparse.Namespace) -> None:
    import asyncio
    import contextvars
    import socket

    import aiohttp
    from crawl4ai import AsyncWebCrawler, CacheMode, CrawlerRunConfig, HTTPCrawlerConfig
    from crawl4ai.async_crawler_strategy import AsyncHTTPCrawlerStrategy
    from crawl4ai.deep_crawling import BestFirstCrawlingStrategy
    from crawl4ai.deep_crawling.filters import DomainFilter, FilterChain
    from crawl4ai.deep_crawling.scorers import KeywordRelevanceScorer

    hosts = json.loads(Path(args.hosts_map).read_text())
    seeds = [line.strip() for line in Path(args.seeds).read_text().splitlines() if line.strip()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scheme = contextvars.ContextVar("scheme", default="http")

    class Hosts(aiohttp.abc.AbstractResolver):
        """The web's hosts resolve to the loopback server, ports included; no other name resolves."""

        async def resolve(self, host, port=0, family=socket.AF_INET):
            if host not in hosts:
                raise OSError(f"not a host of the served web: {host}")
            ip, served_port = hosts[host].rsplit(":", 1)
            return [{"hostname": host, "host": ip, "port": int(served_port), "family": socket.AF_INET, "proto": 0,
                     "flags": 0}]

        async def close(self):
            pass

    class Loopback(AsyncHTTPCrawlerStrategy):
        """Crawl4AI's HTTP fetcher on the loopback server: an https URL goes as http with X-Forwarded-Proto (the
        server speaks plain HTTP); redirects are not followed (a Location on another scheme would need TLS)."""

        async def start(self):
            if not self._session:
                connector = aiohttp.TCPConnector(limit=self.max_connections, resolver=Hosts())
                self._session = aiohttp.ClientSession(headers=dict(self._BASE_HEADERS), connector=connector,
                                                      timeout=aiohttp.ClientTimeout(total=args.timeout))

        async def _handle_http(self, url, config):
            parts = urlsplit(url)
            scheme.set(parts.scheme)
            result = await super()._handle_http(urlunsplit(("http", *parts[1:])), config)
            result.redirected_url = url
            return result

    def forwarded(url, request_kwargs):
        request_kwargs["headers"]["X-Forwarded-Proto"] = scheme.get()

    fetcher = Loopback(HTTPCrawlerConfig(follow_redirects=False))
    fetcher.set_hook("before_request", forwarded)
    keywords = [word for word in args.keywords.split(",") if word]

    async def go() -> None:
        async with AsyncWebCrawler(crawler_strategy=fetcher) as crawler:
            with open(out / "peer-pages.jsonl", "w", buffering=1) as pages:
                for seed in seeds:
                    strategy = BestFirstCrawlingStrategy(
                        max_depth=50, include_external=True, max_pages=max(1, args.budget // len(seeds)),
                        filter_chain=FilterChain([DomainFilter(allowed_domains=list(hosts))]),
                        url_scorer=KeywordRelevanceScorer(keywords=keywords, weight=1.0))
                    config = CrawlerRunConfig(deep_crawl_strategy=strategy, cache_mode=CacheMode.BYPASS,
                                              semaphore_count=args.concurrency, mean_delay=args.min_delay,
                                              max_range=0.0, page_timeout=int(1000 * args.timeout), stream=True,
                                              verbose=False)
                    async for result in await crawler.arun(seed, config=config):
                        pages.write(json.dumps({"url": result.url, "status": result.status_code or 0}) + "\n")

    asyncio.run(go())


# -- the benchmark (focuscrawl's environment) ------------------------------------------------------------------
def table_row(row: str, run: int, figures: Figures, budget: int, min_delay: float) -> str:
    injected = sum(figures.spent.values())
    kinds = ", ".join(f"{kind} {count}" for kind, count in figures.spent.most_common(4))
    gap = "-" if figures.min_gap_s == float("inf") else f"{1000 * figures.min_gap_s:.0f}"
    return (f"| {row} | {run} | {figures.crawler} | {figures.ended} | {figures.requests} | {figures.relevant} | "
            f"{figures.relevant_per_1000:.0f} | {100 * injected / max(figures.requests, 1):.1f}% ({kinds}) | "
            f"{figures.failed} ({100 * figures.failed / budget:.1f}%) | "
            f"{100 * figures.on_failing_hosts / max(figures.requests, 1):.1f}% | {gap} ({figures.hosts_undercut}) | "
            f"{figures.wall_s:.0f} |")


def bench(args: argparse.Namespace) -> None:
    from focuscrawl.bench.protocol import init_from_web, load_topic
    from focuscrawl.bench.suite import find_suite, load_suite
    from focuscrawl.webs.store import OfflineWeb

    suite = load_suite(find_suite("dev"))
    rows = [row for row in suite.rows if re.search(args.rows, row.label)]
    if not rows:
        sys.exit(f"error: no row of the dev suite matches --rows {args.rows!r}")
    for path, flag in ((args.scrapy_python, "--scrapy-python"), (args.crawl4ai_python, "--crawl4ai-python")):
        if path and not shutil.which(path):
            sys.exit(f"error: {flag} {path} is not an executable (benchmarks/fetch_vs_scrapy.sh makes Scrapy's)")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="served-mess-"))
    crawlers = [(f"{strategy}{'' if defences else ' (no defences)'}", strategy, defences)
                for strategy in args.strategies.split(",") if strategy
                for defences in ((True, False) if strategy == "adaptive" else (True,))]
    print(f"budget {args.budget}, {args.concurrency} in flight, per-host delay {args.min_delay:g} s (one request at a "
          f"time per host), timeout {args.timeout:g} s (server hangs {args.hang_s:g} s, slow bodies "
          f"{args.slow_body_s:g} s); folders in {work}\n", flush=True)
    print("| row | run | crawler | exit | requests | relevant | relevant / 1,000 requests | on injected URLs "
          "(largest kinds) | failed answers (% of budget) | on failing hosts | min per-host gap ms (hosts under "
          "the delay) | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for row in rows:
        web_dir = Path(args.webs) / f"{row.web}-mess-default"
        if not (web_dir / "web.sqlite").exists():
            sys.exit(f"error: no messy web at {web_dir}: make it with focuscrawl web mess {args.webs}/{row.web} "
                     f"{web_dir}")
        web = OfflineWeb(web_dir)
        truth = load_topic(web, row.topic).truth
        seeds_per_run = row.seeds_per_run or suite.defaults.get("seeds_per_run", 1)
        for run in range(args.runs):
            folder = work / row.slug / str(run)
            topic_dir = folder / "topic"
            inputs = init_from_web(topic_dir, web_dir, row.topic, run=run, seeds=seeds_per_run, overwrite=True)
            seeds = folder / "seeds.txt"
            seeds.write_text("\n".join(inputs.seeds) + "\n")
            commands = [(name, focuscrawl_command(topic_dir, seeds, folder / slug(name) / "out", strategy, defences,
                                                  args))
                        for name, strategy, defences in crawlers]
            for name, python, mode in (("scrapy", args.scrapy_python, "--scrapy-crawl"),
                                       ("crawl4ai best-first", args.crawl4ai_python, "--crawl4ai-crawl")):
                if python:
                    commands.append((name, peer_command(python, mode, seeds, folder / slug(name) / "out",
                                                        inputs.keywords, args)))
            for name, command in commands:
                crawl_dir = folder / slug(name)
                crawl_dir.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(crawl_dir / "out", ignore_errors=True)
                crawl = served_crawl(name, web_dir, crawl_dir, args, command)
                print(table_row(row.label, run, score(crawl, web, truth, args.min_delay), args.budget,
                                args.min_delay), flush=True)
        web.close()


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs", nargs="?", help="the folder holding NAME-mess-default webs")
    parser.add_argument("--rows", default=DEFAULT_ROWS, help="regular expression on the dev suite's row labels")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--min-delay", type=float, default=0.05, help="seconds between two requests to a host")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds a crawler waits for one request")
    parser.add_argument("--hang-s", type=float, default=10.0, help="how long the server's timeout hosts hang")
    parser.add_argument("--slow-body-s", type=float, default=2.0, help="how long its slow hosts take per body")
    parser.add_argument("--strategies", default="adaptive,best-first,bfs", help="focuscrawl's ('' for none)")
    parser.add_argument("--crawl-timeout", type=float, default=900.0,
                        help="seconds after which a crawl is stopped and reported as not exiting cleanly")
    parser.add_argument("--scrapy-python", default=".bench-scrapy-venv/bin/python",
                        help="Python of an environment with Scrapy ('' to leave Scrapy out)")
    parser.add_argument("--crawl4ai-python", default="", help="Python of an environment with Crawl4AI")
    parser.add_argument("--workdir", type=Path, default=None)
    # How this module runs a peer in the peer's environment.
    parser.add_argument("--scrapy-crawl", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crawl4ai-crawl", action="store_true", help=argparse.SUPPRESS)
    for option in ("--hosts-map", "--seeds", "--out", "--keywords"):
        parser.add_argument(option, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scrapy_crawl:
        scrapy_crawl(args)
    elif args.crawl4ai_crawl:
        crawl4ai_crawl(args)
    elif not args.webs:
        parser.error("give the folder of the messy webs (webs)")
    else:
        bench(args)


if __name__ == "__main__":
    main()
