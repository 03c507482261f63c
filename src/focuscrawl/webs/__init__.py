"""Offline webs: the labelled webs the benchmarks crawl (store, builders, synthetic and messy webs) and the server
that serves one on loopback; ``focuscrawl.types.Web`` is what a crawl fetches from."""

from __future__ import annotations

from pathlib import Path

# Names of the small real web shipped inside the package (a few hundred Wikispeedia pages), so that a
# first crawl or benchmark needs no download.
_EMBEDDED_NAMES = ("embedded", "demo")


def embedded_web_dir() -> Path:
    """The directory of the web shipped inside the package."""
    return Path(__file__).parent / "embedded"


def resolve_web_dir(name_or_path: str) -> Path:
    """The directory of an offline web given by the user: a name of the embedded web, or a path."""
    return embedded_web_dir() if name_or_path in _EMBEDDED_NAMES else Path(name_or_path)
