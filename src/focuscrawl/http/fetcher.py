"""The real-web fetcher: polite, bounded, and safe to point at URLs that strangers wrote.

One aiohttp session serves every request (aiohttp rather than httpx: its resolver hook lets the
address check happen on the very addresses the connection uses, it streams and leaves decompression
to us, and it is the faster of the two at high concurrency; its server half also runs the loopback
web in ``focuscrawl.webs.serve``, so the project has one HTTP stack).

Politeness is per host (or, with ``politeness="domain"``, per registered domain: ``a.example.org`` and
``b.example.org`` then share one schedule; with ``politeness="ip"``, per resolved address, as Nutch's
``fetcher.queue.mode=byIP``: every host name of one server shares its schedule): at most ``per_host_concurrency``
requests in flight and ``min_delay`` seconds (or the site's robots.txt Crawl-delay, or a 429/503 back-off) between
the end of one request and the start of the next. A request waits for its host's turn inside ``fetch``, so many
fetches can be in flight at once without any of them breaking a host's schedule.

Per address, the schedule of a request is that of the address the resolver (``http.safety.CachingResolver``, the
address guard's, with its TTL cache) gives first, which is the one its connection tries first: resolving the host
for the guard and for the schedule is one lookup. A host whose lookup fails sends nothing and keeps a schedule of
its own name; ``slot(url)``, which a crawl driver asks before any lookup, names the host until it is resolved.

``fetch`` never raises for network or HTTP trouble: a refused, unreachable or broken URL is a Page
with status 0 and an ``error``, because on the real web that is an ordinary outcome of a crawl step.

With ``render`` = ``auto`` or ``always`` an HTML page's scripts are run too (``focuscrawl.http.render``): the
browser gets the body already fetched and sends no request, so rendering never touches the politeness
schedule; the links only the scripts wrote follow the page's own.

Its settings are a ``FetchConfig`` (``focuscrawl.http.settings``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import aiohttp
from yarl import URL

from focuscrawl.html import (
    HTML_TYPES,
    SNIFF_TYPES,
    decode_html,
    is_html_body,
    looks_like_html,
    parse_html,
)
from focuscrawl.http.render import (
    Renderer,
    RenderError,
    RenderStats,
    merge_rendered,
    needs_rendering,
)
from focuscrawl.http.response import ContentDecoder, followable, page_from_body, parse_retry_after
from focuscrawl.http.robots import RobotsCache
from focuscrawl.http.safety import (
    AddressPolicy,
    BlockedAddressError,
    CachingResolver,
    check_url,
    is_trap_url,
)
from focuscrawl.http.settings import ROBOTS_MAX_BYTES, FetchConfig
from focuscrawl.types import Page, retry_after_error
from focuscrawl.urls import host_of, normalize_url, registered_domain


@dataclass(slots=True)
class FetchResult:
    """Everything known about one fetch: the Page, plus what a WARC writer or a log wants."""

    page: Page
    headers: list[tuple[str, str]] = field(default_factory=list)  # of the final response
    ip: str | None = None
    redirects: list[str] = field(default_factory=list)  # URLs fetched before the final one
    body: bytes = b""  # decoded of Content-Encoding, possibly cut at max_body_bytes
    truncated: bool = False
    elapsed: float = 0.0


@dataclass(slots=True)
class _Response:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    content_type: str = ""
    is_html: bool = False
    truncated: bool = False
    ip: str | None = None
    error: str = ""

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


@dataclass(slots=True)
class _HostState:
    active: int = 0
    next_start: float = 0.0
    backoff: float = 0.0  # extra delay after throttling answers without Retry-After, doubled each time
    crawl_delay: float | None = None
    last_end: float = float("-inf")
    waiters: list[asyncio.Future] = field(default_factory=list)


class HttpFetcher:
    """Fetches pages over HTTP(S). Create and use it inside one running event loop; ``aclose`` at the end.

    >>> async with HttpFetcher(FetchConfig(min_delay=2.0)) as fetcher:
    ...     page = await fetcher.fetch("https://example.org/")
    """

    real_time = True  # its fetches take real time: a crawl with it keeps the wall clock (``CrawlDriver``)

    def __init__(self, config: FetchConfig | None = None):
        self.config = config = config or FetchConfig()
        self.resolver = CachingResolver(
            AddressPolicy(config.allow_loopback, config.allow_private), config.resolve_overrides, ttl=config.dns_ttl
        )
        self.robots = RobotsCache(self._fetch_robots, ttl=config.robots_ttl, error_ttl=config.robots_error_ttl)
        self._hosts: dict[str, _HostState] = {}
        self._preparing: dict[str, asyncio.Task] = {}  # slot -> the robots.txt fetch ``prepare`` started for it
        self._global = asyncio.Semaphore(config.max_concurrency)
        self._session: aiohttp.ClientSession | None = None
        self.requests = 0
        self.renderer = None if config.render == "never" else Renderer(
            config.render_browser, timeout=config.render_timeout, concurrency=config.render_concurrency,
            sandbox=config.render_sandbox, user=config.render_user, max_dom_bytes=config.max_body_bytes)
        self.render_stats = self.renderer.stats if self.renderer is not None else RenderStats()

    # -- lifecycle -------------------------------------------------------------------------------
    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            cfg = self.config
            connector = aiohttp.TCPConnector(
                resolver=self.resolver, use_dns_cache=False, limit=cfg.max_concurrency, limit_per_host=0,
                enable_cleanup_closed=True,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),  # no cross-request state: every fetch is anonymous
                headers={"User-Agent": cfg.user_agent, "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
                         "Accept-Encoding": "gzip, deflate"},
                timeout=aiohttp.ClientTimeout(total=cfg.total_timeout, connect=cfg.connect_timeout,
                                              sock_read=cfg.read_timeout),
                auto_decompress=False,  # we decompress ourselves, counting bytes (decompression bombs)
                raise_for_status=False,
            )
        return self._session

    async def aclose(self) -> None:
        preparing = list(self._preparing.values())
        for task in preparing:
            task.cancel()
        if preparing:
            await asyncio.gather(*preparing, return_exceptions=True)
        self._preparing.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self.renderer is not None:
            await self.renderer.aclose()

    async def __aenter__(self) -> HttpFetcher:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    # -- the public API --------------------------------------------------------------------------
    async def fetch(self, url: str) -> Page:
        """Fetch ``url`` politely, following up to ``max_redirects`` redirects, each hop re-checked."""
        return (await self.fetch_result(url)).page

    def refusal(self, url: str) -> str | None:
        """Why ``url`` will not be fetched without contacting anyone (scheme, length, trap), or None."""
        reason = check_url(url, max_length=self.config.max_url_length)
        if reason is None and is_trap_url(url, max_segment_repeats=self.config.trap_max_segment_repeats,
                                          max_depth=self.config.trap_max_depth):
            reason = "looks like a spider trap (repeated or too deep path)"
        return reason

    async def fetch_result(self, url: str) -> FetchResult:
        return await self._follow(url, self.config.max_body_bytes, html_only=True)

    async def fetch_document(self, url: str, max_bytes: int) -> FetchResult:
        """Fetch ``url`` as ``fetch`` does (robots.txt, the address guard, politeness, redirects, throttling), but
        whatever its type: ``body`` holds it, decoded of Content-Encoding and cut at ``max_bytes`` (``truncated``
        says so). For documents that are not pages, such as sitemaps (``focuscrawl.http.sitemaps``)."""
        return await self._follow(url, max_bytes, html_only=False)

    async def _follow(self, url: str, max_bytes: int, *, html_only: bool) -> FetchResult:
        started = time.monotonic()
        cfg = self.config
        current = url
        redirects: list[str] = []
        retries = 0
        while True:
            reason = self.refusal(current)
            if reason is None:
                slot, reason = await self._resolved_slot(current)
            if reason is None and cfg.obey_robots:
                rules = await self.robots.rules(current)
                state = self._hosts.setdefault(slot, _HostState())
                delay = rules.crawl_delay(cfg.robots_agent)
                if cfg.politeness != "host" and state.crawl_delay is not None:
                    # The hosts of a domain or of an address: the slowest any of them asked for.
                    delay = max(delay or 0.0, state.crawl_delay)
                state.crawl_delay = delay
                if rules.disallow_all:
                    reason = f"disallowed by robots.txt: unavailable (status {rules.status}), retried later"
                elif not rules.allowed(current, cfg.robots_agent):
                    reason = "disallowed by robots.txt"
            if reason is not None:
                return self._result(url, current, _Response(0, error=reason), redirects, started)
            response = await self._request(current, max_bytes, html_only=html_only)
            if response.status in (429, 503) and retries < cfg.throttle_retries:
                wait = self._host_ready_in(current)
                if wait <= cfg.max_retry_after:
                    retries += 1
                    continue  # _request already pushed the host's next start past Retry-After
            location = response.header("Location")
            if 300 <= response.status < 400 and location:
                target = normalize_url(location, current)
                if target is None:
                    response.error = f"redirect to an unusable URL: {location[:200]}"
                    return self._result(url, current, response, redirects, started)
                if len(redirects) >= cfg.max_redirects or target in redirects or target == current:
                    response.error = "too many redirects" if target not in redirects else "redirect loop"
                    return self._result(url, current, response, redirects, started)
                redirects.append(current)
                current = target
                retries = 0
                continue
            result = self._result(url, current, response, redirects, started)
            page = result.page
            if html_only and self.renderer is not None and response.is_html and page.ok and not page.error:
                await self._render(result)
            return result

    # -- building the Page -----------------------------------------------------------------------
    def _result(self, url: str, final: str, response: _Response, redirects: list[str], started: float) -> FetchResult:
        links = ", ".join(v for k, v in response.headers if k.lower() == "link") or None
        if response.status in (429, 503) and not response.error:
            # when the server asked to be left alone: the host breaker (engine) keeps its URLs back that long
            retry_after = parse_retry_after(response.header("Retry-After"))
            if retry_after is not None:
                response.error = retry_after_error(retry_after)
        page = page_from_body(url, final, response.status, response.header("Content-Type"), response.body,
                              self.config, is_html=response.is_html, truncated=response.truncated,
                              error=response.error, link_header=links)
        return FetchResult(page, response.headers, response.ip, redirects, response.body, response.truncated,
                           time.monotonic() - started)

    async def _render(self, result: FetchResult) -> None:
        """Run the page's scripts if ``render`` asks for it; its links (and text, if longer) join the page."""
        cfg, page = self.config, result.page
        document = page.html if page.html is not None else decode_html(
            result.body, next((v for k, v in result.headers if k.lower() == "content-type"), None),
            truncated=result.truncated)
        if cfg.render == "auto" and needs_rendering(document) is None:
            return
        started = time.monotonic()
        try:
            dom = await self.renderer.render(page.final_url, document)  # counts renders, failures and their time
        except RenderError:
            return  # the page stays as its HTML reads
        finally:
            result.elapsed += time.monotonic() - started
        try:
            rendered = parse_html(dom, page.final_url, max_links=cfg.max_outlinks, main_text=cfg.main_text)
        except Exception:  # noqa: BLE001 - a DOM the parser cannot take: the page stays as its HTML reads
            return
        before = len(page.outlinks)
        page.title, page.text, links = merge_rendered((page.title, page.text, page.outlinks), rendered,
                                                      max_links=cfg.max_outlinks)
        page.outlinks = followable(links, cfg)
        self.render_stats.links_added += len(page.outlinks) - before

    # -- one HTTP exchange, politely ---------------------------------------------------------------
    async def _address_refusal(self, url: str) -> str | None:
        return (await self._resolved_slot(url))[1]

    async def _resolved_slot(self, url: str) -> tuple[str, str | None]:
        """(the slot of ``url`` once its host is resolved, why it will not be fetched or None): the address guard's
        lookup (cached for ``dns_ttl``) names the address of a per-address schedule too."""
        host = host_of(url)
        try:
            addresses = await self.resolver.addresses(host)
        except BlockedAddressError as exc:
            return host, f"refused address: {exc}"
        except OSError as exc:
            return host, str(exc)
        return self._slot_of(host, addresses[0]), None

    def _slot_of(self, host: str, address: str | None) -> str:
        politeness = self.config.politeness
        if politeness == "domain":
            return registered_domain(host)
        if politeness == "ip" and address is not None:
            return address  # an IP literal's slot too; a name never reads as an address, so the two never meet
        return host

    def slot(self, url: str) -> str:
        """Whose schedule a request to ``url`` waits for: its host's, its registered domain's, or its address's
        (as last resolved; the host's own until it is: ``fetch`` resolves before it takes its turn)."""
        host = host_of(url)
        if self.config.politeness != "ip":
            return self._slot_of(host, None)
        return self._slot_of(host, self.resolver.known_address(host))

    def site_slots(self, site: str) -> tuple[str, ...]:
        """The slots of the URLs of a crawl's site (``focuscrawl.urls.site_of``: a host without ``www.``)."""
        if self.config.politeness == "domain":
            return (registered_domain(site),)
        if self.config.politeness == "ip":
            return tuple(dict.fromkeys(self._slot_of(h, self.resolver.known_address(h)) for h in (site, f"www.{site}")))
        return (site, f"www.{site}")

    @property
    def slot_capacity(self) -> int:
        """Requests a slot serves at once (a crawl driver gives it no more)."""
        return self.config.per_host_concurrency

    def prepare(self, url: str) -> None:
        """Start fetching ``url``'s robots.txt in the background if it is not known yet, so that a crawl driver
        need not hold one of its fetches in flight through that request and the delay after it. The request
        keeps the host's schedule like any other; ``fetch`` later finds the rules (or waits for the same load)."""
        if not self.config.obey_robots or self.robots.known(url) or self.refusal(url) is not None:
            return
        slot = self.slot(url)
        if slot in self._preparing:
            return  # its robots.txt (or its other scheme's) is on its way
        task = asyncio.get_running_loop().create_task(self._prefetch_robots(url))
        self._preparing[slot] = task
        task.add_done_callback(lambda _: self._preparing.pop(slot, None))

    async def _prefetch_robots(self, url: str) -> None:
        if await self._address_refusal(url) is not None:
            return  # fetch will refuse the URL without asking anyone
        try:
            await self.robots.rules(url)
        except Exception:  # noqa: BLE001 - fetch asks again and treats a failure as it always does
            pass

    def ready_in(self, slot: str) -> float:
        """Seconds until politeness lets a request in ``slot`` (``slot(url)``) start, 0 if it could start now;
        while a robots.txt of the slot is being fetched (``prepare``), at least the delay that follows it. A crawl
        driver starts the fetches that can send at once before those that would wait inside ``fetch``."""
        if self.config.politeness == "ip" and slot not in self._hosts:
            # A host named before it was resolved (a fetch of it waiting in the driver since): its address's turn.
            slot = self._slot_of(slot, self.resolver.known_address(slot))
        wait = self._slot_ready_in(slot)
        if slot in self._preparing:
            wait = max(wait, self.config.min_delay)
        return wait

    async def _request(self, url: str, max_bytes: int, *, html_only: bool) -> _Response:
        host, refused = await self._resolved_slot(url)  # before taking a politeness slot
        if refused is not None:
            return _Response(0, error=refused)
        state = await self._acquire(host)
        status = 0
        retry_after: float | None = None
        try:
            async with self._global:
                response = await self._exchange(url, max_bytes, html_only)
            status = response.status
            if status in (429, 503):
                retry_after = parse_retry_after(response.header("Retry-After"))
            return response
        finally:
            self._release(host, state, status, retry_after)

    async def _exchange(self, url: str, max_bytes: int, html_only: bool) -> _Response:
        cfg = self.config
        self.requests += 1
        request_url = URL(url, encoded=True)
        headers = {}
        if self.resolver.override_for(request_url.host or "") is not None and request_url.scheme == "https":
            # The loopback server speaks plain HTTP; it learns the original scheme from this header.
            request_url = request_url.with_scheme("http")
            headers["X-Forwarded-Proto"] = "https"
        try:
            async with asyncio.timeout(cfg.total_timeout):
                async with self._client().get(request_url, headers=headers, allow_redirects=False) as resp:
                    return await self._read(resp, max_bytes, html_only)
        except TimeoutError:
            return _Response(0, error=f"timeout after {cfg.total_timeout:g} s")
        except aiohttp.ClientConnectorError as exc:
            cause = exc.os_error
            if isinstance(cause, BlockedAddressError):
                return _Response(0, error=f"refused address: {cause}")
            return _Response(0, error=f"cannot connect: {cause or exc}")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return _Response(0, error=f"{type(exc).__name__}: {exc}"[:500])
        except Exception as exc:  # noqa: BLE001 - whatever a hostile server provokes, fetch must not raise
            return _Response(0, error=f"unexpected {type(exc).__name__}: {exc}"[:500])

    async def _read(self, resp: aiohttp.ClientResponse, max_bytes: int, html_only: bool) -> _Response:
        out = _Response(resp.status, [(k.decode("latin-1"), v.decode("latin-1")) for k, v in resp.raw_headers])
        transport = resp.connection.transport if resp.connection is not None else None
        peer = transport.get_extra_info("peername") if transport is not None else None
        out.ip = peer[0] if peer else None
        raw_type = out.header("Content-Type") or ""
        out.content_type = raw_type.split(";", 1)[0].strip().lower()
        accepted = self.config.content_types
        if html_only and accepted is not None and out.content_type and out.content_type not in accepted:
            out.error = f"content type {out.content_type} is out of the crawl's scope"
        if html_only and (not 200 <= resp.status < 300 or out.error or
                          (out.content_type not in HTML_TYPES and out.content_type not in SNIFF_TYPES)):
            # Error pages, redirects, images, PDFs: the body is never used. A short one is drained so
            # that the connection can be reused; a long one costs a new connection instead.
            if (resp.content_length or 0) <= 65536 and resp.content_length is not None:
                await resp.read()
            else:
                resp.close()
            return out
        try:
            decoder = ContentDecoder(out.header("Content-Encoding") or "")
        except ValueError as exc:
            out.error = str(exc)
            return out
        chunks: list[bytes] = []
        size = wire = 0
        sniffed_out = False
        async for chunk in resp.content.iter_chunked(64 * 1024):
            wire += len(chunk)
            data = decoder.feed(chunk, max_bytes - size + 1)
            size += len(data)
            chunks.append(data)
            if size > max_bytes or wire > max_bytes or decoder.unconsumed:
                out.truncated = True
                break
            if html_only and len(chunks) == 1 and out.content_type not in HTML_TYPES and not looks_like_html(data):
                sniffed_out = True  # not HTML: stop downloading
                break
        if out.truncated or sniffed_out:
            resp.close()  # drop the connection rather than drain an endless, bomb or unwanted body
        else:
            tail = decoder.flush(max_bytes - size + 1)
            size += len(tail)
            chunks.append(tail)
            out.truncated = size > max_bytes
        out.body = b"".join(chunks)[:max_bytes]
        out.is_html = is_html_body(out.content_type, out.body)
        return out

    async def _fetch_robots(self, url: str) -> tuple[int, str]:
        current = url
        for _ in range(self.config.max_redirects + 1):
            if check_url(current) is not None:
                return 0, ""
            response = await self._request(current, ROBOTS_MAX_BYTES, html_only=False)
            location = response.header("Location")
            if 300 <= response.status < 400 and location:
                current = normalize_url(location, current) or ""
                continue
            return response.status, response.body.decode("utf-8", errors="replace")
        return 0, ""

    # -- politeness --------------------------------------------------------------------------------
    def _host_ready_in(self, url: str) -> float:
        """Seconds until politeness lets a request to ``url``'s host start (0 if it could start now)."""
        return self._slot_ready_in(self.slot(url))

    def _slot_ready_in(self, slot: str) -> float:
        state = self._hosts.get(slot)
        if state is None:
            return 0.0
        wait = max(0.0, self._ready_at(state) - time.monotonic())
        if state.active >= self.config.per_host_concurrency:
            # Busy: it frees when a response ends, which we cannot know; at least one delay away.
            wait = max(wait, self._delay(state), 0.001)
        return wait

    def _delay(self, state: _HostState) -> float:
        delay = self.config.min_delay
        if state.crawl_delay is not None:
            delay = max(delay, min(state.crawl_delay, self.config.max_crawl_delay))
        return delay + state.backoff

    def _ready_at(self, state: _HostState) -> float:
        # Measured from the end of the previous response, so a slow server gets slower requests.
        return max(state.next_start, state.last_end + self._delay(state))

    async def _acquire(self, host: str) -> _HostState:
        state = self._hosts.setdefault(host, _HostState())
        limit = self.config.per_host_concurrency
        while True:
            now = time.monotonic()
            ready_at = self._ready_at(state)
            if state.active < limit and now >= ready_at:
                state.active += 1
                state.next_start = now + self._delay(state)
                return state
            if state.active >= limit:
                waiter = asyncio.get_running_loop().create_future()
                state.waiters.append(waiter)
                try:
                    await waiter
                finally:
                    if waiter in state.waiters:
                        state.waiters.remove(waiter)
            else:
                await asyncio.sleep(ready_at - now)

    def _release(self, host: str, state: _HostState, status: int, retry_after: float | None) -> None:
        cfg = self.config
        state.active -= 1
        now = time.monotonic()
        if status in (429, 503):
            if retry_after is None:
                state.backoff = min(cfg.max_retry_after, max(2 * state.backoff, cfg.min_delay, 1.0))
            else:
                state.next_start = max(state.next_start, now + min(retry_after, cfg.max_retry_after + 1))
        elif status:
            state.backoff = 0.0
        state.last_end = now
        for waiter in state.waiters:
            if not waiter.done():
                waiter.set_result(None)
        state.waiters.clear()
