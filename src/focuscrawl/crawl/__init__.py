"""Crawling the web (or a served offline web): the async driver, run folders with resume, the Python API."""

from focuscrawl.crawl.api import Crawler, RunStats
from focuscrawl.crawl.driver import CrawlDriver
from focuscrawl.crawl.offline import OfflineFetcher
from focuscrawl.crawl.resume import ResumeError
from focuscrawl.crawl.run_folder import CrawlSummary, RunFolder

__all__ = ["CrawlDriver", "CrawlSummary", "Crawler", "OfflineFetcher", "ResumeError", "RunFolder", "RunStats"]
