"""robots.txt: fetched once per site, cached with an expiry, interpreted as RFC 9309 says.

Parsing is Protego's (Scrapy's parser: wildcards, ``$``, longest match, Crawl-delay). This module only
decides what to do when there is no usable file: a 4xx means "no rules" (allow all), while a 5xx,
a 429 or an unreachable server means "assume everything is disallowed" until we try again, because a
site in trouble is the last one that wants a crawler.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

# (status, body) of GET /robots.txt after redirects; status 0 for a network failure.
RobotsFetch = Callable[[str], Awaitable[tuple[int, str]]]


@dataclass(slots=True)
class RobotsRules:
    """The rules of one site (scheme + host + port) as of one fetch of its robots.txt."""

    status: int
    expires: float
    parser: Protego | None = None
    disallow_all: bool = False

    def allowed(self, url: str, agent: str) -> bool:
        if self.disallow_all:
            return False
        if self.parser is None:
            return True
        return bool(self.parser.can_fetch(url, agent))

    def crawl_delay(self, agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(agent)
        if delay is None:
            rate = self.parser.request_rate(agent)
            if rate is not None and rate.requests:
                delay = rate.seconds / rate.requests
        return None if delay is None else float(delay)


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


def site_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class RobotsCache:
    """robots.txt rules per site, fetched on first use through ``fetch`` and refreshed after expiry.

    ``ttl`` bounds how long a good file is trusted (RFC 9309 asks for at most 24 hours);
    ``error_ttl`` is how long an unreachable site stays fully disallowed before we ask again.
    """

    def __init__(
        self,
        fetch: RobotsFetch,
        *,
        ttl: float = 24 * 3600.0,
        error_ttl: float = 600.0,
        max_sites: int = 100_000,
    ):
        self._fetch = fetch
        self.ttl = ttl
        self.error_ttl = error_ttl
        self.max_sites = max_sites
        self._rules: dict[str, RobotsRules] = {}
        self._pending: dict[str, asyncio.Future] = {}
        self.fetches = 0

    def known(self, url: str) -> bool:
        """Whether ``url``'s site has unexpired rules here (``rules`` would answer without a request)."""
        cached = self._rules.get(site_key(url))
        return cached is not None and cached.expires > time.monotonic()

    async def rules(self, url: str) -> RobotsRules:
        key = site_key(url)
        cached = self._rules.get(key)
        if cached is not None and cached.expires > time.monotonic():
            return cached
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            rules = await self._load(robots_url(url))
            if len(self._rules) >= self.max_sites:
                self._rules.clear()
            self._rules[key] = rules
            future.set_result(rules)
            return rules
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must log it
            raise
        finally:
            del self._pending[key]

    async def _load(self, url: str) -> RobotsRules:
        self.fetches += 1
        status, body = await self._fetch(url)
        now = time.monotonic()
        if 200 <= status < 300:
            try:
                parser = Protego.parse(body)
            except Exception:  # noqa: BLE001 - a file Protego chokes on is treated as no rules
                parser = None
            return RobotsRules(status, now + self.ttl, parser)
        if 400 <= status < 500 and status != 429:
            return RobotsRules(status, now + self.ttl)
        # 5xx, 429, 3xx loops and network errors: the site is unreachable, so nothing is allowed.
        return RobotsRules(status, now + self.error_ttl, disallow_all=True)
