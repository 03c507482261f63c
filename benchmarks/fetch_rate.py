"""Pages per second of focuscrawl's fetcher against a loopback-served offline web, politeness off.

usage: python -m benchmarks.fetch_rate WEB_DIR [--concurrency 64] [--base-ip 127.0.10.1]

The server (``focuscrawl web serve``) runs in its own process, every host on its own 127.x address. Every
URL of the web is fetched once, parsed (title, text, outlinks) and counted. A first pass warms the server so
that its HTML rendering is not what is measured; the timed pass uses a fresh fetcher (robots.txt fetched
again). ``benchmarks/scrapy_rate.py`` does the same crawl with Scrapy; ``fetch_vs_scrapy.sh`` runs both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from benchmarks.served import serve_web
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.webs.store import OfflineWeb


async def fetch_all(urls: list[str], hosts: dict[str, str], concurrency: int):
    config = FetchConfig.loopback(hosts, min_delay=0, per_host_concurrency=concurrency, max_concurrency=concurrency)
    async with HttpFetcher(config) as fetcher:
        gate = asyncio.Semaphore(concurrency)

        async def one(url: str):
            async with gate:
                return await fetcher.fetch(url)

        wall, cpu = time.perf_counter(), time.process_time()
        pages = await asyncio.gather(*(one(u) for u in urls))
        return time.perf_counter() - wall, time.process_time() - cpu, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web_dir")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--base-ip", default="127.0.10.1")
    args = parser.parse_args()
    urls = [record.url for record in OfflineWeb(args.web_dir).records()]
    with serve_web(sys.executable, args.web_dir, args.base_ip) as hosts:
        asyncio.run(fetch_all(urls, hosts, args.concurrency))  # warm the server
        wall, cpu, pages = asyncio.run(fetch_all(urls, hosts, args.concurrency))
    ok = sum(page.ok for page in pages)
    links = sum(len(page.outlinks) for page in pages)
    print(f"focuscrawl: {len(urls)} URLs ({ok} 2xx, {len(hosts)} hosts, {links} outlinks) in {wall:.2f} s: "
          f"{len(urls) / wall:.0f} pages/s at concurrency {args.concurrency}; client CPU {cpu:.2f} s; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
