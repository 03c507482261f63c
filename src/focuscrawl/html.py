"""HTML in and out: recognise and decode a page's bytes, extract title, main text and outlinks, and render
a page from text and links.

Every way a page arrives (a live fetch, a WARC record, a WebKB file) goes through the same sniffer and
decoder here, so the same bytes always become the same text. Both follow what browsers do (the WHATWG
standards), because authors checked their pages in a browser: that is the reading they meant.
Parsing uses selectolax (Lexbor): fast, and as forgiving of broken 1990s HTML as a browser is.
"""

from __future__ import annotations

import codecs
import html as html_lib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree
from selectolax.lexbor import LexborHTMLParser

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

_SPACES = re.compile(r"\s+")
# Navigation is not main text; dropping it also makes rendered pages parse back to their stored text.
_DROP_TAGS = ["script", "style", "noscript", "template", "svg", "nav"]

HTML_TYPES = ("text/html", "application/xhtml+xml")
# Types that may be HTML served carelessly: the bytes decide (``looks_like_html``).
SNIFF_TYPES = ("", "text/plain", "application/octet-stream", "application/x-unknown", "unknown/unknown")

# After whitespace, comments and (for XHTML) an XML prolog, a tag that only HTML starts with: the WHATWG
# sniffing list plus <meta>. A comment may not contain "-->", so that a run of comments parses one way
# only; otherwise a body of many "<!---->" makes the regex backtrack exponentially.
_HTML_START = re.compile(
    rb"\s*(?:<\?xml[^>]*>\s*)?(?:<!--(?:(?!-->).)*-->\s*)*"
    rb"<(?:!doctype\s+html|html|head|body|title|meta|script|style|iframe|h1|div|font|table|a|b|br|p)[\s/>]",
    re.IGNORECASE | re.DOTALL,
)
_SNIFF_BYTES = 1024  # as much as browsers sniff: the start of a document, never a hostile body's all
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_CHARSET_PARAM = rb"""charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)"""
_CHARSET = re.compile(_CHARSET_PARAM, re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+?" + _CHARSET_PARAM, re.IGNORECASE)
# Pages declare their charset late (after long comments or scripts) more often than the WHATWG prescan's
# 1024 bytes allow for; 4096 finds those and costs nothing.
_META_BYTES = 4096
# The encodings browsers know, by the name codecs.lookup gives them, each to the codec to decode with.
# WHATWG decodes several legacy labels as a superset, because pages so labelled use its extra characters
# (curly quotes in "ISO-8859-1" pages, GBK hanzi in "GB2312" ones). Any other label is skipped as
# unknown: misspellings, UTF-7, Python-only codecs such as base64 (which do not decode bytes to text at
# all), and UTF-16/32, which a document whose declaration could be read as ASCII is not in.
_WEB_CODECS = {
    "ascii": "cp1252", "iso8859-1": "cp1252", "iso8859-9": "cp1254", "iso8859-11": "cp874", "tis-620": "cp874",
    "gb2312": "gb18030", "gbk": "gb18030", "euc_kr": "cp949", "shift_jis": "cp932", "big5": "big5hkscs",
    **{name: name for name in (
        "utf-8", "cp866", "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874", "gb18030", "big5hkscs",
        "euc_jp", "iso2022_jp", "cp932", "cp949",
        *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
        *(f"cp{n}" for n in range(1250, 1259)),
    )},
}
# WHATWG windows-1252 decodes the five bytes cp1252 leaves undefined as the C1 controls of the same
# value: the last-resort decoding must take any bytes.
_WINDOWS_1252 = "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in range(256))


def looks_like_html(head: bytes) -> bool:
    """Whether a body is HTML by its first bytes, for bodies served without a specific HTML type."""
    return bool(_HTML_START.match(head[:_SNIFF_BYTES].removeprefix(codecs.BOM_UTF8)))


# Two readings of "is this body HTML", kept apart on purpose. A fetched answer (is_html_body) is sniffed whatever
# its label, since servers mislabel pages, and refused when binary. A stored record (is_html: a WARC's, an archive
# someone else wrote) keeps its label unless the label says nothing (SNIFF_TYPES).
def is_html_body(content_type: str, body: bytes) -> bool:
    """Whether a fetched body is an HTML document: served as HTML, or sniffed as HTML (``looks_like_html``), and not
    binary content mislabelled as HTML. ``content_type`` is the media type alone, lower case (``text/html``)."""
    if not (content_type in HTML_TYPES or looks_like_html(body)):
        return False
    return not (b"\x00" in body[:1024] and not body.startswith((b"\xff\xfe", b"\xfe\xff")))


def is_html(content_type: str, body: bytes) -> bool:
    """Whether a stored body (its media type, without parameters) is an HTML document: by its type, or by its
    first bytes when stored without a specific one."""
    return content_type in HTML_TYPES or (content_type in SNIFF_TYPES and looks_like_html(body))


def decode_html(body: bytes, content_type: str | None = None, *, truncated: bool = False) -> str:
    """The text of an HTML document, decoded as a browser would.

    The encoding is the first of: a byte order mark; the charset of ``content_type`` (a Content-Type
    header value); a ``<meta>`` charset near the start; UTF-8 if the bytes are valid UTF-8; windows-1252.
    ``truncated`` says the body was cut, so that a UTF-8 character cut in two at the end does not send
    the whole document to windows-1252.
    """
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(codec, errors="replace")
    header = _CHARSET.search(content_type.encode("latin-1", errors="replace")) if content_type else None
    # An unknown label in the header is skipped, and the page's own declaration gets its chance.
    codec = _web_codec(header) or _web_codec(_META_CHARSET.search(body[:_META_BYTES]))
    if codec is None:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError as exc:
            if truncated and exc.start >= len(body) - 3:
                return body.decode("utf-8", errors="replace")
            codec = "cp1252"
    if codec == "cp1252":
        return codecs.charmap_decode(body, "strict", _WINDOWS_1252)[0]
    return body.decode(codec, errors="replace")


def _web_codec(match: re.Match[bytes] | None) -> str | None:
    """The codec for a declared charset label, or None where a browser would not use the label."""
    if match is None:
        return None
    try:
        return _WEB_CODECS.get(codecs.lookup(match.group(1).decode("ascii")).name)
    except LookupError:
        return None


def clean_text(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class ParsedHtml:
    """What a crawler reads from an HTML document: title, text, outlinks and the canonical URL it names."""

    title: str
    text: str
    links: list[Link]
    canonical: str | None = None


def parse_document(html: str, base_url: str, max_links: int = 1000, *, main_text: bool = False) -> ParsedHtml:
    """Title, text, outlinks and canonical URL of an HTML document.

    The text is the body minus scripts, styles and navigation, or with ``main_text`` the document's main
    content (``extract_main_text``), falling back to the body's text when none is found. Title and
    outlinks always come from the whole document: a crawler must follow the menu's links too.
    Links are resolved against ``<base href>`` or ``base_url``, normalised, non-http(s) ones dropped,
    duplicates merged (first anchor text wins, as the first occurrence is usually the most visible).
    Links a script would add are not seen: this is a parser, not a browser.
    ``canonical`` is the first ``<link rel="canonical">`` target, resolved and normalised (None without one).
    """
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = clean_text(title_node.text()) if title_node is not None else ""
    base_node = tree.css_first("base[href]")
    base = base_url
    if base_node is not None:
        base = normalize_url(base_node.attributes.get("href") or "", base_url) or base_url
    canonical = None
    for node in tree.css("link[rel][href]"):
        # rel is a list of keywords, compared without case ("Canonical", "canonical alternate")
        if "canonical" in (node.attributes.get("rel") or "").lower().split():
            canonical = normalize_url(node.attributes.get("href") or "", base)
            break
    links: list[Link] = []
    seen: set[str] = set()
    for node in tree.css("a[href], area[href]"):
        url = normalize_url(node.attributes.get("href") or "", base)
        if url is None or url in seen:
            continue
        seen.add(url)
        links.append(Link(url, clean_text(node.text() or node.attributes.get("alt") or "")))
        if len(links) >= max_links:
            break
    text = extract_main_text(html) if main_text else ""
    if not text:
        tree.strip_tags(_DROP_TAGS)
        body = tree.body
        text = clean_text(body.text(separator=" ") if body is not None else tree.text(separator=" "))
    return ParsedHtml(title, text, links, canonical)


# RFC 8288 (Web Linking): each link of a ``Link`` header is ``<target>`` and its ``;``-separated parameters. A
# parameter's quoted value may hold ``;`` or ``,``: the parameters are read as name=value pairs, not split.
_HEADER_LINK = re.compile(r'<([^>]*)>((?:\s*;\s*[A-Za-z0-9!#$&+.^_`|~*-]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)')
_LINK_PARAM = re.compile(r'([A-Za-z0-9!#$&+.^_`|~*-]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;,\s]*))?')


def link_header_canonical(value: str | None, base_url: str) -> str | None:
    """The ``rel="canonical"`` target of an HTTP ``Link`` header (all its values joined with ``,``), resolved
    against ``base_url`` and normalised; None without one, or when it names two. A link with an ``anchor``
    parameter speaks of another resource than the page, so it is not the page's canonical."""
    if not value:
        return None
    found: set[str] = set()
    for match in _HEADER_LINK.finditer(value):
        params = {name.lower(): raw.strip('"') for name, raw in _LINK_PARAM.findall(match.group(2))}
        if "canonical" in params.get("rel", "").lower().split() and "anchor" not in params:
            url = normalize_url(match.group(1), base_url)
            if url is not None:
                found.add(url)
    return found.pop() if len(found) == 1 else None


def page_canonical(in_html: str | None, in_header: str | None) -> str | None:
    """The canonical URL of a page from what its HTML and its ``Link`` header name: either, when only one names
    one or both name the same; None when they disagree (a page that contradicts itself gives no hint)."""
    if in_html is None or in_header is None:
        return in_html or in_header
    return in_html if in_html == in_header else None


def parse_html(html: str, base_url: str, max_links: int = 1000, *, main_text: bool = False
               ) -> tuple[str, str, list[Link]]:
    """Return (title, text, outlinks) of an HTML document: ``parse_document`` without the canonical URL."""
    parsed = parse_document(html, base_url, max_links, main_text=main_text)
    return parsed.title, parsed.text, parsed.links


def extract_main_text(html: str) -> str:
    """The main content of an HTML document as plain text, without menus, headers, footers, cookie banners
    and sidebars: Resiliparse's main-content extraction (chosen against trafilatura and the whole page for its
    speed and its agreement with the page's own text: benchmarks/main_text.py measures both).
    Empty when it finds no main content (tiny pages, frame sets): callers fall back to the whole text."""
    try:
        tree = HTMLTree.parse(html)
        return clean_text(extract_plain_text(tree, main_content=True, alt_texts=False, links=False,
                                             list_bullets=False, noscript=False))
    except (ValueError, RuntimeError):  # a document its parser cannot take: no main text, not a crash
        return ""


def render_html(title: str, text: str, links: Sequence[Link], *, canonical: str | None = None,
                script_links: Sequence[Link] = ()) -> str:
    """Render a page that stores only text and links (Wikispeedia, synthetic webs) as HTML.

    The text becomes paragraphs and the links a navigation list in stored order. ``parse_html`` leaves
    navigation out of the main text, so parsing the rendered page gives back exactly the stored title,
    text (whitespace collapsed) and links: a crawl of a served web sees what the in-process crawl sees.
    Inline links would look more like the original article, but placing them by anchor matching
    reorders links and changes anchor case, and that equality matters more for reproducible benchmarks.
    ``canonical`` adds a ``<link rel="canonical">``; ``script_links`` are written by a script
    (``script_links_tag``), so only a crawler that runs scripts sees them.
    """
    esc = html_lib.escape
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    body = "".join(f"<p>{esc(clean_text(p))}</p>" for p in paragraphs)
    head = canonical_tag(canonical) if canonical else ""
    return (
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{esc(title)}</title>{head}</head>"
        f"<body><main>{body}</main>{links_nav(links)}{script_links_tag(script_links)}</body></html>"
    )


def links_nav(links: Sequence[Link]) -> str:
    """Links as a navigation list: parsed as outlinks in this order, and left out of the page's text."""
    esc = html_lib.escape
    items = "".join(f'<li><a href="{esc(link.url, quote=True)}">{esc(link.anchor)}</a></li>' for link in links)
    return f"<nav><ul>{items}</ul></nav>" if items else ""


def canonical_tag(url: str) -> str:
    return f'<link rel="canonical" href="{html_lib.escape(url, quote=True)}">'


def script_links_tag(links: Sequence[Link]) -> str:
    """A script that adds ``links`` to the page when run, as sites whose menus are built in JavaScript do.

    An HTML parser sees a script, not links: the links exist only for a crawler that runs the page. Every
    ``<`` in the data is written as ``\\u003c``, so no URL or anchor can close the script early.
    """
    if not links:
        return ""
    data = json.dumps([[link.url, link.anchor] for link in links], ensure_ascii=True).replace("<", "\\u003c")
    return ("<script>(function(){var nav=document.createElement('nav');"
            f"{data}.forEach(function(l){{var a=document.createElement('a');a.href=l[0];a.textContent=l[1];"
            "nav.appendChild(a);});document.body.appendChild(nav);})();</script>")


_HEAD_OPEN = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
_BODY_OPEN = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
_BODY_CLOSE = re.compile(r"</body\s*>", re.IGNORECASE)


def insert_html(html: str, *, head: str = "", body_start: str = "", body_end: str = "") -> str:
    """``html`` with markup added at the start of its head, the start of its body and the end of its body.

    String insertion, not a parse and re-serialisation, so a stored document keeps every byte it had. A
    document without the tag gets the markup where a browser would put it: head at the start, body start
    after the head (or at the start), body end at the end.
    """
    if head:
        match = _HEAD_OPEN.search(html)
        at = match.end() if match else 0
        html = html[:at] + head + html[at:]
    if body_start:
        match = _BODY_OPEN.search(html)
        if match:
            at = match.end()
        else:
            head_close = re.search(r"</head\s*>", html, re.IGNORECASE)
            at = head_close.end() if head_close else 0
        html = html[:at] + body_start + html[at:]
    if body_end:
        closes = list(_BODY_CLOSE.finditer(html))
        at = closes[-1].start() if closes else len(html)
        html = html[:at] + body_end + html[at:]
    return html


def rewrite_links(html: str, base_url: str, target: Callable[[str], str | None]) -> str:
    """``html`` with every link's target replaced by ``target(its normalised URL)``.

    New targets are written absolute, so the document reads the same from any address (a copy of a page
    at another URL keeps its links); ``None`` removes the link's ``href``: the element and its text stay
    (so the text reads as before), the link goes. Links ``parse_html`` would not follow (``mailto:``,
    unusable URLs) are left alone.
    """
    tree = LexborHTMLParser(html)
    base_node = tree.css_first("base[href]")
    base = base_url
    if base_node is not None:
        base = normalize_url(base_node.attributes.get("href") or "", base_url) or base_url
    for node in tree.css("a[href], area[href]"):
        url = normalize_url(node.attributes.get("href") or "", base)
        if url is None:
            continue
        new = target(url)
        if new is None:
            del node.attrs["href"]
        elif node.attributes.get("href") != new:
            node.attrs["href"] = new
    return tree.html or ""
