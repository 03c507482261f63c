"""Copies found by their text, against the text index the crawl keeps of the pages it fetched (``duplicates``).

- ``rel=canonical`` (``Canonical``): a page naming a fetched URL as its own, with a text that agrees, is a duplicate
  of it; a canonical URL fetched after a page that named it is that page's duplicate, on the same terms;
- near-duplicates (``NearDuplicateCheck``): a page whose text is a near-copy of a page fetched before.

A page neither finds a copy of is added to the index (``Defences.inspect``) for the pages after it.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.duplicates import NearDuplicates, similarity
from focuscrawl.engine.defences.pipeline import Crawl, Defence, Fetch, duplicate_of
from focuscrawl.urls import site_of


class CanonicalSettings(BaseModel):
    """A page whose ``rel=canonical`` names a fetched URL is a duplicate of it, if their texts agree."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_similarity: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="estimated Jaccard similarity of the two texts at which a claim between pages of one site "
                         "is believed: a site that names its home page as every page's canonical (a common "
                         "mistake) loses nothing. Between two sites a claim needs the near-duplicates' threshold")


class Canonical(Defence):
    """Believes a page's claim to be another URL's document only once both were fetched and their texts agree.

    A canonical is a hint, never a verdict on a URL not fetched: anyone can name any URL (a page on ``evil.test``
    naming ``victim.test/important``), and sites name wrong ones (page 2 of a listing naming page 1, every page
    naming the home page). So a claim never marks a URL fetched nor keeps one out of the frontier; it decides only
    between two fetched pages, whichever came first: the page and its canonical, when their texts agree at
    ``min_similarity`` on one site (``site_of``) or at the near-duplicate threshold across sites (where only a
    near-copy is believed), and the later of the two is the duplicate of the earlier, as a near-copy is."""

    name = "canonical"
    reads_text = True

    def __init__(self, settings: CanonicalSettings, index: NearDuplicates):
        self.settings = settings
        self.index = index  # shared with the other copy defences
        self.named: dict[str, str] = {}  # a canonical URL not fetched when named -> the first page naming it

    def __setstate__(self, state: dict) -> None:
        state.setdefault("named", {})  # a checkpoint of the rule that let canonicals join the closure
        self.__dict__.update(state)

    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        own = fetch.signature
        if fetch.verdict or own is None:
            return
        canonical = fetch.canonical
        if canonical is not None and canonical in crawl.fetched and self._agree(fetch.final_url, canonical, own):
            fetch.reject(duplicate_of(canonical))
            return
        for url in dict.fromkeys((fetch.url, fetch.final_url)):  # this page is a canonical named before it
            namer = self.named.get(url)
            if namer is not None and self._agree(url, namer, own):
                fetch.reject(duplicate_of(namer))
                return

    def passed(self, fetch: Fetch, crawl: Crawl) -> None:
        """A page naming a canonical not fetched yet is remembered, for the canonical's text to be checked against
        when (if ever) it is fetched: the canonical joins nothing and keeps its place in the frontier."""
        canonical = fetch.canonical
        if canonical is not None and fetch.signature is not None and canonical not in crawl.fetched:
            self.named.setdefault(canonical, fetch.final_url)

    def _agree(self, url: str, other: str, own: np.ndarray) -> bool:
        """Whether the text of ``url`` (``own``) agrees with the indexed text of ``other`` enough for the claim."""
        theirs = self.index.of(other)
        if theirs is None:
            return False
        same_site = site_of(url) == site_of(other)
        needed = self.settings.min_similarity if same_site else self.index.settings.threshold
        return similarity(own, theirs) >= needed


class NearDuplicateCheck(Defence):
    """A page whose text is a near-copy of a page fetched before is a duplicate of it."""

    name = "near_duplicates"
    reads_text = True

    def __init__(self, index: NearDuplicates):
        self.index = index  # shared with the other copy defences

    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        if fetch.verdict or fetch.signature is None:
            return
        found = self.index.find(fetch.signature)
        if found is not None:
            fetch.reject(duplicate_of(found[0]))
