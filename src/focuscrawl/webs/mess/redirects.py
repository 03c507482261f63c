"""Redirect chains (2-4 hops) that end at a page, and loops that end nowhere."""

from __future__ import annotations

from urllib.parse import urlsplit

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url
from focuscrawl.webs.mess.state import MessState, PlannedPage

REDIRECT_PATHS = ("/go/{h}", "/redirect?to={h}", "/r/{h}", "/out.php?id={h}", "/link/{h}")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
LOOP_ANCHORS = ("Sign in", "My account", "Continue reading", "Download")


def _redirect_hops(state: MessState, near: str, key: tuple, count: int) -> list[str]:
    parts = urlsplit(near)
    hops = []
    for i in range(count):
        h = f"{int(state.unit('redirect', 'hop', *key, i) * 2**48):012x}"
        form = REDIRECT_PATHS[int(state.unit("redirect", "form", *key, i) * len(REDIRECT_PATHS))]
        url = normalize_url(f"{parts.scheme}://{parts.netloc}{form.format(h=h)}")
        if not state.is_free(url) or url in hops:
            return []
        hops.append(url)
    return hops


def redirect_chain(state: MessState, src: str, order: int, target: str) -> str | None:
    options = state.profile.redirect
    span = options.max_hops - options.min_hops + 1
    count = options.min_hops + int(state.unit("redirect", "hops", src, order) * span)
    hops = _redirect_hops(state, target, (src, order), count)
    if not hops:
        return None
    for i, hop in enumerate(hops):
        status = REDIRECT_STATUSES[int(state.unit("redirect", "status", hop) * len(REDIRECT_STATUSES))]
        location = hops[i + 1] if i + 1 < len(hops) else target
        state.add(PlannedPage(hop, status=status, content_type="", location=location, kind="redirect",
                              original=target))
    return hops[0]


def add_loops(state: MessState) -> None:
    for url, original in state.originals.items():
        if state.unit("redirect-loop", "page", url) >= state.profile.redirect.loop_share:
            continue
        count = 1 + int(state.unit("redirect-loop", "hops", url) * 2)  # a URL redirecting to itself, or two
        hops = _redirect_hops(state, url, ("loop", url), count)
        if not hops:
            continue
        for i, hop in enumerate(hops):
            state.add(PlannedPage(hop, status=302, content_type="", location=hops[(i + 1) % len(hops)],
                                  kind="redirect-loop"))
        anchor = LOOP_ANCHORS[int(state.unit("redirect-loop", "anchor", url) * len(LOOP_ANCHORS))]
        original.added.append(Link(hops[0], anchor))
