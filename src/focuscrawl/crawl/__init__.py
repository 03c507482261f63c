"""Crawling the web (or a served offline web): the async driver, run folders with resume, the Python API."""

from focuscrawl.crawl.api import Crawler, RunStats, CrawlSummary
from focuscrawl.crawl.config import CrawlConfig, load_config
from focuscrawl.crawl.driver import CrawlDriver, ResumeError
from focuscrawl.crawl.offline import OfflineFetcher

__all__ = ["CrawlConfig", "CrawlDriver", "RunStats", "CrawlSummary", "Crawler", "OfflineFetcher", "ResumeError",
           "load_config"]
