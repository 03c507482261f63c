"""Paginated listings that never end: page N links to N+1, N+10, the first and the last."""

from __future__ import annotations

from focuscrawl.types import Link
from focuscrawl.webs.mess.state import MessState, Section
from focuscrawl.webs.mess.traps import materialise, trap_target, url_slug


def build_pagination(state: MessState, section: Section) -> None:
    """The section's listing pages, each listing pages of WEB near the entry whose stretch it is in."""
    options = state.profile.pagination
    rng = state.rng("pagination", section.index, section.host)
    slug = url_slug(state.originals[section.entries[0]].title)
    template = rng.choice(("/{slug}/page/{n}/", "/list/?category={slug}&page={n}", "/archive/{slug}/?p={n}"))
    if not section.on_site and template.startswith("/archive/"):
        template = "/{slug}/?p={n}"
    n_pages = options.pages

    def path(n: int) -> str:
        return template.format(slug=slug, n=n)

    materialise(state, section, [path(n) for n in range(1, n_pages + 1)])
    index = {url: i for i, url in enumerate(section.urls) if url}
    for i, url in enumerate(section.urls):
        if not url:
            continue
        n = i + 1
        entry = section.entry_of(i)
        page = state.pages[url]
        title = state.originals[entry].title or "Articles"
        items = state.neighbourhood(entry)
        listed = [items[(i * options.items + k) % len(items)] for k in range(min(options.items, len(items)))]
        page.title = f"{title} - page {n}"
        snippets = " ".join(f"{link.anchor}: {state.lead(link.url)}" for link in listed)
        page.text = f"Page {n} of the {title} archive.\n\n{snippets}"
        for anchor, target_n in (("First page", 1), ("Previous page", n - 1), ("Next page", n + 1),
                                 ("Ten pages on", n + 10), ("Last page", n_pages)):
            target = trap_target(state, section, path(target_n), index) if target_n >= 1 else None
            if target:
                page.links.append(Link(target, anchor))
        page.links += listed
