"""Run folders: the crash-safe crawl-state store and the files derived from it."""

from focuscrawl.storage.harvest import HARVEST_FILE, HarvestWriter
from focuscrawl.storage.pages import PAGES_FILE, PagesWriter, repair_pages
from focuscrawl.storage.state import STATE_FILE, StateStore, StepRecord
from focuscrawl.storage.warc import WARC_FILE, WarcOutput

__all__ = ["HARVEST_FILE", "PAGES_FILE", "STATE_FILE", "WARC_FILE", "HarvestWriter", "PagesWriter",
           "StateStore", "StepRecord", "WarcOutput", "repair_pages"]
