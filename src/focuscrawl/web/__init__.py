"""Environments: things a crawler can fetch from, and the offline webs it is benchmarked on."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from focuscrawl.types import Page

# Names of the small real web shipped inside the package (a few hundred Wikispeedia pages), so that a
# first crawl or benchmark needs no download.
_EMBEDDED_NAMES = ("embedded", "demo")


@runtime_checkable
class Web(Protocol):
    """Something that can be fetched. Knows nothing about topics or policies.

    ``fetch`` takes a normalised URL and always returns a Page (failures are pages with a non-2xx
    status, never exceptions), because on the real web a failed fetch is an ordinary outcome that
    still costs a crawl step.
    """

    def fetch(self, url: str) -> Page: ...


def embedded_web_dir() -> Path:
    """The directory of the web shipped inside the package."""
    return Path(__file__).parent / "embedded"


def resolve_web_dir(name_or_path: str) -> Path:
    """The directory of an offline web given by the user: a name of the embedded web, or a path."""
    return embedded_web_dir() if name_or_path in _EMBEDDED_NAMES else Path(name_or_path)
