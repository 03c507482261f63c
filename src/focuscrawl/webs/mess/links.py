"""Which links of WEB lead to a copy or a redirect chain instead of their page.

Copies *replace* a share of the links to their original, as on the real web, where the clean URL of a page
is often not linked at all.
"""

from __future__ import annotations

from collections.abc import Mapping

from focuscrawl.types import Link
from focuscrawl.webs.mess.copies import make_copy, tracking_url, twin_url
from focuscrawl.webs.mess.redirects import redirect_chain
from focuscrawl.webs.mess.sessions import UrlMaps
from focuscrawl.webs.mess.state import MessState


def replace_links(state: MessState, sessions: UrlMaps, mirrors: UrlMaps,
                  near_duplicates: Mapping[str, list[str]]) -> None:
    """Each link of WEB to one of its pages may lead to a copy or a redirect chain instead.

    Each kind draws for each link on its own (a hash of the seed, the page and the link's place); a
    link taken by an earlier kind in this order stays with it.
    """
    p = state.profile
    kinds = [(kind, options.link_share) for kind, options in (
        ("session", p.session), ("mirror", p.mirror), ("tracking", p.tracking), ("twin", p.twin),
        ("near-duplicate", p.near_duplicate), ("redirect", p.redirect)) if options.enabled and options.link_share]
    for original in state.originals.values():
        draws = [(kind, share, state.draws(kind, original.url, len(original.links))) for kind, share in kinds]
        for order, link in enumerate(original.links):
            new = None
            if link.url in state.originals:
                for kind, share, draw in draws:
                    if draw[order] < share:
                        new = _variant(state, kind, original.url, order, link.url, sessions, mirrors,
                                       near_duplicates)
                        if new is not None:
                            break
            if new is not None:
                original.targets[link.url] = new
            original.final.append(Link(new, link.anchor) if new else link)
            original.final_stored.append(link.url)


def _variant(state: MessState, kind: str, src: str, order: int, target: str, sessions: UrlMaps, mirrors: UrlMaps,
             near_duplicates: Mapping[str, list[str]]) -> str | None:
    """The URL of ``kind`` that the ``order``-th link of ``src``, to ``target``, leads to instead, or None."""
    pick = state.unit(kind, "pick", src, order)
    if kind in ("session", "mirror"):
        maps = (sessions if kind == "session" else mirrors).get(target)
        return maps[int(pick * len(maps))][target] if maps else None
    if kind == "near-duplicate":
        copies = near_duplicates.get(target)
        return copies[int(pick * len(copies))] if copies else None
    if kind == "redirect":
        return redirect_chain(state, src, order, target)
    url = (tracking_url(state, target, int(pick * state.profile.tracking.variants)) if kind == "tracking"
           else twin_url(target))
    if url is None or url in state.rows:
        return None
    if url not in state.pages and url not in state.dead:
        options = state.profile.tracking if kind == "tracking" else state.profile.twin
        make_copy(state, url, kind, target, options.canonical_share)
    return url if state.pages.get(url) is not None and state.pages[url].kind == kind else None
