"""Writing the planned messy web: WEB's rows first (they keep their ids), then the pages made, then the
injected URLs without a page; a page's stored HTML is kept when it parses back to the page's links."""

from __future__ import annotations

import html as html_lib

from focuscrawl.html import clean_text, insert_html, links_nav, parse_document, rewrite_links
from focuscrawl.types import Link
from focuscrawl.webs.mess.copies import copy_target, unique
from focuscrawl.webs.mess.profile import KINDS
from focuscrawl.webs.mess.state import MessState, PlannedPage
from focuscrawl.webs.store import WebWriter


def write_pages(state: MessState, writer: WebWriter) -> dict[str, int]:
    """Write every page and injected URL; returns the injected URLs per kind, in ``KINDS`` order."""
    for url in state.rows:  # WEB's pages keep their ids
        writer.id_for(url)
    counts: dict[str, int] = {}
    for page in (*state.rows.values(), *state.pages.values()):
        _write_page(state, writer, page)
        if page.kind is not None:
            writer.add_injected(page.url, page.kind, page.original)
            counts[page.kind] = counts.get(page.kind, 0) + 1
    for url, kind in state.dead.items():
        writer.add_injected(url, kind)
        counts[kind] = counts.get(kind, 0) + 1
    return {kind: counts[kind] for kind in KINDS if kind in counts}


def _write_page(state: MessState, writer: WebWriter, page: PlannedPage) -> None:
    text, html = page.text, None
    if page.source is not None:
        stored = state.text(page.source)
        text = "\n\n".join(part for part in (page.before, stored, page.after) if part) if (
            page.before or page.after) else stored
        if state.originals[page.source].has_html:
            html = _html(state, page, text)
    writer.add_page(page.url, status=page.status, content_type=page.content_type, title=page.title,
                    text=text, html=html, labels=page.labels.split(",") if page.labels else (),
                    location=page.location, canonical=page.canonical)
    links = page.links if page.source == page.url else unique(page.links)  # WEB's pages: as stored
    for link in links:
        writer.add_link(page.url, link.url, link.anchor)
    for link in page.script_links:
        writer.add_script_link(page.url, link.url, link.anchor)


def _html(state: MessState, page: PlannedPage, text: str) -> str | None:
    """The source's HTML with this page's links, banner and footer, or None (rendered when served) when the
    result would not parse back to the page's stored links and text."""
    source = state.originals[page.source]
    html = state.web.html(source.url)
    if html is None:
        return None
    if page.url == source.url and not source.targets and not source.added:
        return html  # a page of WEB the mess left alone keeps every byte

    def target(url: str) -> str | None:  # as copies.fill_copies maps links
        new = source.targets.get(url, url)
        return None if new is None else copy_target(state, page, url, new)

    esc = html_lib.escape
    added = [Link(copy_target(state, page, link.url, link.url), link.anchor) for link in source.added]
    html = rewrite_links(html, source.url, target)
    html = insert_html(html, body_start=f"<p>{esc(page.before)}</p>" if page.before else "",
                       body_end=(f"<p>{esc(page.after)}</p>" if page.after else "") + links_nav(added))
    parsed = parse_document(html, page.url)
    if parsed.links != unique(page.links) or parsed.text != clean_text(text):
        state.html_dropped += 1
        return None
    return html
