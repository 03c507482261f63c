"""Messy webs: an offline web with the real web's pathologies added, every one of them labelled.

``mess_web(WEB, OUT, profile, seed=...)`` writes a new offline web OUT holding every page, label and
stored body of WEB, plus what makes crawling the real web hard, materialised as ordinary pages, links and
redirects so that the benchmark (offline) and ``focuscrawl web serve`` (over HTTP) meet the same web:

- traps deep enough to be endless for any budget in use: event calendars, paginated listings, faceted
  search, each in sections on a web's own host or on hosts of their own, entered from a share of pages;
- copies of pages at other URLs: session ids (``;jsessionid=`` in the path, ``sid=`` in the query; all
  links inside a session keep its id), tracking parameters (``utm_*``, ``fbclid``, ``gclid``), host mirrors
  (``www.``/bare, ``http``/``https``; links inside a mirror stay in it), ``index.html``/trailing-slash
  twins, near-duplicates (the text with a changed banner, date or footer); some name the original with
  ``<link rel=canonical>``, some do not;
- redirect chains (2-4 hops) and loops; link farms (irrelevant pages stuffed, in text and anchors, with the
  most distinctive words of the pages that link to them); links that only a script adds;
- host behaviour (``focuscrawl.webs.behaviour``): soft-404 hosts, and hosts that fail (5xx, timeouts, slow
  bodies).

The crawler must meet them where it crawls, whatever topic a benchmark scores: a trap's pages borrow the
sentences of the page that links to them and of its neighbours, and a farm the words of its linking pages.
Copies *replace* a share of the links to their original, as on the real web, where the clean URL of a page
is often not linked at all; traps, farms, print versions, loops and broken links are *added* at the end of
a page's links; script-only links are *moved* out of a page's HTML links. Nothing else of WEB changes.

Ground truth: the ``injected`` table gives every URL the mess added or changed its kind (``KINDS``) and,
for a copy or a redirect, its original. Injected pages carry no labels: a copy of a relevant page is not a
second relevant page. Every random choice derives from the seed, most of them as a hash of the seed and
what they decide about (``seeded_unit``), so a change to one pathology's options leaves the others' choices
as they were; the same command gives the same web, table for table.
"""

from __future__ import annotations

import datetime as dt
import html as html_lib
import random
import re
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from focuscrawl.html import clean_text, insert_html, links_nav, parse_document, rewrite_links
from focuscrawl.types import Link
from focuscrawl.urls import host_of, normalize_url, site_of
from focuscrawl.webs.behaviour import HostBehaviour, not_found_page, seeded_unit
from focuscrawl.webs.store import WEB_FILE, OfflineWeb, WebWriter

MESS_VERSION = 3  # bump when a change alters the web a given source, profile and seed give
IDF_PAGES = 2000  # pages of WEB the farms' tf-idf takes its idf from, spread evenly: plenty, and fast

Share = Annotated[float, Field(ge=0.0, le=1.0)]
Size = Annotated[int, Field(ge=1)]
Count = Annotated[int, Field(ge=0)]


# -- the profile: one model per pathology ----------------------------------------------------------------
class Pathology(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True


class Calendar(Pathology):
    """Event calendars: each day links to the previous and next day, month and year, and to a few events."""

    sections: Size = Field(3, description="calendars")
    injected_hosts: Count = Field(2, description="of them on a host of their own (events.HOST), the rest on a "
                                                "host of the web, linked from that host's pages")
    pages: Size = Field(3000, description="days materialised per calendar (past them: dead ends)")
    entry_share: Share = Field(0.02, description="share of pages with a link into a calendar")


class Pagination(Pathology):
    """Paginated listings that never end: page N links to N+1, N+10, the first and the last."""

    sections: Size = 3
    injected_hosts: Count = 0
    pages: Size = Field(2000, description="listing pages per section")
    items: Size = Field(10, description="pages of the web listed on each listing page")
    entry_share: Share = 0.02


class Facet(Pathology):
    """Faceted search: every combination of facet values and sort orders is a page linking to its neighbours."""

    sections: Size = 2
    injected_hosts: Count = 1
    facets: Size = Field(4, le=6, description="facets (year, type, region, format, language, level)")
    values: Size = Field(5, le=8, description="values per facet (plus 'any')")
    sorts: Size = Field(2, le=4, description="sort orders")
    items: Size = 8
    entry_share: Share = 0.02

    @property
    def pages(self) -> int:
        return (self.values + 1) ** self.facets * self.sorts


class Copies(Pathology):
    link_share: Share = Field(0.03, description="share of the links to an eligible page that lead to a copy instead")
    canonical_share: Share = Field(0.5, description="share of copies naming their original with rel=canonical")


class Session(Copies):
    """Session ids: a share of links into a host carry one; every link inside the session keeps it."""

    hosts: Size = Field(2, description="hosts with sessions (drawn with odds growing as their page count squared: "
                                       "the big hosts, where a crawl spends its budget)")
    sessions: Size = Field(4, description="session ids per host (half in the path, half in the query)")
    pages: Size = Field(1000, description="pages of the host copied per session")
    link_share: Share = 0.08
    canonical_share: Share = 0.3


class Tracking(Copies):
    """Tracking parameters (utm_*, fbclid, gclid) on links to a page; the site's own links stay clean."""

    variants: Size = Field(3, description="tracking URLs per page, at most")
    canonical_share: Share = 0.6


class Mirror(Copies):
    """Host mirrors: the www./bare host name and the other scheme serve the same pages."""

    hosts: Size = Field(1, description="hosts mirrored, each under both variants (drawn as session hosts are)")
    pages: Size = Field(1000, description="pages of the host copied per mirror")
    link_share: Share = 0.04


class Twin(Copies):
    """index.html and trailing-slash twins: /dir/ and /dir/index.html, /a.htm and /a.htm/."""


class NearDuplicate(Copies):
    """The same page at another URL (print, amp, replytocom, archive) with a changed banner, date or footer."""

    page_share: Share = Field(0.05, description="share of pages that have near-duplicates")
    copies: Size = Field(2, le=4, description="near-duplicates of such a page, at most")
    linked_share: Share = Field(0.5, description="share of such pages linking to their first one ('Printable "
                                                 "version')")
    link_share: Share = 0.02


class Redirect(Pathology):
    """Redirect chains that end at a page, and loops that end nowhere."""

    link_share: Share = Field(0.02, description="share of links replaced by a chain to the same page")
    min_hops: Size = 2
    max_hops: Size = Field(4, le=5)
    loop_share: Share = Field(0.005, description="share of pages with a link into a redirect loop")

    @model_validator(mode="after")
    def _hops(self) -> Redirect:
        if self.min_hops > self.max_hops:
            raise ValueError(f"min_hops ({self.min_hops}) is above max_hops ({self.max_hops})")
        return self


class SoftNotFound(Pathology):
    """Soft-404 hosts: any URL they have no page for answers 200 with a "page not found" page linking home."""

    hosts: Size = Field(2, description="soft-404 hosts (drawn as failing hosts are)")
    broken_share: Share = Field(0.02, description="share of their pages with a broken (mistyped) link")


class Failing(Pathology):
    """Hosts that fail: 500/503 errors (in bursts over HTTP), timeouts, slow bodies.

    The hosts are WEB's, the bigger the likelier; on a web with fewer hosts than asked for (Wikispeedia has
    one), the traps' own hosts make up the rest, WEB's hosts taking the first modes (errors, then timeout).
    """

    error_hosts: Count = 2
    error_share: Share = Field(0.1, description="share of an error host's URLs answering 500 or 503")
    burst: Count = Field(4, description="over HTTP, requests after an error that fail too")
    timeout_hosts: Count = 1
    timeout_share: Share = Field(0.3, description="share of a timeout host's URLs that never answer")
    hang_s: float = Field(90.0, gt=0, description="over HTTP, how long a timeout keeps a request waiting")
    slow_hosts: Count = 1
    slow_body_s: float = Field(20.0, ge=0, description="over HTTP, how long a slow host takes to send a body")


class Farm(Pathology):
    """Link farms: hosts of pages stuffed with the linking pages' most distinctive words, linking each other."""

    hosts: Size = 3
    pages: Size = Field(1500, description="pages per farm")
    entry_share: Share = Field(0.01, description="share of pages with a link into a farm")
    words: Size = Field(30, description="distinctive (tf-idf) words of a linking page a farm page is made of")
    links: Size = Field(20, description="links from a farm page to others")


class Script(Pathology):
    """Links that exist only in JavaScript: moved out of a page's HTML into a script that adds them."""

    page_share: Share = Field(0.1, description="share of pages with script-only links")
    link_share: Share = Field(0.5, description="share of such a page's links that only the script adds")


class MessProfile(BaseModel):
    """Every pathology of a messy web, on or off, with its sizes (``-s KIND.OPTION=VALUE`` sets one)."""

    model_config = ConfigDict(extra="forbid")

    calendar: Calendar = Field(default_factory=Calendar)
    pagination: Pagination = Field(default_factory=Pagination)
    facet: Facet = Field(default_factory=Facet)
    session: Session = Field(default_factory=Session)
    tracking: Tracking = Field(default_factory=Tracking)
    mirror: Mirror = Field(default_factory=Mirror)
    twin: Twin = Field(default_factory=Twin)
    near_duplicate: NearDuplicate = Field(default_factory=NearDuplicate)
    redirect: Redirect = Field(default_factory=Redirect)
    soft_404: SoftNotFound = Field(default_factory=SoftNotFound)
    failing: Failing = Field(default_factory=Failing)
    farm: Farm = Field(default_factory=Farm)
    script: Script = Field(default_factory=Script)

    @model_validator(mode="after")
    def _sections(self) -> MessProfile:
        for name in ("calendar", "pagination", "facet"):
            trap = getattr(self, name)
            if trap.injected_hosts > trap.sections:
                raise ValueError(f"{name}.injected_hosts ({trap.injected_hosts}) is above {name}.sections "
                                 f"({trap.sections})")
        return self

    def enabled(self) -> list[str]:
        return [name for name in type(self).model_fields if getattr(self, name).enabled]


def _profile_none() -> MessProfile:
    data = MessProfile().model_dump()
    for options in data.values():
        options["enabled"] = False
    return MessProfile.model_validate(data)


PROFILES: dict[str, MessProfile] = {"default": MessProfile(), "none": _profile_none()}

# The kinds of the ``injected`` table, in the order reports list them.
KINDS = ("calendar", "pagination", "facet", "farm", "session", "tracking", "mirror", "twin", "near-duplicate",
         "redirect", "redirect-loop", "soft-404", "dead-link")


def make_profile(name: str = "default", settings: Mapping[str, Any] | None = None) -> MessProfile:
    """The named profile with ``settings`` ("calendar.pages" -> 5000, ...) applied and checked."""
    if name not in PROFILES:
        raise ValueError(f"unknown mess profile {name!r} (known: {', '.join(PROFILES)})")
    data = PROFILES[name].model_dump()
    for key, value in (settings or {}).items():
        path = key.split(".")
        path[0] = path[0].replace("-", "_")  # the kind as written in the injected table: near-duplicate, soft-404
        node = data
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"setting {key}: unknown setting (pathologies: {', '.join(data)})")
            node = node[part]
        node[path[-1]] = value
    return MessProfile.model_validate(data)


# -- the report -----------------------------------------------------------------------------------------
@dataclass
class MessReport:
    """What ``mess_web`` made: injected URLs per kind, host behaviours, and how long it took."""

    out: Path
    profile_name: str
    profile: MessProfile
    seed: int
    injected: dict[str, int]
    hosts: dict[str, dict[str, Any]]
    moved_links: int
    html_dropped: int
    seconds: float


# -- text made from the web's own -----------------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z][a-z]{2,}")
CALENDAR_NOTES = ("Add this event to your calendar.", "All times are local.", "Submit an event.",
                  "Subscribe to the events feed.", "Tickets are available at the door.")
BANNERS = ("We use cookies to give you the best experience. By using this site you agree to our use of cookies.",
           "Sign up for our newsletter and never miss an update.",
           "This page has a new address; please update your bookmarks.",
           "Support us: become a member today.")
FOOTERS = ("Copyright {year}. All rights reserved.", "Page generated in {ms} ms.",
           "Share this page: email, print, bookmark.", "Last modified {date}. Contact the webmaster.")
SPAM_WORDS = ("best", "top", "free", "cheap", "online", "guide", "official", "review", "deals", "discount")
FACETS = (("year", tuple(str(year) for year in range(2001, 2009))),
          ("type", ("article", "report", "review", "guide", "news", "photo", "video", "list")),
          ("region", ("europe", "asia", "africa", "americas", "oceania", "north", "south", "central")),
          ("format", ("html", "pdf", "print", "text", "slides", "audio", "map", "table")),
          ("language", ("en", "fr", "de", "es", "it", "nl", "pt", "sv")),
          ("level", ("1", "2", "3", "4", "5", "6", "7", "8")))
SORTS = ("relevance", "date", "title", "popularity")
SESSION_STYLES = ("path", "query")  # ;jsessionid=ID in the path, or ?sid=ID
UTM_SOURCES = ("newsletter", "twitter", "facebook", "rss", "partner")
UTM_MEDIUMS = ("email", "social", "referral", "feed")
NEAR_DUPLICATE_URLS = ("view=print", "amp=1", "replytocom={n}", "/print{path}")
REDIRECT_PATHS = ("/go/{h}", "/redirect?to={h}", "/r/{h}", "/out.php?id={h}", "/link/{h}")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
LOOP_ANCHORS = ("Sign in", "My account", "Continue reading", "Download")
TWIN_INDEXES = ("index.html", "index.htm", "index.php", "default.htm")


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "all"


def _sentences(text: str) -> list[str]:
    out = []
    for sentence in _SENTENCE_END.split(clean_text(text)):
        if 40 <= len(sentence) <= 400 and " " in sentence:
            out.append(sentence)
    return out


def _weighted_sample(rng: random.Random, items: Sequence[str], weights: Sequence[float], k: int) -> list[str]:
    """``k`` distinct items, heavier ones likelier (Efraimidis and Spirakis' keys), in a seeded order."""
    keyed = sorted(((rng.random() ** (1.0 / weight), item) for item, weight in zip(items, weights) if weight > 0),
                   reverse=True)
    return [item for _, item in keyed[:k]]


def _with_query(url: str, params: str) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&{params}" if parts.query else params
    return urlunsplit(parts._replace(query=query))


# -- pages being made -----------------------------------------------------------------------------------
@dataclass
class _Page:
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
class _Original:
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
class _Section:
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


class _Mess:
    """Plans a messy web from a clean one, then writes it (``mess_web`` is the entry point)."""

    def __init__(self, web: OfflineWeb, profile: MessProfile, seed: int):
        self.web = web
        self.profile = profile
        self.seed = seed
        self.rows: dict[str, _Page] = {}  # every stored row of WEB, in id order
        self.originals: dict[str, _Original] = {}  # WEB's 2xx pages, in id order
        self.pages: dict[str, _Page] = {}  # pages made here, in the order they were made
        self.dead: dict[str, str] = {}  # injected URLs without a page (past a trap's end) -> kind
        self.host_pages: dict[str, list[str]] = {}
        self.scheme_of: dict[str, str] = {}
        self.behaviours: dict[str, HostBehaviour] = {}
        self.sections: list[_Section] = []
        self._hosts_taken: set[str] = set()
        self._pools: dict[str, list[str]] = {}
        self._texts: dict[str, str] = {}  # WEB's texts (Wikispeedia's: 36 MB), as they are needed
        self.moved_links = 0
        self.html_dropped = 0
        self._load()

    # -- reading WEB ---------------------------------------------------------------------------------------
    def _load(self) -> None:
        for row in self.web.rows():
            self.rows[row.url] = _Page(url=row.url, status=row.status, title=row.title, labels=row.labels,
                                       content_type=row.content_type, location=row.location,
                                       source=row.url if 200 <= row.status < 300 else None)
            if 200 <= row.status < 300:
                host = host_of(row.url)
                self.originals[row.url] = _Original(row.url, host, row.title, row.links, row.has_html)
                self.host_pages.setdefault(host, []).append(row.url)
                self.scheme_of.setdefault(host, urlsplit(row.url).scheme)
            self._hosts_taken.add(host_of(row.url))

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

    def add(self, page: _Page) -> _Page:
        self.pages[page.url] = page
        return page

    def pool(self, url: str) -> list[str]:
        """Sentences of a page of WEB and of a few of its neighbours: what a trap it links to is written from."""
        pool = self._pools.get(url)
        if pool is None:
            original = self.originals[url]
            neighbours = [link.url for link in original.links if link.url in self.originals][:4]
            pool = [s for page in (url, *neighbours) for s in _sentences(self.text(page))]
            self._pools[url] = pool = pool or [f"{original.title}." if original.title else "Welcome."]
        return pool

    def lead(self, url: str) -> str:
        """The first sentence of a page of WEB, as a listing shows it under the page's title."""
        sentences = _sentences(self.text(url)[:2000])
        return sentences[0] if sentences else self.originals[url].title

    def neighbourhood(self, url: str) -> list[Link]:
        """The pages of WEB ``url`` links to (itself when none): what a listing it leads to lists."""
        links = [link for link in self.originals[url].links if link.url in self.originals]
        return links or [Link(url, self.originals[url].title)]

    # -- the plan ---------------------------------------------------------------------------------------------
    def build(self) -> None:
        """Plan every pathology. The order matters where one needs another: traps exist before host behaviours
        are drawn (a trap's host may fail, and its first page is its not-found page's home); copies exist
        before links are replaced by them; links are replaced before some move into scripts; a copy takes
        its original's links only when they are final."""
        p = self.profile
        for kind, trap in (("calendar", p.calendar), ("pagination", p.pagination), ("facet", p.facet)):
            if trap.enabled:
                self._plan_sections(kind, trap.sections, trap.injected_hosts, trap.entry_share)
        farm_words = self._plan_farms() if p.farm.enabled else {}
        builders = {"calendar": self._build_calendar, "pagination": self._build_pagination,
                    "facet": self._build_facet}
        for section in self.sections:
            if section.kind in builders:
                builders[section.kind](section)
        self._build_farms(farm_words)
        for section in self.sections:
            self._enter(section, farm_words)
        self._plan_behaviours()
        sessions = self._plan_sessions() if p.session.enabled else {}
        mirrors = self._plan_mirrors() if p.mirror.enabled else {}
        near_duplicates = self._plan_near_duplicates() if p.near_duplicate.enabled else {}
        self._replace_links(sessions, mirrors, near_duplicates)
        if p.script.enabled:
            self._move_to_scripts()
        if p.near_duplicate.enabled:
            self._link_printable(near_duplicates)
        if p.redirect.enabled and p.redirect.loop_share:
            self._add_loops()
        if p.soft_404.enabled and p.soft_404.broken_share:
            self._add_broken_links()
        for original in self.originals.values():
            self.rows[original.url].links = original.final + original.added
            self.rows[original.url].script_links = original.moved
        self._fill_copies()
        self._soften_dead_ends()

    # -- traps: calendars, listings, facets, farms ---------------------------------------------------------------
    def _plan_sections(self, kind: str, count: int, injected_hosts: int, entry_share: float) -> None:
        """The sections of one trap kind: on hosts of their own (named after a host of WEB, the bigger the
        likelier) or on a host of WEB, and the pages that link into each."""
        rng = self.rng(kind, "sections")
        hosts = sorted(self.host_pages)
        weights = [len(self.host_pages[h]) for h in hosts]
        sections = []
        for i in range(count):
            base = rng.choices(hosts, weights)[0]
            if i < injected_hosts:
                prefix = {"calendar": "events", "pagination": "archive", "facet": "search"}[kind]
                host = self._new_host(f"{prefix}.{site_of('//' + base)}")
                sections.append(_Section(kind, i, host, self.scheme_of[base], on_site=False))
            else:
                sections.append(_Section(kind, i, base, self.scheme_of[base], on_site=True))
        self._choose_entries(kind, sections, entry_share)

    def _new_host(self, name: str) -> str:
        """``name``, or ``name`` with a number after its first label when a host has it already."""
        candidate, n = name, 1
        while candidate in self._hosts_taken:
            n += 1
            first, rest = name.split(".", 1)
            candidate = f"{first}{n}.{rest}"
        self._hosts_taken.add(candidate)
        return candidate

    def _choose_entries(self, kind: str, sections: list[_Section], entry_share: float) -> None:
        for url, original in self.originals.items():
            if self.unit(kind, "entry", url) >= entry_share:
                continue
            eligible = [s for s in sections if not s.on_site or s.host == original.host]
            if eligible:
                eligible[int(self.unit(kind, "section", url) * len(eligible))].entries.append(url)
        self.sections += [s for s in sections if s.entries]

    def _section_url(self, section: _Section, path: str) -> str | None:
        url = normalize_url(f"{section.scheme}://{section.host}{path}")
        return url if self.is_free(url) else None

    def _materialise(self, section: _Section, paths: list[str]) -> None:
        """Claim the section's URLs (a URL WEB already has is left out: its position links to WEB's page)."""
        section.urls = [self._section_url(section, path) or "" for path in paths]
        for url in section.urls:
            if url:
                self.add(_Page(url, kind=section.kind))

    def _text(self, rng: random.Random, entry: str, first: str, n: int, last: str = "") -> str:
        pool = self.pool(entry)
        sentences = [pool[rng.randrange(len(pool))] for _ in range(n)]
        return "\n\n".join(part for part in (first, " ".join(sentences), last) if part)

    def _build_calendar(self, section: _Section) -> None:
        rng = self.rng("calendar", section.index, section.host)
        start = dt.date(rng.randint(1996, 2008), 1, 1) + dt.timedelta(rng.randrange(365))
        template = rng.choice(("/events/{y}/{m:02d}/{d:02d}/", "/calendar/?date={y}-{m:02d}-{d:02d}",
                               "/calendar/day.php?y={y}&m={m}&d={d}"))
        if not section.on_site:
            template = template.replace("/events/", "/").replace("/calendar/", "/")

        def path(day: dt.date) -> str:
            return template.format(y=day.year, m=day.month, d=day.day)

        n = self.profile.calendar.pages
        days = [start + dt.timedelta(i) for i in range(n)]
        self._materialise(section, [path(day) for day in days])
        index = {url: i for i, url in enumerate(section.urls) if url}
        for i, (day, url) in enumerate(zip(days, section.urls)):
            if not url:
                continue
            entry = section.entry_of(i)
            page = self.pages[url]
            title = self.originals[entry].title
            page.title = f"{title} - events on {day:%d %B %Y}" if title else f"Events on {day:%d %B %Y}"
            page.text = self._text(rng, entry, f"Events on {day:%A %d %B %Y}.", rng.randint(2, 4),
                                   rng.choice(CALENDAR_NOTES))
            targets = [("Previous day", day - dt.timedelta(1)), ("Next day", day + dt.timedelta(1)),
                       ("Previous month", _add_months(day, -1)), ("Next month", _add_months(day, 1)),
                       ("Next year", _add_months(day, 12))]
            pool = self.pool(entry)
            for _ in range(2):  # events on other days, with words of the neighbourhood
                words = pool[rng.randrange(len(pool))].split()[:6]
                targets.append((" ".join(words).rstrip(".,;:"), day + dt.timedelta(rng.randint(2, 40))))
            for anchor, target_day in targets:
                target = self._trap_target(section, path(target_day), index)
                if target:
                    page.links.append(Link(target, anchor))

    def _trap_target(self, section: _Section, path: str, index: Mapping[str, int]) -> str | None:
        """The URL a trap page links to: materialised, or past the section's end (a dead end of its kind)."""
        url = normalize_url(f"{section.scheme}://{section.host}{path}")
        if url is None or url in index or url in self.rows:
            return url
        if url not in self.pages:
            self.dead.setdefault(url, section.kind)
        return url

    def _build_pagination(self, section: _Section) -> None:
        options = self.profile.pagination
        rng = self.rng("pagination", section.index, section.host)
        slug = _slug(self.originals[section.entries[0]].title)
        template = rng.choice(("/{slug}/page/{n}/", "/list/?category={slug}&page={n}", "/archive/{slug}/?p={n}"))
        if not section.on_site and template.startswith("/archive/"):
            template = "/{slug}/?p={n}"
        n_pages = options.pages

        def path(n: int) -> str:
            return template.format(slug=slug, n=n)

        self._materialise(section, [path(n) for n in range(1, n_pages + 1)])
        index = {url: i for i, url in enumerate(section.urls) if url}
        for i, url in enumerate(section.urls):
            if not url:
                continue
            n = i + 1
            entry = section.entry_of(i)
            page = self.pages[url]
            title = self.originals[entry].title or "Articles"
            items = self.neighbourhood(entry)
            listed = [items[(i * options.items + k) % len(items)] for k in range(min(options.items, len(items)))]
            page.title = f"{title} - page {n}"
            snippets = " ".join(f"{link.anchor}: {self.lead(link.url)}" for link in listed)
            page.text = f"Page {n} of the {title} archive.\n\n{snippets}"
            for anchor, target_n in (("First page", 1), ("Previous page", n - 1), ("Next page", n + 1),
                                     ("Ten pages on", n + 10), ("Last page", n_pages)):
                target = self._trap_target(section, path(target_n), index) if target_n >= 1 else None
                if target:
                    page.links.append(Link(target, anchor))
            page.links += listed

    def _build_facet(self, section: _Section) -> None:
        options = self.profile.facet
        rng = self.rng("facet", section.index, section.host)
        facets = [(name, values[:options.values]) for name, values in FACETS[:options.facets]]
        sorts = SORTS[:options.sorts]
        base = rng.choice(("/search", "/catalogue/", "/browse/{slug}/")).format(
            slug=_slug(self.originals[section.entries[0]].title))

        # A combination: one value index per facet (0: any) and a sort index; its position in the section is
        # its number in that mixed radix, so neighbouring positions differ in the last facets only.
        radix = [len(values) + 1 for _, values in facets] + [len(sorts)]

        def combo(i: int) -> list[int]:
            digits = []
            for r in reversed(radix):
                digits.append(i % r)
                i //= r
            return digits[::-1]

        def position(digits: Sequence[int]) -> int:
            i = 0
            for d, r in zip(digits, radix):
                i = i * r + d
            return i

        def path(digits: Sequence[int]) -> str:
            params = [f"{name}={values[d - 1]}" for (name, values), d in zip(facets, digits) if d]
            if digits[-1]:
                params.append(f"sort={sorts[digits[-1]]}")
            return base + ("?" + "&".join(params) if params else "")

        total = options.pages
        self._materialise(section, [path(combo(i)) for i in range(total)])
        for i, url in enumerate(section.urls):
            if not url:
                continue
            digits = combo(i)
            entry = section.entry_of(i)
            page = self.pages[url]
            title = self.originals[entry].title or "Catalogue"
            chosen = [f"{name} {values[d - 1]}" for (name, values), d in zip(facets, digits) if d]
            items = self.neighbourhood(entry)
            unit = self.unit("facet", "items", url)
            first = int(unit * len(items))
            listed = [items[(first + 3 * k) % len(items)] for k in range(min(options.items, len(items)))]
            listed = list(dict.fromkeys(listed))
            snippets = " ".join(f"{link.anchor}: {self.lead(link.url)}" for link in listed)
            page.title = f"{title}: {', '.join(chosen) or 'all results'}"
            page.text = (f"{len(listed)} results for {title}" + (f", {', '.join(chosen)}" if chosen else "")
                         + f", sorted by {sorts[digits[-1]]}.\n\n{snippets}")
            for f, (name, values) in enumerate(facets):
                for d in range(len(values) + 1):
                    if d != digits[f]:
                        other = list(digits)
                        other[f] = d
                        target = section.urls[position(other)]
                        if target:
                            page.links.append(Link(target, f"{name}: {values[d - 1]}" if d else f"any {name}"))
            for s, sort in enumerate(sorts):
                if s != digits[-1]:
                    target = section.urls[position([*digits[:-1], s])]
                    if target:
                        page.links.append(Link(target, f"sort by {sort}"))
            page.links += listed

    def _plan_farms(self) -> dict[str, list[str]]:
        """Farm sections (hosts named after their first entry's words) and each entry page's distinctive words."""
        options = self.profile.farm
        sections = [_Section("farm", i, f"farm{i}.invalid", "http", on_site=False) for i in range(options.hosts)]
        for url in self.originals:
            if self.unit("farm", "entry", url) < options.entry_share:
                sections[int(self.unit("farm", "section", url) * len(sections))].entries.append(url)
        sections = [s for s in sections if s.entries]
        words = self._distinctive_words([url for s in sections for url in s.entries], options.words)
        rng = self.rng("farm", "hosts")
        for section in sections:
            first = words[section.entries[0]] or ["resource", "guide"]
            tld = rng.choice(("com", "net", "info", "org"))
            section.host = self._new_host(f"{first[0]}-{first[1 % len(first)]}.{tld}")
            section.scheme = rng.choice(("http", "https"))
            self.sections.append(section)
        return words

    def _distinctive_words(self, urls: list[str], k: int) -> dict[str, list[str]]:
        """The ``k`` words of highest tf-idf (idf over every page of WEB) of each page in ``urls``."""
        if not urls:
            return {}
        from sklearn.feature_extraction.text import TfidfVectorizer  # late: sklearn loads in ~1 s, farms only

        pages = list(self.originals)
        sample = pages[::max(1, len(pages) // IDF_PAGES)]
        vectorizer = TfidfVectorizer(stop_words="english", token_pattern=r"(?u)\b[a-zA-Z]{3,}\b", max_df=0.5,
                                     sublinear_tf=True)
        vectorizer.fit(self.web.texts(sample))
        vocabulary = vectorizer.get_feature_names_out()
        unique = list(dict.fromkeys(urls))
        matrix = vectorizer.transform([self.text(url) for url in unique]).tocsr()
        out = {}
        for row, url in enumerate(unique):
            start, end = matrix.indptr[row], matrix.indptr[row + 1]
            # by weight, then by word, so that ties never depend on the matrix's internal order
            ranked = sorted(zip(matrix.data[start:end].tolist(), matrix.indices[start:end].tolist()),
                            key=lambda pair: (-pair[0], vocabulary[pair[1]]))
            out[url] = [str(vocabulary[j]) for _, j in ranked[:k]]
        return out

    def _build_farms(self, words_of: Mapping[str, list[str]]) -> None:
        """Every farm's pages, then their links: farms link to each other's front pages too."""
        farms = [s for s in self.sections if s.kind == "farm"]
        for section in farms:
            paths = ["/"]
            for i in range(1, self.profile.farm.pages):
                words = words_of.get(section.entries[i * len(section.entries) // self.profile.farm.pages]) or ["page"]
                paths.append(f"/{words[i % len(words)]}-{words[(3 * i + 1) % len(words)]}-{i}.html")
            self._materialise(section, paths)
        for section in farms:
            self._fill_farm(section, [s for s in farms if s is not section], words_of)

    def _fill_farm(self, section: _Section, others: list[_Section], words_of: Mapping[str, list[str]]) -> None:
        options = self.profile.farm
        rng = self.rng("farm", section.index, section.host)
        for i, url in enumerate(section.urls):
            if not url:
                continue
            words = words_of.get(section.entry_of(i)) or ["page"]
            page = self.pages[url]
            top = [w.capitalize() for w in words[:3]]
            page.title = f"Best {' '.join(top)} - {rng.choice(words).capitalize()} {rng.choice(SPAM_WORDS)} guide"
            sentences = []
            for _ in range(rng.randint(3, 6)):
                stuffed = [rng.choice(words) if rng.random() < 0.8 else rng.choice(SPAM_WORDS)
                           for _ in range(rng.randint(8, 15))]
                sentences.append(" ".join(stuffed).capitalize() + ".")
            page.text = " ".join(sentences)
            targets = [(section, j) for j in (rng.randrange(len(section.urls)) for _ in range(options.links)) if j != i]
            if others:
                targets.append((others[rng.randrange(len(others))], 0))
            for farm, j in targets:
                target = farm.urls[j]
                if target:
                    target_words = words_of.get(farm.entry_of(j)) or words
                    page.links.append(Link(target, " ".join(rng.sample(target_words, min(3, len(target_words))))))

    def _enter(self, section: _Section, words: Mapping[str, list[str]]) -> None:
        """Add each entry page's link into the section, where that entry's stretch begins."""
        for j, entry in enumerate(section.entries):
            target = section.urls[section.landing(j)] if section.urls else ""
            if not target:
                continue
            title = self.originals[entry].title
            anchor = {"calendar": f"{title} events", "pagination": f"All {title} articles",
                      "facet": f"Browse {title}"}.get(section.kind, "")
            if section.kind == "farm":
                anchor = " ".join(words.get(entry, [])[:4])
            self.originals[entry].added.append(Link(target, anchor.strip()))

    # -- host behaviours -------------------------------------------------------------------------------------
    def _plan_behaviours(self) -> None:
        """Soft-404 and failing hosts: WEB's hosts, the bigger the likelier, where a crawl spends its budget (but
        never a failing host that holds half the web); when WEB has fewer hosts than asked for (Wikispeedia has
        one), the traps' own hosts make up the rest."""
        p = self.profile
        soft: dict[str, tuple[Link, ...]] = {}
        if p.soft_404.enabled:
            for host in self._draw_hosts("soft-404", p.soft_404.hosts):
                soft[host] = self._home_links(host)
        failure: dict[str, HostBehaviour] = {}
        if p.failing.enabled:
            f = p.failing
            modes = ["errors"] * f.error_hosts + ["timeout"] * f.timeout_hosts + ["slow"] * f.slow_hosts
            for host, mode in zip(self._draw_hosts("failing", len(modes), spare_main=True), modes):
                share = {"errors": f.error_share, "timeout": f.timeout_share, "slow": 0.0}[mode]
                failure[host] = HostBehaviour(failure=mode, share=share, burst=f.burst if mode == "errors" else 0,
                                              hang_s=f.hang_s, slow_body_s=f.slow_body_s)
        for host in sorted(set(soft) | set(failure)):
            base = failure.get(host, HostBehaviour())
            self.behaviours[host] = HostBehaviour(soft.get(host), base.failure, base.share, base.burst,
                                                  base.hang_s, base.slow_body_s)

    def _draw_hosts(self, kind: str, count: int, *, spare_main: bool = False) -> list[str]:
        """``count`` hosts, WEB's first (the bigger the likelier), then traps' own. ``spare_main``: not a host that
        holds half of WEB's pages or more (Wikispeedia's only host): a failing host is one a crawl can give up,
        and a crawl that gave up the web's main host would have no web left to crawl."""
        rng = self.rng(kind, "hosts")
        total = sum(len(pages) for pages in self.host_pages.values())
        web_hosts = sorted(h for h, pages in self.host_pages.items()
                           if not (spare_main and 2 * len(pages) >= total))
        chosen = _weighted_sample(rng, web_hosts, [len(self.host_pages[h]) for h in web_hosts], count)
        traps = {s.host: len(s.urls) for s in self.sections if not s.on_site}
        trap_hosts = sorted(traps)
        return chosen + _weighted_sample(rng, trap_hosts, [traps[h] for h in trap_hosts], count - len(chosen))

    def _home_links(self, host: str) -> tuple[Link, ...]:
        """What a soft-404 page of ``host`` links to: its five most linked-to pages, the first as "Home"."""
        urls = self.host_pages.get(host)
        if urls is None:  # a trap's own host: its first page
            section = next(s for s in self.sections if s.host == host)
            return tuple(Link(url, "Home") for url in section.urls[:1] if url)
        inlinks: dict[str, int] = {}
        members = set(urls)
        for url in urls:
            for link in self.originals[url].links:
                if link.url in members:
                    inlinks[link.url] = inlinks.get(link.url, 0) + 1
        top = sorted(urls, key=lambda u: (-inlinks.get(u, 0), u))[:5]
        return tuple(Link(url, "Home" if i == 0 else self.originals[url].title) for i, url in enumerate(top))

    # -- copies: sessions, mirrors, near-duplicates, tracking, twins -------------------------------------------
    def _region(self, host: str, rng: random.Random, size: int) -> list[str]:
        """Up to ``size`` pages of ``host``, breadth first along its own links from a random page, and from
        another when that runs out (a page without links of its own host holds no region)."""
        pages = self.host_pages[host]
        members = set(pages)
        seen: dict[str, None] = {}
        size = min(size, len(pages))
        while len(seen) < size:
            start = rng.choice([url for url in pages if url not in seen])
            seen[start] = None
            queue = deque([start])
            while queue and len(seen) < size:
                for link in self.originals[queue.popleft()].links:
                    if link.url in members and link.url not in seen:
                        seen[link.url] = None
                        queue.append(link.url)
                        if len(seen) >= size:
                            break
        return list(seen)

    def _copy(self, url: str, kind: str, original: str, share: float, url_map: Mapping[str, str] | None = None,
              before: str = "", after: str = "") -> _Page:
        source = self.originals[original]
        canonical = original if self.unit(kind, "canonical", url) < share else None
        return self.add(_Page(url, title=source.title, source=original, url_map=url_map, before=before,
                              after=after, canonical=canonical, kind=kind, original=original,
                              content_type=self.rows[original].content_type))

    def _plan_sessions(self) -> dict[str, list[dict[str, str]]]:
        """Session copies; returns page -> the sessions' URL maps that hold it."""
        options = self.profile.session
        hosts = [h for h in sorted(self.host_pages) if len(self.host_pages[h]) > 1]
        rng = self.rng("session", "hosts")
        chosen = _weighted_sample(rng, hosts, [len(self.host_pages[h]) ** 2 for h in hosts], options.hosts)
        of_page: dict[str, list[dict[str, str]]] = {}
        for host in chosen:
            for s in range(options.sessions):
                srng = self.rng("session", host, s)
                style = SESSION_STYLES[s % len(SESSION_STYLES)]
                sid = "".join(srng.choice("0123456789ABCDEF") for _ in range(32))
                mapping: dict[str, str] = {}
                for url in self._region(host, srng, options.pages):
                    parts = urlsplit(url)
                    if style == "path":
                        copy = urlunsplit(parts._replace(path=f"{parts.path};jsessionid={sid}"))
                    else:
                        copy = _with_query(url, f"sid={sid.lower()}")
                    copy = normalize_url(copy)
                    if self.is_free(copy):
                        mapping[url] = copy
                        self.pages[copy] = _Page(copy)  # claimed now, made below with the map complete
                for url, copy in mapping.items():
                    self.pages[copy] = self._copy(copy, "session", url, options.canonical_share, mapping)
                    of_page.setdefault(url, []).append(mapping)
        return of_page

    def _plan_mirrors(self) -> dict[str, list[dict[str, str]]]:
        options = self.profile.mirror
        hosts = sorted(self.host_pages)
        rng = self.rng("mirror", "hosts")
        chosen = _weighted_sample(rng, hosts, [len(self.host_pages[h]) ** 2 for h in hosts], options.hosts)
        of_page: dict[str, list[dict[str, str]]] = {}
        for host in chosen:
            for variant in ("www", "scheme"):
                mrng = self.rng("mirror", host, variant)
                mapping: dict[str, str] = {}
                for url in self._region(host, mrng, options.pages):
                    parts = urlsplit(url)
                    if variant == "www":
                        netloc = parts.netloc[4:] if parts.netloc.startswith("www.") else "www." + parts.netloc
                        copy = urlunsplit(parts._replace(netloc=netloc))
                    else:
                        copy = urlunsplit(parts._replace(scheme="http" if parts.scheme == "https" else "https"))
                    copy = normalize_url(copy)
                    if self.is_free(copy):
                        mapping[url] = copy
                        self.pages[copy] = _Page(copy)
                for url, copy in mapping.items():
                    self.pages[copy] = self._copy(copy, "mirror", url, options.canonical_share, mapping)
                    of_page.setdefault(url, []).append(mapping)
                # A mirror answers as its original host does (a soft 404 there is one here).
                mirror_host = host_of(next(iter(mapping.values()), ""))
                if host in self.behaviours and mirror_host and mirror_host not in self.host_pages:
                    self.behaviours.setdefault(mirror_host, self.behaviours[host])
        return of_page

    def _plan_near_duplicates(self) -> dict[str, list[str]]:
        options = self.profile.near_duplicate
        of_page: dict[str, list[str]] = {}
        for url in self.originals:
            if self.unit("near-duplicate", "page", url) >= options.page_share:
                continue
            rng = self.rng("near-duplicate", url)
            parts = urlsplit(url)
            for form in rng.sample(NEAR_DUPLICATE_URLS, rng.randint(1, options.copies)):
                if form.startswith("/"):
                    copy = urlunsplit(parts._replace(path=form.format(path=parts.path)))
                else:
                    copy = _with_query(url, form.format(n=rng.randint(1, 9999)))
                copy = normalize_url(copy)
                if not self.is_free(copy):
                    continue
                day = dt.date(rng.randint(1997, 2012), rng.randint(1, 12), rng.randint(1, 28))
                change = rng.choice(("banner", "date", "footer"))
                before = rng.choice(BANNERS) if change == "banner" else (
                    f"Last updated on {day:%d %B %Y}." if change == "date" else "")
                after = rng.choice(FOOTERS).format(year=day.year, ms=rng.randint(5, 900), date=f"{day:%d %B %Y}") \
                    if change == "footer" else ""
                self._copy(copy, "near-duplicate", url, options.canonical_share, before=before, after=after)
                of_page.setdefault(url, []).append(copy)
        return of_page

    def _tracking_url(self, url: str, k: int) -> str | None:
        h = f"{int(self.unit('tracking', 'value', url, k) * 2**40):010x}"
        form = int(self.unit("tracking", "form", url, k) * 4)
        if form < 2:
            params = (f"utm_source={UTM_SOURCES[int(h[0], 16) % len(UTM_SOURCES)]}"
                      f"&utm_medium={UTM_MEDIUMS[int(h[1], 16) % len(UTM_MEDIUMS)]}&utm_campaign=c{h[2:6]}")
        elif form == 2:
            params = f"fbclid=IwAR{h}{h[::-1]}"
        else:
            params = f"gclid=Cj0K{h}{h[:5]}"
        return normalize_url(_with_query(url, params))

    @staticmethod
    def _twin_url(url: str) -> str | None:
        parts = urlsplit(url)
        path = parts.path or "/"
        last = path.rsplit("/", 1)[-1]
        if path.endswith("/"):
            twin = path + "index.html"
        elif last.lower() in TWIN_INDEXES:
            twin = path[: -len(last)]
        elif parts.query:
            return None
        else:
            twin = path + "/"
        return normalize_url(urlunsplit(parts._replace(path=twin)))

    def _replace_links(self, sessions, mirrors, near_duplicates) -> None:
        """Each link of WEB to one of its pages may lead to a copy or a redirect chain instead.

        Each kind draws for each link on its own (a hash of the seed, the page and the link's place); a
        link taken by an earlier kind in this order stays with it.
        """
        p = self.profile
        kinds = [(kind, options.link_share) for kind, options in (
            ("session", p.session), ("mirror", p.mirror), ("tracking", p.tracking), ("twin", p.twin),
            ("near-duplicate", p.near_duplicate), ("redirect", p.redirect)) if options.enabled and options.link_share]
        for original in self.originals.values():
            draws = [(kind, share, self.draws(kind, original.url, len(original.links))) for kind, share in kinds]
            for order, link in enumerate(original.links):
                new = None
                if link.url in self.originals:
                    for kind, share, draw in draws:
                        if draw[order] < share:
                            new = self._variant(kind, original.url, order, link.url, sessions, mirrors,
                                                near_duplicates)
                            if new is not None:
                                break
                if new is not None:
                    original.targets[link.url] = new
                original.final.append(Link(new, link.anchor) if new else link)
                original.final_stored.append(link.url)

    def _variant(self, kind: str, src: str, order: int, target: str, sessions, mirrors, near_duplicates) -> str | None:
        pick = self.unit(kind, "pick", src, order)
        if kind in ("session", "mirror"):
            maps = (sessions if kind == "session" else mirrors).get(target)
            return maps[int(pick * len(maps))][target] if maps else None
        if kind == "near-duplicate":
            copies = near_duplicates.get(target)
            return copies[int(pick * len(copies))] if copies else None
        if kind == "redirect":
            return self._redirect_chain(src, order, target)
        url = (self._tracking_url(target, int(pick * self.profile.tracking.variants)) if kind == "tracking"
               else self._twin_url(target))
        if url is None or url in self.rows:
            return None
        if url not in self.pages and url not in self.dead:
            options = self.profile.tracking if kind == "tracking" else self.profile.twin
            self._copy(url, kind, target, options.canonical_share)
        return url if self.pages.get(url) is not None and self.pages[url].kind == kind else None

    # -- redirects -------------------------------------------------------------------------------------------
    def _redirect_hops(self, near: str, key: tuple, count: int) -> list[str]:
        parts = urlsplit(near)
        hops = []
        for i in range(count):
            h = f"{int(self.unit('redirect', 'hop', *key, i) * 2**48):012x}"
            form = REDIRECT_PATHS[int(self.unit("redirect", "form", *key, i) * len(REDIRECT_PATHS))]
            url = normalize_url(f"{parts.scheme}://{parts.netloc}{form.format(h=h)}")
            if not self.is_free(url) or url in hops:
                return []
            hops.append(url)
        return hops

    def _redirect_chain(self, src: str, order: int, target: str) -> str | None:
        options = self.profile.redirect
        count = options.min_hops + int(self.unit("redirect", "hops", src, order) * (options.max_hops -
                                                                                  options.min_hops + 1))
        hops = self._redirect_hops(target, (src, order), count)
        if not hops:
            return None
        for i, hop in enumerate(hops):
            status = REDIRECT_STATUSES[int(self.unit("redirect", "status", hop) * len(REDIRECT_STATUSES))]
            location = hops[i + 1] if i + 1 < len(hops) else target
            self.add(_Page(hop, status=status, content_type="", location=location, kind="redirect",
                           original=target))
        return hops[0]

    def _add_loops(self) -> None:
        for url, original in self.originals.items():
            if self.unit("redirect-loop", "page", url) >= self.profile.redirect.loop_share:
                continue
            count = 1 + int(self.unit("redirect-loop", "hops", url) * 2)  # a URL redirecting to itself, or two
            hops = self._redirect_hops(url, ("loop", url), count)
            if not hops:
                continue
            for i, hop in enumerate(hops):
                self.add(_Page(hop, status=302, content_type="", location=hops[(i + 1) % len(hops)],
                               kind="redirect-loop"))
            anchor = LOOP_ANCHORS[int(self.unit("redirect-loop", "anchor", url) * len(LOOP_ANCHORS))]
            original.added.append(Link(hops[0], anchor))

    # -- links only a script adds; print links; broken links --------------------------------------------------
    def _move_to_scripts(self) -> None:
        options = self.profile.script
        for url, original in self.originals.items():
            if self.unit("script", "page", url) >= options.page_share:
                continue
            kept, kept_stored = [], []
            draw = self.draws("script", url, len(original.final))
            for order, (stored, link) in enumerate(zip(original.final_stored, original.final)):
                if draw[order] < options.link_share:
                    original.moved.append(link)
                    original.moved_stored.append(stored)
                    original.targets[stored] = None
                else:
                    kept.append(link)
                    kept_stored.append(stored)
            original.final, original.final_stored = kept, kept_stored
            self.moved_links += len(original.moved)

    def _link_printable(self, near_duplicates: Mapping[str, list[str]]) -> None:
        for url, copies in near_duplicates.items():
            if self.unit("near-duplicate", "linked", url) < self.profile.near_duplicate.linked_share:
                anchor = "Printable version" if "print" in copies[0] else "Other version of this page"
                self.originals[url].added.append(Link(copies[0], anchor))

    def _add_broken_links(self) -> None:
        """On soft-404 hosts, some pages link to a mistyped URL of their own host: a soft 404 to be found."""
        for url, original in self.originals.items():
            behaviour = self.behaviours.get(original.host)
            if behaviour is None or behaviour.soft_404 is None:
                continue
            if self.unit("soft-404", "broken", url) >= self.profile.soft_404.broken_share:
                continue
            same_host = [link for link in original.links if host_of(link.url) == original.host]
            if not same_host:
                continue
            link = same_host[int(self.unit("soft-404", "which", url) * len(same_host))]
            parts = urlsplit(link.url)
            path = parts.path
            i = max(path.rfind("/") + 1, len(path) - 6)
            if len(path) - i >= 2:  # two letters swapped near the end, as a hurried hand types them
                path = path[:i] + path[i + 1] + path[i] + path[i + 2:]
            else:
                path += "x"
            broken = normalize_url(urlunsplit(parts._replace(path=path)))
            if self.is_free(broken):
                self.dead[broken] = "soft-404"
                original.added.append(Link(broken, link.anchor))

    # -- finishing ----------------------------------------------------------------------------------------------
    def _fill_copies(self) -> None:
        """A copy's links are its original's final ones; in a session or a mirror, a link to a page the session
        or mirror has leads to its copy there (a session keeps its id)."""
        for page in self.pages.values():
            if page.source is None:
                continue
            source = self.originals[page.source]

            def mapped(links: list[Link], stored: list[str]) -> list[Link]:
                return [Link(self._copy_target(page, url, link.url), link.anchor) for link, url in zip(links, stored)]

            page.links = _unique(mapped(source.final, source.final_stored)
                                 + mapped(source.added, [link.url for link in source.added]))
            page.script_links = _unique(mapped(source.moved, source.moved_stored))

    def _copy_target(self, page: _Page, stored: str, final: str) -> str:
        """Where a copy's link goes: the copy of the page in the copy's own session or mirror when it has one;
        the stored URL when the original's link went to another session or mirror; else the original's."""
        if not page.url_map:
            return final
        if stored in page.url_map:
            return page.url_map[stored]
        other = self.pages.get(final)
        return stored if other is not None and other.kind == page.kind else final

    def _soften_dead_ends(self) -> None:
        """On a soft-404 host, every URL without a page answers 200 with the host's not-found page."""
        if not any(b.soft_404 is not None for b in self.behaviours.values()):
            return
        dead = [url for url, row in self.rows.items() if row.status == 404]
        dead += sorted({link.url for page in (*self.rows.values(), *self.pages.values())
                        for link in (*page.links, *page.script_links)
                        if link.url not in self.rows and link.url not in self.pages})
        for url in dead:
            behaviour = self.behaviours.get(host_of(url))
            if behaviour is None or behaviour.soft_404 is None:
                continue
            title, text = not_found_page(url)
            # a link of WEB's that led nowhere is a dead link, with a 404 on the clean web the same fetch as here; a
            # mistyped link the mess added is a soft 404 of its own
            page = _Page(url, title=title, text=text, links=list(behaviour.soft_404),
                         kind=self.dead.pop(url, "dead-link"))
            if url in self.rows:
                self.rows[url] = page  # a dead end of WEB, now a soft 404 (its row keeps its place)
            else:
                self.pages[url] = page

    # -- writing -----------------------------------------------------------------------------------------------
    def write(self, writer: WebWriter) -> dict[str, int]:
        for url in self.rows:  # WEB's pages keep their ids
            writer.id_for(url)
        counts: dict[str, int] = {}
        for page in (*self.rows.values(), *self.pages.values()):
            self._write_page(writer, page)
            if page.kind is not None:
                writer.add_injected(page.url, page.kind, page.original)
                counts[page.kind] = counts.get(page.kind, 0) + 1
        for url, kind in self.dead.items():
            writer.add_injected(url, kind)
            counts[kind] = counts.get(kind, 0) + 1
        return {kind: counts[kind] for kind in KINDS if kind in counts}

    def _write_page(self, writer: WebWriter, page: _Page) -> None:
        text, html = page.text, None
        if page.source is not None:
            stored = self.text(page.source)
            text = "\n\n".join(part for part in (page.before, stored, page.after) if part) if (
                page.before or page.after) else stored
            if self.originals[page.source].has_html:
                html = self._html(page, text)
        writer.add_page(page.url, status=page.status, content_type=page.content_type, title=page.title,
                        text=text, html=html, labels=page.labels.split(",") if page.labels else (),
                        location=page.location, canonical=page.canonical)
        links = page.links if page.source == page.url else _unique(page.links)  # WEB's pages: as stored
        for link in links:
            writer.add_link(page.url, link.url, link.anchor)
        for link in page.script_links:
            writer.add_script_link(page.url, link.url, link.anchor)

    def _html(self, page: _Page, text: str) -> str | None:
        """The source's HTML with this page's links, banner and footer, or None (rendered when served) when the
        result would not parse back to the page's stored links and text."""
        source = self.originals[page.source]
        html = self.web.html(source.url)
        if html is None:
            return None
        if page.url == source.url and not source.targets and not source.added:
            return html  # a page of WEB the mess left alone keeps every byte

        def target(url: str) -> str | None:  # as _fill_copies maps links
            new = source.targets.get(url, url)
            return None if new is None else self._copy_target(page, url, new)

        esc = html_lib.escape
        added = [Link(self._copy_target(page, link.url, link.url), link.anchor) for link in source.added]
        html = rewrite_links(html, source.url, target)
        html = insert_html(html, body_start=f"<p>{esc(page.before)}</p>" if page.before else "",
                           body_end=(f"<p>{esc(page.after)}</p>" if page.after else "") + links_nav(added))
        parsed = parse_document(html, page.url)
        if parsed.links != _unique(page.links) or parsed.text != clean_text(text):
            self.html_dropped += 1
            return None
        return html


def _unique(links: Iterable[Link]) -> list[Link]:
    """Links with each URL once, the first anchor kept: what a parser makes of a page that repeats a link."""
    seen: dict[str, Link] = {}
    for link in links:
        seen.setdefault(link.url, link)
    return list(seen.values())


def _add_months(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, 28))


def mess_web(source: str | Path, out: str | Path, profile: MessProfile | None = None, *, seed: int = 0,
             profile_name: str = "default", overwrite: bool = False) -> MessReport:
    """Write OUT: the offline web ``source`` with ``profile``'s pathologies added (module docstring)."""
    started = time.perf_counter()
    profile = profile or PROFILES[profile_name]
    source, out = Path(source), Path(out)
    if out.resolve() == source.resolve():
        raise ValueError(f"OUT must be another directory than WEB ({source})")
    web = OfflineWeb(source)
    try:
        if "mess" in web.meta:
            raise ValueError(f"{source} is a messy web already; mess the web it was made from")
        if (out / WEB_FILE).exists() and not overwrite:
            raise FileExistsError(f"{out / WEB_FILE} already exists; pass --overwrite to replace it")
        mess = _Mess(web, profile, seed)
        mess.build()
        meta = {**web.meta, "name": f"{web.name}-mess", "builder": "focuscrawl.webs.mess.mess_web"}
        with WebWriter(out, meta, overwrite=overwrite) as writer:
            counts = mess.write(writer)
            hosts = {host: behaviour.to_json() for host, behaviour in sorted(mess.behaviours.items())}
            writer.set_meta("mess", {
                "version": MESS_VERSION, "profile": profile_name, "seed": seed,
                "options": profile.model_dump(mode="json"), "from": web.name, "hosts": hosts,
                "injected": counts, "script_links": mess.moved_links,
            })
    finally:
        web.close()
    return MessReport(out, profile_name, profile, seed, counts, hosts, mess.moved_links, mess.html_dropped,
                      time.perf_counter() - started)
