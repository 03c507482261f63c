"""The engine's defences against the messy web: what keeps copies, traps and failing hosts from eating a budget and
fooling a strategy that learns from its reward.

Each defence is a small component with its own settings (``enabled`` and thresholds); ``DefenceSettings`` groups
them (``RunSettings.defences``: ``-s defences.near_duplicates.threshold=0.95``) and ``Defences`` is what the
engine holds, one crawl's components and their state (checkpointed with the crawl):

- URL hygiene: tracking parameters and session ids leave every URL the crawl meets
  (``focuscrawl.urls.strip_tracking_and_session``), so copies under them are one URL;
- ``rel=canonical``: a page naming a fetched URL as its own, with a text that agrees, is a duplicate of it; a
  canonical URL not fetched yet joins the closure, as a redirect's target does;
- near-duplicates (``duplicates``): a page whose text is a near-copy of a page fetched before;
- URL aliases (``aliases``): rules learned from those copies (mirror hosts, ``dir/index.html`` twins) rewrite the
  URLs met after them, so that further copies are one URL and cost no fetch;
- host health (``hosts``): back off from a failing host, then close it;
- soft 404s (``soft404``): a host's not-found pages answered with status 200, found with a probe;
- trap patterns (``traps``): a URL pattern that keeps yielding nothing new loses its allowance;
- link farms (``farms``): a host whose pages read as stuffed keywords, not text, is closed.

A page they catch still comes back to the policy in the one observation of its selection, with relevance 0,
reward 0, no links and an empty page (no new evidence); the ground-truth judge is not asked about it; its
``StepEvent.verdict`` says why, and the URLs they keep out of the frontier are listed in ``StepEvent.skipped``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.aliases import UrlAliases, UrlAliasSettings
from focuscrawl.engine.defences.duplicates import (
    NearDuplicates,
    NearDuplicateSettings,
    page_shingles,
    signature,
    similarity,
    url_words,
)
from focuscrawl.engine.defences.farms import LinkFarms, LinkFarmSettings
from focuscrawl.engine.defences.hosts import HostHealth, HostHealthSettings, is_failure
from focuscrawl.engine.defences.soft404 import Soft404, Soft404Settings, looks_like_error_page
from focuscrawl.engine.defences.traps import TrapPatterns, TrapSettings, url_patterns
from focuscrawl.types import Page
from focuscrawl.urls import strip_tracking_and_session

SOFT_404 = "soft 404"
TRAP_PATTERN = "trap pattern"
HOST_FAILING = "host failing"
LINK_FARM = "link farm"
PROBE = "soft-404 probe"
DUPLICATE = "duplicate of "

__all__ = ["DUPLICATE", "HOST_FAILING", "LINK_FARM", "PROBE", "SOFT_404", "TRAP_PATTERN", "CanonicalSettings",
           "DefenceSettings", "Defences", "HostHealthSettings", "LinkFarmSettings", "NearDuplicateSettings",
           "Soft404Settings", "TrapSettings", "UrlAliasSettings", "UrlHygieneSettings", "is_failure", "url_patterns"]


def duplicate_of(url: str) -> str:
    return DUPLICATE + url


class UrlHygieneSettings(BaseModel):
    """Tracking parameters (utm_*, fbclid, gclid, ...) and session ids (;jsessionid=, sid, PHPSESSID) leave URLs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True


class CanonicalSettings(BaseModel):
    """A page whose ``rel=canonical`` names a fetched URL is a duplicate of it, if their texts agree."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_similarity: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="estimated Jaccard similarity of the two texts at which the claim is believed: a site "
                         "that names its home page as every page's canonical (a common mistake) loses nothing")


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
    link_farms: LinkFarmSettings = Field(default_factory=LinkFarmSettings)

    @classmethod
    def off(cls) -> DefenceSettings:
        return cls(enabled=False)

    def on(self, name: str) -> bool:
        return self.enabled and getattr(self, name).enabled

    def build(self, seed: int, budget: int) -> Defences:
        """One crawl's defences (``seed``: the crawl's, for the soft-404 probes' paths; ``budget``: its first
        run's, which sizes what they remember of the text seen)."""
        texts = self.on("near_duplicates") or self.on("canonical") or self.on("soft_404")
        return Defences(
            reading=self.near_duplicates,
            clean=self.on("url_hygiene"),
            canonical=self.canonical if self.on("canonical") else None,
            texts=NearDuplicates(self.near_duplicates) if texts else None,
            detect_copies=self.on("near_duplicates"),
            aliases=UrlAliases(self.url_aliases) if texts and self.on("url_aliases") else None,
            hosts=HostHealth(self.host_health) if self.on("host_health") else None,
            soft_404=Soft404(self.soft_404, seed) if self.on("soft_404") else None,
            traps=TrapPatterns(self.traps, budget, self.near_duplicates.min_shingles) if self.on("traps") else None,
            farms=LinkFarms(self.link_farms) if self.on("link_farms") else None,
        )


@dataclass
class Defences:
    """One crawl's defences and their state; a component is None when its defence is off."""

    clean: bool = False
    canonical: CanonicalSettings | None = None
    texts: NearDuplicates | None = None
    detect_copies: bool = False
    hosts: HostHealth | None = None
    soft_404: Soft404 | None = None
    traps: TrapPatterns | None = None
    # a checkpoint from before these two defences unpickles with None for them: that crawl ran without them
    aliases: UrlAliases | None = None
    farms: LinkFarms | None = None
    skipped: set[str] = field(default_factory=set)  # URLs kept out of the frontier (pending when their rule closed)

    reading: NearDuplicateSettings = field(default_factory=NearDuplicateSettings)  # how a page's text is read

    @property
    def reads_text(self) -> bool:
        return self.texts is not None or self.traps is not None

    def read(self, page: Page, drop: frozenset[str] = frozenset()) -> np.ndarray:
        """The page's text as the defences read it: the hashes of its distinct shingles (title and main text)."""
        return page_shingles(page.title, page.text, self.reading, drop)

    def url(self, url: str | None) -> str | None:
        """A normalised URL as the crawl keeps it: without tracking and session parameters when hygiene is on, and
        rewritten by the URL aliases learned so far."""
        if url is None:
            return None
        if self.clean:
            url = strip_tracking_and_session(url)
        return self.aliases.rewrite(url) if self.aliases is not None else url

    def shut(self, url: str, host: str) -> str:
        """Why the defences keep ``url`` (on ``host``) from being fetched, or "" when they do not."""
        if self.hosts is not None and host in self.hosts.closed:
            return HOST_FAILING
        if self.farms is not None and host in self.farms.closed:
            return LINK_FARM
        if self.traps is not None and self.traps.is_closed(url):
            return TRAP_PATTERN
        if self.aliases is not None and url in self.skipped:
            return DUPLICATE + self.aliases.rewrite(url)  # pending when a rule named its alias
        return ""

    def copy_verdict(self, url: str, final_url: str, host: str, page: Page, runs: np.ndarray, canonical: str | None,
                     fetched: set[str]) -> str:
        """Whether the page (ok, not a probe; ``runs``: ``read(page)``) is a soft 404 or a copy of a page fetched
        before, and remember its text for the pages after it. ``canonical``: its rel=canonical URL as the crawl
        keeps it, if another."""
        if self.texts is None:
            return ""
        soft = self.soft_404
        if soft is not None:
            known = soft.not_found.get(host)
            if known is not None:
                own = self._soft_404_signature(page, final_url)
                if own is not None and similarity(own, known) >= soft.settings.threshold:
                    return SOFT_404
        sig = self.texts.signature(runs)
        verdict = ""
        if canonical is not None and self.canonical is not None and canonical in fetched:
            claimed = self.texts.of(canonical)
            if sig is not None and claimed is not None and similarity(sig, claimed) >= self.canonical.min_similarity:
                verdict = duplicate_of(canonical)
        if not verdict and self.detect_copies and sig is not None:
            found = self.texts.find(sig)
            if found is not None:
                verdict = duplicate_of(found[0])
        if soft is not None and not verdict and looks_like_error_page(page.title, page.text):
            soft.ask(host, soft.probe_url(final_url))
        if sig is not None and not verdict:
            self.texts.add(final_url, sig)
            if canonical is not None and self.canonical is not None:
                self.texts.add(canonical, sig, indexed=False)  # what a later claim of it is checked against
        return verdict

    def probe_answered(self, url: str, page: Page) -> None:
        assert self.soft_404 is not None
        final = page.final_url or url
        ok = page.ok and final == url  # a redirect elsewhere (to the home page, say) is no not-found page
        self.soft_404.answered(url, self._soft_404_signature(page, url) if ok else None, ok)

    def _soft_404_signature(self, page: Page, url: str) -> np.ndarray | None:
        runs = self.read(page, url_words(url))
        if not len(runs):
            return None
        return signature(runs, self.reading.num_perm)

