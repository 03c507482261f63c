"""focuscrawl: a focused web crawler that learns where to go."""

from focuscrawl.types import Link, Observation, Outlink, Page, StepEvent

__all__ = ["Link", "Observation", "Outlink", "Page", "StepEvent"]
__version__ = "0.1.0"
