"""Crawler traps by their URL pattern: calendars, endless listings, faceted search.

A URL's pattern is its host and the shape of its path and query with what varies from page to page generalised:
runs of digits become ``{n}`` (days, page numbers, ids) and long hexadecimal tokens ``{id}``; the query keeps its
keys, not their values (``events.example.org/{n}/{n}/{n}/``, ``example.org/list/?category&page``). A query's key
set varies too (facets switched on and off), so a URL with a query also counts under its path alone
(``example.org/search?*``): either pattern running dry closes the URL.

Each pattern gets an allowance. A fetch *yields something new* when its page is not a duplicate and either
links to a URL not discovered before under another pattern (a trap's links to itself are not news), or its
relevance is above the crawl's median. A pattern fetched at least ``min_fetches`` times with less than
``min_new_share`` of its fetches new loses its allowance: its pending URLs are skipped ("trap pattern") and its
URLs found later never enter the frontier. With the defaults, 20 fetches and 10%: a pattern whose pages are new
a quarter of the time loses its allowance at 20 fetches with probability 2.4% (at most one new in 20), one new
half the time with probability 2e-5, while a trap that never yields costs 20 fetches.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated
from urllib.parse import parse_qsl, urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

_DIGITS = re.compile(r"\d+")
_HEX_ID = re.compile(r"^(?=[^/]*\d)[0-9a-fA-F-]{16,}$")
_BINS = 100  # relevance histogram for the crawl's median: a hundredth is fine enough, and its size is fixed


class TrapSettings(BaseModel):
    """A URL pattern whose fetches keep yielding nothing new loses its allowance ("trap pattern")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_fetches: Annotated[int, Field(ge=1)] = Field(20, description="fetches of a pattern before it can be closed")
    min_new_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.1, description="share of a pattern's fetches that must yield something new for it to stay open")


@lru_cache(maxsize=1 << 16)
def _segment(segment: str) -> str:
    if _HEX_ID.match(segment):
        return "{id}"
    return _DIGITS.sub("{n}", segment)


@lru_cache(maxsize=1 << 18)
def url_patterns(url: str) -> tuple[str, ...]:
    """The patterns ``url`` counts under: its path-and-query shape, and with a query also its path shape alone."""
    parts = urlsplit(url)
    path = "/".join(_segment(s) for s in parts.path.split("/"))
    base = f"{parts.netloc}{path}"
    if not parts.query:
        return (base,)
    keys = sorted({_DIGITS.sub("{n}", key) for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return (f"{base}?{'&'.join(keys)}", f"{base}?*")


class TrapPatterns:
    """Fetches and new yields per pattern, the closed patterns, and the relevances seen (for their median).

    The URLs pending under a pattern are not kept here: the engine finds them among its discovered URLs when the
    pattern closes, which happens a few times a crawl, rather than holding a list per pattern for every URL."""

    def __init__(self, settings: TrapSettings):
        self.settings = settings
        self.fetches: dict[str, int] = {}
        self.new: dict[str, int] = {}
        self.closed: set[str] = set()
        self.relevance = np.zeros(_BINS, dtype=np.int64)

    def is_closed(self, url: str) -> bool:
        return bool(self.closed) and any(p in self.closed for p in url_patterns(url))

    def above_median(self, relevance: float) -> bool:
        """Whether ``relevance`` is above the median of the crawl's pages so far (True for the first page)."""
        total = int(self.relevance.sum())
        if total == 0:
            return True
        median_bin = int(np.searchsorted(np.cumsum(self.relevance), (total + 1) / 2))
        return self._bin(relevance) > median_bin

    def yields_new(self, url: str, new_links: list[str], relevance: float) -> bool:
        """A fetch of ``url`` yields something new: a new link under another pattern, or a relevance above median."""
        own = set(url_patterns(url))
        return self.above_median(relevance) or any(not own.intersection(url_patterns(u)) for u in new_links)

    def record(self, url: str, new: bool, relevance: float | None) -> list[str]:
        """Count a fetch of ``url`` (``relevance`` None: a page with no verdict-free text); returns the patterns
        this fetch closed."""
        if relevance is not None:
            self.relevance[self._bin(relevance)] += 1
        closed = []
        for pattern in url_patterns(url):
            fetches = self.fetches[pattern] = self.fetches.get(pattern, 0) + 1
            yields = self.new[pattern] = self.new.get(pattern, 0) + int(new)
            if (pattern not in self.closed and fetches >= self.settings.min_fetches
                    and yields < self.settings.min_new_share * fetches):
                self.closed.add(pattern)
                closed.append(pattern)
        return closed

    @staticmethod
    def _bin(relevance: float) -> int:
        return min(_BINS - 1, max(0, int(relevance * _BINS)))
