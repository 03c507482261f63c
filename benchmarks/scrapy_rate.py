"""The crawl of ``fetch_rate.py`` done by Scrapy: same served web, concurrency, no delay, robots.txt obeyed.

usage: SCRAPY_PYTHON -m benchmarks.scrapy_rate WEB_DIR --focuscrawl-python PY [--concurrency 64]

Runs from the repository root in a separate environment that has Scrapy (``fetch_vs_scrapy.sh`` makes one;
the package ``benchmarks`` needs only the standard library there); the web is served and
warmed with focuscrawl's Python. Each URL is requested at its host's loopback address with the Host header
kept; the callback extracts title, body text and links (LinkExtractor), as focuscrawl's parser does.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import time
from urllib.parse import urlsplit

from benchmarks.served import serve_web  # stdlib only: this runs in Scrapy's environment

WARM = """
import asyncio, sys
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.webs.store import OfflineWeb
import json
async def go():
    config = FetchConfig.loopback(json.loads(sys.argv[2]), min_delay=0, per_host_concurrency=64)
    async with HttpFetcher(config) as fetcher:
        await asyncio.gather(*(fetcher.fetch(r.url) for r in OfflineWeb(sys.argv[1]).records()))
asyncio.run(go())
"""


def main() -> None:
    import json

    import scrapy
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web_dir")
    parser.add_argument("--focuscrawl-python", required=True)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--base-ip", default="127.0.12.1")
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.web_dir}/web.sqlite?mode=ro", uri=True)
    urls = [url for (url,) in db.execute("SELECT url FROM pages ORDER BY id")]
    counts = {"ok": 0, "links": 0}

    with serve_web(args.focuscrawl_python, args.web_dir, args.base_ip) as hosts:
        subprocess.run([args.focuscrawl_python, "-c", WARM, args.web_dir, json.dumps(hosts)], check=True)

        class Served(scrapy.Spider):
            name = "served"
            extractor = LinkExtractor()

            async def start(self):
                for url in urls:
                    parts = urlsplit(url)
                    query = f"?{parts.query}" if parts.query else ""
                    yield scrapy.Request(f"http://{hosts[parts.hostname]}{parts.path}{query}",
                                         headers={"Host": parts.netloc}, dont_filter=True)

            def parse(self, response):
                if response.status == 200:
                    counts["ok"] += 1
                    response.css("title::text").get()
                    " ".join(response.xpath("//body//text()").getall())
                    counts["links"] += len(self.extractor.extract_links(response))

        process = CrawlerProcess(settings={
            "CONCURRENT_REQUESTS": args.concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
            "DOWNLOAD_DELAY": 0, "ROBOTSTXT_OBEY": True, "AUTOTHROTTLE_ENABLED": False, "COOKIES_ENABLED": False,
            "RETRY_ENABLED": False, "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
            "HTTPERROR_ALLOW_ALL": True,
        })
        process.crawl(Served)
        wall, cpu = time.perf_counter(), time.process_time()
        process.start()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"scrapy: {len(urls)} URLs ({counts['ok']} 2xx, {len(hosts)} hosts, {counts['links']} links) in "
          f"{wall:.2f} s: {len(urls) / wall:.0f} pages/s at concurrency {args.concurrency}; CPU {cpu:.2f} s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
