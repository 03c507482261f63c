"""URL normalisation and the definition of a "domain" (TRES's web site).

One function decides what counts as "the same URL" for the closure, the frontier and offline stores, so
that a URL written by a builder and a URL found on a page always compare equal.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urljoin, urlsplit

from w3lib.url import canonicalize_url

MAX_URL_LENGTH = 2048


def normalize_url(url: str, base: str | None = None) -> str | None:
    """Return the canonical absolute form of ``url`` (resolved against ``base``), or None if unusable.

    Canonical means: http(s) only, fragment dropped, scheme and host lower-cased, IDNA host, default
    port removed, percent-encoding normalised, query string kept (arguments sorted, as Scrapy does, so
    that reordered parameters are one URL). We use w3lib, Scrapy's URL library, rather than our own
    rules because real-web URL edge cases are exactly what it has been hardened against.
    """
    if base is not None:
        try:
            url = urljoin(base, url.strip())
        except ValueError:
            return None
    return _normalize_absolute(url.strip())


@lru_cache(maxsize=1 << 18)
def _normalize_absolute(url: str) -> str | None:
    # Cached: crawls meet the same link targets over and over, and canonicalisation costs ~15 us.
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    try:
        canonical = canonicalize_url(url, keep_fragments=False)
        canonical = _drop_default_port(canonical)
    except (ValueError, UnicodeError):
        return None
    if len(canonical) > MAX_URL_LENGTH:
        return None
    return canonical


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _drop_default_port(url: str) -> str:
    # w3lib keeps ":80"; "http://a:80/" and "http://a/" are the same resource and must dedupe.
    parts = urlsplit(url)
    if parts.port is not None and _DEFAULT_PORTS.get(parts.scheme) == parts.port:
        netloc = parts.netloc.rsplit(":", 1)[0]
        return parts._replace(netloc=netloc).geturl()
    return url


def domain_of(url: str) -> str:
    """The crawl's notion of a web site: the URL's host, lower-cased, without a leading ``www.``.

    Hosts, not registered domains: ``cs.cornell.edu`` and ``simon.cs.cornell.edu`` are two sites. Both
    the per-domain cap (MAX) and the relevant-domains metric count these.
    """
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host
