"""The engine's defences against the messy web: what keeps copies, traps and failing hosts from eating a budget and
fooling a strategy that learns from its reward.

Each defence is one object with the hooks of ``pipeline.Defence`` it needs and its own settings (``enabled`` and
thresholds); ``DefenceSettings`` groups them (``RunSettings.defences``: ``-s defences.near_duplicates.threshold=0.95``)
and sets their order (``defences.order``, a position per name, as Scrapy's ``DOWNLOADER_MIDDLEWARES``; a name
``module:Class`` adds a defence of one's own). ``pipeline.Defences`` is what the engine holds: one crawl's defences
in that order, and their state (checkpointed with the crawl). The built-in ones, by position:

- URL hygiene (``hygiene``, 100): tracking parameters and session ids leave every URL the crawl meets
  (``focuscrawl.urls.strip_tracking_and_session``), so copies under them are one URL;
- host health (``hosts``, 200): back off from a failing host, then close it;
- link farms (``farms``, 300): a host whose pages read as stuffed keywords, not text, is closed;
- trap patterns (``traps``, 400): a URL pattern that keeps yielding nothing new loses its allowance (a page that
  copies the text of its family's earlier pages yields nothing; one of distinct text does); a listing's sort and
  filter parameters, once its views show them, make the views of a known URL "view variants", never fetched;
- listings (``listings``, 450): a path shape (``/tag/{x}.html``) whose pages quote their host's other pages and
  link to known URLs gets an allowance of a few such listings; its other URLs are refused ("listing");
- thin rows (``thin_rows``, 460): a path shape (``/species/{x}``) whose pages are mostly far shorter than the
  topic's relevant examples (a data browser's records) gets an allowance of a few such pages; its other URLs are
  refused ("thin rows");
- URL aliases (``aliases``, 500): rules learned from the copies found and from pages naming another URL as their
  ``rel=canonical`` (mirror hosts, ``dir/index.html`` twins) rewrite the URLs met after them, so that further copies
  are one URL and cost no fetch; a rule that rewrites a URL into a not-found page is retired;
- near-duplicates (``copies``, 600): a page whose text is a near-copy of a page fetched before;
- ``rel=canonical`` (``copies``, 700): a hint, never a verdict on a URL not fetched: of a page and the URL it names
  as its own, both fetched and their texts agreeing (a near-copy across sites), the later is the earlier's duplicate;
- soft 404s (``soft404``, 800): a host's not-found pages answered with status 200, found with a probe.

A page they catch still comes back to the policy in the one observation of its selection, with relevance 0,
reward 0, no links and an empty page (no new evidence); the ground-truth judge is not asked about it; its
``StepEvent.verdict`` says why, and the URLs they keep out of the frontier are listed in ``StepEvent.skipped``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from focuscrawl.engine.defences.aliases import UrlAliases, UrlAliasSettings
from focuscrawl.engine.defences.copies import Canonical, CanonicalSettings, NearDuplicateCheck
from focuscrawl.engine.defences.duplicates import NearDuplicates, NearDuplicateSettings
from focuscrawl.engine.defences.farms import LinkFarms, LinkFarmSettings
from focuscrawl.engine.defences.hosts import HostHealth, HostHealthSettings, is_failure
from focuscrawl.engine.defences.hygiene import UrlHygiene, UrlHygieneSettings
from focuscrawl.engine.defences.listings import Listings, ListingSettings
from focuscrawl.engine.defences.pipeline import (
    DUPLICATE,
    HOST_FAILING,
    LINK_FARM,
    LISTING,
    PROBE,
    SOFT_404,
    THIN_ROWS,
    TRAP_PATTERN,
    VIEW_VARIANT,
    Crawl,
    Defence,
    Defences,
    Fetch,
    duplicate_of,
)
from focuscrawl.engine.defences.soft404 import Soft404, Soft404Settings
from focuscrawl.engine.defences.thin_rows import ThinRows, ThinRowSettings
from focuscrawl.engine.defences.traps import TrapPatterns, TrapSettings, url_patterns

__all__ = ["DEFAULT_ORDER", "DUPLICATE", "HOST_FAILING", "LINK_FARM", "LISTING", "PROBE", "SOFT_404", "THIN_ROWS",
           "TRAP_PATTERN", "VIEW_VARIANT", "CanonicalSettings", "Crawl",
           "Defence", "DefenceSettings", "Defences", "Fetch", "HostHealthSettings", "LinkFarmSettings",
           "ListingSettings", "NearDuplicateSettings", "Soft404Settings", "ThinRowSettings", "TrapSettings",
           "UrlAliasSettings",
           "UrlHygieneSettings",
           "duplicate_of", "is_failure", "url_patterns"]

# The built-in defences' positions: hooks on URLs run from the lowest up, hooks on pages from the highest down
# (``pipeline``). This order is the one the engine always consulted them in: changing it changes crawls.
DEFAULT_ORDER = {"url_hygiene": 100, "host_health": 200, "link_farms": 300, "traps": 400, "listings": 450,
                 "thin_rows": 460, "url_aliases": 500,
                 "near_duplicates": 600, "canonical": 700, "soft_404": 800}


def import_defence(path: str) -> type:
    """The class a ``module:Class`` entry of ``defences.order`` names."""
    module, _, name = path.partition(":")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"defence {path!r} cannot be imported: {exc}") from None
    if not isinstance(found, type):
        raise ValueError(f"defence {path!r} is not a class")
    return found


class DefenceSettings(BaseModel):
    """The engine's defences against the messy web, each with its own switch; ``enabled: false`` turns all off."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    url_hygiene: UrlHygieneSettings = Field(default_factory=UrlHygieneSettings)
    canonical: CanonicalSettings = Field(default_factory=CanonicalSettings)
    near_duplicates: NearDuplicateSettings = Field(default_factory=NearDuplicateSettings)
    url_aliases: UrlAliasSettings = Field(default_factory=UrlAliasSettings)
    host_health: HostHealthSettings = Field(default_factory=HostHealthSettings)
    soft_404: Soft404Settings = Field(default_factory=Soft404Settings)
    traps: TrapSettings = Field(default_factory=TrapSettings)
    listings: ListingSettings = Field(default_factory=ListingSettings)
    thin_rows: ThinRowSettings = Field(default_factory=ThinRowSettings)
    link_farms: LinkFarmSettings = Field(default_factory=LinkFarmSettings)
    order: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_ORDER),
        description="each defence's position (merged with the built-ins'): hooks on URLs run from the lowest up, on "
                    "pages from the highest down; a key 'module:Class' adds a defence of one's own "
                    "(docs/interfaces.md, 'Defences')")

    @field_validator("order")
    @classmethod
    def _known_defences(cls, order: dict[str, int]) -> dict[str, int]:
        for name in order:
            if ":" in name:
                import_defence(name)
            elif name not in DEFAULT_ORDER:
                raise ValueError(f"no defence {name!r}: one of {', '.join(DEFAULT_ORDER)}, or 'module:Class'")
        return {**DEFAULT_ORDER, **order}

    @classmethod
    def off(cls) -> DefenceSettings:
        return cls(enabled=False)

    def on(self, name: str) -> bool:
        return self.enabled and getattr(self, name).enabled

    def build(self, seed: int, budget: int) -> Defences:
        """One crawl's defences in their order (``seed``: the crawl's, for the soft-404 probes' paths; ``budget``:
        its first run's, which sizes what they remember of the text seen)."""
        if not self.enabled:
            return Defences()
        # the pages fetched so far by their text, which the copy defences share (URL aliases learn from copies)
        texts = self.on("near_duplicates") or self.on("canonical") or self.on("soft_404")
        index = NearDuplicates(self.near_duplicates) if texts else None
        built: dict[str, Callable[[], Defence]] = {
            "url_hygiene": UrlHygiene,
            "host_health": lambda: HostHealth(self.host_health),
            "link_farms": lambda: LinkFarms(self.link_farms),
            "traps": lambda: TrapPatterns(self.traps, budget, self.near_duplicates.min_shingles),
            "listings": lambda: Listings(self.listings, budget, self.near_duplicates.min_shingles),
            "thin_rows": lambda: ThinRows(self.thin_rows),
            "url_aliases": lambda: UrlAliases(self.url_aliases),
            "near_duplicates": lambda: NearDuplicateCheck(index),
            "canonical": lambda: Canonical(self.canonical, index),
            "soft_404": lambda: Soft404(self.soft_404, seed, self.near_duplicates),
        }
        defences = []
        for name, _ in sorted(self.order.items(), key=lambda item: (item[1], item[0])):
            if name in built:
                if self.on(name) and (name != "url_aliases" or index is not None):
                    defences.append(built[name]())
                continue
            defence = import_defence(name)()
            defence.name = getattr(defence, "name", "") or name  # a class need not subclass Defence
            defences.append(defence)
        return Defences(defences, index=index, reading=self.near_duplicates)
