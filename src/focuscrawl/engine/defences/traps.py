"""Crawler traps by their URL pattern: calendars, endless listings, faceted search.

A URL's pattern is its host and the shape of its path and query with what varies from page to page generalised:
runs of digits become ``{n}`` (days, page numbers, ids) and long hexadecimal tokens ``{id}``; the query keeps its
keys, not their values (``events.example.org/{n}/{n}/{n}/``, ``example.org/list/?category&page``). A query's key
set varies too (facets switched on and off), so a URL with a query also counts under its path alone
(``example.org/search?*``): either pattern running dry closes the URL.

Each pattern gets an allowance. A page of it (status 2xx; dead links are not what a trap is) *yields something new*
when it is not a duplicate and either links to a URL not discovered before under another pattern (a trap's links to
itself are not news), or is relevant (the agent's reward) with at least ``min_new_text`` of its text never seen
before in the crawl (or too short a text to tell: fewer shingles than a near-duplicate needs). Relevance alone
would not do: a trap's pages borrow the text around them (the crawl's median relevance, once suggested, follows a
trap that has taken half the crawl: on a messy WebKB an adaptive crawl spent 90% of its budget in one calendar
whose every other day was "above the median"); new text alone neither, for the same reason. A trap whose borrowed
text the agent's classifier calls relevant, page after page, is not caught here: that is what the strategy's
learning must resist.

A pattern fetched at least ``min_fetches`` times with less than ``min_new_share`` of its pages new, or less than
``relative_share`` of the share of new pages among the crawl's other pages, loses its allowance: its pending URLs
are skipped ("trap pattern") and its URLs found later never enter the frontier. The first bound is absolute: with
20 pages and 10%, a pattern whose pages are new a quarter of the time loses its allowance at 20 pages with
probability 2.4% (at most one new in 20), half the time with probability 2e-5, while a trap that never yields costs
20 fetches. The second is the budget's opportunity cost: a faceted search that lists a new page of the web on one
page in seven costs seven fetches a find, where the rest of a crawl finds one on every other page (so with the rest
at 60%, a pattern as good, at 60%, falls under 30% in 20 pages with probability 2e-3).

Text seen before: one in ``_SAMPLE`` of a page's shingles (those whose hash is 0 modulo it, Broder's sampling,
so two pages sample the same shingles) goes into a Bloom filter sized for the crawl's first budget (10 bits for
each shingle a page of 1,000 words samples: 80 kB for 1,000 pages, 8 MB for 100,000), so that it answers "seen"
wrongly for under 2% of shingles; a page's new text is the share of its sampled shingles the filter has not
seen. A crawl resumed with a larger budget keeps its filter (its replay must match), a little fuller.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Annotated
from urllib.parse import parse_qsl, urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.pipeline import TRAP_PATTERN, VIEW_VARIANT, Crawl, Defence, Fetch
from focuscrawl.engine.defences.views import ViewParameters

_DIGITS = re.compile(r"\d+")
_HEX_ID = re.compile(r"^(?=[^/]*\d)[0-9a-fA-F-]{16,}$")
_SAMPLE = 16  # one shingle in 16 is remembered: about 60 of a 1,000-word page
_BITS_PER_PAGE = 640  # 10 bits per sampled shingle of a 1,000-word page: 3 probes, under 2% false "seen"
_PROBES = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
_FAMILY_SAMPLE = 2  # one shingle in 2 is remembered in its family: a short page (a day view) still shows enough
_FAMILY_BITS_PER_PAGE = 1600  # 10 bits for each of the 160 a page's text (at most 310 shingles) samples


class TrapSettings(BaseModel):
    """A URL pattern whose fetches keep yielding nothing new loses its allowance ("trap pattern")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_fetches: Annotated[int, Field(ge=1)] = Field(20, description="fetches of a pattern before it can be closed")
    min_new_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.1, description="share of a pattern's pages that must yield something new for it to stay open")
    relative_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="a pattern must also keep this fraction of the share of new pages among the crawl's other "
                         "pages: its pages cost what they would have found elsewhere")
    min_new_text: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="share of a page's text never seen before in the crawl for the page to be new")
    min_pattern_new: Annotated[float, Field(ge=0, le=1)] = Field(
        0.3, description="share of a page's text never seen among the earlier pages of its family (host and path "
                         "shape) below which the page copies its family and yields nothing new, whatever it links "
                         "to (a calendar's day views); 0 turns this off")
    distinct_records: bool = Field(
        True, description="a page whose text is new in its family (min_pattern_new) and in the crawl "
                          "(min_new_text), and that links out of its own patterns, yields something new even when "
                          "it is not relevant: a pattern of distinct records (?id=N) is not a trap for being off "
                          "the topic")
    view_support: Annotated[int, Field(ge=0)] = Field(
        2, description="pairs of a listing's views, one parameter apart, one listing the other's records or a part "
                       "of them, that make that parameter a view parameter (sort, filter): a URL that is a known "
                       "URL plus view parameters is refused ('view variant'); 0 turns this off")


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


def url_family(url: str) -> str:
    """A URL's family: its host and path shape, the query left out (a listing, its facet views and its pages)."""
    return url_patterns(url)[0].partition("?")[0]


class Bloom:
    """A Bloom filter of 64-bit keys (three multiplicative probes), ``2 ** bits_log2`` bits."""

    def __init__(self, bits_log2: int):
        self.bits_log2 = bits_log2
        self.bits = np.zeros((1 << bits_log2) // 8, dtype=np.uint8)

    def add(self, keys: np.ndarray) -> None:
        for p in _PROBES:
            index = self._index(keys, p)
            np.bitwise_or.at(self.bits, index >> 3, np.left_shift(1, index & 7).astype(np.uint8))

    def new_share(self, keys: np.ndarray) -> float:
        """The share of ``keys`` not in the filter."""
        seen = np.ones(len(keys), dtype=bool)
        for p in _PROBES:
            index = self._index(keys, p)
            seen &= (self.bits[index >> 3] >> (index & 7).astype(np.uint8)) & 1 == 1
        return 1.0 - float(np.mean(seen))

    def _index(self, keys: np.ndarray, probe: np.uint64) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((keys * probe) >> np.uint64(64 - self.bits_log2)).astype(np.int64)


_Bloom = Bloom  # the name checkpoints made before it was shared know it by


def keyed_sample(key: str, runs: np.ndarray) -> np.ndarray:
    """One in ``_FAMILY_SAMPLE`` of a text's shingle hashes (Broder's sampling, so that two texts sample the same
    ones), each under ``key`` (a family, a host): what a Bloom filter of text within that key remembers."""
    prefix = np.uint64(zlib.crc32(key.encode()))
    sample = runs[runs % np.uint64(_FAMILY_SAMPLE) == 0]
    return (prefix << np.uint64(32)) | sample


def bloom_bits_log2(budget: int) -> int:
    """The size of a Bloom filter of sampled text for a crawl of ``budget`` pages (``_FAMILY_BITS_PER_PAGE``)."""
    return max(16, (budget * _FAMILY_BITS_PER_PAGE - 1).bit_length())


class TrapPatterns(Defence):
    """Pages and new yields per pattern, the closed patterns, and the text seen so far (a Bloom filter).

    The URLs pending under a pattern are not kept here: the engine finds them among its discovered URLs when the
    pattern closes, which happens a few times a crawl, rather than holding a list per pattern for every URL."""

    name = "traps"
    reads_text = True

    def __init__(self, settings: TrapSettings, budget: int, min_shingles: int = 1):
        self.settings = settings
        self.min_shingles = min_shingles  # a shorter text cannot be told new or not (as for near-duplicates)
        self.bits_log2 = max(16, (budget * _BITS_PER_PAGE - 1).bit_length())
        self.fetches: dict[str, int] = {}
        self.new: dict[str, int] = {}
        self.closed: set[str] = set()
        self.pages = 0
        self.new_pages = 0
        self.seen = np.zeros((1 << self.bits_log2) // 8, dtype=np.uint8)
        self._evidence(budget)

    def _evidence(self, budget: int) -> None:
        """The memories of the rules from general evidence: each family's text, and the listings' views."""
        self.family_text = Bloom(bloom_bits_log2(budget))
        self.views = ViewParameters(self.settings.view_support) if self.settings.view_support else None

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "family_text" not in state:  # a checkpoint from before them: learn from here on
            self._evidence(len(self.seen) * 8 // _BITS_PER_PAGE)

    def family_new(self, url: str, runs: np.ndarray | None) -> float | None:
        """The share of the page's text not seen among the earlier pages of its family; None when too short."""
        if runs is None or len(runs) < self.min_shingles:
            return None
        keys = self._family_keys(url, runs)
        return self.family_text.new_share(keys) if len(keys) else None

    def _family_keys(self, url: str, runs: np.ndarray) -> np.ndarray:
        return keyed_sample(url_family(url), runs)

    def is_closed(self, url: str) -> bool:
        return bool(self.closed) and any(p in self.closed for p in url_patterns(url))

    def new_text(self, runs: np.ndarray) -> float:
        """The share of a page's sampled shingles (``runs``: their hashes) never seen before; 0 with none sampled."""
        sample = self._sample(runs)
        if not len(sample):
            return 0.0
        return 1.0 - float(np.mean(np.all([self._bit(sample, p) for p in _PROBES], axis=0)))

    def remember(self, runs: np.ndarray) -> None:
        """The page's text has been seen."""
        sample = self._sample(runs)
        for p in _PROBES:
            index = self._index(sample, p)
            np.bitwise_or.at(self.seen, index >> 3, np.left_shift(1, index & 7).astype(np.uint8))

    def yields_new(self, url: str, new_links: Iterable[str], relevant: bool, runs: np.ndarray | None,
                   family_new: float | None = None, links_out: bool = False) -> bool:
        """A page of ``url`` yields something new: a new link under another pattern, relevant new text, or (with
        ``distinct_records``) text new in its family and in the crawl on a page that links out of its patterns
        (``links_out``: a record of a site, not a closed world of generated pages); never when it copies its
        family's pages (``family_new``: the share of its text new in its family, None when not known)."""
        if family_new is not None and family_new < self.settings.min_pattern_new:
            return False
        own = set(url_patterns(url))
        if any(own.isdisjoint(url_patterns(u)) for u in new_links):
            return True
        if runs is None or len(runs) < self.min_shingles:
            return relevant
        new_text = self.new_text(runs) >= self.settings.min_new_text
        if new_text and family_new is not None and links_out and self.settings.distinct_records:
            return True
        return relevant and new_text

    def record(self, url: str, new: bool) -> list[str]:
        """Count a page of ``url``; returns the patterns this page closed."""
        self.pages += 1
        self.new_pages += int(new)
        closed = []
        for pattern in url_patterns(url):
            fetches = self.fetches[pattern] = self.fetches.get(pattern, 0) + 1
            yields = self.new[pattern] = self.new.get(pattern, 0) + int(new)
            if pattern not in self.closed and fetches >= self.settings.min_fetches and yields < self._floor(
                    fetches, self.new_pages - yields, self.pages - fetches) * fetches:
                self.closed.add(pattern)
                closed.append(pattern)
        return closed

    # -- its hooks -----------------------------------------------------------------------------
    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        if self.is_closed(url):
            return TRAP_PATTERN
        return VIEW_VARIANT if self._view_variant(url, crawl) else ""

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """Count the page (2xx, not a defence's own) under its patterns; a pattern it closes takes its pending URLs
        out of the frontier, and the page that showed it yields nothing new: no reward, no links. A view parameter
        its links show takes the pending view variants out of the frontier."""
        if fetch.own or not fetch.page.ok:
            return
        text = fetch.text
        family_new = self.family_new(fetch.url, text) if self.settings.min_pattern_new or \
            self.settings.distinct_records else None
        fresh = crawl.fresh(fetch.links, crawl.depth_of(fetch.url) + 1)  # lazily: the first way out decides
        new = not fetch.verdict and self.yields_new(fetch.url, fresh, fetch.rewarded, text, family_new,
                                                    self._links_out(fetch))
        if text is not None:
            self.remember(text)
            if family_new is not None:
                self.family_text.add(self._family_keys(fetch.url, text))
        if self.views is not None and self.views.observe(fetch.url, (link.url for link in fetch.page.outlinks)):
            fetch.skipped.extend(crawl.drop_pending(
                lambda url: VIEW_VARIANT if self._view_variant(url, crawl) else ""))
        closed = set(self.record(fetch.url, new))
        if closed:
            fetch.skipped.extend(crawl.drop_pending(
                lambda url: TRAP_PATTERN if not closed.isdisjoint(url_patterns(url)) else ""))
            fetch.reject(TRAP_PATTERN)

    @staticmethod
    def _links_out(fetch: Fetch) -> bool:
        """Whether any link of the page (fetched or not) leads out of its own patterns."""
        own = set(url_patterns(fetch.url))
        return any(own.isdisjoint(url_patterns(link.url)) for link in fetch.page.outlinks)

    def _view_variant(self, url: str, crawl: Crawl) -> bool:
        """``url`` is a known URL, or a view of a known listing, with view parameters added (``views``)."""
        if self.views is None:
            return False
        found = self.views.base_of(url)
        return found is not None and any(form != url and crawl.known(form) for form in found)

    def _floor(self, fetches: int, others_new: int, others: int) -> float:
        """The share of new pages a pattern must keep: ``min_new_share``, or ``relative_share`` of the rest of the
        crawl's share when that is more (the rest, so that a trap that took most of the crawl does not set it)."""
        relative = self.settings.relative_share * others_new / others if others else 0.0
        return max(self.settings.min_new_share, relative)

    @staticmethod
    def _sample(runs: np.ndarray) -> np.ndarray:
        return runs[runs % np.uint64(_SAMPLE) == 0]

    def _index(self, sample: np.ndarray, probe: np.uint64) -> np.ndarray:
        with np.errstate(over="ignore"):  # multiplicative hashing, modulo 2**64: the top bits are the index
            return ((sample * probe) >> np.uint64(64 - self.bits_log2)).astype(np.int64)

    def _bit(self, sample: np.ndarray, probe: np.uint64) -> np.ndarray:
        index = self._index(sample, probe)
        return (self.seen[index >> 3] >> (index & 7).astype(np.uint8)) & 1 == 1
