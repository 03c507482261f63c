"""What a crawler must refuse before it opens a connection: bad schemes, internal addresses, spider traps.

A crawler fetches URLs that strangers wrote, so every URL (and every redirect hop) is untrusted input.
The address check happens inside the resolver that the HTTP connection itself uses: checking a name and
then letting the client resolve it again would let a DNS answer change in between (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult

from focuscrawl.types import DNS_FAILURE
from focuscrawl.urls import MAX_URL_LENGTH

ALLOWED_SCHEMES = ("http", "https")


class BlockedAddressError(OSError):
    """The host resolves only to addresses this crawler may not contact (private, loopback, ...)."""


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which IP addresses may be contacted. The default is the public internet only."""

    allow_loopback: bool = False
    allow_private: bool = False

    def allows(self, ip: str) -> bool:
        try:
            addr = ipaddress.ip_address(ip.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(addr, ipaddress.IPv6Address):
            embedded = embedded_ipv4(addr)
            if embedded is not None:
                # A translation or tunnel address reaches the IPv4 hosts it embeds: judge those.
                return bool(embedded) and all(self._allows_address(v4) for v4 in embedded)
        return self._allows_address(addr)

    def _allows_address(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if addr.is_loopback:
            return self.allow_loopback
        if addr.is_multicast or addr.is_link_local or addr.is_unspecified or addr.is_reserved:
            return False
        if addr.is_private or not addr.is_global:
            # is_global is False for shared (CGNAT), documentation and benchmarking ranges too.
            return self.allow_private
        return True


_SIXTOFOUR = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(addr: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses an IPv6 address reaches through a translator or a tunnel, or None when it is a plain
    IPv6 address. An empty list: an embedding no address may be contacted through (IPv4-compatible).

    A 6to4 relay, a Teredo relay or a NAT64 gateway on the crawler's network forwards such an address to the
    IPv4 host inside it, so a DNS answer of ``2002:c0a8:0101::`` would reach 192.168.1.1.
    """
    if addr.ipv4_mapped is not None:  # ::ffff:0:0/96
        return [addr.ipv4_mapped]
    if addr in _SIXTOFOUR:  # the IPv4 address in bits 16-48
        return [addr.sixtofour]
    if addr in _TEREDO:  # the server's IPv4 in bits 32-64, the client's (inverted) in the last 32: both reachable
        return list(addr.teredo)
    last32 = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr in _NAT64_WELL_KNOWN:  # RFC 6052: the well-known prefix is a /96, the IPv4 in the last 32 bits
        return [last32]
    if addr in _NAT64_LOCAL_USE:
        # A network-specific prefix inside 64:ff9b:1::/48 (RFC 8215) may be /48, /56, /64 or /96 long, each
        # putting the IPv4 elsewhere (RFC 6052, bits 64-71 skipped): every reading must be allowed.
        packed = addr.packed
        return [ipaddress.IPv4Address(packed[6:8] + packed[9:11]), ipaddress.IPv4Address(packed[7:8] + packed[9:12]),
                ipaddress.IPv4Address(packed[9:13]), last32]
    if addr in _IPV4_COMPATIBLE and int(addr) > 1:
        # Deprecated (RFC 4291) and never a legitimate DNS answer; :: and ::1 are judged as themselves.
        return []
    return None


def parse_host_port(value: str, default_port: int = 80) -> tuple[str, int]:
    """``"127.0.1.1"`` or ``"127.0.1.1:8080"`` or ``"[::1]:8080"`` -> (ip, port)."""
    value = value.strip()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, int(port)
    return value, default_port


class CachingResolver(AbstractResolver):
    """DNS for the crawler: host overrides, a TTL cache, and address filtering at resolution time.

    aiohttp connects to exactly the addresses this returns, so an address refused here can never be
    contacted, whatever a later DNS answer says. Overrides (``host -> "ip[:port]"``) let a crawl of a
    loopback-served web use the web's real host names; they are still subject to the address policy.
    """

    def __init__(
        self,
        policy: AddressPolicy,
        overrides: Mapping[str, str] | None = None,
        *,
        ttl: float = 300.0,
        negative_ttl: float = 60.0,
        max_entries: int = 100_000,
    ):
        self.policy = policy
        self.overrides = {host.lower(): parse_host_port(v) for host, v in (overrides or {}).items()}
        self.ttl = ttl
        self.negative_ttl = negative_ttl
        self.max_entries = max_entries
        self._cache: dict[str, tuple[float, list[tuple[str, int]] | str]] = {}
        self._pending: dict[str, asyncio.Future] = {}
        self._verdicts: dict[str, bool] = {}  # ip -> allowed (parsing addresses is not free)
        self.lookups = 0

    def override_for(self, host: str) -> tuple[str, int] | None:
        return self.overrides.get(host.lower())

    def known_address(self, host: str) -> str | None:
        """The address a connection to ``host`` tries first (``addresses(host)[0]``) as far as it is known without
        a lookup: an override, an IP literal, or the last answer cached, even past its TTL (the next ``addresses``
        renews it). None when ``host`` was never resolved, its lookup failed, or every address is refused."""
        host = host.lower().strip("[]")
        override = self.overrides.get(host)
        if override is not None:
            ips = [override[0]]
        else:
            entry = self._cache.get(host)
            if entry is not None:
                ips = [] if isinstance(entry[1], str) else [ip for ip, _family in entry[1]]
            else:
                ips = [host] if is_ip(host) else []
        return next((ip for ip in ips if self._allows(ip)), None)

    async def addresses(self, host: str) -> list[str]:
        """The allowed IPs of ``host``; raises BlockedAddressError or OSError when there are none."""
        host = host.lower().strip("[]")
        override = self.overrides.get(host)
        if override is not None:
            return self._filter(host, [override[0]])
        if is_ip(host):
            return self._filter(host, [host])
        entry = self._cache.get(host)
        now = time.monotonic()
        if entry is None or entry[0] < now:
            entry = await self._lookup(host)
        result = entry[1]
        if isinstance(result, str):
            raise OSError(result)
        return self._filter(host, [ip for ip, _family in result])

    async def _lookup(self, host: str) -> tuple[float, list[tuple[str, int]] | str]:
        # Concurrent fetches of one new host share a single lookup.
        pending = self._pending.get(host)
        if pending is not None:
            return await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self._pending[host] = future
        try:
            self.lookups += 1
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, 80, type=socket.SOCK_STREAM, flags=socket.AI_ADDRCONFIG
                )
                found = list(dict.fromkeys((info[4][0], info[0]) for info in infos))
                entry: tuple[float, list[tuple[str, int]] | str] = (time.monotonic() + self.ttl, found)
            except (OSError, UnicodeError) as exc:
                entry = (time.monotonic() + self.negative_ttl, f"{DNS_FAILURE} for {host}: {exc}")
            if len(self._cache) >= self.max_entries:
                self._cache.clear()  # crude but bounded; a crawl revisits few hosts after this many
            self._cache[host] = entry
            future.set_result(entry)
            return entry
        finally:
            del self._pending[host]

    def _filter(self, host: str, ips: list[str]) -> list[str]:
        allowed = [ip for ip in ips if self._allows(ip)]
        if not allowed:
            raise BlockedAddressError(f"{host} resolves to a refused address ({', '.join(ips) or 'none'})")
        return allowed

    def _allows(self, ip: str) -> bool:
        verdict = self._verdicts.get(ip)
        if verdict is None:
            if len(self._verdicts) >= self.max_entries:
                self._verdicts.clear()
            verdict = self._verdicts[ip] = self.policy.allows(ip)
        return verdict

    # -- aiohttp's resolver interface ------------------------------------------------------------
    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        override = self.overrides.get(host.lower())
        if override is not None:
            port = override[1]
        ips = await self.addresses(host)
        return [
            ResolveResult(
                hostname=host,
                host=ip,
                port=port,
                family=socket.AF_INET6 if ":" in ip else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for ip in ips
        ]

    async def close(self) -> None:
        self._cache.clear()


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def check_url(url: str, *, max_length: int = MAX_URL_LENGTH) -> str | None:
    """Why ``url`` must not be fetched (scheme, length, missing host), or None when it may be."""
    if len(url) > max_length:
        return f"URL longer than {max_length} characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"malformed URL: {exc}"
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        return f"scheme {parts.scheme or '(none)'!r} is not http(s)"
    if not parts.hostname:
        return "URL has no host"
    if port == 0:
        return "port 0"
    if parts.username or parts.password:
        return "credentials in URL"
    return None


def is_trap_url(url: str, *, max_segment_repeats: int = 3, max_depth: int = 16, max_query_params: int = 30) -> bool:
    """True for URLs that look like spider traps: a path segment repeated more than
    ``max_segment_repeats`` times (``/a/b/a/b/a/b/...`` from relative links on a soft-404 page), a
    path deeper than ``max_depth``, or an absurd number of query parameters (calendars, faceted search).
    """
    # String slicing rather than urlsplit: this runs on every outlink of every page.
    rest = url.split("#", 1)[0].partition("://")[2]
    path_start = rest.find("/")
    if path_start < 0:
        return False
    path, _, query = rest[path_start:].partition("?")
    segments = [s for s in path.split("/") if s]
    if len(segments) > max_depth:
        return True
    if len(segments) > max_segment_repeats:
        counts: dict[str, int] = {}
        for segment in segments:
            counts[segment] = counts.get(segment, 0) + 1
            if counts[segment] > max_segment_repeats:
                return True
    return bool(query) and query.count("&") + 1 > max_query_params
