"""Faceted search: every combination of facet values and sort orders is a page linking to its neighbours."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from focuscrawl.types import Link
from focuscrawl.webs.mess.state import MessState, Section
from focuscrawl.webs.mess.traps import materialise, url_slug

FACETS = (("year", tuple(str(year) for year in range(2001, 2009))),
          ("type", ("article", "report", "review", "guide", "news", "photo", "video", "list")),
          ("region", ("europe", "asia", "africa", "americas", "oceania", "north", "south", "central")),
          ("format", ("html", "pdf", "print", "text", "slides", "audio", "map", "table")),
          ("language", ("en", "fr", "de", "es", "it", "nl", "pt", "sv")),
          ("level", ("1", "2", "3", "4", "5", "6", "7", "8")))
SORTS = ("relevance", "date", "title", "popularity")


@dataclass(frozen=True)
class _Grid:
    """A section's combinations: one value index per facet (0: any) and a sort index. A combination's
    position in the section is its number in that mixed radix, so neighbouring positions differ in the last
    facets only."""

    facets: list[tuple[str, tuple[str, ...]]]
    sorts: tuple[str, ...]
    base: str  # the search page's path

    @property
    def radix(self) -> list[int]:
        return [len(values) + 1 for _, values in self.facets] + [len(self.sorts)]

    def combo(self, i: int) -> list[int]:
        digits = []
        for r in reversed(self.radix):
            digits.append(i % r)
            i //= r
        return digits[::-1]

    def position(self, digits: Sequence[int]) -> int:
        i = 0
        for d, r in zip(digits, self.radix):
            i = i * r + d
        return i

    def path(self, digits: Sequence[int]) -> str:
        params = [f"{name}={values[d - 1]}" for (name, values), d in zip(self.facets, digits) if d]
        if digits[-1]:
            params.append(f"sort={self.sorts[digits[-1]]}")
        return self.base + ("?" + "&".join(params) if params else "")

    def neighbours(self, digits: Sequence[int]) -> list[tuple[int, str]]:
        """The positions one facet value or the sort order away from ``digits``, with their anchors."""
        out = []
        for f, (name, values) in enumerate(self.facets):
            for d in range(len(values) + 1):
                if d != digits[f]:
                    other = list(digits)
                    other[f] = d
                    out.append((self.position(other), f"{name}: {values[d - 1]}" if d else f"any {name}"))
        for s, sort in enumerate(self.sorts):
            if s != digits[-1]:
                out.append((self.position([*digits[:-1], s]), f"sort by {sort}"))
        return out


def build_facet(state: MessState, section: Section) -> None:
    """Every combination of the section's facets and sort orders, as a page."""
    options = state.profile.facet
    rng = state.rng("facet", section.index, section.host)
    base = rng.choice(("/search", "/catalogue/", "/browse/{slug}/")).format(
        slug=url_slug(state.originals[section.entries[0]].title))
    grid = _Grid([(name, values[:options.values]) for name, values in FACETS[:options.facets]],
                 SORTS[:options.sorts], base)
    materialise(state, section, [grid.path(grid.combo(i)) for i in range(options.pages)])
    for i, url in enumerate(section.urls):
        if url:
            _fill_facet_page(state, section, grid, i, url)


def _fill_facet_page(state: MessState, section: Section, grid: _Grid, i: int, url: str) -> None:
    """The i-th combination's page: results from its entry's neighbourhood, links to its neighbours."""
    digits = grid.combo(i)
    entry = section.entry_of(i)
    page = state.pages[url]
    title = state.originals[entry].title or "Catalogue"
    chosen = [f"{name} {values[d - 1]}" for (name, values), d in zip(grid.facets, digits) if d]
    items = state.neighbourhood(entry)
    first = int(state.unit("facet", "items", url) * len(items))
    listed = [items[(first + 3 * k) % len(items)] for k in range(min(state.profile.facet.items, len(items)))]
    listed = list(dict.fromkeys(listed))
    snippets = " ".join(f"{link.anchor}: {state.lead(link.url)}" for link in listed)
    page.title = f"{title}: {', '.join(chosen) or 'all results'}"
    page.text = (f"{len(listed)} results for {title}" + (f", {', '.join(chosen)}" if chosen else "")
                 + f", sorted by {grid.sorts[digits[-1]]}.\n\n{snippets}")
    for position, anchor in grid.neighbours(digits):
        target = section.urls[position]
        if target:
            page.links.append(Link(target, anchor))
    page.links += listed
