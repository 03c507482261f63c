"""Soft 404s: hosts that answer 200 with a "page not found" page for addresses they do not have.

As archival crawlers do (Bar-Yossef et al., "Sic transit gloria telae", WWW 2004), a host is probed with a
random path it cannot have: if the answer is 200, its text is the host's not-found page, and a later page of
the host whose text is a near-copy of it is a soft 404. The probe is a fetch, so it is a crawl step like any
other (recorded as ``soft-404 probe``, never shown to the policy), and it is spent only on a host that gives
cause. The cause is read from the host's own pages, in no language: a short page (under ``_SHORT_TEXT``
characters) whose text is a near-copy of another short page of the host at another URL, as every not-found page
of a host is of the others (a host of short but distinct pages, a data browser's rows, gives none); and, when
``probe_after_pages`` is set, a host's that many pages. (A host that serves one long page, its home page say,
for any address needs no probe: the second such page is a near-duplicate of the first.) Error pages echo the
address asked for, so texts are compared without the words of their own URL's path.

Deterministic: the probe's path comes from the crawl's seed and the host name, so a resumed crawl probes the
same URL at the same point.
"""

from __future__ import annotations

import random
import string
from collections import Counter, deque
from typing import Annotated
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.duplicates import NearDuplicateSettings, page_shingles, signature, similarity, url_words
from focuscrawl.engine.defences.pipeline import PROBE, SOFT_404, Crawl, Defence, Fetch
from focuscrawl.types import Page, Selection
from focuscrawl.urls import site_of

_SHORT_TEXT = 1000  # characters: a not-found page says little more than that it found nothing
_SHORT_KEPT = 1000  # short pages remembered per host until it is probed (a signature is num_perm 32-bit values)


class Soft404Settings(BaseModel):
    """Probe a host that gives cause with a random path; its pages that read like the answer are "soft 404"."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    threshold: Annotated[float, Field(gt=0, le=1)] = Field(
        0.7, description="estimated Jaccard similarity to the probe's text (both without their URL's words) at "
                         "which a page is the host's not-found page; two short pages of a host this alike give "
                         "cause to probe it")
    probe_after_pages: Annotated[int, Field(ge=0)] = Field(
        0, description="also probe every host once it has answered this many pages with a text (0: only a host "
                       "whose short pages are near-copies of each other at different URLs is probed)")


def is_short(page: Page) -> bool:
    """A page with little text: what a not-found page is, whatever its language."""
    return len(page.text) < _SHORT_TEXT


class Soft404(Defence):
    """Probes asked for and in flight, each probed host's not-found page signature (None: it answers 404), and
    what gives cause to probe a host not probed yet: its pages with a text, and its short pages' signatures."""

    name = "soft_404"
    reads_text = True

    def __init__(self, settings: Soft404Settings, seed: int, reading: NearDuplicateSettings):
        self.settings = settings
        self.seed = seed
        self.reading = reading  # how a page's text is read (the near-duplicates' reading)
        self.queued: deque[str] = deque()      # probe URLs to fetch next
        self.probe_host: dict[str, str] = {}   # probe URL -> host (site_of), from asked until answered
        self.probed: set[str] = set()          # hosts asked about (probe queued or answered)
        self.not_found: dict[str, np.ndarray | None] = {}  # host -> its not-found page's signature, None if none
        self.pages: Counter[str] = Counter()   # host not probed yet -> its pages with a text
        self.short: dict[str, list[np.ndarray]] = {}  # host not probed yet -> its short pages' signatures

    def probe_url(self, url: str) -> str:
        """A path the host of ``url`` cannot have, fixed by the crawl's seed and the host name."""
        parts = urlsplit(url)
        rng = random.Random(f"{self.seed}:soft-404:{parts.netloc}")
        token = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(24))
        return f"{parts.scheme}://{parts.netloc}/{token}"

    def ask(self, host: str, probe: str) -> None:
        """Queue ``probe`` for ``host`` (once per host); what gave cause is no longer needed."""
        if host not in self.probed:
            self.probed.add(host)
            self.queued.append(probe)
            self.probe_host[probe] = host
            self.pages.pop(host, None)
            self.short.pop(host, None)

    def answered(self, url: str, signature: np.ndarray | None, ok: bool) -> None:
        """The probe came back: a 2xx answer with a text makes its host a soft-404 host."""
        host = self.probe_host.pop(url)
        self.not_found[host] = signature if ok else None

    def gives_cause(self, fetch: Fetch) -> bool:
        """The page, with those of its host before it, gives cause to probe the host: the host's
        ``probe_after_pages``-th page, or a short page whose text is a near-copy of an earlier short page's (both
        without their URL's words)."""
        host = fetch.host
        self.pages[host] += 1
        if self.settings.probe_after_pages and self.pages[host] >= self.settings.probe_after_pages:
            return True
        if not is_short(fetch.page):
            return False
        own = self._signature(fetch.page, fetch.final_url)
        if own is None:
            return False
        kept = self.short.setdefault(host, [])
        if kept and bool((np.mean(np.stack(kept) == own, axis=1) >= self.settings.threshold).any()):
            return True
        if len(kept) < _SHORT_KEPT:
            kept.append(own)
        return False

    # -- its hooks -----------------------------------------------------------------------------
    def is_own(self, url: str) -> bool:
        return url in self.probe_host

    def own_selection(self, crawl: Crawl, step: int, anyway: bool) -> tuple[Selection, float] | None:
        """The next probe that can still be asked (one the crawl met meanwhile cannot: its host stays unprobed)."""
        while self.queued:
            url = self.queued.popleft()
            if not crawl.askable(url):
                self.probe_host.pop(url, None)
                continue
            return Selection(url, None, f"not the strategy's: a path {site_of(url)} cannot have, to learn whether it "
                                        "answers missing pages with a page (a soft 404)"), 0.0
        return None

    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        """A probe's answer is the host's not-found page; a page like it is a soft 404; a page of a host not
        probed yet may give cause to probe it (whatever the other defences make of the page)."""
        if self.is_own(fetch.url):
            fetch.verdict, fetch.hidden = PROBE, True
            page = fetch.page
            ok = page.ok and (page.final_url or fetch.url) == fetch.url  # a redirect elsewhere is no not-found page
            self.answered(fetch.url, self._signature(page, fetch.url) if ok else None, ok)
            return
        if fetch.verdict or fetch.text is None:
            return
        if fetch.host not in self.probed:
            if self.gives_cause(fetch):
                self.ask(fetch.host, self.probe_url(fetch.final_url))
            return
        known = self.not_found.get(fetch.host)
        if known is None:
            return
        own = self._signature(fetch.page, fetch.final_url)
        if own is not None and similarity(own, known) >= self.settings.threshold:
            fetch.reject(SOFT_404)

    def _signature(self, page: Page, url: str) -> np.ndarray | None:
        """The page's signature without the words of its own URL's path (which error pages echo)."""
        runs = page_shingles(page.title, page.text, self.reading, url_words(url))
        if not len(runs):
            return None
        return signature(runs, self.reading.num_perm)

    def __setstate__(self, state: dict) -> None:
        """A checkpoint from before the host evidence was kept resumes with none yet."""
        state.setdefault("pages", Counter())
        state.setdefault("short", {})
        self.__dict__.update(state)
