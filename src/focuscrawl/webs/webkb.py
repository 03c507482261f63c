"""Build an offline web from the CMU WebKB "4 universities" crawl (January 1997).

Each file is an HTTP response as the 1997 crawler saved it: header block, blank line, HTML. The page's
URL is the file name with '/' written as '^', its label the folder it sits in. Most links leave the
set; the writer turns those into 404 dead ends, which is what a crawler of the collection meets.
"""

from __future__ import annotations

import re
from pathlib import Path

from focuscrawl.html import clean_text, decode_html, parse_html
from focuscrawl.urls import normalize_url
from focuscrawl.webs.store import WebWriter

LABELS = ("course", "department", "faculty", "other", "project", "staff", "student")
SOURCE = (
    "CMU WebKB '4 universities' data set (World Wide Knowledge Base project, January 1997 crawl): "
    "raw HTTP responses of university web pages, hand-labelled by page genre."
)
CITATION = (
    "M. Craven, D. DiPasquo, D. Freitag, A. McCallum, T. Mitchell, K. Nigam and S. Slattery: "
    "Learning to Extract Symbolic Knowledge from the World Wide Web, AAAI 1998"
)
# Classifier examples come from Cornell; the crawl is judged on the other universities.
TOPIC_DEFAULTS = {"train_host_pattern": r"cornell\.edu$"}

# A header line: "Name: value" or a status line. "WWW Alert: ..." opens the saved redirect responses.
_HEADER_LINE = re.compile(rb"^(HTTP/\d|WWW Alert:|[A-Za-z][A-Za-z0-9-]*:[ \t\r\n])")
_BLANK_LINE = re.compile(rb"\r?\n[ \t]*\r?\n")


def split_response(raw: bytes) -> tuple[dict[str, str], bytes]:
    """Split a saved response into (headers with lower-cased names, body).

    Files without a header block (a few start straight with HTML) are all body.
    """
    if not _HEADER_LINE.match(raw.lstrip(b"\r\n")[:80]):
        return {}, raw
    match = _BLANK_LINE.search(raw)
    head, body = (raw[: match.start()], raw[match.end() :]) if match else (raw, b"")
    headers: dict[str, str] = {}
    for line in head.decode("latin-1").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip():
            headers.setdefault(name.strip().lower(), value.strip())
    return headers, body


def url_from_filename(filename: str) -> str | None:
    """The page URL encoded in a WebKB file name, normalised; None for ftp:/file: and broken names."""
    return normalize_url(filename.replace("^", "/"))


def _sources(root: Path) -> dict[str, tuple[Path, list[str]]]:
    # Sorted walk so that "keep the first" is the same on every machine.
    pages: dict[str, tuple[Path, list[str]]] = {}
    for label_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(f for f in label_dir.rglob("*") if f.is_file()):
            url = url_from_filename(path.name)
            if url is None:
                continue
            if url in pages:
                pages[url][1].append(label_dir.name)
            else:
                pages[url] = (path, [label_dir.name])
    return pages


def _find_root(src: Path) -> Path:
    src = Path(src)
    for candidate in (src, src / "webkb"):
        if any((candidate / label).is_dir() for label in LABELS):
            return candidate
    raise FileNotFoundError(f"{src}: no WebKB label folders ({', '.join(LABELS)}) found")


def build_webkb(src: Path, out: Path, overwrite: bool = False) -> Path:
    """Convert the WebKB crawl at ``src`` (``<label>/<university>/<url>``) into an offline web at ``out``."""
    root = _find_root(src)
    meta = {
        "name": "webkb",
        "builder": "focuscrawl.webs.webkb.build_webkb",
        "source": SOURCE,
        "citation": CITATION,
        "topic_defaults": TOPIC_DEFAULTS,
    }
    with WebWriter(out, meta, overwrite=overwrite) as writer:
        for url, (path, labels) in _sources(root).items():
            headers, body = split_response(path.read_bytes())
            content_type = headers.get("content-type", "text/html")
            # The 1997 crawler padded a few files with NUL bytes, which are no part of the page.
            document = decode_html(body, content_type).replace("\x00", "")
            mime = content_type.split(";")[0].strip().lower() or "text/html"
            if mime == "text/plain":
                # A plain-text response has no markup or links; keep it as text, rendered when served.
                writer.add_page(url, content_type=mime, text=clean_text(document), labels=labels)
                continue
            title, text, links = parse_html(document, url)
            writer.add_page(url, content_type=mime, title=title, text=text, html=document, labels=labels)
            for link in links:
                writer.add_link(url, link.url, link.anchor)
    return out
