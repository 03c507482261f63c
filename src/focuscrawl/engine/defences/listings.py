"""Listing pages: a site's tag, category, author and archive pages, told from what they show, not from their URL.

A blog or CMS lists its articles many times over: under each tag, each category, each author, each month. Each
such listing is a new URL and a new page, but what it shows is the excerpts of articles the site shows elsewhere
and links to articles the crawl mostly knows already. Each tag is a URL of its own (``/tag/birds.html``), so a
rule per URL pattern (``traps``) never sees enough of one tag to close it.

A fetched page (2xx, read, no verdict) is a *listing* when

- at least ``min_quoted`` of its text was seen before on its host: one in two of its shingles (as the trap
  defence samples a family's text) goes into a Bloom filter keyed by host, and the page's share already there is
  what it quotes of the host's other pages (the excerpts a listing shows, and the listings before it showed);
- at least ``min_known_links`` of its links (at least ``min_links`` distinct ones) were known to the crawl before
  it: it yields few new URLs.

Its *listing family* is its host and path shape with numbers generalised (as trap patterns) and the stem of its
last segment generalised too: ``/tag/{x}.html``, ``/category/{x}.html``, ``/posts/{n}/``, the query left out. A
family that has shown ``allowance`` listings, and whose fetched pages are listings at least
``min_listing_share`` of the time (articles under one path shape, with a listing among them, never close), is
closed: its pending URLs leave the frontier and those met later are refused (``listing``). No word of any
language and no URL keyword is read. A listing that leads to new URLs is not counted, so a site's paginated
index that brings its articles stays open. On the clean webs few pages could read as quoted in any crawl order
(86 of Wikispeedia's 4,598 pages, country articles sharing passages; 173 of WebKB's 5,418), a few per family, and
a family closes only when they are half of what it fetched: no crawl of the hash suite meets a closed family.
Chosen on a tuning half of the test bed: docs/history/trials/listings-from-evidence-rule.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.pipeline import LISTING, Crawl, Defence, Fetch
from focuscrawl.engine.defences.traps import Bloom, _segment, bloom_bits_log2, keyed_sample


class ListingSettings(BaseModel):
    """A path shape whose pages keep quoting their host and linking to known URLs gets a small allowance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_quoted: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="share of a page's text seen before on its host for the page to read as a listing")
    min_known_links: Annotated[float, Field(ge=0, le=1)] = Field(
        0.8, description="share of a page's links known to the crawl before it for the page to read as a listing")
    min_links: Annotated[int, Field(ge=1)] = Field(5, description="distinct links a listing has at least")
    allowance: Annotated[int, Field(ge=1)] = Field(
        6, description="listings fetched of one listing family (host, path shape, last segment's stem "
                       "generalised) before the family is closed")
    min_listing_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="share of a family's fetched pages that must be listings for it to close")


@lru_cache(maxsize=1 << 16)
def listing_family(url: str) -> str:
    """A URL's listing family: host and path shape, numbers generalised, the stem of its last segment too."""
    parts = urlsplit(url)
    segments = [_segment(s) for s in parts.path.split("/")]
    for i in range(len(segments) - 1, -1, -1):
        if segments[i]:
            stem, dot, ext = segments[i].rpartition(".")
            if not dot:
                stem, ext = ext, ""
            if stem.replace("{n}", "").replace("{id}", ""):
                segments[i] = "{x}" + dot + ext
            break
    return parts.netloc + "/".join(segments)


class Listings(Defence):
    """The text seen per host (a Bloom filter), pages and listings per family, and the closed families."""

    name = "listings"
    reads_text = True

    def __init__(self, settings: ListingSettings, budget: int, min_shingles: int = 1):
        self.settings = settings
        self.min_shingles = min_shingles  # a shorter text cannot be told quoted or not
        self.host_text = Bloom(bloom_bits_log2(budget))
        self.pages: dict[str, int] = {}
        self.listings: dict[str, int] = {}
        self.closed: set[str] = set()

    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        return LISTING if self.closed and listing_family(url) in self.closed else ""

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """Read the page for the two signs, count it in its family, and close the family when it has shown its
        allowance of listings."""
        if fetch.own or not fetch.page.ok:
            return
        text = fetch.text
        if text is None or len(text) < self.min_shingles:
            return
        keys = keyed_sample(fetch.host, text)
        if not len(keys):
            return
        quoted = 1.0 - self.host_text.new_share(keys)
        self.host_text.add(keys)
        if fetch.verdict:
            return
        family = listing_family(fetch.url)
        self.pages[family] = self.pages.get(family, 0) + 1
        if quoted < self.settings.min_quoted or not self._links_known(fetch, crawl):
            return
        listings = self.listings[family] = self.listings.get(family, 0) + 1
        if (family not in self.closed and listings >= self.settings.allowance
                and listings >= self.settings.min_listing_share * self.pages[family]):
            self.closed.add(family)
            fetch.skipped.extend(crawl.drop_pending(
                lambda url: LISTING if listing_family(url) == family else ""))

    def _links_known(self, fetch: Fetch, crawl: Crawl) -> bool:
        """At least ``min_known_links`` of the page's distinct links (``min_links`` or more) were known before."""
        links = {link.url for link in fetch.page.outlinks}
        if len(links) < self.settings.min_links:
            return False
        fresh = sum(1 for _ in crawl.fresh(fetch.links, crawl.depth_of(fetch.url) + 1))
        return fresh <= (1.0 - self.settings.min_known_links) * len(links)
