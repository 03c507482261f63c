"""Serve an offline web over HTTP on loopback, each of its hosts on its own 127.x.y.z address.

This is how the real-web fetcher is tested end to end, and how a crawl over HTTP is compared with the
in-process crawl of the same web: the crawler keeps the web's own URLs and is told (``resolve_overrides``)
which loopback address stands for which host, exactly as DNS would on the real web. Linux routes all of
127.0.0.0/8 to the loopback interface, so any of those addresses can be bound without configuration.

The server speaks plain HTTP. A crawler that maps an ``https://`` URL to it says so with
``X-Forwarded-Proto: https``; without that header the ``http://`` URL is meant, and the ``https://`` one is
looked up only when the web has no such page (for a person typing an address by hand), so that a web
holding both (a messy web's scheme mirror) answers each with its own page.

A messy web (``focuscrawl.webs.mess``) is served with its hosts' behaviour (``focuscrawl.webs.behaviour``):
the URLs that fail offline fail here too (500/503; an error also starts a burst of 503s for the host's next
requests; a timeout hangs ``hang_s``), slow hosts trickle their bodies over ``slow_body_s``, soft-404 hosts
answer unknown paths with their not-found page and status 200, and pages carry their
``<link rel="canonical">`` and the script that writes their script-only links. robots.txt never fails,
so that a host's failures are its pages', not a refusal of the whole host.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import json
import random
import socket
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from focuscrawl.html import canonical_tag, insert_html, render_html, script_links_tag
from focuscrawl.urls import normalize_url
from focuscrawl.webs.behaviour import HostBehaviour
from focuscrawl.webs.store import WEB_FILE, OfflineWeb

SLOW_BODY_CHUNKS = 10  # a slow host sends a body in this many pieces, evenly spread over its time

# A test hook: (request, host, url) -> a response to send instead of the web's, or None.
Hook = Callable[[web.Request, str, str], Awaitable[web.StreamResponse | None]]


@dataclass(frozen=True, slots=True)
class RequestLog:
    """One request as the server saw it (``time`` is time.monotonic() on arrival; ``url`` the web's URL it
    asked for, scheme included: the page it found, else the URL as the request meant it)."""

    time: float
    host: str
    path: str
    status: int
    address: str
    user_agent: str
    url: str


def allocate_addresses(count: int, base_ip: str = "127.0.1.1") -> list[str]:
    """``count`` distinct loopback addresses from ``base_ip`` upwards, skipping .0 and .255."""
    addr = ipaddress.IPv4Address(base_ip)
    if not addr.is_loopback:
        raise ValueError(f"{base_ip} is not a loopback address (127.0.0.0/8)")
    out: list[str] = []
    while len(out) < count:
        if not addr.is_loopback:
            raise ValueError(f"not enough loopback addresses above {base_ip} for {count} hosts")
        if addr.packed[-1] not in (0, 255):
            out.append(str(addr))
        addr += 1
    return out


def web_hosts(web_dir: str | Path) -> list[str]:
    """The distinct host names in the web's URLs (``www.x`` and ``x`` are distinct hosts here)."""
    db = sqlite3.connect(f"file:{Path(web_dir) / WEB_FILE}?mode=ro&immutable=1", uri=True)
    try:
        hosts = {(urlsplit(url).hostname or "").lower() for (url,) in db.execute("SELECT url FROM pages")}
    finally:
        db.close()
    hosts.discard("")
    return sorted(hosts)


class ServedWeb:
    """A running (or ready to run) loopback server for one offline web. Use ``async with`` or start/stop.

    ``hosts`` maps each host name to the ``"ip:port"`` serving it: pass it to
    ``FetchConfig.resolve_overrides``. ``log`` records every request, for politeness checks.
    """

    def __init__(
        self,
        web_dir: str | Path,
        *,
        base_ip: str = "127.0.1.1",
        port: int = 0,
        latency_ms: float = 0.0,
        error_rate: float = 0.0,
        error_status: int = 503,
        seed: int = 0,
        disallow: Iterable[str] | Mapping[str, Iterable[str]] = (),
        crawl_delay: float | None = None,
        robots: Mapping[str, str | None] | None = None,
        max_addresses: int = 4096,
        hook: Hook | None = None,
        log_size: int = 1_000_000,
        cache_pages: int = 4096,
        hang_s: float | None = None,
        slow_body_s: float | None = None,
        log_file: str | Path | None = None,
    ):
        self.web_dir = Path(web_dir)
        self.web = OfflineWeb(self.web_dir)
        self._db = sqlite3.connect(f"file:{self.web_dir / WEB_FILE}?mode=ro&immutable=1", uri=True,
                                   check_same_thread=False)
        self.base_ip = base_ip
        self.port = port
        self.latency = latency_ms / 1000.0
        self.error_rate = error_rate
        self.error_status = error_status
        self.rng = random.Random(seed)
        self.disallow = disallow
        self.crawl_delay = crawl_delay
        self.robots_override = dict(robots or {})
        self.hook = hook
        # A messy web's timeouts and slow bodies, unless told otherwise (a test wants short ones).
        self.hang_s = hang_s
        self.slow_body_s = slow_body_s
        self._burst_left: dict[str, int] = {}
        self.log: deque[RequestLog] = deque(maxlen=log_size)
        # Every request also as a JSON line, written as it ends: for a server in another process (a benchmark
        # checking politeness), whose in-memory log its client cannot read.
        self._log_out = open(log_file, "a", buffering=1, encoding="utf-8") if log_file is not None else None
        # render_html costs ~15 ms for a long article: keep recent bodies so repeated crawls are fast.
        self._cache: dict[str, bytes] = {}
        self._cache_size = cache_pages
        names = web_hosts(self.web_dir)
        # More hosts than addresses: hosts share addresses round-robin and are told apart by Host header.
        addresses = allocate_addresses(min(len(names), max_addresses) or 1, base_ip)
        self._address_of = {host: addresses[i % len(addresses)] for i, host in enumerate(names)}
        self._hosts_at: dict[str, list[str]] = {}
        for host, ip in self._address_of.items():
            self._hosts_at.setdefault(ip, []).append(host)
        self.hosts: dict[str, str] = {}
        self._runner: web.AppRunner | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> ServedWeb:
        app = web.Application(handler_args={"max_field_size": 16384})
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # A test server must stop promptly even with a deliberately slow handler in flight.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        ports: dict[str, int] = {}
        try:
            for ip in dict.fromkeys(self._address_of.values()):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((ip, self.port))
                ports[ip] = sock.getsockname()[1]
                await web.SockSite(self._runner, sock, backlog=1024).start()
        except BaseException:
            await self._runner.cleanup()
            raise
        self.hosts = {host: f"{ip}:{ports[ip]}" for host, ip in self._address_of.items()}
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.web.close()
        self._db.close()
        if self._log_out is not None:
            self._log_out.close()
            self._log_out = None

    async def __aenter__(self) -> ServedWeb:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    def base_url(self, host: str) -> str:
        return f"http://{self.hosts[host]}"

    # -- robots.txt ------------------------------------------------------------------------------
    def robots_txt(self, host: str) -> str | None:
        """The robots.txt served for ``host`` (None: answer 404)."""
        if host in self.robots_override:
            return self.robots_override[host]
        rules = self.disallow.get(host, ()) if isinstance(self.disallow, Mapping) else self.disallow
        lines = ["User-agent: *"]
        lines += [f"Disallow: {path}" for path in rules] or ["Disallow:"]
        if self.crawl_delay is not None:
            lines.append(f"Crawl-delay: {self.crawl_delay:g}")
        return "\n".join(lines) + "\n"

    # -- requests --------------------------------------------------------------------------------
    def _host_of(self, request: web.Request) -> tuple[str, str]:
        """(host name, netloc as the client wrote it) of a request."""
        netloc = (request.headers.get("Host") or "").strip().lower()
        host = urlsplit(f"//{netloc}").hostname or ""
        if host in self._address_of:
            return host, netloc
        # Addressed by IP (e.g. curl http://127.0.1.1/): the address says which host is meant.
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        candidates = self._hosts_at.get(sockname[0], []) if sockname else []
        return (candidates[0], candidates[0]) if candidates else ("", netloc)

    @staticmethod
    def _schemes(request: web.Request) -> list[str]:
        """The schemes the request may mean, likeliest first (module docstring: X-Forwarded-Proto)."""
        proto = request.headers.get("X-Forwarded-Proto", "").lower()
        return [proto] if proto in ("http", "https") else ["http", "https"]

    def _lookup(self, request: web.Request, netloc: str) -> tuple[str, tuple] | None:
        for scheme in self._schemes(request):
            url = f"{scheme}://{netloc}{request.raw_path}"
            for candidate in dict.fromkeys([url, normalize_url(url) or url]):
                row = self._db.execute(
                    "SELECT status, content_type, location FROM pages WHERE url = ?", (candidate,)
                ).fetchone()
                if row is not None:
                    return candidate, row
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        host, netloc = self._host_of(request)
        found = self._lookup(request, netloc) if host else None
        if found is not None:
            url = found[0]
        else:  # no page: the URL as the crawler meant it, for its host's behaviour
            raw = f"{self._schemes(request)[0]}://{netloc}{request.raw_path}"
            url = normalize_url(raw) or raw
        response = await self._respond(request, host, netloc, found, url)
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        entry = RequestLog(arrived, host, request.raw_path, response.status, sockname[0] if sockname else "",
                           request.headers.get("User-Agent", ""), url)
        self.log.append(entry)
        if self._log_out is not None:
            self._log_out.write(json.dumps(dataclasses.asdict(entry)) + "\n")
        return response

    async def _respond(self, request: web.Request, host: str, netloc: str, found: tuple[str, tuple] | None,
                       url: str) -> web.StreamResponse:
        if self.latency:
            await asyncio.sleep(self.latency)
        if not host:
            return web.Response(status=404, text="unknown host\n")
        if self.hook is not None:
            hooked = await self.hook(request, host, f"http://{netloc}{request.raw_path}")
            if hooked is not None:
                return hooked
        if self.error_rate and self.rng.random() < self.error_rate:
            return web.Response(status=self.error_status, text="injected error\n")
        if request.path == "/robots.txt":
            body = self.robots_txt(host)
            if body is None:
                return web.Response(status=404, text="no robots.txt\n")
            return web.Response(text=body, content_type="text/plain")
        behaviour = self.web.behaviours.get(host)
        if behaviour is not None and behaviour.failure is not None:
            failed = await self._fail(request, host, behaviour, url)
            if failed is not None:
                return failed
        if found is None or found[1][0] == 404:
            not_found = self.web.not_found(url)
            if not_found is not None:
                body = render_html(not_found.title, not_found.text, not_found.outlinks).encode("utf-8")
                return await self._send(request, behaviour, body, "text/html")
            if found is None:
                return web.Response(status=404, text="not in this web\n")
        url, (status, content_type, location) = found
        if 300 <= status < 400:
            return web.Response(status=status, headers={"Location": location} if location else None)
        if not 200 <= status < 300:
            return web.Response(status=status, text=f"status {status}\n")
        mime = (content_type or "text/html").split(";", 1)[0].strip()
        return await self._send(request, behaviour, self.page_body(url), mime)

    async def _fail(self, request: web.Request, host: str, behaviour: HostBehaviour, url: str
                    ) -> web.StreamResponse | None:
        """The failure ``url`` meets on its host, if any: as offline (by the URL), and over HTTP in bursts."""
        failed = behaviour.failure_status(self.web.failure_seed, url)
        if failed == 0:
            # A timeout: the request hangs longer than a crawler waits, then gets nothing useful.
            await asyncio.sleep(self.hang_s if self.hang_s is not None else behaviour.hang_s)
            return web.Response(status=504, text="timed out\n")
        if failed is not None:
            self._burst_left[host] = behaviour.burst
            return web.Response(status=failed, text=f"status {failed}\n")
        if self._burst_left.get(host, 0) > 0:
            self._burst_left[host] -= 1
            return web.Response(status=503, text="status 503 (overloaded)\n")
        return None

    async def _send(self, request: web.Request, behaviour: HostBehaviour | None, body: bytes,
                    mime: str) -> web.StreamResponse:
        headers = {"Content-Type": f"{mime}; charset=utf-8"}
        if behaviour is None or behaviour.failure != "slow":
            return web.Response(body=body, headers=headers)
        # A slow host: the body trickles, in pieces spread over slow_body_s.
        seconds = self.slow_body_s if self.slow_body_s is not None else behaviour.slow_body_s
        response = web.StreamResponse(headers={**headers, "Content-Length": str(len(body))})
        await response.prepare(request)
        step = max(1, -(-len(body) // SLOW_BODY_CHUNKS))
        for start in range(0, len(body), step):
            await asyncio.sleep(seconds / SLOW_BODY_CHUNKS)
            await response.write(body[start:start + step])
        await response.write_eof()
        return response

    def page_body(self, url: str) -> bytes:
        """The HTML served for a 2xx URL: stored HTML, else rendered from title, text and links; with its
        canonical URL and the script that adds its script-only links, when it has them."""
        body = self._cache.get(url)
        if body is None:
            html = self.web.html(url)
            page = self.web.stored(url)
            if page is None:  # not a URL of this web: nothing to serve
                return b""
            script_links = self.web.script_links(url)
            if html is None:
                html = render_html(page.title, page.text, page.outlinks, canonical=page.canonical,
                                   script_links=script_links)
            elif page.canonical or script_links:
                html = insert_html(html, head=canonical_tag(page.canonical) if page.canonical else "",
                                   body_end=script_links_tag(script_links))
            body = html.encode("utf-8")
            if len(self._cache) >= self._cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[url] = body
        return body


def serve_web(web_dir: str | Path, **options) -> ServedWeb:
    """A server for ``web_dir`` (not started yet): ``async with serve_web(d) as server: ...``.

    Options are those of ServedWeb: base_ip, port (0 = any free port per address), latency_ms,
    error_rate, error_status, seed, disallow (paths for every host, or host -> paths), crawl_delay,
    robots (host -> robots.txt text, None for 404), max_addresses, hook, log_file (every request appended
    as a JSON line), and for a messy web hang_s and slow_body_s (its timeouts' and slow bodies' times;
    default: the web's own).
    """
    return ServedWeb(web_dir, **options)
