"""The address guard of a focused crawl in Scrapy: the crawler's own (``focuscrawl.http.safety``), so that a
spider fed strangers' links cannot be turned against the network it runs in (a router's admin page, a cloud's
metadata service, a database on loopback).

Why a downloader middleware: Scrapy's DNS resolver (``TWISTED_DNS_RESOLVER``) is the whole process's, installed
from the project's settings before any spider or add-on is read, so an add-on cannot replace it; a middleware
sees every request whatever the resolver, the download handler or a proxy, robots.txt and redirect hops
included. What it checks must also be what the connection uses: with Scrapy's default resolver, which keeps its
answers in ``scrapy.resolver.dnscache``, the checked address is written there before the download, so a DNS
answer that changes in between (DNS rebinding) is never connected to. With another resolver that cache is not
read, and the guard says so once.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.resolver import CachingThreadedResolver, dnscache

from focuscrawl.crawl.inputs import read_hosts_map
from focuscrawl.http.safety import AddressPolicy, BlockedAddressError, CachingResolver, is_ip

logger = logging.getLogger(__name__)

REFUSED_STAT = "focuscrawl/refused_address"


class AddressGuardMiddleware:
    """Refuses a request whose host is, or resolves only to, an address the crawler may not contact (private,
    loopback, link-local, an IPv6 address embedding one): ``IgnoreRequest``, one warning line, counted in the
    stats as ``focuscrawl/refused_address``. ``FOCUSCRAWL_ALLOW_LOOPBACK`` and ``FOCUSCRAWL_ALLOW_PRIVATE`` are
    the crawler's ``allow_loopback`` and ``allow_private``; a ``FOCUSCRAWL_HOSTS_MAP`` web is on loopback."""

    @classmethod
    def from_crawler(cls, crawler) -> AddressGuardMiddleware:
        return cls(crawler)

    def __init__(self, crawler):
        settings = crawler.settings
        try:  # an unreadable map is the scheduler's to refuse, in one line
            self.mapped = read_hosts_map(Path(settings["FOCUSCRAWL_HOSTS_MAP"])) \
                if settings.get("FOCUSCRAWL_HOSTS_MAP") else None
        except (OSError, ValueError):
            self.mapped = {}
        policy = AddressPolicy(allow_loopback=settings.getbool("FOCUSCRAWL_ALLOW_LOOPBACK") or self.mapped is not None,
                               allow_private=settings.getbool("FOCUSCRAWL_ALLOW_PRIVATE"))
        self.resolver = CachingResolver(policy, self.mapped)
        self.stats = crawler.stats
        from twisted.internet import reactor

        self.pins = isinstance(getattr(reactor, "resolver", None), CachingThreadedResolver)
        if not self.pins and self.mapped is None:
            logger.warning("focuscrawl: TWISTED_DNS_RESOLVER is not Scrapy's default: the address guard checks each "
                           "host's addresses, but cannot make the connection use the very addresses it checked")

    async def process_request(self, request: Request) -> None:
        host = (urlsplit(request.url).hostname or "").lower()
        if not host or (self.mapped is not None and host not in self.mapped):
            return  # no host: Scrapy refuses it; a host the served web lacks: the loopback handler refuses it
        try:
            addresses = await self.resolver.addresses(host)
            if self.pins and self.mapped is None and not is_ip(host):
                # Scrapy's default resolver is IPv4 only: it must connect to an IPv4 address checked here.
                ipv4 = [ip for ip in addresses if ":" not in ip]
                if not ipv4:
                    raise BlockedAddressError(f"{host} resolves to no allowed IPv4 address ({', '.join(addresses)} "
                                              "allowed)")
                dnscache[host] = ipv4[0]
        except BlockedAddressError as exc:
            self.stats.inc_value(REFUSED_STAT)
            logger.warning("focuscrawl: refused %s: %s", request.url, exc)
            raise IgnoreRequest(f"refused address: {exc}") from None
        except OSError:
            return  # the host does not resolve: Scrapy's own lookup fails, and reports it as a failed download

