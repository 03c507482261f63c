"""HTML in and out: extract title, main text and outlinks from a page; render a page from text and links.

Parsing uses selectolax (Lexbor): fast, and as forgiving of broken 1990s HTML as a browser is.
"""

from __future__ import annotations

import html as html_lib
import re

from selectolax.lexbor import LexborHTMLParser

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

_SPACES = re.compile(r"\s+")
# Navigation is not main text; dropping it also makes rendered pages parse back to their stored text.
_DROP_TAGS = ["script", "style", "noscript", "template", "svg", "nav"]


def clean_text(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def parse_html(html: str, base_url: str, max_links: int = 1000) -> tuple[str, str, list[Link]]:
    """Return (title, text, outlinks) of an HTML document.

    Links are resolved against ``<base href>`` or ``base_url``, normalised, non-http(s) ones dropped,
    duplicates merged (first anchor text wins, as the first occurrence is usually the most visible).
    """
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = clean_text(title_node.text()) if title_node is not None else ""
    base_node = tree.css_first("base[href]")
    base = base_url
    if base_node is not None:
        base = normalize_url(base_node.attributes.get("href") or "", base_url) or base_url
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
    tree.strip_tags(_DROP_TAGS)
    body = tree.body
    text = clean_text(body.text(separator=" ") if body is not None else tree.text(separator=" "))
    return title, text, links


def render_html(title: str, text: str, links: list[Link]) -> str:
    """Render a page that stores only text and links (Wikispeedia, synthetic webs) as HTML.

    The text becomes paragraphs and the links a navigation list in stored order. ``parse_html`` leaves
    navigation out of the main text, so parsing the rendered page gives back exactly the stored title,
    text (whitespace collapsed) and links: a crawl of a served web sees what the in-process crawl sees.
    Inline links would look more like the original article, but placing them by anchor matching
    reorders links and changes anchor case, and that equality matters more for reproducible benchmarks.
    """
    esc = html_lib.escape
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    body = "".join(f"<p>{esc(clean_text(p))}</p>" for p in paragraphs)
    items = "".join(f'<li><a href="{esc(link.url, quote=True)}">{esc(link.anchor)}</a></li>' for link in links)
    nav = f"<nav><ul>{items}</ul></nav>" if items else ""
    return (
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{esc(title)}</title></head>"
        f"<body><main>{body}</main>{nav}</body></html>"
    )
