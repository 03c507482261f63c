"""View parameters: the query parameters of a listing that sort or filter what it lists, learned from its pages.

A listing answers under many queries: ``items?sort=price``, ``items?colour=red``, ``items?colour=red&sort=date``.
Each such view is a new URL and a new page, but it lists what another view of the same listing lists, reordered or
a part of it: a faceted search multiplies a few hundred records into as many views as there are combinations of
facet values and sort orders. What tells such a parameter from one that names a record (``?id=17``,
``showthread.php?t=17``) or a page of the listing (``?page=3``) is what its views link to: two fetched views of one
listing (host and path) whose queries differ in one parameter, where the links of one that leave the listing (its
records, not its other views) are the same as the other's or a part of them, show that parameter to change the
order or the filter of what is listed, not what there is (the records of page 3 are not those of page 2; those of
``id=17`` are not those of ``id=18``). A link whose query repeats a value of the view's own (its export as JSON,
its query as SQL) echoes the view, not what it lists, and is left out. After ``support`` such pairs the parameter
is a *view parameter* of that listing, and a URL of the listing whose query, without its view parameters, is a
URL the crawl knows is a *view variant*, and so is one whose listing's bare URL (no query) is known: what it
lists, the listing lists, in pages of its own (``?page=3`` or a cursor, which is never a view parameter). It is
refused before it costs a fetch (``TrapPatterns.refuse``). A listing whose links echo a view's values
(``pages.json?colour=red`` on the view ``pages?colour=red``: its export) takes the view parameters of the listing
it echoes.

Each listing keeps the link sets of its last ``_KEPT`` views (CRC-32s of the URLs): a bounded memory per listing,
and the pairs a crawl meets are mostly among views fetched close together (a view and the views it links to).
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from focuscrawl.urls import normalize_url

_KEPT = 32  # views remembered per listing
_MAX_ECHOES = 1 << 16  # listings remembered as echoes of others: a bound on memory
_MIN_LINKS = 3  # a view listing fewer records than this shows nothing (an empty filter is a subset of everything)


def listing_of(url: str) -> str:
    """A URL's listing: its host and path (the query left out)."""
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path}"


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def _one_apart(a: dict[str, str], b: dict[str, str]) -> str | None:
    """The one parameter two queries differ in (present in one only, or with another value), or None."""
    differ = [key for key in a.keys() | b.keys() if a.get(key) != b.get(key)]
    return differ[0] if len(differ) == 1 else None


class ViewParameters:
    """The views fetched of each listing with their links, the support each parameter has, and those in use."""

    def __init__(self, support: int):
        self.support = support
        self.views: dict[str, list[tuple[dict[str, str], frozenset[int]]]] = {}
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.params: dict[str, set[str]] = {}  # listing -> its view parameters
        self.echoes: dict[str, str] = {}  # a listing that echoes another's views (its export) -> that listing

    def observe(self, url: str, links: Iterable[str]) -> str | None:
        """Count what a fetched page of a listing shows (``links``: all its outlinks, fetched or not); the listing
        when that puts a new view parameter in use. A page is a view when its URL has a query, or when it links to
        views of its own path (the listing's bare form): other pages are not kept."""
        links = list(links)
        listing = listing_of(url)
        if "?" not in url and not any(f"//{listing}?" in link for link in links):
            return None  # neither a view nor a listing linking to its views: most pages, read no further
        query = _query(url)
        values = {value for value in query.values() if value}
        found = set()
        for link in links:
            if listing_of(link) == listing:
                continue
            if "?" not in link or values.isdisjoint(_query(link).values()):
                found.add(zlib.crc32(link.encode()))
            elif query and len(self.echoes) < _MAX_ECHOES:
                self.echoes.setdefault(listing_of(link), listing)
        records = frozenset(found)
        learned = None
        kept = self.views.setdefault(listing, [])
        if len(records) >= _MIN_LINKS:
            for other_query, other in kept:
                key = _one_apart(query, other_query)
                if key is None or len(other) < _MIN_LINKS or not (records <= other or other <= records):
                    continue
                if key in self.params.get(listing, ()):
                    continue
                self.pairs[listing, key] += 1
                if self.pairs[listing, key] >= self.support:
                    self.params.setdefault(listing, set()).add(key)
                    learned = listing
        kept.append((query, records))
        del kept[:-_KEPT]
        return learned

    def base_of(self, url: str) -> tuple[str, str] | None:
        """``url`` without its listing's view parameters, and its listing's bare URL (no query), when it has view
        parameters; else None. A listing that echoes another's views (``pages.json`` of ``pages``) has its
        view parameters."""
        if not self.params or "?" not in url:
            return None
        listing = listing_of(url)
        params = self.params.get(listing) or self.params.get(self.echoes.get(listing, ""))
        if not params:
            return None
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if k not in params]
        if len(kept) == len(pairs):
            return None
        base = normalize_url(urlunsplit(parts._replace(query=urlencode(kept))))
        return base or url, urlunsplit(parts._replace(query=""))
