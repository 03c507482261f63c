"""The defences as one pipeline: the hooks a defence may have, the fetch they judge, and the order they run in.

A defence is one object with any of the hooks of ``Defence`` (a subclass overrides those it needs); ``Defences``
holds one crawl's defences in the order of their positions (``DefenceSettings.order``) and is what the engine
calls. As Scrapy's downloader middlewares, hooks on a URL on its way to the web (``rewrite``, ``refuse``,
``hold``) run from the lowest position up, and hooks on what comes back (``inspect``, ``passed``, ``review``) and
on the defences' own fetches (``own_selection``, ``is_own``, ``host_closed``) from the highest down.

Each defence's state is crawl state: the engine checkpoints ``Defences`` with the crawl (pickled whole).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

import numpy as np

from focuscrawl.engine.defences.duplicates import NearDuplicates, NearDuplicateSettings, page_shingles
from focuscrawl.types import Page, Selection
from focuscrawl.urls import normalize_url

# Verdicts: why a fetched page gives no reward and no links (``StepEvent.verdict``), or why a URL is kept out of
# the frontier (``StepEvent.skipped``). A defence of one's own may give any other short phrase.
SOFT_404 = "soft 404"
TRAP_PATTERN = "trap pattern"
VIEW_VARIANT = "view variant"  # a known URL with sort or filter parameters added (traps)
LISTING = "listing"  # a URL of a path shape whose pages have shown their allowance of listings (listings)
THIN_ROWS = "thin rows"  # a URL of a path shape whose pages have shown their allowance of short pages (thin_rows)
HOST_FAILING = "host failing"
LINK_FARM = "link farm"
PROBE = "soft-404 probe"
DUPLICATE = "duplicate of "


def duplicate_of(url: str) -> str:
    return DUPLICATE + url


class Crawl(Protocol):
    """What a defence may read of the crawl and ask of it (the engine is one)."""

    fetched: set[str]
    kept_out: set[str]  # URLs kept out of the frontier, each listed once in ``StepEvent.skipped``
    clock_s: float | None  # the wall clock of the fetch being recorded; None in a crawl without one (offline)

    def known(self, url: str) -> bool:
        """``url`` is discovered, fetched or in flight."""

    def askable(self, url: str) -> bool:
        """``url`` could be fetched as a selection of a defence's own: never met, on an open host, in scope."""

    def depth_of(self, url: str) -> int: ...

    def fresh(self, links: list[tuple[str, str]], depth: int) -> Iterator[str]:
        """The links that would enter the frontier as URLs never discovered before."""

    def join(self, fetch: Fetch, url: str) -> None:
        """The fetched page is ``url``'s document too: it joins the closure, as a redirect's target does."""

    def close_host(self, host: str, why: str) -> list[tuple[str, str]]:
        """Close ``host`` as a capped host is; its pending and held URLs, listed with ``why``."""

    def drop_pending(self, why: Callable[[str], str]) -> list[tuple[str, str]]:
        """Pending URLs for which ``why`` gives a reason leave the frontier; listed with their reasons."""

    def is_short(self, text: str) -> bool | None:
        """The text is under the topic's thin-page floor (``topic.thin``); None for a topic without one."""


class Fetch:
    """One fetched page as the defences judge it; what they decide is read back by the engine.

    ``verdict``: why the page gives no reward and no links ("" if it does); ``hidden``: the policy sees the page
    empty; ``relevance``, ``rewarded`` and ``links`` (URL, anchor) are the engine's, set between ``inspect`` and
    ``review``; ``skipped``: URLs the defences kept out of the frontier at this step, with why."""

    def __init__(self, defences: Defences, url: str, final_url: str, host: str, page: Page, step: int,
                 own: bool, redirect_duplicate: bool):
        self.url, self.final_url, self.host, self.page, self.step = url, final_url, host, page, step
        self.own = own  # a fetch of a defence's own (a soft-404 probe): never shown to the policy
        self.redirect_duplicate = redirect_duplicate  # a redirect to a page fetched before
        self.verdict = duplicate_of(final_url) if redirect_duplicate else ""
        self.hidden = False
        self.relevance = 0.0
        self.rewarded = False
        self.links: list[tuple[str, str]] = []
        self.skipped: list[tuple[str, str]] = []
        self.joined: list[str] = []  # URLs this fetch adds to the closure besides its own
        self.canonical: str | None = None
        self._defences = defences
        self._text: np.ndarray | None = None
        self._read = False
        self._signature: np.ndarray | None = None
        self._signed = False

    def reject(self, verdict: str) -> None:
        """The page gives no reward and no links, and the policy sees it empty; a page with a verdict keeps it."""
        if not self.verdict:
            self.verdict, self.hidden, self.relevance, self.links = verdict, True, 0.0, []

    @property
    def text(self) -> np.ndarray | None:
        """The page's text as the defences read it (its distinct shingles' hashes), once for all of them; None for
        a page not read: a defence's own fetch, a redirect to a fetched page, a failed or empty page."""
        if not self._read:
            self._read = True
            page = self.page
            if not self.own and not self.redirect_duplicate and page.ok and (page.text or page.title):
                self._text = self._defences.read(page)
        return self._text

    @property
    def signature(self) -> np.ndarray | None:
        """The text's MinHash signature, when the crawl keeps a text index and the text is long enough to tell."""
        if not self._signed:
            self._signed = True
            index, text = self._defences.index, self.text
            self._signature = index.signature(text) if index is not None and text is not None else None
        return self._signature


class Defence:
    """A defence's hooks, each a no-op here: a defence overrides those it needs (``Defences`` calls no other).

    ``name`` is the key of its position in ``DefenceSettings.order``."""

    name = ""
    reads_text = False  # its hooks read ``Fetch.text``: the page is read for it

    def rewrite(self, url: str) -> str:
        """A URL as the crawl keeps it (every URL met: links, redirects, canonicals, seeds)."""
        return url

    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        """Why ``url`` (on ``host``) must not enter the frontier or be fetched, or "". The first reason stands."""
        return ""

    def hold(self, selection: Selection, select_s: float, host: str, step: int) -> bool:
        """Whether to hold the policy's selection back for now (the defence keeps it, to give it back through
        ``own_selection``)."""
        return False

    def holds_back(self, host: str, step: int) -> bool:
        """Whether the defence holds back a selection of ``host`` at ``step`` (a polite driver's ready hint)."""
        return False

    def own_selection(self, crawl: Crawl, step: int, anyway: bool) -> tuple[Selection, float] | None:
        """A selection of the defence's own, before the policy's: a fetch of its own (``is_own``) or one it held
        (with the select seconds it took); ``anyway``: the policy has nothing left."""
        return None

    def is_own(self, url: str) -> bool:
        """``url`` is a fetch of the defence's own, which the policy never sees."""
        return False

    def host_closed(self, host: str) -> list[str]:
        """``host`` is closed or capped; the URLs of the selections the defence held for it (dropped)."""
        return []

    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        """The fetched page before it is scored: ``fetch.reject(verdict)`` spares the classifier and the links."""

    def passed(self, fetch: Fetch, crawl: Crawl) -> None:
        """The page came through ``inspect`` without a verdict: what the defence learns from a good page."""

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """The page scored (``fetch.relevance``, ``fetch.rewarded``) with its links: a last verdict."""


_HOOKS = ("rewrite", "refuse", "hold", "holds_back", "own_selection", "is_own", "host_closed", "inspect", "passed",
          "review")
_UPWARD = ("rewrite", "refuse", "hold", "holds_back")  # a URL on its way to the web: lowest position first


class Defences:
    """One crawl's defences in their order, and the text index the copy defences share (None if none does)."""

    def __init__(self, defences: list[Defence] = (), *, index: NearDuplicates | None = None,
                 reading: NearDuplicateSettings | None = None):
        self.defences = list(defences)  # by position, lowest first
        self.index = index  # the pages fetched so far by their text: what copies are found against
        self.reading = reading if reading is not None else NearDuplicateSettings()  # how a page's text is read
        self._bind()

    def _bind(self) -> None:
        """Each hook's overriding methods, in the order it runs in (a defence without one is not called)."""
        hooks: dict[str, list] = {}
        for hook in _HOOKS:
            ordered = self.defences if hook in _UPWARD else self.defences[::-1]
            hooks[hook] = [getattr(d, hook) for d in ordered
                           if getattr(type(d), hook, None) not in (None, getattr(Defence, hook))]
        self._hooks = hooks
        self.reads_text = any(getattr(d, "reads_text", False) for d in self.defences)

    # checkpoints: the defences and their state; the bound hooks follow from them
    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_hooks", "reads_text")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

    def __getitem__(self, name: str) -> Defence:
        return next(d for d in self.defences if d.name == name)

    def __contains__(self, name: str) -> bool:
        return any(d.name == name for d in self.defences)

    def read(self, page: Page, drop: frozenset[str] = frozenset()) -> np.ndarray:
        """The page's text as the defences read it: the hashes of its distinct shingles (title and main text)."""
        return page_shingles(page.title, page.text, self.reading, drop)

    # -- URLs on their way to the web ------------------------------------------------------------
    def url(self, url: str | None) -> str | None:
        """A normalised URL as the crawl keeps it: rewritten by every defence that rewrites."""
        if url is None:
            return None
        for rewrite in self._hooks["rewrite"]:
            url = rewrite(url)
        return url

    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        for refuse in self._hooks["refuse"]:
            why = refuse(url, host, crawl)
            if why:
                return why
        return ""

    def hold(self, selection: Selection, select_s: float, host: str, step: int) -> bool:
        return any(hold(selection, select_s, host, step) for hold in self._hooks["hold"])

    def holds_back(self, host: str, step: int) -> bool:
        return any(holds(host, step) for holds in self._hooks["holds_back"])

    @property
    def holds_hosts(self) -> bool:
        return bool(self._hooks["holds_back"])

    # -- the defences' own selections ------------------------------------------------------------
    def own_selection(self, crawl: Crawl, step: int, anyway: bool = False) -> tuple[Selection, float] | None:
        for own in self._hooks["own_selection"]:
            found = own(crawl, step, anyway)
            if found is not None:
                return found
        return None

    def is_own(self, url: str) -> bool:
        return any(is_own(url) for is_own in self._hooks["is_own"])

    def host_closed(self, host: str) -> list[str]:
        return [url for closed in self._hooks["host_closed"] for url in closed(host)]

    # -- pages coming back -----------------------------------------------------------------------
    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        """``inspect`` of each defence; then, for a page without a verdict, the text index remembers it and each
        defence's ``passed`` learns from it."""
        if self.index is not None and fetch.text is not None and fetch.page.canonical is not None:
            canonical = self.url(normalize_url(fetch.page.canonical))
            fetch.canonical = None if canonical in (None, fetch.url, fetch.final_url) else canonical
        for inspect in self._hooks["inspect"]:
            inspect(fetch, crawl)
        if fetch.verdict:
            return
        if self.index is not None and fetch.signature is not None:
            self.index.add(fetch.final_url, fetch.signature)
        for passed in self._hooks["passed"]:
            passed(fetch, crawl)

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        for review in self._hooks["review"]:
            review(fetch, crawl)
