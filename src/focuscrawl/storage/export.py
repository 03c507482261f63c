"""A run folder as a corpus: one row per page fetched, as Parquet, JSON Lines or Markdown files.

    from focuscrawl.storage.export import export_corpus
    report = export_corpus("runs/birds", "birds.parquet", "parquet", min_relevance=0.5)

A row (``CorpusRow``) is a page the crawl fetched with status 2xx and some text, except the soft-404 probes the
crawl sent itself: its URL and final URL, title, main text as Markdown, language, the crawl's relevance, its
near-duplicate cluster, when it was fetched and why. ``shard`` and ``step`` name its record in the run folder
(``pages.jsonl``'s ``step``; in a distributed run, its ``shard`` and ``shard_step``).

Where each part comes from:

- the rows: the state stores (the run's source of truth; one per shard in a distributed run), read-only as the
  dashboard reads them, so that a running crawl is exported up to its last committed page and a finished folder
  is left as it was. A distributed run's shards are read side by side, in fetch order.
- ``markdown``: trafilatura's Markdown (headings, lists, tables, emphasis) of the page's HTML, which only a
  WARC keeps (``crawl --warc``): each step's records are found at the offsets the store holds. Without a WARC,
  or where trafilatura finds no main content in it, the Markdown is that of the stored main text, which has no
  markup left: plain paragraphs. trafilatura because Resiliparse, which extracts the crawl's main text, writes
  plain text or reduced HTML, not Markdown; its speed matters less once, after a crawl, than on every fetch.
- ``language``: py3langid (langid.py's model, in its package: nothing is downloaded), the identifier trafilatura
  itself calls, on the start of the title and main text: an ISO 639-1 code (639-3 for a language without one),
  None when it cannot tell. Not Resiliparse's ``detect_fast``, although a core dependency and much faster: on a
  WebKB crawl (US university pages, nearly all in English) it called lists of names and courses Latin,
  Luxembourgish or Swedish far more often (benchmarks/export_language.py compares the two).
- ``cluster``: the URL of the first page fetched of the row's near-duplicate group (a page like none before it
  names itself), by the crawl's own near-duplicate reading and settings (``engine/defences/duplicates.py``);
  a page the crawl itself found to copy another joins that one's group. ``url == cluster`` keeps one page per
  group. Clusters are found over every page, so they do not depend on ``min_relevance``.
"""

from __future__ import annotations

import heapq
import io
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.config import read_effective_config
from focuscrawl.engine.defences import DUPLICATE, PROBE
from focuscrawl.engine.defences.duplicates import NearDuplicates, NearDuplicateSettings, page_shingles
from focuscrawl.extras import require
from focuscrawl.html import decode_html, is_html, render_html
from focuscrawl.storage.layout import run_stores
from focuscrawl.storage.reader import read_steps
from focuscrawl.storage.state import STATE_FILE, StepRecord
from focuscrawl.storage.warc import WARC_FILE

BATCH_ROWS = 1000  # rows per Parquet row group: a batch's pages are held in memory at once
# characters of a page's text its language is told from: on Wikispeedia's and WebKB's pages nearly always the same
# answer as the whole text, and a long article costs a fraction of it (benchmarks/export_language.py)
LANGUAGE_CHARS = 2000


class ExportFormat(StrEnum):
    PARQUET = "parquet"
    JSONL = "jsonl"
    MARKDOWN = "markdown"  # a folder of one .md file per page, its columns as YAML front matter


# where an export goes unless told: in the run folder
DEFAULT_OUT = {ExportFormat.PARQUET: "corpus.parquet", ExportFormat.JSONL: "corpus.jsonl",
               ExportFormat.MARKDOWN: "corpus"}


class NotARunFolder(ValueError):
    """The folder holds no crawl: neither a state store nor a distributed crawl's shards."""


@dataclass(slots=True)
class CorpusRow:
    """One page of the corpus (the columns of every format, in this order)."""

    url: str
    final_url: str
    title: str
    markdown: str
    language: str | None  # ISO 639-1 (639-3 for a language without one), None when the identifier cannot tell
    relevance: float  # the crawl's classifier, 0 for pages its defences set aside (copies, soft 404s, ...)
    cluster: str  # URL of the first page fetched of its near-duplicate group
    fetched_at: datetime  # UTC
    reason: str  # why the crawl's strategy fetched it when it did
    shard: int | None  # a distributed run's shard, None for a single-process run
    step: int  # its step in its store: pages.jsonl's step (a distributed run's: shard_step)


COLUMNS = tuple(f.name for f in fields(CorpusRow))


@dataclass
class ExportReport:
    out: Path
    format: ExportFormat
    pages: int  # pages of the run (status 2xx with text)
    rows: int  # of them, those at min_relevance or above
    from_html: int  # rows whose Markdown is of the page's HTML (from the WARC), not of the stored text
    warc: bool  # whether the run kept a WARC
    seconds: float

    def __str__(self) -> str:
        source = (f"Markdown from the WARC's HTML for {self.from_html:,}, from the stored text for "
                  f"{self.rows - self.from_html:,}" if self.warc else
                  "no WARC in the run (crawl with --warc to keep the HTML): Markdown from the stored main text")
        return (f"{self.rows:,} of {self.pages:,} pages to {self.out} ({self.format.value}, "
                f"{self.seconds:.1f} s); {source}")


def export_corpus(run: str | Path, out: str | Path | None = None, format: ExportFormat | str = ExportFormat.PARQUET,
                  min_relevance: float = 0.0) -> ExportReport:
    """Write the run's pages with relevance >= ``min_relevance`` to ``out`` (default: ``corpus.parquet``,
    ``corpus.jsonl`` or ``corpus/`` in the run folder). A file is replaced whole once written; a Markdown folder
    replaces an earlier export's, and refuses a folder holding anything but .md files."""
    started = time.monotonic()
    run = Path(run)
    try:
        format = ExportFormat(format)
    except ValueError:
        raise ValueError(f"unknown export format {format!r}: parquet, jsonl or markdown") from None
    out = Path(out) if out is not None else run / DEFAULT_OUT[format]
    corpus = Corpus(run, min_relevance)
    if format is not ExportFormat.MARKDOWN and out.is_dir():
        raise ValueError(f"{out} is a folder: give the {format.value} file's name")
    rows = corpus.rows()
    if format is ExportFormat.PARQUET:
        _write_parquet(rows, out)
    elif format is ExportFormat.JSONL:
        _write_jsonl(rows, out)
    else:
        _write_markdown(rows, out)
    return ExportReport(out, format, corpus.pages, corpus.exported, corpus.from_html, corpus.warc,
                        time.monotonic() - started)


class Corpus:
    """A run folder's pages as rows, without writing anything: ``Corpus(run, 0.5).rows()``. Its counts are complete
    once ``rows()`` is exhausted."""

    def __init__(self, run: str | Path, min_relevance: float = 0.0):
        run = Path(run)
        if not 0.0 <= min_relevance <= 1.0:
            raise ValueError(f"--min-relevance must be between 0 and 1, not {min_relevance}")
        if not run.is_dir():
            raise NotARunFolder(f"{run} is not a folder" if run.exists() else f"{run} does not exist")
        self.stores = run_stores(run)
        if not self.stores:
            raise NotARunFolder(f"{run} is not a run folder: it has no {STATE_FILE} (a crawl's) and no shards/K/"
                                f"{STATE_FILE} (a distributed crawl's)")
        self.min_relevance = min_relevance
        self.warc = any((folder / WARC_FILE).is_file() for _, folder in self.stores)
        config = read_effective_config(run)  # the crawl's own near-duplicate settings
        self.clusters = _Clusters(config.defences.near_duplicates if config else NearDuplicateSettings())
        self.pages = self.exported = self.from_html = 0
        self._trafilatura = require("trafilatura", "export", "a corpus export's Markdown")
        self._langid = require("py3langid", "export", "a corpus export's language")

    def rows(self) -> Iterator[CorpusRow]:
        """The pages with relevance >= ``min_relevance``, in fetch order."""
        steps = heapq.merge(*(_pages(shard, folder) for shard, folder in self.stores),
                            key=lambda page: (page[1].fetched_at, page[0] or 0, page[1].step))
        for shard, record, html in steps:
            if not _is_page(record):
                continue
            cluster = self.clusters.assign(record)  # before the filter, so that clusters do not depend on it
            self.pages += 1
            if record.relevance < self.min_relevance:
                continue
            self.exported += 1
            yield CorpusRow(url=record.url, final_url=record.final_url, title=record.title,
                            markdown=self._markdown(html(), record.text), language=self._language(record),
                            relevance=record.relevance, cluster=cluster,
                            fetched_at=datetime.fromtimestamp(record.fetched_at, timezone.utc), reason=record.reason,
                            shard=shard, step=record.step)

    def _markdown(self, html: str | None, text: str) -> str:
        if html is not None:
            markdown = self._trafilatura.extract(html, output_format="markdown")
            if markdown:
                self.from_html += 1
                return markdown
        # the stored text as paragraphs, through the same writer, so that it is escaped as Markdown alike
        return self._trafilatura.extract(render_html("", text, []), output_format="markdown") or text

    def _language(self, record: StepRecord) -> str | None:
        text = f"{record.title}\n{record.text}"[:LANGUAGE_CHARS]
        if not any(c.isalpha() for c in text):
            return None  # numbers and symbols alone still get some language
        language, _ = self._langid.classify(text)
        return None if language == "zxx" else language  # zxx: "no linguistic content"


def _is_page(record: StepRecord) -> bool:
    """Whether a step is a page of the corpus: fetched (2xx) with some text, and not the crawl's own soft-404
    probe."""
    return 200 <= record.status < 300 and bool(record.text or record.title) and record.verdict != PROBE


class _Clusters:
    """Near-duplicate groups, in fetch order: the earlier page a page copies (by the crawl's verdict, else by the
    near-duplicate index) gives it its group; a page that copies none starts one."""

    def __init__(self, settings: NearDuplicateSettings):
        self.settings = settings
        self.index = NearDuplicates(settings)
        self.cluster_of: dict[str, str] = {}  # URL (requested and final) -> its group's first URL

    def assign(self, record: StepRecord) -> str:
        claimed = record.verdict[len(DUPLICATE):] if record.verdict.startswith(DUPLICATE) else None
        cluster = self.cluster_of.get(claimed) if claimed else None
        if cluster is None:
            cluster = record.url
            sig = self.index.signature(page_shingles(record.title, record.text, self.settings))
            if sig is not None:
                found = self.index.find(sig)
                if found is not None:
                    cluster = self.cluster_of[found[0]]
                else:
                    self.index.add(record.url, sig)
        self.cluster_of.setdefault(record.url, cluster)
        self.cluster_of.setdefault(record.final_url, cluster)
        return cluster


def _pages(shard: int | None, folder: Path
           ) -> Iterator[tuple[int | None, StepRecord, Callable[[], str | None]]]:
    """(shard, step, a function giving the page's HTML from the WARC or None) of each step of one store.

    The HTML is read only when asked (rows below ``min_relevance`` never are), at the offsets the store keeps: a
    step's records lie between the previous step's end in the WARC and its own."""
    warc_path = folder / WARC_FILE
    warc = open(warc_path, "rb") if warc_path.is_file() else None
    try:
        start = 0
        for record in read_steps(folder / STATE_FILE):
            end = record.warc_end
            span = (start, end) if warc is not None and end is not None else None
            yield shard, record, lambda span=span, record=record: _html(warc, span, record.content_type)
            if end is not None:
                start = end
    finally:
        if warc is not None:
            warc.close()


def _html(warc, span: tuple[int, int] | None, content_type: str) -> str | None:
    """The HTML of the response record in ``span`` of the WARC, or None (no WARC, not HTML, a damaged record)."""
    if span is None:
        return None
    warc.seek(span[0])
    try:
        for record in ArchiveIterator(io.BytesIO(warc.read(span[1] - span[0]))):
            if record.rec_type != "response":
                continue
            body = record.content_stream().read()
            if not is_html(content_type, body):
                return None
            header = record.http_headers.get_header("Content-Type") if record.http_headers else None
            return decode_html(body, header)
    except Exception:  # noqa: BLE001 - warcio and zlib raise many types on a damaged record: the stored text serves
        return None
    return None


# -- the formats ---------------------------------------------------------------------------------------------
def _batches(rows: Iterator[CorpusRow]) -> Iterator[list[CorpusRow]]:
    batch: list[CorpusRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) == BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


def _parquet_schema():
    """The Parquet columns: plain Arrow types that pandas, DuckDB and Hugging Face ``datasets`` read as they are."""
    pa = require("pyarrow", "export", "a Parquet export")
    return pa.schema([("url", pa.string()), ("final_url", pa.string()), ("title", pa.string()),
                      ("markdown", pa.string()), ("language", pa.string()), ("relevance", pa.float64()),
                      ("cluster", pa.string()), ("fetched_at", pa.timestamp("ms", tz="UTC")), ("reason", pa.string()),
                      ("shard", pa.int32()), ("step", pa.int64())])


def _write_parquet(rows: Iterator[CorpusRow], out: Path) -> None:
    pa = require("pyarrow", "export", "a Parquet export")
    pq = require("pyarrow.parquet", "export", "a Parquet export")
    schema = _parquet_schema()
    tmp = _tmp(out)
    try:
        # zstd: 30% smaller than snappy on a Wikispeedia crawl's export (23.2 against 33.3 MB), and read everywhere
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for batch in _batches(rows):
                writer.write_table(pa.Table.from_pylist([asdict(row) for row in batch], schema=schema))
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)  # an export that failed leaves nothing half-written


def _plain(row: CorpusRow) -> dict[str, Any]:
    """A row's columns as JSON and YAML take them: the fetch time as ISO 8601."""
    data = asdict(row)
    data["fetched_at"] = row.fetched_at.isoformat(timespec="milliseconds")
    return data


def _write_jsonl(rows: Iterator[CorpusRow], out: Path) -> None:
    tmp = _tmp(out)
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(_plain(row), ensure_ascii=False) + "\n")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)


def _markdown_name(row: CorpusRow) -> str:
    """A page's file in a Markdown export: its step (and shard), so that the names sort in the run's order."""
    return f"{row.step:07d}.md" if row.shard is None else f"{row.shard}-{row.step:07d}.md"


def _write_markdown(rows: Iterator[CorpusRow], out: Path) -> None:
    if out.exists() and not (out.is_dir() and all(p.is_file() and p.suffix == ".md" for p in out.iterdir())):
        raise ValueError(f"{out} exists and is not an earlier Markdown export (a folder of .md files only): "
                         "give another --out")
    tmp = _tmp(out)
    shutil.rmtree(tmp, ignore_errors=True)  # what a killed export left
    tmp.mkdir()
    try:
        for row in rows:
            data = _plain(row)
            markdown = data.pop("markdown")
            front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**9)
            (tmp / _markdown_name(row)).write_text(f"---\n{front}---\n\n{markdown}\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _tmp(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    return out.with_name(out.name + ".tmp")
