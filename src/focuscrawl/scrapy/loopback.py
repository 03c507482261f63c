"""The add-on's download handler for a web served on loopback by ``focuscrawl web serve --map``
(``FOCUSCRAWL_HOSTS_MAP``; ``focuscrawl.scrapy.LoopbackDownloadHandler``)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest

from focuscrawl.crawl.inputs import read_hosts_map


class LoopbackDownloadHandler(HTTP11DownloadHandler):
    """Crawls a web served on loopback by ``focuscrawl web serve --map`` (``FOCUSCRAWL_HOSTS_MAP``): each request
    goes to the address serving its host, the Host header kept (https said with X-Forwarded-Proto), as DNS and TLS
    would on the web, so that Scrapy's slots, filters and redirects all see the web's own URLs. A host the map does
    not have is refused: nothing leaves loopback."""

    def __init__(self, crawler):
        super().__init__(crawler)
        self.hosts = self.read_map(crawler.settings["FOCUSCRAWL_HOSTS_MAP"])

    @staticmethod
    def read_map(path: str) -> dict[str, str]:
        hosts = read_hosts_map(Path(path))
        for host, address in hosts.items():
            ip = str(address).rsplit(":", 1)[0]
            try:
                loopback = ipaddress.ip_address(ip).is_loopback
            except ValueError:
                loopback = False
            if not loopback:
                raise ValueError(f"{path}: {host} maps to {address}, not a loopback address")
        return hosts

    async def download_request(self, request: Request):
        parts = urlsplit(request.url)
        address = self.hosts.get(parts.hostname or "")
        if address is None:
            raise IgnoreRequest(f"not a host of the served web: {parts.hostname}")
        headers = request.headers.copy()
        headers["Host"] = parts.netloc
        if parts.scheme == "https":
            headers["X-Forwarded-Proto"] = "https"
        sent = request.replace(url=urlunsplit(("http", address, parts.path or "/", parts.query, "")), headers=headers)
        response = await super().download_request(sent)
        if "download_latency" in sent.meta:
            request.meta["download_latency"] = sent.meta["download_latency"]
        return response.replace(url=request.url)
