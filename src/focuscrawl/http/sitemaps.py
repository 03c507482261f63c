"""Sitemaps (https://www.sitemaps.org/protocol.html): the pages a site lists, read through the crawler's own client.

    async with HttpFetcher(FetchConfig()) as fetcher:
        found = await read_sitemaps(fetcher, "https://example.org/")   # robots.txt's Sitemap: lines, or /sitemap.xml
        found = await read_sitemaps(fetcher, ["https://example.org/sitemap_index.xml.gz"])
    found.urls        # normalised, deduplicated, in the order the files list them
    found.problems    # one line each: a 404, malformed XML, a cap reached, URLs of other sites dropped

    found = sitemap_urls(["https://example.org/"], FetchConfig())       # the same, synchronously

What a URL names: a site (its path empty or ``/``): the sitemaps its robots.txt names in ``Sitemap:`` lines, else
``/sitemap.xml``; a ``robots.txt``: the sitemaps it names; anything else: a sitemap. A sitemap is an XML ``urlset``,
a sitemap index (``sitemapindex``, whose sitemaps are read in turn) or a text file of URLs, one a line; gzipped or
not, told by its first bytes (gzip's magic number), not by its name or its Content-Type, as Scrapy's SitemapSpider
does. Elements are matched by local name, whatever their namespace (Scrapy's ``scrapy/utils/sitemap.py``): the
``<loc>`` of each ``<url>`` or ``<sitemap>`` child of the root, and with ``alternates`` the ``href`` of its
``<xhtml:link rel="alternate">`` (other languages of the page).

Every request is the fetcher's (``HttpFetcher.fetch_document``): robots.txt obeyed, the address guard, the host's
politeness. What a hostile file can cost is bounded: the XML parser is defusedxml's (no entity declarations, so no
billion laughs and no external entities), fed 64 KiB at a time from a reader that gunzips at most
``sitemap_max_bytes`` (so a gzip bomb stops there), and it builds no tree: it keeps the entries' URLs and no other
text, so memory stays constant whatever the file holds.
One file gives at most the protocol's 50,000 URLs (or ``sitemap_max_urls``); a site (or one URL asked for) at most
``sitemap_max_urls`` in all, from at most ``sitemap_max_files`` files, through at most ``sitemap_max_depth`` levels
of indexes. A cap reached is a problem line, and what was read before it is kept.

A sitemap lists its own site's pages (host, ``www.`` aside; its path prefix is not enforced, as search engines no
longer do): other sites' URLs are dropped, unless the robots.txt that named the sitemap is theirs (the protocol's
cross-submission).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS, FetchConfig
from focuscrawl.urls import normalize_url, site_of

GZIP_MAGIC = b"\x1f\x8b"
KINDS = {"urlset": "url", "sitemapindex": "sitemap"}  # root element -> its entries' element
_CHUNK = 64 * 1024
MAX_LOC_LENGTH = 8192  # characters of one <loc> kept (a URL is at most 2,048: the rest is junk)


class SitemapError(ValueError):
    """A body that gives no sitemap: not one, malformed before its first entry, or refused."""


@dataclass(slots=True)
class SitemapFile:
    """One sitemap file as parsed: ``kind`` urlset, sitemapindex or text, its ``locs`` as written, and ``problem``,
    one line, when it was read only in part (a cap, a malformed end)."""

    kind: str
    locs: list[str]
    problem: str | None = None


@dataclass
class SitemapResult:
    """What sitemaps gave: ``urls`` (pages, normalised and deduplicated), the sitemap files read, one line per
    problem, and ``notes`` (a site without a sitemap: not a problem when looking for one)."""

    urls: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set, repr=False)

    def add(self, url: str) -> None:
        if url not in self._seen:
            self._seen.add(url)
            self.urls.append(url)


# -- parsing ----------------------------------------------------------------------------------------------------
class _BoundedBody:
    """A body as a file the parser reads: gunzipped if it is gzip, never more than ``limit`` bytes of it (a gzip
    bomb costs one chunk of memory at a time). ``cut`` says whether there was more."""

    def __init__(self, body: bytes, limit: int, cut: bool = False):
        self._body, self._pos, self.limit = body, 0, limit
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS) if body[:2] == GZIP_MAGIC else None
        self._pending = b""
        self.produced = 0
        self.cut = cut
        self.gzip_short = False  # the gzip stream ended before its end (a body cut in transit)

    def read(self, size: int = -1) -> bytes:
        room = self.limit - self.produced
        want = min(_CHUNK if size is None or size < 0 else size, room)
        data = self._next(want) if want > 0 else b""
        if not data and room <= 0 and self._more():
            self.cut = True
        self.produced += len(data)
        return data

    def _next(self, want: int) -> bytes:
        if self._z is None:
            data = self._body[self._pos:self._pos + want]
            self._pos += len(data)
            return data
        try:
            while True:
                if self._z.unconsumed_tail:
                    data = self._z.decompress(self._z.unconsumed_tail, want)
                elif self._pos < len(self._body) and not self._z.eof:
                    chunk = self._body[self._pos:self._pos + _CHUNK]
                    self._pos += len(chunk)
                    data = self._z.decompress(chunk, want)
                else:
                    self.gzip_short = not self._z.eof
                    return b""
                if data:
                    return data
        except zlib.error as exc:
            raise SitemapError(f"corrupt gzip ({exc})") from None

    def _more(self) -> bool:
        if self._z is None:
            return self._pos < len(self._body)
        return bool(self._z.unconsumed_tail) or (self._pos < len(self._body) and not self._z.eof)

    def describe(self, exc: Exception) -> str:
        return f"{exc}; the gzip stream is cut short" if self.gzip_short else str(exc)

    def peek_start(self) -> bytes:
        """The first non-blank bytes (after a byte order mark), read ahead and given back by the next ``read``."""
        head = self.read(1024)
        self._pending = head
        return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]


class _Replaying:
    """``_BoundedBody`` with its peeked bytes first."""

    def __init__(self, body: _BoundedBody):
        self.body = body

    def read(self, size: int = -1) -> bytes:
        if self.body._pending:
            data, self.body._pending = self.body._pending, b""
            return data
        return self.body.read(size)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


class _Full(Exception):
    """Raised by ``_SitemapTarget`` to stop the parser at the entries' cap."""


class _SitemapTarget:
    """What the XML parser tells (start, data, end) kept as the file's entries: the ``<loc>`` of each ``<url>`` or
    ``<sitemap>`` child of the root (its direct child: an image's loc is not the page's) and, with ``alternates``,
    its ``<xhtml:link rel="alternate" href>``. No other text is kept, so memory stays the same whatever the file
    holds (megabytes of blanks between entries included)."""

    def __init__(self, max_urls: int, alternates: bool):
        self.max_urls, self.alternates = max_urls, alternates
        self.sitemap: SitemapFile | None = None
        self.entries = 0
        self._depth = 0
        self._entry: list[str] | None = None  # the current entry's alternates
        self._loc: str | None = None
        self._text: list[str] | None = None  # the text of the current <loc>
        self._text_size = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self._depth += 1
        name = _local(tag)
        if self._depth == 1:
            if name not in KINDS:
                raise SitemapError(f"not a sitemap (its root element is <{name}>)")
            self.sitemap = SitemapFile(name, [])
        elif self._depth == 2 and name == KINDS[self.sitemap.kind]:
            self._entry, self._loc = [], None
        elif self._depth == 3 and self._entry is not None:
            if name == "loc" and self._loc is None:
                self._text, self._text_size = [], 0
            elif self.alternates and name == "link" and attrib.get("rel", "alternate") == "alternate":
                href = attrib.get("href", "").strip()
                if href:
                    self._entry.append(href)

    def data(self, text: str) -> None:
        if self._text is not None and self._text_size <= MAX_LOC_LENGTH:
            self._text.append(text)
            self._text_size += len(text)

    def end(self, tag: str) -> None:
        if self._depth == 3 and self._text is not None:
            self._loc = "".join(self._text).strip() or None
            self._text = None
        elif self._depth == 2 and self._entry is not None:
            if self._loc is not None:
                if self.entries == self.max_urls:
                    raise _Full
                self.entries += 1
                self.sitemap.locs.extend([self._loc, *self._entry])
            self._entry = None
        self._depth -= 1

    def close(self) -> None:
        return None


def _parse_xml(reader: _BoundedBody, max_urls: int, alternates: bool) -> SitemapFile:
    target = _SitemapTarget(max_urls, alternates)
    source = _Replaying(reader)
    parser = DefusedXMLParser(target=target)
    try:
        while chunk := source.read(_CHUNK):
            parser.feed(chunk)
        parser.close()
    except _Full:
        target.sitemap.problem = f"more than {max_urls:,} entries: the first {max_urls:,} read"
    except ParseError as exc:
        read = target.entries
        if not read:
            raise SitemapError(f"cut at {reader.limit:,} bytes, before its first entry" if reader.cut
                               else f"malformed XML ({reader.describe(exc)})") from None
        target.sitemap.problem = (f"cut at {reader.limit:,} bytes: {read:,} entries read" if reader.cut
                                  else f"malformed XML ({reader.describe(exc)}): {read:,} entries read before it")
    except DefusedXmlException as exc:
        raise SitemapError(f"refused XML: {type(exc).__name__} (a sitemap declares no entities)") from None
    if target.sitemap is None:
        raise SitemapError("empty")
    return target.sitemap


def _parse_text(reader: _BoundedBody, max_urls: int) -> SitemapFile:
    """A text sitemap: one URL a line, nothing else (the protocol's third format)."""
    sitemap = SitemapFile("text", [])
    source = _Replaying(reader)
    rest = b""
    while True:
        chunk = source.read(_CHUNK)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop() if chunk else b""
        for line in lines:
            url = line.strip().removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
            if not url:
                continue
            if not url.lower().startswith(("http://", "https://")):
                raise SitemapError("not a sitemap (neither XML nor one URL a line)")
            if len(sitemap.locs) == max_urls:
                sitemap.problem = f"more than {max_urls:,} URLs: the first {max_urls:,} read"
                return sitemap
            sitemap.locs.append(url)
        if not chunk:
            break
    if reader.cut:
        sitemap.problem = f"cut at {reader.limit:,} bytes: {len(sitemap.locs):,} URLs read"
    if not sitemap.locs:
        raise SitemapError("empty")
    return sitemap


def parse_sitemap(body: bytes, *, max_urls: int = SITEMAP_MAX_URLS, max_bytes: int = SITEMAP_MAX_BYTES,
                  alternates: bool = False, truncated: bool = False) -> SitemapFile:
    """One sitemap file's entries: a urlset, a sitemap index or a text sitemap, gzipped or not, read up to
    ``max_bytes`` uncompressed and ``max_urls`` entries (``truncated``: ``body`` was cut at ``max_bytes`` already,
    in transit). Raises ``SitemapError`` (one line) for a body that gives none; a file read in part keeps what it
    gave, with its ``problem``."""
    reader = _BoundedBody(body, max_bytes, truncated)
    start = reader.peek_start()
    if not start:
        raise SitemapError("gzip stream cut short" if reader.gzip_short else "empty")
    if start == b"<":
        return _parse_xml(reader, max_urls, alternates)
    return _parse_text(reader, max_urls)


# -- fetching ---------------------------------------------------------------------------------------------------
@dataclass
class _Reading:
    """One URL's reading: the fetcher, the settings, what was found so far."""

    fetcher: HttpFetcher
    found: SitemapResult
    alternates: bool
    files_read: int = 0
    urls_read: int = 0
    full: bool = False

    @property
    def config(self) -> FetchConfig:
        return self.fetcher.config

    async def site(self, origin: str) -> None:
        """A site's sitemaps: those its robots.txt names, else /sitemap.xml."""
        named = await robots_sitemaps(self.fetcher, origin)
        if named:
            for url in named:  # cross-submission: this site's robots.txt vouches for them
                await self.file(url, {site_of(url), site_of(origin)}, 0)
        else:
            await self.file(f"{origin}/sitemap.xml", {site_of(origin)}, 0, fallback=True)

    async def file(self, url: str, sites: set[str], depth: int, *, fallback: bool = False) -> None:
        """Read the sitemap ``url``, keeping its URLs of ``sites``; a sitemap index's sitemaps in turn."""
        cfg, found = self.config, self.found
        if self.full or url in found.files:
            return
        if self.files_read >= cfg.sitemap_max_files:
            found.problems.append(f"sitemap {url}: not read, {cfg.sitemap_max_files} files read already "
                                  "(fetch.sitemap_max_files)")
            self.full = True
            return
        self.files_read += 1
        found.files.append(url)
        result = await self.fetcher.fetch_document(url, cfg.sitemap_max_bytes)
        page = result.page
        if not 200 <= page.status < 300:
            line = f"sitemap {url}: {page.error or f'HTTP {page.status}'}"
            (found.notes if fallback and page.status in (404, 410) else found.problems).append(line)
            return
        try:
            sitemap = parse_sitemap(result.body, max_urls=min(SITEMAP_MAX_URLS, cfg.sitemap_max_urls),
                                    max_bytes=cfg.sitemap_max_bytes, alternates=self.alternates,
                                    truncated=result.truncated)
        except SitemapError as exc:
            found.problems.append(f"sitemap {url}: {exc}")
            return
        if sitemap.problem:
            found.problems.append(f"sitemap {url}: {sitemap.problem}")
        elif result.truncated:
            found.problems.append(f"sitemap {url}: cut at {cfg.sitemap_max_bytes:,} bytes")
        await self._entries(url, page.final_url or url, sitemap, sites, depth)

    async def _entries(self, url: str, base: str, sitemap: SitemapFile, sites: set[str], depth: int) -> None:
        cfg, found = self.config, self.found
        if sitemap.kind == "sitemapindex" and depth >= cfg.sitemap_max_depth:
            found.problems.append(f"sitemap {url}: an index {depth + 1} deep, not followed (fetch.sitemap_max_depth)")
            return
        sites = sites | {site_of(base)}
        dropped = 0
        for loc in sitemap.locs:
            target = normalize_url(loc, base)
            if target is None or site_of(target) not in sites:
                dropped += 1
            elif sitemap.kind == "sitemapindex":
                await self.file(target, sites, depth + 1)
            elif self.urls_read >= cfg.sitemap_max_urls:
                found.problems.append(f"sitemap {url}: {cfg.sitemap_max_urls:,} URLs read, the rest left "
                                      "(fetch.sitemap_max_urls)")
                self.full = True
                break
            else:
                self.urls_read += 1
                found.add(target)
        if dropped:
            found.problems.append(f"sitemap {url}: {dropped:,} entries dropped (not http(s) URLs of its own site)")


async def robots_sitemaps(fetcher: HttpFetcher, origin: str) -> list[str]:
    """The sitemaps the robots.txt of ``origin`` (scheme://host[:port]) names in ``Sitemap:`` lines, normalised."""
    rules = await fetcher.robots.rules(f"{origin}/")
    named = list(rules.parser.sitemaps) if rules.parser is not None else []
    return list(dict.fromkeys(u for s in named if (u := normalize_url(s, f"{origin}/robots.txt")) is not None))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def read_sitemaps(fetcher: HttpFetcher, urls: str | Iterable[str], *, alternates: bool = False) -> SitemapResult:
    """The page URLs that ``urls`` (sites, robots.txt files or sitemaps: see the module) list, read with
    ``fetcher``. Each URL has its own caps (``fetcher.config.sitemap_max_*``)."""
    found = SitemapResult()
    for url in [urls] if isinstance(urls, str) else urls:
        target = normalize_url(url)
        if target is None:
            found.problems.append(f"sitemap {url}: not an http(s) URL")
            continue
        reading = _Reading(fetcher, found, alternates)
        path = urlsplit(target).path
        if path in ("", "/"):
            await reading.site(origin_of(target))
        elif path.endswith("/robots.txt"):
            for named in await robots_sitemaps(fetcher, origin_of(target)):
                await reading.file(named, {site_of(named), site_of(target)}, 0)
        else:
            await reading.file(target, {site_of(target)}, 0)
    return found


async def site_sitemap_urls(fetcher: HttpFetcher, page_url: str) -> SitemapResult:
    """The pages the sitemaps of ``page_url``'s site list (its robots.txt's, else its /sitemap.xml)."""
    found = SitemapResult()
    await _Reading(fetcher, found, alternates=False).site(origin_of(page_url))
    return found


def sitemap_urls(urls: str | Iterable[str], config: FetchConfig | None = None, *,
                 alternates: bool = False) -> SitemapResult:
    """``read_sitemaps`` synchronously, with a fetcher of its own made from ``config``."""

    async def main() -> SitemapResult:
        async with HttpFetcher(config) as fetcher:
            return await read_sitemaps(fetcher, urls, alternates=alternates)

    return asyncio.run(main())
