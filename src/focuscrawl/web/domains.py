"""Registered domains: ``a.example.co.uk`` and ``b.example.co.uk`` belong to ``example.co.uk``.

Scope rules (allowed and denied domains) and per-domain politeness group hosts by the domain a registrant
owns, which only the Public Suffix List can tell (``co.uk`` is a suffix, ``example.co.uk`` a domain).
tldextract reads it from the copy bundled with the package: no network, no cache directory, so a crawl
gives the same answer on every machine and never fetches the list.

Hosts the list does not cover keep a meaning: an IP address or a single-label host (``localhost``) is its own
domain, and a host under an unknown suffix (``birds.test``) counts its last two labels.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import urlsplit

import tldextract

_EXTRACT = None


def _extractor() -> tldextract.TLDExtract:
    global _EXTRACT
    if _EXTRACT is None:  # loading the bundled list takes a moment: only when a rule needs it
        _EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)
    return _EXTRACT


def host_of(url_or_host: str) -> str:
    """The host of a URL (or a bare host), lower-cased, without a trailing dot or a port."""
    text = url_or_host.strip()
    if "://" in text:
        try:
            return (urlsplit(text).hostname or "").rstrip(".").lower()
        except ValueError:
            return ""
    host = text.split("/", 1)[0]
    if host.startswith("["):  # [::1]:8080
        return host[1:].split("]", 1)[0].lower()
    return host.rsplit(":", 1)[0].rstrip(".").lower() if host.count(":") == 1 else host.rstrip(".").lower()


@lru_cache(maxsize=65536)
def registered_domain(url_or_host: str) -> str:
    """The registered domain of a URL or host: ``https://a.b.example.co.uk/x`` -> ``example.co.uk``."""
    host = host_of(url_or_host)
    if not host:
        return ""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    if "." not in host:
        return host
    parts = _extractor()(host)
    if parts.suffix and parts.domain:
        return f"{parts.domain}.{parts.suffix}"
    if parts.suffix:  # the host is itself a public suffix (github.io): nobody's domain but its own
        return host
    return ".".join(host.split(".")[-2:])


def in_domains(host: str, domains: frozenset[str]) -> bool:
    """Whether ``host`` is one of ``domains`` (hosts or registered domains, lower-case), or a host under one."""
    if host in domains or registered_domain(host) in domains:
        return True
    return any(host.endswith("." + d) for d in domains)
