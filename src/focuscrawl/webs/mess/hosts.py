"""Host behaviour: soft-404 hosts (with the mistyped links that find them) and hosts that fail.

The behaviours themselves (what a host answers, offline and over HTTP) are ``focuscrawl.webs.behaviour``'s;
here the hosts are drawn and their soft-404 pages made.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from focuscrawl.types import Link
from focuscrawl.urls import host_of, normalize_url
from focuscrawl.webs.behaviour import HostBehaviour, not_found_page
from focuscrawl.webs.mess.state import MessState, PlannedPage, weighted_sample


def plan_behaviours(state: MessState) -> None:
    """Soft-404 and failing hosts: WEB's hosts, the bigger the likelier, where a crawl spends its budget (but
    never a failing host that holds half the web); when WEB has fewer hosts than asked for (Wikispeedia has
    one), the traps' own hosts make up the rest."""
    p = state.profile
    soft: dict[str, tuple[Link, ...]] = {}
    if p.soft_404.enabled:
        for host in _draw_hosts(state, "soft-404", p.soft_404.hosts):
            soft[host] = _home_links(state, host)
    failure: dict[str, HostBehaviour] = {}
    if p.failing.enabled:
        f = p.failing
        modes = ["errors"] * f.error_hosts + ["timeout"] * f.timeout_hosts + ["slow"] * f.slow_hosts
        for host, mode in zip(_draw_hosts(state, "failing", len(modes), spare_main=True), modes):
            share = {"errors": f.error_share, "timeout": f.timeout_share, "slow": 0.0}[mode]
            failure[host] = HostBehaviour(failure=mode, share=share, burst=f.burst if mode == "errors" else 0,
                                          hang_s=f.hang_s, slow_body_s=f.slow_body_s)
    for host in sorted(set(soft) | set(failure)):
        base = failure.get(host, HostBehaviour())
        state.behaviours[host] = HostBehaviour(soft.get(host), base.failure, base.share, base.burst,
                                               base.hang_s, base.slow_body_s)


def _draw_hosts(state: MessState, kind: str, count: int, *, spare_main: bool = False) -> list[str]:
    """``count`` hosts, WEB's first (the bigger the likelier), then traps' own. ``spare_main``: not a host that
    holds half of WEB's pages or more (Wikispeedia's only host): a failing host is one a crawl can give up,
    and a crawl that gave up the web's main host would have no web left to crawl."""
    rng = state.rng(kind, "hosts")
    total = sum(len(pages) for pages in state.host_pages.values())
    web_hosts = sorted(h for h, pages in state.host_pages.items()
                       if not (spare_main and 2 * len(pages) >= total))
    chosen = weighted_sample(rng, web_hosts, [len(state.host_pages[h]) for h in web_hosts], count)
    traps = {s.host: len(s.urls) for s in state.sections if not s.on_site}
    trap_hosts = sorted(traps)
    return chosen + weighted_sample(rng, trap_hosts, [traps[h] for h in trap_hosts], count - len(chosen))


def _home_links(state: MessState, host: str) -> tuple[Link, ...]:
    """What a soft-404 page of ``host`` links to: its five most linked-to pages, the first as "Home"."""
    urls = state.host_pages.get(host)
    if urls is None:  # a trap's own host: its first page
        section = next(s for s in state.sections if s.host == host)
        return tuple(Link(url, "Home") for url in section.urls[:1] if url)
    inlinks: dict[str, int] = {}
    members = set(urls)
    for url in urls:
        for link in state.originals[url].links:
            if link.url in members:
                inlinks[link.url] = inlinks.get(link.url, 0) + 1
    top = sorted(urls, key=lambda u: (-inlinks.get(u, 0), u))[:5]
    return tuple(Link(url, "Home" if i == 0 else state.originals[url].title) for i, url in enumerate(top))


def add_broken_links(state: MessState) -> None:
    """On soft-404 hosts, some pages link to a mistyped URL of their own host: a soft 404 to be found."""
    for url, original in state.originals.items():
        behaviour = state.behaviours.get(original.host)
        if behaviour is None or behaviour.soft_404 is None:
            continue
        if state.unit("soft-404", "broken", url) >= state.profile.soft_404.broken_share:
            continue
        same_host = [link for link in original.links if host_of(link.url) == original.host]
        if not same_host:
            continue
        link = same_host[int(state.unit("soft-404", "which", url) * len(same_host))]
        parts = urlsplit(link.url)
        path = parts.path
        i = max(path.rfind("/") + 1, len(path) - 6)
        if len(path) - i >= 2:  # two letters swapped near the end, as a hurried hand types them
            path = path[:i] + path[i + 1] + path[i] + path[i + 2:]
        else:
            path += "x"
        broken = normalize_url(urlunsplit(parts._replace(path=path)))
        if state.is_free(broken):
            state.dead[broken] = "soft-404"
            original.added.append(Link(broken, link.anchor))


def soften_dead_ends(state: MessState) -> None:
    """On a soft-404 host, every URL without a page answers 200 with the host's not-found page."""
    if not any(b.soft_404 is not None for b in state.behaviours.values()):
        return
    dead = [url for url, row in state.rows.items() if row.status == 404]
    dead += sorted({link.url for page in (*state.rows.values(), *state.pages.values())
                    for link in (*page.links, *page.script_links)
                    if link.url not in state.rows and link.url not in state.pages})
    for url in dead:
        behaviour = state.behaviours.get(host_of(url))
        if behaviour is None or behaviour.soft_404 is None:
            continue
        title, text = not_found_page(url)
        # a link of WEB's that led nowhere is a dead link, with a 404 on the clean web the same fetch as here; a
        # mistyped link the mess added is a soft 404 of its own
        page = PlannedPage(url, title=title, text=text, links=list(behaviour.soft_404),
                           kind=state.dead.pop(url, "dead-link"))
        if url in state.rows:
            state.rows[url] = page  # a dead end of WEB, now a soft 404 (its row keeps its place)
        else:
            state.pages[url] = page
