"""What an HTTP answer becomes: a ``Page`` from its body, its Content-Encoding undone within bounds, its Retry-After
read. The HTTP fetcher builds its pages here, and so does anything else that fetched the bytes itself (Scrapy)."""

from __future__ import annotations

import email.utils
import time
import zlib

from focuscrawl.html import decode_html, is_html_body, link_header_canonical, page_canonical, parse_document
from focuscrawl.http.safety import is_trap_url
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import Link, Page


def followable(links: list[Link], config: FetchConfig) -> list[Link]:
    """The links a crawl may follow: ``parse_html``'s are normalised (http(s), bounded length), so only overlong
    URLs and traps remain to drop."""
    return [link for link in links if len(link.url) <= config.max_url_length and not is_trap_url(
        link.url, max_segment_repeats=config.trap_max_segment_repeats, max_depth=config.trap_max_depth)]


def page_from_body(url: str, final_url: str, status: int, content_type_header: str | None, body: bytes,
                   config: FetchConfig, *, is_html: bool | None = None, truncated: bool = False,
                   error: str = "", link_header: str | None = None) -> Page:
    """The Page of one answer to ``url``: its title, text, followable outlinks and canonical URL when it is a 2xx
    HTML document, decoded and parsed as every fetch here is. ``final_url`` is the URL that answered (after
    redirects), ``content_type_header`` the answer's Content-Type, ``link_header`` its Link headers (joined with
    ``,``: a ``rel="canonical"`` there counts as the HTML's does); ``is_html`` None decides by the body.
    The HTTP fetcher builds its pages here, and so does anything else that fetched the bytes itself (Scrapy)."""
    content_type = (content_type_header or "").split(";", 1)[0].strip().lower()
    page = Page(url=url, final_url=final_url, status=status, content_type=content_type, error=error)
    if is_html is None:
        is_html = is_html_body(content_type, body)
    if 200 <= status < 300 and is_html:
        document = decode_html(body, content_type_header, truncated=truncated)
        try:
            parsed = parse_document(document, final_url, max_links=config.max_outlinks, main_text=config.main_text)
            title, text, links, canonical = parsed.title, parsed.text, parsed.links, parsed.canonical
        except Exception as exc:  # noqa: BLE001 - a page the parser cannot take is a failed page, not a crash
            title, text, links, canonical = "", "", [], None
            page.error = f"unparseable HTML: {type(exc).__name__}"
        page.title, page.text = title, text
        page.canonical = page_canonical(canonical, link_header_canonical(link_header, final_url))
        page.outlinks = followable(links, config)
        if config.keep_html:
            page.html = document
    elif 200 <= status < 300 and not page.error:
        page.error = f"not HTML ({content_type or 'no content type'})"
    if truncated and not page.error:
        page.error = f"body cut at {config.max_body_bytes} bytes"
    return page


class ContentDecoder:
    """Undoes Content-Encoding incrementally, never producing more than asked (decompression bombs)."""

    def __init__(self, encoding: str):
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._z = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            self._z = zlib.decompressobj(47 if encoding != "deflate" else zlib.MAX_WBITS)
            self._deflate = encoding == "deflate"
            self._started = False
        else:
            raise ValueError(f"unsupported content encoding {encoding!r}")
        self.unconsumed = False

    def feed(self, chunk: bytes, limit: int) -> bytes:
        if self._z is None:
            return chunk[:limit] if len(chunk) > limit else chunk
        try:
            data = self._z.decompress(chunk, limit)
        except zlib.error:
            if not (self._deflate and not self._started):
                raise ValueError("corrupt compressed body") from None
            # Some servers send raw deflate without the zlib header the RFC asks for.
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
            data = self._z.decompress(chunk, limit)
        self._started = True
        self.unconsumed = bool(self._z.unconsumed_tail)
        return data

    def flush(self, limit: int) -> bytes:
        if self._z is None:
            return b""
        try:
            return self._z.decompress(b"", limit) if self._z.unconsumed_tail else self._z.flush()[:limit]
        except zlib.error:
            return b""


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds from now: either a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
