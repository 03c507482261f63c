"""Copies of single pages, and what every copy shares.

Tracking parameters (``utm_*``, ``fbclid``, ``gclid``) on links to a page, ``index.html`` and trailing-slash
twins, near-duplicates (the text with a changed banner, date or footer, at a print, amp, replytocom or
archive URL); a share of each names its original with ``<link rel=canonical>``. Copies of a region of a
host (sessions, mirrors) are ``sessions``'s; a copy's links, whatever its kind, are made here at the end,
from its original's final links.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url
from focuscrawl.webs.mess.state import MessState, PlannedPage

BANNERS = ("We use cookies to give you the best experience. By using this site you agree to our use of cookies.",
           "Sign up for our newsletter and never miss an update.",
           "This page has a new address; please update your bookmarks.",
           "Support us: become a member today.")
FOOTERS = ("Copyright {year}. All rights reserved.", "Page generated in {ms} ms.",
           "Share this page: email, print, bookmark.", "Last modified {date}. Contact the webmaster.")
UTM_SOURCES = ("newsletter", "twitter", "facebook", "rss", "partner")
UTM_MEDIUMS = ("email", "social", "referral", "feed")
NEAR_DUPLICATE_URLS = ("view=print", "amp=1", "replytocom={n}", "/print{path}")
TWIN_INDEXES = ("index.html", "index.htm", "index.php", "default.htm")


def make_copy(state: MessState, url: str, kind: str, original: str, share: float,
              url_map: Mapping[str, str] | None = None, before: str = "", after: str = "") -> PlannedPage:
    """A copy of ``original`` at ``url``, naming it as canonical for a ``share`` of the copies of its kind."""
    source = state.originals[original]
    canonical = original if state.unit(kind, "canonical", url) < share else None
    return state.add(PlannedPage(url, title=source.title, source=original, url_map=url_map, before=before,
                                 after=after, canonical=canonical, kind=kind, original=original,
                                 content_type=state.rows[original].content_type))


def plan_near_duplicates(state: MessState) -> dict[str, list[str]]:
    """Near-duplicates of a share of pages; returns page -> its near-duplicates' URLs."""
    options = state.profile.near_duplicate
    of_page: dict[str, list[str]] = {}
    for url in state.originals:
        if state.unit("near-duplicate", "page", url) >= options.page_share:
            continue
        rng = state.rng("near-duplicate", url)
        parts = urlsplit(url)
        for form in rng.sample(NEAR_DUPLICATE_URLS, rng.randint(1, options.copies)):
            if form.startswith("/"):
                copy = urlunsplit(parts._replace(path=form.format(path=parts.path)))
            else:
                copy = with_query(url, form.format(n=rng.randint(1, 9999)))
            copy = normalize_url(copy)
            if not state.is_free(copy):
                continue
            day = dt.date(rng.randint(1997, 2012), rng.randint(1, 12), rng.randint(1, 28))
            change = rng.choice(("banner", "date", "footer"))
            before = rng.choice(BANNERS) if change == "banner" else (
                f"Last updated on {day:%d %B %Y}." if change == "date" else "")
            after = rng.choice(FOOTERS).format(year=day.year, ms=rng.randint(5, 900), date=f"{day:%d %B %Y}") \
                if change == "footer" else ""
            make_copy(state, copy, "near-duplicate", url, options.canonical_share, before=before, after=after)
            of_page.setdefault(url, []).append(copy)
    return of_page


def tracking_url(state: MessState, url: str, k: int) -> str | None:
    """The ``k``-th tracking URL of ``url``: ``utm_*`` parameters half the time, else ``fbclid`` or ``gclid``."""
    h = f"{int(state.unit('tracking', 'value', url, k) * 2**40):010x}"
    form = int(state.unit("tracking", "form", url, k) * 4)
    if form < 2:
        params = (f"utm_source={UTM_SOURCES[int(h[0], 16) % len(UTM_SOURCES)]}"
                  f"&utm_medium={UTM_MEDIUMS[int(h[1], 16) % len(UTM_MEDIUMS)]}&utm_campaign=c{h[2:6]}")
    elif form == 2:
        params = f"fbclid=IwAR{h}{h[::-1]}"
    else:
        params = f"gclid=Cj0K{h}{h[:5]}"
    return normalize_url(with_query(url, params))


def twin_url(url: str) -> str | None:
    """``/dir/`` <-> ``/dir/index.html``, ``/a.htm`` -> ``/a.htm/``; None for a URL with a query."""
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


def link_printable(state: MessState, near_duplicates: Mapping[str, list[str]]) -> None:
    """A share of the pages with near-duplicates link to their first one."""
    for url, copies in near_duplicates.items():
        if state.unit("near-duplicate", "linked", url) < state.profile.near_duplicate.linked_share:
            anchor = "Printable version" if "print" in copies[0] else "Other version of this page"
            state.originals[url].added.append(Link(copies[0], anchor))


def fill_copies(state: MessState) -> None:
    """A copy's links are its original's final ones; in a session or a mirror, a link to a page the session
    or mirror has leads to its copy there (a session keeps its id)."""
    for page in state.pages.values():
        if page.source is None:
            continue
        source = state.originals[page.source]

        def mapped(links: list[Link], stored: list[str]) -> list[Link]:
            return [Link(copy_target(state, page, url, link.url), link.anchor) for link, url in zip(links, stored)]

        page.links = unique(mapped(source.final, source.final_stored)
                            + mapped(source.added, [link.url for link in source.added]))
        page.script_links = unique(mapped(source.moved, source.moved_stored))


def copy_target(state: MessState, page: PlannedPage, stored: str, final: str) -> str:
    """Where a copy's link goes: the copy of the page in the copy's own session or mirror when it has one;
    the stored URL when the original's link went to another session or mirror; else the original's."""
    if not page.url_map:
        return final
    if stored in page.url_map:
        return page.url_map[stored]
    other = state.pages.get(final)
    return stored if other is not None and other.kind == page.kind else final


def with_query(url: str, params: str) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&{params}" if parts.query else params
    return urlunsplit(parts._replace(query=query))


def unique(links: Iterable[Link]) -> list[Link]:
    """Links with each URL once, the first anchor kept: what a parser makes of a page that repeats a link."""
    seen: dict[str, Link] = {}
    for link in links:
        seen.setdefault(link.url, link)
    return list(seen.values())
