"""Thin rows: a URL family whose pages are far shorter than the topic's relevant pages gets a small allowance.

A data browser shows each record of a table on a page of its own (``/db/species/1591``, ``/species/Snowy_Owl``): a
line or two, the table's name, its facets. Such a row carries the topic's densest words and links back to views
that list a hundred more rows, so a crawl that judges it by its words and its parents keeps choosing rows: on the
test bed they took 7-8% of every run although none is relevant, and shrinking a row's relevance by its length
(``topic.thin``) did not stop the next one being chosen (docs/history/trials/thin-families-rule.md). A crawl that
has fetched a few rows of a family has seen what the rest are.

A fetched page (2xx, no verdict) is *short* when it has fewer words than the topic's thin-page floor (``topic.thin``:
``thin_page_ratio`` x the median word count of the topic's relevant example pages; a topic without example pages
has no floor, and this defence does nothing). Pages are counted per listing family (``listings.listing_family``:
host and path shape, numbers and the last segment's stem generalised: ``/species/{x}``, ``/db/pages/{n}``). A family
that has shown ``allowance`` short pages, and whose fetched pages are short at least ``min_short_share`` of the time
(articles of one path shape with a few stubs among them never close), is closed: its pending URLs leave the
frontier and those met later are refused (``thin rows``). No word of any language and no URL keyword is read.
Chosen by a rule written first: docs/history/trials/thin-rows-rule.md.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.listings import listing_family
from focuscrawl.engine.defences.pipeline import THIN_ROWS, Crawl, Defence, Fetch


class ThinRowSettings(BaseModel):
    """A path shape whose pages are mostly under the topic's thin-page floor gets a small allowance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = False  # until its trial decides (docs/history/trials/thin-rows-rule.md)
    allowance: Annotated[int, Field(ge=1)] = Field(
        6, description="short pages fetched of one listing family before the family is closed")
    min_short_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="share of a family's fetched pages that must be short for it to close")


class ThinRows(Defence):
    """Pages and short pages per listing family, and the closed families."""

    name = "thin_rows"

    def __init__(self, settings: ThinRowSettings):
        self.settings = settings
        self.pages: dict[str, int] = {}
        self.short: dict[str, int] = {}
        self.closed: set[str] = set()

    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        return THIN_ROWS if self.closed and listing_family(url) in self.closed else ""

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """Count the page in its family, and close the family when it has shown its allowance of short pages."""
        if fetch.own or fetch.verdict or not fetch.page.ok:
            return
        short = crawl.is_short(fetch.page.text)
        if short is None:  # no floor: a topic without example pages
            return
        family = listing_family(fetch.url)
        pages = self.pages[family] = self.pages.get(family, 0) + 1
        if not short:
            return
        shorts = self.short[family] = self.short.get(family, 0) + 1
        if (family not in self.closed and shorts >= self.settings.allowance
                and shorts >= self.settings.min_short_share * pages):
            self.closed.add(family)
            fetch.skipped.extend(crawl.drop_pending(
                lambda url: THIN_ROWS if listing_family(url) == family else ""))
