"""Copies found by their text, against the text index the crawl keeps of the pages it fetched (``duplicates``).

- ``rel=canonical`` (``Canonical``): a page naming a fetched URL as its own, with a text that agrees, is a duplicate
  of it; a canonical URL not fetched yet joins the closure, as a redirect's target does;
- near-duplicates (``NearDuplicateCheck``): a page whose text is a near-copy of a page fetched before.

A page neither finds a copy of is added to the index (``Defences.inspect``) for the pages after it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.duplicates import NearDuplicates, similarity
from focuscrawl.engine.defences.pipeline import Crawl, Defence, Fetch, duplicate_of


class CanonicalSettings(BaseModel):
    """A page whose ``rel=canonical`` names a fetched URL is a duplicate of it, if their texts agree."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_similarity: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="estimated Jaccard similarity of the two texts at which the claim is believed: a site "
                         "that names its home page as every page's canonical (a common mistake) loses nothing")


class Canonical(Defence):
    """Believes a page's claim to be a fetched URL's document when their texts agree."""

    name = "canonical"
    reads_text = True

    def __init__(self, settings: CanonicalSettings, index: NearDuplicates):
        self.settings = settings
        self.index = index  # shared with the other copy defences

    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        canonical = fetch.canonical
        if fetch.verdict or canonical is None or canonical not in crawl.fetched:
            return
        claimed, own = self.index.of(canonical), fetch.signature
        if own is not None and claimed is not None and similarity(own, claimed) >= self.settings.min_similarity:
            fetch.reject(duplicate_of(canonical))

    def passed(self, fetch: Fetch, crawl: Crawl) -> None:
        """The canonical URL gets the page's text, what a later claim of it is checked against, and (as a
        redirect's target) the page is its document, which need not be fetched again."""
        canonical = fetch.canonical
        if canonical is None:
            return
        if fetch.signature is not None:
            self.index.add(canonical, fetch.signature, indexed=False)
        crawl.join(fetch, canonical)


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
