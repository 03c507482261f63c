"""Turn a WARC of crawled responses plus a TSV of ground-truth labels into an offline web.

Real-world WARCs are messy: request/metadata/warcinfo records sit between responses, the same URL is
captured several times (first as an error, later successfully), responses are redirects, images or
PDFs, bodies are chunked and gzip-encoded, and charsets are declared in headers, in ``<meta>`` or not
at all. The import makes two passes over the file so that it never holds page bodies in memory:

1. headers only: decide which capture of every URL wins and where redirects lead;
2. bodies of the winning 2xx captures only: parse and write them.

Knowing every capture before writing is also what lets a label given for a redirecting URL (seed lists
often name ``http://x.org`` while the crawl stored ``https://www.x.org/``) land on the page a crawler
actually receives, since ``WebWriter`` cannot change a row once added.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from focuscrawl.html import decode_html, is_html, parse_html
from focuscrawl.urls import normalize_url
from focuscrawl.webs.store import MAX_REDIRECTS, WebWriter

# Pages bigger than this are truncated before parsing: a 100 MB "page" is a data dump, not a page, and
# parsing it would dominate the import time.
MAX_BODY_BYTES = 8 * 1024 * 1024


class LabelsFormatError(ValueError):
    """The labels TSV has a line that is not ``url<TAB>label[,label...]``."""


@dataclass
class ImportReport:
    """What the import found. ``pages`` are HTML 2xx rows; other 2xx rows are counted in ``non_html``."""

    records: int = 0
    responses: int = 0
    pages: int = 0
    redirects: int = 0
    non_html: int = 0
    error_status: int = 0
    duplicates: int = 0
    revisits: int = 0
    skipped_records: int = 0
    body_errors: int = 0
    links: int = 0
    labelled: int = 0
    labels_via_redirect: int = 0
    labels_without_page: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        counts = {k: v for k, v in self.as_dict().items() if k != "warnings"}
        lines = [f"{key:>20}: {value}" for key, value in counts.items()]
        return "\n".join(lines + [f"warning: {w}" for w in self.warnings])


@dataclass(slots=True)
class _Capture:
    index: int  # record position in the WARC, to find the body again in pass 2
    status: int
    content_type: str
    location: str | None


def read_labels(labels_path: Path) -> dict[str, set[str]]:
    """Parse ``url<TAB>label[,label...]`` lines into normalised URL -> labels (repeated URLs merge)."""
    labels: dict[str, set[str]] = {}
    with open(labels_path, encoding="utf-8-sig") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            where = f"{labels_path}, line {number}"
            if len(fields) != 2:
                raise LabelsFormatError(
                    f"{where}: expected 'url<TAB>label[,label...]' (2 tab-separated fields), "
                    f"found {len(fields)}: {line[:120]!r}"
                )
            url = normalize_url(fields[0])
            if url is None:
                raise LabelsFormatError(f"{where}: {fields[0].strip()!r} is not an absolute http(s) URL")
            names = {name.strip() for name in fields[1].split(",") if name.strip()}
            if not names:
                raise LabelsFormatError(f"{where}: no label after the tab")
            bad = [name for name in names if any(ch.isspace() for ch in name)]
            if bad:
                raise LabelsFormatError(f"{where}: labels may not contain spaces: {bad[0]!r}")
            labels.setdefault(url, set()).update(names)
    return labels


def _records(warc_path: Path) -> Iterator[tuple[int, object]]:
    with open(warc_path, "rb") as handle:
        # arc2warc: old ARC files (Internet Archive, WebKB-era crawls) read as WARC responses.
        for index, record in enumerate(ArchiveIterator(handle, arc2warc=True)):
            yield index, record


def _target_url(record) -> str | None:
    uri = record.rec_headers.get_header("WARC-Target-URI") or ""
    # WARC/1.0 examples wrapped URIs in <>, and some writers copied that.
    return normalize_url(uri.strip().strip("<>"))


def _mime(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _scan(warc_path: Path, report: ImportReport) -> dict[str, _Capture]:
    """Pass 1: the winning capture of every URL. First 2xx wins; a 2xx replaces an earlier non-2xx."""
    captures: dict[str, _Capture] = {}
    for index, record in _records(warc_path):
        report.records += 1
        if record.rec_type == "revisit":
            # A revisit carries headers only ("same as an earlier capture"); the earlier capture, if it is
            # in this file, already gave the page.
            report.revisits += 1
            continue
        if record.rec_type not in ("response", "resource"):
            report.skipped_records += 1
            continue
        url = _target_url(record)
        if url is None:
            report.skipped_records += 1  # dns:, ftp:, whois: and unparseable targets
            continue
        if record.rec_type == "resource":
            # A resource record is a body without HTTP headers (e.g. wget's or a browser's archive).
            status, content_type, location = 200, _mime(record.rec_headers.get_header("Content-Type")), None
        else:
            headers = record.http_headers
            if headers is None:
                report.skipped_records += 1
                continue
            try:
                status = int(headers.get_statuscode())
            except (TypeError, ValueError):
                report.skipped_records += 1
                continue
            if status < 200:
                report.skipped_records += 1
                continue
            content_type = _mime(headers.get_header("Content-Type"))
            location = None
            if 300 <= status < 400 and headers.get_header("Location"):
                location = normalize_url(headers.get_header("Location"), url)
        report.responses += 1
        capture = _Capture(index, status, content_type, location)
        previous = captures.get(url)
        if previous is None:
            captures[url] = capture
        else:
            report.duplicates += 1
            if not 200 <= previous.status < 300 and 200 <= status < 300:
                captures[url] = capture
    return captures


def _resolve_labels(
    labels: dict[str, set[str]], captures: dict[str, _Capture], report: ImportReport
) -> dict[str, set[str]]:
    """Labels per 2xx page URL; a label given for a redirect follows it, as a crawler would."""
    by_page: dict[str, set[str]] = {}
    for url, names in labels.items():
        current, hops = url, 0
        capture = captures.get(current)
        while capture is not None and capture.location and 300 <= capture.status < 400 and hops < MAX_REDIRECTS:
            current, hops = capture.location, hops + 1
            capture = captures.get(current)
        if capture is None or not 200 <= capture.status < 300:
            report.labels_without_page += 1
            continue
        if hops:
            report.labels_via_redirect += 1
        by_page.setdefault(current, set()).update(names)
    report.labelled = len(by_page)
    if report.labels_without_page:
        report.warnings.append(
            f"{report.labels_without_page} labelled URL(s) have no 2xx page in the WARC; their labels are dropped"
        )
    return by_page


def _read_body(record) -> bytes:
    stream = record.content_stream()
    chunks, size = [], 0
    while size < MAX_BODY_BYTES:  # read() may return short before the end of a chunked/decoded stream
        chunk = stream.read(MAX_BODY_BYTES - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def import_warc(
    warc_path: Path, labels_path: Path, out: Path, overwrite: bool = False, *, keep_html: bool = True
) -> ImportReport:
    """Build an offline web in ``out`` from a WARC (gzipped or not) and a ``url<TAB>labels`` TSV.

    The labels file is read first so that a malformed line fails before any work is done.
    ``keep_html`` stores the original HTML (served as-is over HTTP); without it only text is kept.
    """
    warc_path, labels_path, out = Path(warc_path), Path(labels_path), Path(out)
    labels = read_labels(labels_path)
    report = ImportReport()
    captures = _scan(warc_path, report)
    page_labels = _resolve_labels(labels, captures, report)

    name = warc_path.name
    for suffix in (".gz", ".warc", ".arc"):
        name = name.removesuffix(suffix)
    meta = {"name": name, "builder": "import-warc", "source": str(warc_path), "topic_defaults": {}}
    bodies = {c.index: url for url, c in captures.items() if 200 <= c.status < 300}
    with WebWriter(out, meta, overwrite=overwrite) as writer:
        # Non-2xx rows need no body: write them from pass 1.
        for url, capture in captures.items():
            if 200 <= capture.status < 300:
                continue
            if 300 <= capture.status < 400:
                report.redirects += 1
                if capture.location:
                    writer.id_for(capture.location)  # the target gets a row (a 404 if not captured)
            else:
                report.error_status += 1
            writer.add_page(url, status=capture.status, content_type=capture.content_type, location=capture.location)
        for index, record in _records(warc_path):
            url = bodies.get(index)
            if url is None:
                continue
            _write_page(writer, record, url, captures[url], page_labels.get(url, ()), keep_html, report)
    return report


def _write_page(writer: WebWriter, record, url: str, capture: _Capture, labels, keep_html: bool,
                report: ImportReport) -> None:
    try:
        body = _read_body(record)
    except Exception:  # noqa: BLE001 - warcio/zlib/brotli raise many types on corrupt bodies
        report.body_errors += 1
        body = b""
    content_type = capture.content_type
    if not is_html(content_type, body):
        report.non_html += 1
        writer.add_page(url, status=capture.status, content_type=content_type, labels=labels)
        return
    header = record.http_headers.get_header("Content-Type") if record.http_headers else None
    html = decode_html(body, header, truncated=len(body) >= MAX_BODY_BYTES)
    title, text, links = parse_html(html, url)
    report.pages += 1
    writer.add_page(url, status=capture.status, content_type="text/html", title=title, text=text,
                    html=html if keep_html else None, labels=labels)
    for link in links:
        writer.add_link(url, link.url, link.anchor)
    report.links += len(links)
