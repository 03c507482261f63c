"""The crawl engine: one loop for the offline benchmark, the real web and distributed mode."""

from focuscrawl.engine.caps import DomainCap
from focuscrawl.engine.checkpoint import CheckpointFormatError
from focuscrawl.engine.engine import CrawlEngine, CrawlStats, EventSink

__all__ = ["CheckpointFormatError", "CrawlEngine", "CrawlStats", "DomainCap", "EventSink"]
