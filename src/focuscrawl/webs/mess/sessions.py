"""Copies of a region of a host under a URL map: session ids and host mirrors.

A session copies the pages of a region of a host with its id (``;jsessionid=`` in the path, ``sid=`` in the
query), a mirror under the ``www.``/bare host name or the other scheme; every link inside a session or a
mirror stays in it (``copies.copy_target``).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

from focuscrawl.urls import host_of, normalize_url
from focuscrawl.webs.mess.copies import make_copy, with_query
from focuscrawl.webs.mess.state import MessState, PlannedPage, weighted_sample

SESSION_STYLES = ("path", "query")  # ;jsessionid=ID in the path, or ?sid=ID
UrlMaps = dict[str, list[dict[str, str]]]  # a page -> the URL maps of the sessions (or mirrors) that copy it


def _region(state: MessState, host: str, rng: random.Random, size: int) -> list[str]:
    """Up to ``size`` pages of ``host``, breadth first along its own links from a random page, and from
    another when that runs out (a page without links of its own host holds no region)."""
    pages = state.host_pages[host]
    members = set(pages)
    seen: dict[str, None] = {}
    size = min(size, len(pages))
    while len(seen) < size:
        start = rng.choice([url for url in pages if url not in seen])
        seen[start] = None
        queue = deque([start])
        while queue and len(seen) < size:
            for link in state.originals[queue.popleft()].links:
                if link.url in members and link.url not in seen:
                    seen[link.url] = None
                    queue.append(link.url)
                    if len(seen) >= size:
                        break
    return list(seen)


def plan_sessions(state: MessState) -> UrlMaps:
    """Session copies of regions of the biggest hosts; returns page -> the sessions' URL maps that hold it."""
    options = state.profile.session
    hosts = [h for h in sorted(state.host_pages) if len(state.host_pages[h]) > 1]
    rng = state.rng("session", "hosts")
    chosen = weighted_sample(rng, hosts, [len(state.host_pages[h]) ** 2 for h in hosts], options.hosts)
    of_page: UrlMaps = {}
    for host in chosen:
        for s in range(options.sessions):
            srng = state.rng("session", host, s)
            style = SESSION_STYLES[s % len(SESSION_STYLES)]
            sid = "".join(srng.choice("0123456789ABCDEF") for _ in range(32))
            _copy_region(state, "session", host, srng, options.pages, options.canonical_share,
                         lambda url: _session_url(url, style, sid), of_page)
    return of_page


def plan_mirrors(state: MessState) -> UrlMaps:
    """Mirrors (both variants) of regions of the biggest hosts; returns page -> the mirrors' URL maps."""
    options = state.profile.mirror
    hosts = sorted(state.host_pages)
    rng = state.rng("mirror", "hosts")
    chosen = weighted_sample(rng, hosts, [len(state.host_pages[h]) ** 2 for h in hosts], options.hosts)
    of_page: UrlMaps = {}
    for host in chosen:
        for variant in ("www", "scheme"):
            mrng = state.rng("mirror", host, variant)
            mapping = _copy_region(state, "mirror", host, mrng, options.pages, options.canonical_share,
                                   lambda url: _mirror_url(url, variant), of_page)
            # A mirror answers as its original host does (a soft 404 there is one here).
            mirror_host = host_of(next(iter(mapping.values()), ""))
            if host in state.behaviours and mirror_host and mirror_host not in state.host_pages:
                state.behaviours.setdefault(mirror_host, state.behaviours[host])
    return of_page


def _copy_region(state: MessState, kind: str, host: str, rng: random.Random, size: int, canonical_share: float,
                 address: Callable[[str], str], of_page: UrlMaps) -> dict[str, str]:
    """Copy a region of ``host`` to the URLs ``address`` gives (those free): its URL map, also added to
    ``of_page`` for each page it copies."""
    mapping: dict[str, str] = {}
    for url in _region(state, host, rng, size):
        copy = normalize_url(address(url))
        if state.is_free(copy):
            mapping[url] = copy
            state.pages[copy] = PlannedPage(copy)  # claimed now, made below with the map complete
    for url, copy in mapping.items():
        make_copy(state, copy, kind, url, canonical_share, mapping)
        of_page.setdefault(url, []).append(mapping)
    return mapping


def _session_url(url: str, style: str, sid: str) -> str:
    """``url`` in session ``sid``: ``;jsessionid=SID`` in the path, or ``sid=sid`` in the query."""
    parts = urlsplit(url)
    if style == "path":
        return urlunsplit(parts._replace(path=f"{parts.path};jsessionid={sid}"))
    return with_query(url, f"sid={sid.lower()}")


def _mirror_url(url: str, variant: str) -> str:
    """``url`` on its host's mirror: the ``www.``/bare host name, or the other scheme."""
    parts = urlsplit(url)
    if variant == "www":
        netloc = parts.netloc[4:] if parts.netloc.startswith("www.") else "www." + parts.netloc
        return urlunsplit(parts._replace(netloc=netloc))
    return urlunsplit(parts._replace(scheme="http" if parts.scheme == "https" else "https"))
