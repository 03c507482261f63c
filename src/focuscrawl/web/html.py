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
_DROP_TAGS = ["script", "style", "noscript", "template", "svg"]


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

    The first occurrence of a link's anchor text in a paragraph becomes the link, as in the original
    article; links whose anchor never occurs go to a list at the end, so that every stored link is on
    the page exactly once and ``parse_html(render_html(...))`` gives back the same links.
    """
    esc = html_lib.escape
    remaining = {link.url: link for link in links}
    placed: list[str] = []
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()] or [text]
    out_paragraphs = []
    for paragraph in paragraphs:
        chunk = esc(clean_text(paragraph))
        for url, link in list(remaining.items()):
            anchor = esc(link.anchor)
            if len(anchor) < 3:
                continue
            match = re.search(r"(?<![\w>])" + re.escape(anchor) + r"(?![\w<])", chunk, flags=re.IGNORECASE)
            if match is None:
                continue
            # Do not place a link inside an existing tag or anchor.
            before = chunk[: match.start()]
            if before.count("<a ") != before.count("</a>") or before.rfind("<") > before.rfind(">"):
                continue
            chunk = f'{before}<a href="{esc(url, quote=True)}">{match.group(0)}</a>{chunk[match.end():]}'
            placed.append(url)
            del remaining[url]
        out_paragraphs.append(f"<p>{chunk}</p>")
    extra = "".join(
        f'<li><a href="{esc(link.url, quote=True)}">{esc(link.anchor)}</a></li>' for link in remaining.values()
    )
    see_also = f"<h2>Links</h2><ul>{extra}</ul>" if extra else ""
    return (
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{esc(title)}</title></head>"
        f"<body><h1>{esc(title)}</h1>{''.join(out_paragraphs)}{see_also}</body></html>"
    )
