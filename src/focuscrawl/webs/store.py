"""The offline web: one SQLite file holding pages, links and ground-truth labels.

Why SQLite: it opens instantly whatever the web's size (nothing is loaded up front), a fetch is two
indexed look-ups, anyone can read or write the format from any language, and a 1M-page web stays one
file. The format is specified in docs/web-format.md; keep the two in step.

Messy webs (``focuscrawl.webs.mess``) add three optional tables, which a reader that ignores them can
skip: ``injected`` (ground truth: the kind of every URL the mess added), ``canonicals`` (a page's
``<link rel="canonical">``) and ``script_links`` (links that only a page's scripts add), and host
behaviour in ``meta.mess`` (``focuscrawl.webs.behaviour``).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from focuscrawl.html import clean_text
from focuscrawl.types import Link, Page
from focuscrawl.urls import host_of, site_of
from focuscrawl.webs.behaviour import TIMEOUT_ERROR, HostBehaviour, host_behaviours, not_found_page
from focuscrawl.webs.graph import LinkGraph

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
# Optional tables, written only when a web has rows for them (messy webs): a web without them is
# byte-for-byte what it was before they existed.
INJECTED_SCHEMA = "CREATE TABLE injected (url TEXT PRIMARY KEY, kind TEXT NOT NULL, original TEXT)"
CANONICALS_SCHEMA = "CREATE TABLE canonicals (page INTEGER PRIMARY KEY, url TEXT NOT NULL)"
SCRIPT_LINKS_SCHEMA = """
CREATE TABLE script_links (src INTEGER NOT NULL, ord INTEGER NOT NULL, dst INTEGER NOT NULL,
                           anchor TEXT NOT NULL DEFAULT '');
CREATE INDEX script_links_src ON script_links (src, ord);
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
class Injected:
    """Ground truth about a URL a messy web added: its kind (``calendar``, ``session``, ...) and, for a copy
    of a page (a session id, a mirror, a near-duplicate, ...) or a redirect, the URL of the original."""

    kind: str
    original: str | None = None


@dataclass(frozen=True, slots=True)
class StoredRow:
    """A stored URL with its links but not its bodies (``texts``, ``html``): what a tool rewriting a web copies."""

    url: str
    status: int
    content_type: str
    location: str | None
    title: str
    labels: str
    has_html: bool
    links: list[Link]


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
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._has_injected = "injected" in tables
        self._has_canonicals = "canonicals" in tables
        self._has_script_links = "script_links" in tables
        try:
            self.failure_seed, self.behaviours = host_behaviours(self.meta)
        except (TypeError, ValueError, AttributeError) as exc:
            raise WebFormatError(f"{path} has an unreadable meta.mess: {exc}") from exc

    @property
    def name(self) -> str:
        return str(self.meta.get("name", self.directory.name))

    def close(self) -> None:
        self._db.close()

    def fetch(self, url: str, *, render: bool = False) -> Page:
        """Fetch ``url`` as a crawler would: follow stored redirects, unknown URLs answer 404.

        On a messy web each request also meets its host's behaviour (``self.behaviours``): a failing host
        answers 500/503 or times out (status 0) for a fixed share of its URLs, and a soft-404 host answers
        a URL it has no page for with a "page not found" page and status 200. ``render`` stands for a
        crawler that runs the page's scripts: the links only a script adds follow the others.
        """
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            behaviour = self.behaviours.get(host_of(current)) if self.behaviours else None
            if behaviour is not None:
                failed = behaviour.failure_status(self.failure_seed, current)
                if failed == 0:
                    return Page(url=url, final_url=current, status=0, error=TIMEOUT_ERROR)
                if failed is not None:
                    return Page(url=url, final_url=current, status=failed, content_type="text/plain")
            row = self._db.execute(
                "SELECT id, status, content_type, location, title, text FROM pages WHERE url = ?", (current,)
            ).fetchone()
            if (row is None or row[1] == 404) and behaviour is not None and behaviour.soft_404 is not None:
                return self._not_found_page(url, current, behaviour)
            if row is None:
                return Page(url=url, final_url=current, status=404, error="not in this web")
            page_id, status, content_type, location, title, text = row
            if 300 <= status < 400 and location:
                current = location
                continue
            if not 200 <= status < 300:
                return Page(url=url, final_url=current, status=status, content_type=content_type)
            outlinks = self._links("links", page_id)
            if render and self._has_script_links:
                outlinks += self._links("script_links", page_id)
            return Page(
                url=url,
                final_url=current,
                status=status,
                content_type=content_type,
                title=title,
                # Collapsed as parse_html collapses it, so offline and served fetches give equal text.
                text=clean_text(_unpack(text)),
                outlinks=outlinks,
                canonical=self._canonical(page_id),
            )
        return Page(url=url, final_url=current, status=310, error="too many redirects")

    def stored(self, url: str) -> Page | None:
        """The page stored at ``url`` as its host serves it when nothing goes wrong: no redirect followed, no
        host behaviour, and the script-only links apart (``script_links``). None when ``url`` has no row."""
        row = self._db.execute(
            "SELECT id, status, content_type, title, text FROM pages WHERE url = ?", (url,)).fetchone()
        if row is None:
            return None
        page_id, status, content_type, title, text = row
        if not 200 <= status < 300:
            return Page(url=url, final_url=url, status=status, content_type=content_type)
        return Page(url=url, final_url=url, status=status, content_type=content_type, title=title,
                    text=clean_text(_unpack(text)), outlinks=self._links("links", page_id),
                    canonical=self._canonical(page_id))

    def script_links(self, url: str) -> list[Link]:
        """The links of ``url`` that only its scripts add (``fetch(url, render=True)`` includes them)."""
        if not self._has_script_links:
            return []
        row = self._db.execute("SELECT id FROM pages WHERE url = ?", (url,)).fetchone()
        return [] if row is None else self._links("script_links", row[0])

    def not_found(self, url: str) -> Page | None:
        """What ``url``'s host answers for a URL it has no page for, when it answers with a page (a soft 404)."""
        behaviour = self.behaviours.get(host_of(url))
        if behaviour is None or behaviour.soft_404 is None:
            return None
        return self._not_found_page(url, url, behaviour)

    @staticmethod
    def _not_found_page(url: str, current: str, behaviour: HostBehaviour) -> Page:
        title, text = not_found_page(current)
        return Page(url=url, final_url=current, status=200, content_type="text/html", title=title, text=text,
                    outlinks=list(behaviour.soft_404 or ()))

    def _links(self, table: str, page_id: int) -> list[Link]:
        return [
            Link(dst_url, anchor)
            for dst_url, anchor in self._db.execute(
                f"SELECT p.url, l.anchor FROM {table} l JOIN pages p ON p.id = l.dst WHERE l.src = ? ORDER BY l.ord",
                (page_id,),
            )
        ]

    def _canonical(self, page_id: int) -> str | None:
        if not self._has_canonicals:
            return None
        row = self._db.execute("SELECT url FROM canonicals WHERE page = ?", (page_id,)).fetchone()
        return None if row is None else row[0]

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

    def rows(self) -> Iterator[StoredRow]:
        """Every stored URL in id order with its links, for tools that rewrite a web (``focuscrawl.webs.mess``).
        Labels included: such a tool copies the ground truth, it does not act on it."""
        links = self._db.execute(
            "SELECT l.src, p.url, l.anchor FROM links l JOIN pages p ON p.id = l.dst ORDER BY l.src, l.ord")
        pending = next(links, None)
        for page_id, url, status, content_type, location, title, labels, has_html in self._db.execute(
                "SELECT id, url, status, content_type, location, title, labels, html IS NOT NULL FROM pages "
                "ORDER BY id").fetchall():
            out: list[Link] = []
            while pending is not None and pending[0] <= page_id:
                if pending[0] == page_id:
                    out.append(Link(pending[1], pending[2]))
                pending = next(links, None)
            yield StoredRow(url, status, content_type, location, title, labels, bool(has_html), out)

    def labels(self) -> dict[str, str]:
        """Ground truth: url -> comma-separated labels, for labelled pages only.

        Only scoring code and the oracle baseline may call this; agents never see labels.
        """
        return dict(self._db.execute("SELECT url, labels FROM pages WHERE labels != ''"))

    def injected(self) -> dict[str, Injected]:
        """Ground truth of a messy web: url -> its kind and original, for every URL the mess added or changed.

        Like ``labels``, only scoring code and oracles may call this; a crawler meets these URLs as any other.
        Empty for a web that is not messy.
        """
        if not self._has_injected:
            return {}
        return {url: Injected(kind, original)
                for url, kind, original in self._db.execute("SELECT url, kind, original FROM injected ORDER BY url")}

    def pathology(self, url: str) -> str | None:
        """Ground truth: the kind of trouble a fetch of ``url`` (this URL, no redirect followed) meets, or None.

        ``failing`` or ``timeout`` when its host fails it, else the kind it was injected as (``injected``),
        else ``soft-404`` when its host answers it with a not-found page. For scoring code and oracles only.
        """
        behaviour = self.behaviours.get(host_of(url)) if self.behaviours else None
        if behaviour is not None:
            failed = behaviour.failure_status(self.failure_seed, url)
            if failed is not None:
                return "timeout" if failed == 0 else "failing"
        if self._has_injected:
            row = self._db.execute("SELECT kind FROM injected WHERE url = ?", (url,)).fetchone()
            if row is not None:
                return row[0]
        if behaviour is not None and behaviour.soft_404 is not None:
            row = self._db.execute("SELECT status FROM pages WHERE url = ?", (url,)).fetchone()
            if row is None or row[0] == 404:
                return "soft-404"
        return None

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
        injected = self.injected()
        own = stands_for = scripted = None
        if injected:  # a messy web: reach counts its own pages, and a copy stands for its page
            own = np.fromiter((url not in injected for url in urls), dtype=bool, count=len(urls))
            stands_for = np.arange(len(urls), dtype=np.int64)
            for url, row in injected.items():
                if row.original is not None and url in index and row.original in index:
                    stands_for[index[url]] = index[row.original]
        if self._has_script_links:
            pairs = self._db.execute("SELECT src, dst FROM script_links")
            scripted = np.array([(row_of[s], row_of[d]) for s, d in pairs], dtype=np.int64).reshape(-1, 2)
        return LinkGraph(urls, edges[:, 0], edges[:, 1], np.array(statuses, dtype=np.int64), own, stands_for, scripted)

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
        stats = {
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
        if self._has_script_links:
            stats["script_links"] = db.execute("SELECT COUNT(*) FROM script_links").fetchone()[0]
        if self._has_canonicals:
            stats["canonicals"] = db.execute("SELECT COUNT(*) FROM canonicals").fetchone()[0]
        if self._has_injected:
            stats["injected"] = dict(db.execute("SELECT kind, COUNT(*) FROM injected GROUP BY kind ORDER BY kind"))
        return stats


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
        self._script_link_count: dict[int, int] = {}
        self._script_link_rows: list[tuple] = []
        self._canonical_rows: list[tuple[int, str]] = []
        self._injected_rows: dict[str, tuple[str, str | None]] = {}

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
        canonical: str | None = None,
    ) -> bool:
        """Store a page (URL must already be normalised). Returns False if the URL already has one.

        ``canonical``: the (normalised) URL the page names in ``<link rel="canonical">``.
        """
        page_id = self.id_for(url)
        if page_id in self._has_row:
            return False
        self._has_row.add(page_id)
        if canonical is not None:
            self._canonical_rows.append((page_id, canonical))
        label_text = ",".join(sorted({label.strip() for label in labels if label.strip()}))
        self._page_rows.append(
            (page_id, url, site_of(url), status, content_type, location, title, label_text, _pack(text), _pack(html))
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

    def add_script_link(self, src_url: str, dst_url: str, anchor: str = "") -> None:
        """A link that only the page's scripts add: a crawler that does not run them never sees it."""
        src = self.id_for(src_url)
        order = self._script_link_count.get(src, 0)
        self._script_link_count[src] = order + 1
        self._script_link_rows.append((src, order, self.id_for(dst_url), anchor))

    def add_injected(self, url: str, kind: str, original: str | None = None) -> None:
        """Ground truth of a messy web: ``url`` was injected as ``kind`` (a copy or redirect: of ``original``).

        The URL needs a row of its own (a page, or a dead end added at close) like any link target."""
        self.id_for(url)
        self._injected_rows[url] = (kind, original)

    def set_meta(self, key: str, value) -> None:
        self._meta[key] = value

    def meta_value(self, key: str, default=""):
        """A meta value set so far (a builder extending another's web adds to it)."""
        return self._meta.get(key, default)

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
                self._page_rows.append((page_id, url, site_of(url), 404, "", None, "", "", None, None))
                if len(self._page_rows) >= 20_000:
                    self._flush_pages()
        self._flush_pages()
        self._flush_links()
        self._db.execute("CREATE INDEX links_src ON links (src, ord)")
        if self._script_link_rows:
            self._db.executescript(SCRIPT_LINKS_SCHEMA)
            self._db.executemany("INSERT INTO script_links VALUES (?,?,?,?)", self._script_link_rows)
        if self._canonical_rows:
            self._db.execute(CANONICALS_SCHEMA)
            self._db.executemany("INSERT INTO canonicals VALUES (?, ?)", self._canonical_rows)
        if self._injected_rows:
            self._db.execute(INJECTED_SCHEMA)
            self._db.executemany("INSERT INTO injected VALUES (?, ?, ?)",
                                 [(url, kind, original) for url, (kind, original) in self._injected_rows.items()])
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
