"""What every trap shares: sections on a host of WEB or of their own, the pages that enter them, their URLs.

A trap (a calendar, a paginated listing, a faceted search, a link farm) is a few sections, each on one host
and entered from a share of WEB's pages; the entries spread evenly over the section, and the stretch an
entry lands on is written from the sentences of that entry and its neighbours.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url, site_of
from focuscrawl.webs.mess.state import MessState, PlannedPage, Section


def url_slug(title: str) -> str:
    """A title as a listing's or a search's URLs name it."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "all"


def plan_sections(state: MessState, kind: str, count: int, injected_hosts: int, entry_share: float) -> None:
    """The sections of one trap kind: on hosts of their own (named after a host of WEB, the bigger the
    likelier) or on a host of WEB, and the pages that link into each."""
    rng = state.rng(kind, "sections")
    hosts = sorted(state.host_pages)
    weights = [len(state.host_pages[h]) for h in hosts]
    sections = []
    for i in range(count):
        base = rng.choices(hosts, weights)[0]
        if i < injected_hosts:
            prefix = {"calendar": "events", "pagination": "archive", "facet": "search"}[kind]
            host = state.new_host(f"{prefix}.{site_of('//' + base)}")
            sections.append(Section(kind, i, host, state.scheme_of[base], on_site=False))
        else:
            sections.append(Section(kind, i, base, state.scheme_of[base], on_site=True))
    _choose_entries(state, kind, sections, entry_share)


def _choose_entries(state: MessState, kind: str, sections: list[Section], entry_share: float) -> None:
    for url, original in state.originals.items():
        if state.unit(kind, "entry", url) >= entry_share:
            continue
        eligible = [s for s in sections if not s.on_site or s.host == original.host]
        if eligible:
            eligible[int(state.unit(kind, "section", url) * len(eligible))].entries.append(url)
    state.sections += [s for s in sections if s.entries]


def _section_url(state: MessState, section: Section, path: str) -> str | None:
    url = normalize_url(f"{section.scheme}://{section.host}{path}")
    return url if state.is_free(url) else None


def materialise(state: MessState, section: Section, paths: list[str]) -> None:
    """Claim the section's URLs (a URL WEB already has is left out: its position links to WEB's page)."""
    section.urls = [_section_url(state, section, path) or "" for path in paths]
    for url in section.urls:
        if url:
            state.add(PlannedPage(url, kind=section.kind))


def trap_text(state: MessState, rng: random.Random, entry: str, first: str, n: int, last: str = "") -> str:
    """``first``, ``n`` sentences of ``entry``'s neighbourhood, and ``last``, as paragraphs."""
    pool = state.pool(entry)
    sentences = [pool[rng.randrange(len(pool))] for _ in range(n)]
    return "\n\n".join(part for part in (first, " ".join(sentences), last) if part)


def trap_target(state: MessState, section: Section, path: str, index: Mapping[str, int]) -> str | None:
    """The URL a trap page links to: materialised, or past the section's end (a dead end of its kind)."""
    url = normalize_url(f"{section.scheme}://{section.host}{path}")
    if url is None or url in index or url in state.rows:
        return url
    if url not in state.pages:
        state.dead.setdefault(url, section.kind)
    return url


def enter(state: MessState, section: Section, words: Mapping[str, list[str]]) -> None:
    """Add each entry page's link into the section, where that entry's stretch begins."""
    for j, entry in enumerate(section.entries):
        target = section.urls[section.landing(j)] if section.urls else ""
        if not target:
            continue
        title = state.originals[entry].title
        anchor = {"calendar": f"{title} events", "pagination": f"All {title} articles",
                  "facet": f"Browse {title}"}.get(section.kind, "")
        if section.kind == "farm":
            anchor = " ".join(words.get(entry, [])[:4])
        state.originals[entry].added.append(Link(target, anchor.strip()))
