"""Environments: things a crawler can fetch from, and the offline webs it is benchmarked on."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from focuscrawl.types import Page


@runtime_checkable
class Web(Protocol):
    """Something that can be fetched. Knows nothing about topics or policies.

    ``fetch`` takes a normalised URL and always returns a Page (failures are pages with a non-2xx
    status, never exceptions), because on the real web a failed fetch is an ordinary outcome that
    still costs a crawl step.
    """

    def fetch(self, url: str) -> Page: ...


def embedded_web_dir():
    """The small real web shipped inside the package (a few hundred Wikispeedia pages)."""
    from pathlib import Path

    return Path(__file__).parent / "embedded"
