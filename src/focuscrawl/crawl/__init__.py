"""Crawling the web (or a served offline web): the async driver, run folders with resume, the Python API.

``open_crawler(config)`` gives the crawler a config asks for, ``Crawler`` (one process) or
``distributed.DistributedCrawler`` (shards on Ray); both are ``BaseCrawler``s and crawl with
``crawl(on_progress=...)``.
"""

from focuscrawl.crawl.api import Crawler, open_crawler
from focuscrawl.crawl.base import BaseCrawler, RunStats
from focuscrawl.crawl.driver import CrawlDriver
from focuscrawl.crawl.offline import OfflineFetcher
from focuscrawl.crawl.resume import ResumeError
from focuscrawl.crawl.run_folder import CrawlSummary, RunFolder

__all__ = ["BaseCrawler", "CrawlDriver", "CrawlSummary", "Crawler", "OfflineFetcher", "ResumeError", "RunFolder",
           "RunStats", "open_crawler"]
