"""What every pathology reads and adds to while a messy web is planned: WEB's pages, the pages made so far,
the hosts taken, and the seeded random choices (``MessState``), with the pages, originals and trap sections
it holds."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np

from focuscrawl.html import clean_text
from focuscrawl.types import Link
from focuscrawl.urls import host_of
from focuscrawl.webs.behaviour import HostBehaviour, seeded_unit
from focuscrawl.webs.mess.profile import MessProfile
from focuscrawl.webs.store import OfflineWeb

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class PlannedPage:
    """A page of the messy web before it is written.

    ``source``: the page of WEB whose stored text (and HTML) this page shows: itself for WEB's pages, the
    original for a copy; None for a page made here (``text``). ``url_map`` turns the source's final links
    into this page's (a session's or a mirror's URLs); ``before`` and ``after`` are a near-duplicate's
    changed banner and footer.
    """

    url: str
    status: int = 200
    title: str = ""
    text: str | None = None
    labels: str = ""
    content_type: str = "text/html"
    location: str | None = None
    links: list[Link] = field(default_factory=list)
    script_links: list[Link] = field(default_factory=list)
    canonical: str | None = None
    source: str | None = None
    url_map: Mapping[str, str] | None = None
    before: str = ""
    after: str = ""
    kind: str | None = None
    original: str | None = None


@dataclass
class Original:
    """A 2xx page of WEB and what the mess does to its links."""

    url: str
    host: str
    title: str
    links: list[Link]  # as stored in WEB
    has_html: bool
    targets: dict[str, str | None] = field(default_factory=dict)  # a stored link's URL -> its new URL (None: moved)
    final: list[Link] = field(default_factory=list)  # HTML links after replacing and moving
    moved: list[Link] = field(default_factory=list)  # the script-only links
    added: list[Link] = field(default_factory=list)  # links added at the end
    # the stored URL each link of ``final`` and ``moved`` stands for: a session's copy links to the session's
    # copy of that page, whatever the original's link was replaced by
    final_stored: list[str] = field(default_factory=list)
    moved_stored: list[str] = field(default_factory=list)


@dataclass
class Section:
    """One trap (a calendar, a listing, a facet search, a farm) on one host, and the pages that enter it."""

    kind: str
    index: int
    host: str
    scheme: str
    on_site: bool
    entries: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    def landing(self, j: int) -> int:
        """Where the j-th entry lands: entries spread evenly over the section."""
        return j * len(self.urls) // len(self.entries)

    def entry_of(self, i: int) -> str:
        """The entry whose stretch of the section holds position ``i``: its neighbourhood gives the text."""
        return self.entries[min(len(self.entries) - 1, i * len(self.entries) // len(self.urls))]


class MessState:
    """WEB read, and the messy web being planned: every pathology module reads it and adds to it.

    Random choices come from ``rng``, ``unit`` and ``draws``, each keyed by the seed and what it decides
    about, so that a pathology's choices do not depend on what the others drew before it.
    """

    def __init__(self, web: OfflineWeb, profile: MessProfile, seed: int):
        self.web = web
        self.profile = profile
        self.seed = seed
        self.rows: dict[str, PlannedPage] = {}  # every stored row of WEB, in id order
        self.originals: dict[str, Original] = {}  # WEB's 2xx pages, in id order
        self.pages: dict[str, PlannedPage] = {}  # pages made here, in the order they were made
        self.dead: dict[str, str] = {}  # injected URLs without a page (past a trap's end) -> kind
        self.host_pages: dict[str, list[str]] = {}
        self.scheme_of: dict[str, str] = {}
        self.behaviours: dict[str, HostBehaviour] = {}
        self.sections: list[Section] = []
        self.hosts_taken: set[str] = set()
        self._pools: dict[str, list[str]] = {}
        self._texts: dict[str, str] = {}  # WEB's texts (Wikispeedia's: 36 MB), as they are needed
        self.moved_links = 0
        self.html_dropped = 0
        self._load()

    def _load(self) -> None:
        for row in self.web.rows():
            self.rows[row.url] = PlannedPage(url=row.url, status=row.status, title=row.title, labels=row.labels,
                                             content_type=row.content_type, location=row.location,
                                             source=row.url if 200 <= row.status < 300 else None)
            if 200 <= row.status < 300:
                host = host_of(row.url)
                self.originals[row.url] = Original(row.url, host, row.title, row.links, row.has_html)
                self.host_pages.setdefault(host, []).append(row.url)
                self.scheme_of.setdefault(host, urlsplit(row.url).scheme)
            self.hosts_taken.add(host_of(row.url))

    def rng(self, *purpose: object) -> random.Random:
        # A string seed is hashed with SHA-512 by random.Random: the same on every machine and run.
        return random.Random(":".join(str(part) for part in (self.seed, *purpose)))

    def unit(self, *parts: object) -> float:
        return seeded_unit(self.seed, *parts)

    def draws(self, kind: str, url: str, n: int) -> np.ndarray:
        """``n`` numbers in [0, 1) for the links of one page, fixed by the seed, the kind and the page alone."""
        key = int(seeded_unit(self.seed, kind, "links", url) * 2**53)
        return np.random.default_rng([self.seed & 0xFFFFFFFF, key]).random(n)

    def text(self, url: str) -> str:
        """The stored text of a page of WEB, read once: copies show it again and again."""
        text = self._texts.get(url)
        if text is None:
            text = self._texts[url] = self.web.texts([url])[0]
        return text

    def is_free(self, url: str | None) -> bool:
        return url is not None and url not in self.rows and url not in self.pages and url not in self.dead

    def add(self, page: PlannedPage) -> PlannedPage:
        self.pages[page.url] = page
        return page

    def pool(self, url: str) -> list[str]:
        """Sentences of a page of WEB and of a few of its neighbours: what a trap it links to is written from."""
        pool = self._pools.get(url)
        if pool is None:
            original = self.originals[url]
            neighbours = [link.url for link in original.links if link.url in self.originals][:4]
            pool = [s for page in (url, *neighbours) for s in sentences_of(self.text(page))]
            self._pools[url] = pool = pool or [f"{original.title}." if original.title else "Welcome."]
        return pool

    def lead(self, url: str) -> str:
        """The first sentence of a page of WEB, as a listing shows it under the page's title."""
        sentences = sentences_of(self.text(url)[:2000])
        return sentences[0] if sentences else self.originals[url].title

    def neighbourhood(self, url: str) -> list[Link]:
        """The pages of WEB ``url`` links to (itself when none): what a listing it leads to lists."""
        links = [link for link in self.originals[url].links if link.url in self.originals]
        return links or [Link(url, self.originals[url].title)]

    def new_host(self, name: str) -> str:
        """``name``, or ``name`` with a number after its first label when a host has it already."""
        candidate, n = name, 1
        while candidate in self.hosts_taken:
            n += 1
            first, rest = name.split(".", 1)
            candidate = f"{first}{n}.{rest}"
        self.hosts_taken.add(candidate)
        return candidate


def sentences_of(text: str) -> list[str]:
    out = []
    for sentence in _SENTENCE_END.split(clean_text(text)):
        if 40 <= len(sentence) <= 400 and " " in sentence:
            out.append(sentence)
    return out


def weighted_sample(rng: random.Random, items: Sequence[str], weights: Sequence[float], k: int) -> list[str]:
    """``k`` distinct items, heavier ones likelier (Efraimidis and Spirakis' keys), in a seeded order."""
    keyed = sorted(((rng.random() ** (1.0 / weight), item) for item, weight in zip(items, weights) if weight > 0),
                   reverse=True)
    return [item for _, item in keyed[:k]]
