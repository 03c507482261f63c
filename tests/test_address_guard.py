"""The address guard: IPv6 addresses that embed an IPv4 address (6to4, Teredo, NAT64, IPv4-mapped and
-compatible) are judged by the IPv4 hosts they reach, in a URL's literal host and in a DNS answer alike, through
the entry points the HTTP fetcher uses (``HttpFetcher.fetch``, ``CachingResolver.addresses``)."""

from __future__ import annotations

import asyncio

import pytest

from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.safety import AddressPolicy, BlockedAddressError, CachingResolver
from focuscrawl.http.settings import FetchConfig

# kind -> (an address embedding a private IPv4 address, one embedding a public one, one embedding loopback)
EMBEDDED = {
    "6to4": ("2002:c0a8:101::1", "2002:808:808::1", "2002:7f00:1::1"),
    # Teredo: the server's IPv4 in bits 32-64, the client's inverted in the last 32; either may be the private one
    "teredo server": ("2001:0:a00:1::f7f7:f7f7", "2001:0:808:808::f7f7:f7f7", "2001:0:7f00:1::f7f7:f7f7"),
    "teredo client": ("2001:0:808:808::f5ff:fefe", "2001:0:808:808::f7f7:f7f7", "2001:0:808:808::80ff:fffe"),
    "nat64": ("64:ff9b::a00:1", "64:ff9b::808:808", "64:ff9b::7f00:1"),
    # the local-use prefix may be /48../96 long: every reading of the address must be allowed
    "nat64 local-use": ("64:ff9b:1::c0a8:101", "64:ff9b:1:808:808:808:808:808", "64:ff9b:1:7f7f:7f7f:7f7f:7f7f:7f7f"),
    "ipv4-mapped": ("::ffff:10.0.0.1", "::ffff:8.8.8.8", "::ffff:127.0.0.1"),
}


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("kind", EMBEDDED)
def test_an_embedded_private_address_is_refused_as_a_url_host_and_as_a_dns_answer(kind, monkeypatch):
    private, public, _ = EMBEDDED[kind]

    async def fake_getaddrinfo(host, port, **kwargs):
        return [(10, 1, 6, "", ({"inside.test": private, "outside.test": public}[host], port, 0, 0))]

    async def go():
        monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", fake_getaddrinfo)
        resolver = CachingResolver(AddressPolicy())
        for host in (private, "inside.test"):
            with pytest.raises(BlockedAddressError):
                await resolver.addresses(host)
        assert await resolver.addresses(public) == [public]
        assert await resolver.addresses("outside.test") == [public]
        # The fetcher refuses before it connects: the literal host and the host name resolving to it.
        async with HttpFetcher(FetchConfig(min_delay=0, obey_robots=False)) as fetcher:
            return [await fetcher.fetch(url) for url in (f"http://[{private}]/", "http://inside.test/")]

    for page in run(go()):
        assert page.status == 0 and page.error.startswith("refused address"), page.error


@pytest.mark.parametrize("kind", EMBEDDED)
def test_allow_private_and_allow_loopback_allow_embedded_addresses_as_plain_ones(kind):
    private, public, loopback = EMBEDDED[kind]
    if kind == "nat64 local-use":  # its other readings of a private address are 0.x.x.x: never contacted
        private = "64:ff9b:1:a0a:a0a:a0a:a0a:a0a"  # 10.10.10.10 however it is read
    assert AddressPolicy(allow_private=True).allows(private) and not AddressPolicy(allow_loopback=True).allows(private)
    assert AddressPolicy(allow_loopback=True).allows(loopback)
    assert not AddressPolicy(allow_private=True).allows(loopback)
    assert AddressPolicy().allows(public) and not AddressPolicy().allows(loopback)


def test_ipv4_compatible_addresses_are_never_contacted():
    """Deprecated (RFC 4291), never a legitimate DNS answer: refused whatever they embed; ``::1`` and ``::`` are
    themselves."""
    everything = AddressPolicy(allow_loopback=True, allow_private=True)
    assert not any(everything.allows(ip) for ip in ("::10.0.0.1", "::127.0.0.1", "::8.8.8.8", "::"))
    assert everything.allows("::1") and not AddressPolicy().allows("::1")
