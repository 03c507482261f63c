"""The offline web: one SQLite file holding pages, links and ground-truth labels.

Why SQLite: it opens instantly whatever the web's size (nothing is loaded up front), a fetch is two
indexed look-ups, anyone can read or write the format from any language, and a 1M-page web stays one
file. The format is specified in docs/web-format.md; keep the two in step.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from focuscrawl.types import Link, Page
from focuscrawl.urls import domain_of
from focuscrawl.web.graph import LinkGraph
from focuscrawl.web.html import clean_text

FORMAT_VERSION = 1
WEB_FILE = "web.sqlite"
MAX_REDIRECTS = 5

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    host TEXT NOT NULL,
    status INTEGER NOT NULL,
    content_type TEXT NOT NULL DEFAULT '',
    location TEXT,
    title TEXT NOT NULL DEFAULT '',
    labels TEXT NOT NULL DEFAULT '',
    text BLOB,
    html BLOB
);
CREATE TABLE links (src INTEGER NOT NULL, ord INTEGER NOT NULL, dst INTEGER NOT NULL, anchor TEXT NOT NULL DEFAULT '');
"""


class WebFormatError(Exception):
    """The directory is not an offline web this version can read."""


def _pack(text: str | None) -> bytes | None:
    return None if text is None else zlib.compress(text.encode("utf-8"), 6)


def _unpack(blob: bytes | None) -> str:
    return "" if blob is None else zlib.decompress(blob).decode("utf-8")


def split_labels(labels: str) -> list[str]:
    return [label for label in labels.split(",") if label]


def label_matches(labels: str | Iterable[str], topic: str) -> bool:
    """A topic ``X`` matches label ``X`` and every label under it (``X.Y``, ``X.Y.Z``)."""
    items = split_labels(labels) if isinstance(labels, str) else labels
    prefix = topic + "."
    return any(label == topic or label.startswith(prefix) for label in items)


@dataclass(frozen=True, slots=True)
class PageRecord:
    """A page's catalogue entry (no body): what topic sampling and scoring iterate over."""

    id: int
    url: str
    host: str
    status: int
    labels: str
    outdegree: int


class OfflineWeb:
    """Read access to an offline web directory. Implements the Web interface (``fetch``)."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        path = self.directory / WEB_FILE
        if not path.is_file():
            raise WebFormatError(f"{self.directory} is not an offline web: {WEB_FILE} not found")
        # immutable=1: the file never changes while we read it, so SQLite skips locking entirely.
        self._db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        try:
            self.meta = {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            raise WebFormatError(f"{path} is not a focuscrawl web database: {exc}") from exc
        version = self.meta.get("format_version")
        if version != FORMAT_VERSION:
            raise WebFormatError(f"{path} has format version {version!r}; this focuscrawl reads {FORMAT_VERSION}")

    @property
    def name(self) -> str:
        return str(self.meta.get("name", self.directory.name))

    def close(self) -> None:
        self._db.close()

    def fetch(self, url: str) -> Page:
        """Fetch ``url`` as a crawler would: follow stored redirects, unknown URLs answer 404."""
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            row = self._db.execute(
                "SELECT id, status, content_type, location, title, text FROM pages WHERE url = ?", (current,)
            ).fetchone()
            if row is None:
                return Page(url=url, final_url=current, status=404, error="not in this web")
            page_id, status, content_type, location, title, text = row
            if 300 <= status < 400 and location:
                current = location
                continue
            if not 200 <= status < 300:
                return Page(url=url, final_url=current, status=status, content_type=content_type)
            outlinks = [
                Link(dst_url, anchor)
                for dst_url, anchor in self._db.execute(
                    "SELECT p.url, l.anchor FROM links l JOIN pages p ON p.id = l.dst WHERE l.src = ? ORDER BY l.ord",
                    (page_id,),
                )
            ]
            return Page(
                url=url,
                final_url=current,
                status=status,
                content_type=content_type,
                title=title,
                # Collapsed as parse_html collapses it, so offline and served fetches give equal text.
                text=clean_text(_unpack(text)),
                outlinks=outlinks,
            )
        return Page(url=url, final_url=current, status=310, error="too many redirects")

    def html(self, url: str) -> str | None:
        """The stored HTML of a page, or None when the web stores text only (render it instead)."""
        row = self._db.execute("SELECT html FROM pages WHERE url = ?", (url,)).fetchone()
        return None if row is None or row[0] is None else _unpack(row[0])

    def records(self) -> Iterator[PageRecord]:
        """Every stored URL (pages, redirects and dead ends) in id order, with labels and out-degree."""
        query = (
            "SELECT p.id, p.url, p.host, p.status, p.labels, COALESCE(d.n, 0) FROM pages p "
            "LEFT JOIN (SELECT src, COUNT(*) AS n FROM links GROUP BY src) d ON d.src = p.id ORDER BY p.id"
        )
        for row in self._db.execute(query):
            yield PageRecord(*row)

    def labels(self) -> dict[str, str]:
        """Ground truth: url -> comma-separated labels, for labelled pages only.

        Only scoring code and the oracle baseline may call this; agents never see labels.
        """
        return dict(self._db.execute("SELECT url, labels FROM pages WHERE labels != ''"))

    def link_graph(self) -> LinkGraph:
        """Every stored URL with its status and every link between them (a redirect links to its target), for
        ground-truth distances and reach. Not for agents: it is the whole web, which a crawler only learns by
        crawling."""
        urls: list[str] = []
        statuses: list[int] = []
        row_of: dict[int, int] = {}
        redirects: list[tuple[int, str]] = []
        for page_id, url, status, location in self._db.execute(
                "SELECT id, url, status, location FROM pages ORDER BY id"):
            row_of[page_id] = len(urls)
            urls.append(url)
            statuses.append(status)
            if 300 <= status < 400 and location:
                redirects.append((page_id, location))
        pairs = [(row_of[s], row_of[d]) for s, d in self._db.execute("SELECT src, dst FROM links")]
        index = {url: i for i, url in enumerate(urls)}
        pairs += [(row_of[page_id], index[location]) for page_id, location in redirects if location in index]
        edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return LinkGraph(urls, edges[:, 0], edges[:, 1], np.array(statuses, dtype=np.int64))

    def texts(self, urls: Iterable[str]) -> list[str]:
        out = []
        for url in urls:
            row = self._db.execute("SELECT text FROM pages WHERE url = ?", (url,)).fetchone()
            out.append("" if row is None else _unpack(row[0]))
        return out

    def stats(self) -> dict:
        """Counts for ``focuscrawl web info``."""
        db = self._db
        pages = db.execute("SELECT COUNT(*) FROM pages WHERE status BETWEEN 200 AND 299").fetchone()[0]
        redirects = db.execute("SELECT COUNT(*) FROM pages WHERE status BETWEEN 300 AND 399").fetchone()[0]
        dead = db.execute("SELECT COUNT(*) FROM pages WHERE status >= 400").fetchone()[0]
        hosts = db.execute("SELECT COUNT(DISTINCT host) FROM pages WHERE status BETWEEN 200 AND 299").fetchone()[0]
        links = db.execute("SELECT COUNT(*) FROM links").fetchone()[0]
        dead_links = db.execute(
            "SELECT COUNT(*) FROM links l JOIN pages p ON p.id = l.dst WHERE p.status >= 400"
        ).fetchone()[0]
        label_counts: dict[str, int] = {}
        for (labels,) in db.execute("SELECT labels FROM pages WHERE labels != ''"):
            for label in split_labels(labels):
                label_counts[label] = label_counts.get(label, 0) + 1
        return {
            "name": self.name,
            "pages": pages,
            "redirects": redirects,
            "dead_urls": dead,
            "hosts": hosts,
            "links": links,
            "dead_links": dead_links,
            "labels": dict(sorted(label_counts.items())),
            "meta": self.meta,
        }


class WebWriter:
    """Builds an offline web. Builders call ``add_page`` and ``add_link`` in any order.

    Link targets that never get a page of their own become dead ends (status 404) when the writer
    closes, which is what a crawler meets on the real web for links leaving the recorded set.
    """

    def __init__(self, directory: str | Path, meta: dict | None = None, *, overwrite: bool = False):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / WEB_FILE
        if path.exists():
            if not overwrite:
                raise FileExistsError(f"{path} already exists; pass --overwrite to replace it")
            path.unlink()
        self._path = path
        self._tmp = path.with_suffix(".building")
        self._tmp.unlink(missing_ok=True)
        self._db = sqlite3.connect(self._tmp)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(SCHEMA)
        self._meta = {"format_version": FORMAT_VERSION, **(meta or {})}
        self._ids: dict[str, int] = {}
        self._has_row: set[int] = set()
        self._link_count: dict[int, int] = {}
        self._page_rows: list[tuple] = []
        self._link_rows: list[tuple] = []

    def id_for(self, url: str) -> int:
        page_id = self._ids.get(url)
        if page_id is None:
            page_id = self._ids[url] = len(self._ids) + 1
        return page_id

    def add_page(
        self,
        url: str,
        *,
        status: int = 200,
        content_type: str = "text/html",
        title: str = "",
        text: str | None = None,
        html: str | None = None,
        labels: Iterable[str] = (),
        location: str | None = None,
    ) -> bool:
        """Store a page (URL must already be normalised). Returns False if the URL already has one."""
        page_id = self.id_for(url)
        if page_id in self._has_row:
            return False
        self._has_row.add(page_id)
        label_text = ",".join(sorted({label.strip() for label in labels if label.strip()}))
        self._page_rows.append(
            (page_id, url, domain_of(url), status, content_type, location, title, label_text, _pack(text), _pack(html))
        )
        if len(self._page_rows) >= 20_000:
            self._flush_pages()
        return True

    def add_link(self, src_url: str, dst_url: str, anchor: str = "") -> None:
        src = self.id_for(src_url)
        order = self._link_count.get(src, 0)
        self._link_count[src] = order + 1
        self._link_rows.append((src, order, self.id_for(dst_url), anchor))
        if len(self._link_rows) >= 200_000:
            self._flush_links()

    def set_meta(self, key: str, value) -> None:
        self._meta[key] = value

    def _flush_pages(self) -> None:
        self._db.executemany("INSERT INTO pages VALUES (?,?,?,?,?,?,?,?,?,?)", self._page_rows)
        self._page_rows.clear()

    def _flush_links(self) -> None:
        self._db.executemany("INSERT INTO links VALUES (?,?,?,?)", self._link_rows)
        self._link_rows.clear()

    def close(self) -> Path:
        """Add dead ends, index, and atomically move the finished file into place."""
        for url, page_id in self._ids.items():
            if page_id not in self._has_row:
                self._page_rows.append((page_id, url, domain_of(url), 404, "", None, "", "", None, None))
                if len(self._page_rows) >= 20_000:
                    self._flush_pages()
        self._flush_pages()
        self._flush_links()
        self._db.execute("CREATE INDEX links_src ON links (src, ord)")
        self._db.executemany(
            "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in sorted(self._meta.items())]
        )
        self._db.commit()
        # No VACUUM: a freshly written file has nothing to reclaim, and it costs ~30 s at 1M pages.
        self._db.close()
        self._tmp.replace(self._path)
        return self.directory

    def abort(self) -> None:
        self._db.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> WebWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
