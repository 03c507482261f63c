"""The dashboard's HTTP server: standard library only (``http.server``), read-only, local by default.

Routes, by folder kind (``GET`` and ``HEAD`` only; anything else is 405):

    crawl   /                 the live page (polls /api/run?fragments=1 every 1.5 s)
            /api/run          everything on the page as JSON (``fragments=1`` adds the rendered panels)
            /page/N           step N's text as the crawler saw it (from pages.jsonl), /api/page/N as JSON
    bench   /                 harvest curves of every strategy and the summary table; /api/bench,
            /harvest.svg      the chart alone
    suite   /                 suite tables, the rows' AUC/oracle, each row's curves; /api/suite,
            /row/SLUG         a row's bench page (/row/SLUG/harvest.svg, /api/row/SLUG)

Safety: it binds 127.0.0.1 unless told otherwise, and then a token is required (``?token=`` or the
``X-Dashboard-Token`` header, or ``Authorization: Bearer``); on loopback without a token, a request whose
Host header is not a loopback name is refused (a DNS-rebinding page cannot read the crawl). Pages carry a
strict Content-Security-Policy and no referrer, so that a link to a crawled site does not leak the token.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from focuscrawl.dashboard import views
from focuscrawl.dashboard.results import BenchReader, SuiteReader, clean, is_bench, is_suite
from focuscrawl.dashboard.run import RunReader
from focuscrawl.storage.pages import PAGES_FILE
from focuscrawl.storage.state import STATE_FILE

DEFAULT_PORT = 8765
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]", "localhost.localdomain"}
TOKEN_HEADER = "X-Dashboard-Token"
KINDS = ("crawl", "bench", "suite")


class DashboardError(Exception):
    """The dashboard cannot start as asked (a bad folder, a port in use): one line for the user."""


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def detect_kind(folder: str | Path) -> str:
    """crawl, bench or suite; raises DashboardError for a folder that is none of them."""
    path = Path(folder)
    if not path.exists():
        raise DashboardError(f"{folder} does not exist (give a crawl run folder, a bench folder or a suite folder)")
    if not path.is_dir():
        raise DashboardError(f"{folder} is not a folder (give a crawl run folder, a bench folder or a suite folder)")
    if (path / STATE_FILE).exists() or (path / PAGES_FILE).exists() or (path / "config.yml").exists():
        return "crawl"
    if (path / "suite.json").exists() or (path / "rows").is_dir() and is_suite(path):
        return "suite"
    if is_bench(path):
        return "bench"
    try:
        empty = not any(path.iterdir())
    except OSError as exc:
        raise DashboardError(f"{folder} cannot be read: {exc.strerror}") from None
    if empty:
        return "crawl"  # a crawl about to start in it: the page waits for it
    raise DashboardError(f"{folder} is not a crawl run folder (no state.sqlite), a bench folder (no summary.json "
                         "with strategies) nor a suite folder (no suite.json or rows/)")


def _band(query: dict) -> str:
    band = (query.get("band") or ["range"])[0]
    return band if band in views.BANDS else "range"


def _json_bytes(data: Any) -> bytes:
    return json.dumps(clean(data), ensure_ascii=False, separators=(",", ":")).encode()


class Dashboard:
    """What the server shows for one folder; request-independent, shared by the handler threads."""

    def __init__(self, folder: str | Path, kind: str | None = None):
        self.folder = Path(folder)
        self.kind = kind or detect_kind(self.folder)
        if self.kind not in KINDS:
            raise DashboardError(f"unknown folder kind {self.kind!r}")
        self.run = RunReader(self.folder) if self.kind == "crawl" else None
        self.bench = BenchReader(self.folder) if self.kind == "bench" else None
        self.suite = SuiteReader(self.folder) if self.kind == "suite" else None
        self._snap_lock = threading.Lock()
        self._snap: dict | None = None
        self._snap_key: tuple | None = None
        self._snap_time = 0.0
        self._encoded: dict[bool, bytes] = {}

    def snapshot(self, max_age: float = 1.0) -> dict:
        """The crawl's figures. The store is read on every call (only its new steps); the figures are rebuilt
        when there are new steps or the status changed, and at least every ``max_age`` seconds (pages/s and
        "last page ... ago" move with the clock), however many pages poll."""
        assert self.run is not None
        with self._snap_lock:
            self.run.refresh()
            status = self.run.status()
            key = (self.run.store_ident, self.run.steps, status, self.run.read_error)
            now = time.monotonic()
            if self._snap is None or key != self._snap_key or now - self._snap_time >= max_age:
                self._snap = self.run.snapshot(status=status)
                self._snap_key, self._snap_time = key, now
                self._encoded = {}
            return self._snap

    def run_json(self, link, fragments: bool) -> bytes:
        """/api/run's body, encoded once per snapshot (``fragments``: with the rendered panels)."""
        snap = self.snapshot()
        with self._snap_lock:
            if snap is self._snap and fragments in self._encoded:
                return self._encoded[fragments]
        data = {**snap, "title": views.crawl_title(snap), "html": views.crawl_fragments(snap, link)} \
            if fragments else snap
        body = _json_bytes(data)
        with self._snap_lock:
            if snap is self._snap:
                self._encoded[fragments] = body
        return body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # SO_REUSEADDR (as http.server sets it): a port left in TIME_WAIT by the last run can be bound again at
    # once; on Linux it never lets two servers listen on one port, so a port in use still fails.
    allow_reuse_address = True

    def __init__(self, address, handler, dashboard: Dashboard, token: str | None, loopback_only_hosts: bool):
        self.dashboard = dashboard
        self.token = token
        self.check_host = loopback_only_hosts
        super().__init__(address, handler)


class _V6Server(_Server):
    address_family = socket.AF_INET6


class Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "focuscrawl-dashboard"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle connection does not keep a thread forever

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet: the crawl owns the terminal
        pass

    # -- read-only: only GET and HEAD -----------------------------------------------------------------
    def _refuse_method(self) -> None:
        self._head_only = False
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"read-only: GET and HEAD only\n", "text/plain; charset=utf-8",
                   extra={"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method  # noqa: N815

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(head=True)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        self._head_only = head  # one handler serves every request of a keep-alive connection
        try:
            self._route()
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:  # noqa: BLE001 - one bad request must not stop the dashboard
            try:
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, f"dashboard error: {type(exc).__name__}: {exc}\n"
                           .encode(), "text/plain; charset=utf-8")
            except OSError:
                pass

    # -- plumbing ----------------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, content_type: str, *, extra: dict[str, str] | None = None,
              nonce: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        script = f"'nonce-{nonce}'" if nonce else "'none'"
        self.send_header("Content-Security-Policy", f"default-src 'none'; script-src {script}; style-src "
                         "'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                         "form-action 'none'; frame-ancestors 'none'")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not self._head_only:
            self.wfile.write(body)

    def _html(self, text: str, nonce: str, status: int = 200) -> None:
        self._send(status, text.encode(), "text/html; charset=utf-8", nonce=nonce)

    def _json(self, data: Any, status: int = 200) -> None:
        self._json_body(_json_bytes(data), status)

    def _json_body(self, body: bytes, status: int = 200) -> None:
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        if status == 200 and etag in (self.headers.get("If-None-Match") or ""):
            self._send(HTTPStatus.NOT_MODIFIED, b"", "application/json", extra={"ETag": etag})
            return
        self._send(status, body, "application/json; charset=utf-8", extra={"ETag": etag})

    def _svg(self, text: str) -> None:
        self._send(200, text.encode(), "image/svg+xml; charset=utf-8")

    def _not_found(self, what: str = "not found") -> None:
        if self.path.startswith("/api/"):
            self._json({"error": what}, status=404)
        else:
            nonce = secrets.token_urlsafe(12)
            self._html(views.message_page("not found", what, nonce=nonce), nonce, status=404)

    def _authorised(self, query: dict[str, list[str]]) -> bool:
        token = self.server.token
        if self.server.check_host:
            host = (self.headers.get("Host") or "").strip()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if host and not is_loopback(name.strip("[]")):
                return False
        if token is None:
            return True
        offered = (query.get("token") or [""])[0] or self.headers.get(TOKEN_HEADER, "")
        auth = self.headers.get("Authorization", "")
        if not offered and auth.lower().startswith("bearer "):
            offered = auth[7:].strip()
        return hmac.compare_digest(offered.encode(), token.encode())

    # -- routes -----------------------------------------------------------------------------------------
    def _route(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if not self._authorised(query):
            self._send(HTTPStatus.FORBIDDEN, b"forbidden: this dashboard needs its token (?token=...)\n",
                       "text/plain; charset=utf-8")
            return
        path = parts.path.rstrip("/") or "/"
        token = self.server.token

        def link(target: str) -> str:
            target = quote(target, safe="/")  # row names come from folder names: keep the link well-formed
            return f"{target}?token={quote(token, safe='')}" if token else target

        dashboard = self.server.dashboard
        if path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
            return
        nonce = secrets.token_urlsafe(12)
        if dashboard.kind == "crawl":
            self._crawl_route(path, query, link, nonce)
        elif dashboard.kind == "bench":
            self._bench_route(path, query, link, nonce)
        else:
            self._suite_route(path, query, link, nonce)

    def _crawl_route(self, path: str, query: dict, link, nonce: str) -> None:
        dashboard = self.server.dashboard
        run = dashboard.run
        if path == "/":
            self._html(views.crawl_page(dashboard.snapshot(), link, nonce=nonce), nonce)
        elif path == "/api/run":
            fragments = (query.get("fragments") or ["0"])[0] not in ("", "0")
            self._json_body(dashboard.run_json(link, fragments))
        elif (match := re.fullmatch(r"/(api/)?page/(\d{1,12})", path)) is not None:
            step = int(match.group(2))
            record = run.page(step)
            if record is None:
                self._not_found(f"step {step} is not in the run folder (yet)")
            elif match.group(1):
                self._json(record)
            else:
                parent = run.step_of(record.get("parent") or "")
                self._html(views.page_view(record, link, nonce=nonce, parent_step=parent,
                                           last_step=dashboard.snapshot()["totals"]["steps"] - 1), nonce)
        else:
            self._not_found()

    def _bench_route(self, path: str, query: dict, link, nonce: str) -> None:
        bench = self.server.dashboard.bench
        data = bench.load()
        band = _band(query)
        if path == "/":
            self._html(views.bench_page(data, str(bench.folder), link, nonce=nonce, band=band), nonce)
        elif path == "/api/bench":
            self._json({"kind": "bench", "folder": str(bench.folder), **(data or {"summary": None})})
        elif path == "/harvest.svg" and data is not None:
            self._svg(views.bench_chart(data, band=band))
        else:
            self._not_found()

    def _suite_route(self, path: str, query: dict, link, nonce: str) -> None:
        suite = self.server.dashboard.suite
        band = _band(query)
        if path == "/":
            self._html(views.suite_page(suite.suite(), suite.rows(), str(suite.folder), link, nonce=nonce), nonce)
        elif path == "/api/suite":
            self._json({"kind": "suite", "folder": str(suite.folder), "suite": suite.suite(), "rows": suite.rows()})
        elif (match := re.fullmatch(r"/(api/)?row/([^/]+?)(/harvest\.svg)?", path)) is not None:
            reader = suite.row(match.group(2))
            data = reader.load() if reader is not None else None
            if data is None:
                self._not_found(f"no row {match.group(2)!r} with results in this suite")
            elif match.group(1):
                self._json({"kind": "bench", "row": match.group(2), **data})
            elif match.group(3):
                summary = data["summary"]
                self._svg(views.bench_chart(data, width=560, height=300, title=f"{summary.get('web')} / "
                                            f"{summary.get('topic')}", chart_id="chart-row", band=band))
            else:
                self._html(views.bench_page(data, match.group(2), link, nonce=nonce, back="/",
                                            here=f"/row/{match.group(2)}", band=band), nonce)
        else:
            self._not_found()


class DashboardServer:
    """A started dashboard: ``url`` to open, ``serve_forever()`` here or ``start()`` in a daemon thread."""

    def __init__(self, folder: str | Path, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 token: str | None = None, kind: str | None = None):
        self.dashboard = Dashboard(folder, kind)
        if not is_loopback(host) and not token:
            token = secrets.token_urlsafe(18)  # elsewhere than loopback: never without a token
        self.token = token
        self.host = host
        server_cls = _V6Server if ":" in host.strip("[]") else _Server
        try:
            self.httpd = server_cls((host.strip("[]"), port), Handler, self.dashboard, token,
                                    loopback_only_hosts=is_loopback(host) and not token)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise DashboardError(f"port {port} is in use on {host}: choose another one (0 picks a free "
                                     "port)") from None
            if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(exc, socket.gaierror):
                raise DashboardError(f"cannot listen on {host}: {exc.strerror or exc}") from None
            if exc.errno == errno.EACCES:
                raise DashboardError(f"not allowed to listen on {host} port {port} (ports below 1024 need "
                                     "privileges): choose another one") from None
            raise DashboardError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None
        self.port = self.httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else socket.gethostname()
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}/" + (f"?token={quote(self.token, safe='')}" if self.token else "")

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.25)

    def start(self) -> DashboardServer:
        """Serve in a daemon thread (it ends with the process, or with ``stop``)."""
        self._thread = threading.Thread(target=self.serve_forever, name="focuscrawl-dashboard", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> DashboardServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_dashboard(folder: str | Path, **options) -> DashboardServer:
    """A dashboard server for ``folder`` (bound, not yet serving): see DashboardServer."""
    return DashboardServer(folder, **options)
