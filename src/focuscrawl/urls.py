"""URLs: normalisation, and the one home of a URL's host, site and registered domain.

One function decides what counts as "the same URL" for the closure, the frontier and offline stores, so
that a URL written by a builder and a URL found on a page always compare equal. Three names say how much of a
URL's address a rule groups by:

- ``host_of``: the host a server answers for (``www.cs.example.ac.uk``): politeness slots, served webs;
- ``site_of``: the crawl's web site, the host without a leading ``www.`` (``cs.example.ac.uk``): TRES's domain,
  the per-domain cap, the relevant-sites metric, what strategies count per site;
- ``registered_domain``: what one registrant owns (``example.ac.uk``): scope rules, ``--politeness domain``.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import parse_qsl, urljoin, urlsplit

import tldextract
from w3lib.url import canonicalize_url, url_query_cleaner

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


# Query parameters that only say who sent a visitor (the ad and analytics parameters of Firefox's query-stripping
# list and ClearURLs' global rules): never part of what a page is. A closed list, not courlan's pattern, whose
# substring rules (``source``, ``ref``, ``keywords``, ``uid``, ``ga``...) would merge 19 distinct WebKB pages.
TRACKING_PREFIXES = ("utm_",)
TRACKING_PARAMETERS = frozenset({
    "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
    "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "__hssc", "__hstc", "__hsfp", "hsctatracking", "mkt_tok",
    "oly_anon_id", "oly_enc_id", "vero_id", "vero_conv", "_openstat", "li_fat_id", "wickedid", "s_cid",
    "pk_campaign", "pk_kwd", "pk_source", "pk_medium", "pk_content", "mtm_campaign", "mtm_kwd", "mtm_source",
    "mtm_medium", "mtm_content",
})
# Session ids, as Apache Nutch's default URL normaliser removes them (regex-normalize.xml: jsessionid, phpsessid,
# sessionid, sid), plus ASP's and ColdFusion's. ``sid`` is also a content id on some sites (a story number), so it
# counts as a session only when its value looks like a token: long, letters and digits mixed.
SESSION_PARAMETERS = frozenset({"jsessionid", "phpsessid", "sessionid", "session_id", "aspsessionid", "cfid",
                                "cftoken", "bv_sid"})
AMBIGUOUS_SESSION_PARAMETERS = frozenset({"sid"})
_SESSION_PATH_PARAMETER = re.compile(r";(?:jsessionid|phpsessid|sessionid|sid)=[^/?#;]*", re.IGNORECASE)
_TOKEN = re.compile(r"^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_-]{10,}$")


def strip_tracking_and_session(url: str) -> str:
    """``url`` (normalised) without tracking parameters and session ids: the page it names, as another visitor
    would reach it. ``http://a.org/x;jsessionid=0A1B...?utm_source=news&id=3`` -> ``http://a.org/x?id=3``.

    Not part of ``normalize_url``: a crawl applies it where its defences say (``focuscrawl.engine.defences``),
    so that it can be switched off, and stored webs keep the URLs they were built with.
    """
    return _strip_absolute(url)


@lru_cache(maxsize=1 << 18)
def _strip_absolute(url: str) -> str:
    if ";" in url:
        base, mark, rest = url.partition("?")
        url = _SESSION_PATH_PARAMETER.sub("", base) + mark + rest
    if "?" not in url:
        return url
    query = urlsplit(url).query
    unwanted = [key for key, value in parse_qsl(query, keep_blank_values=True) if _unwanted(key.lower(), value)]
    if not unwanted:
        return url
    # w3lib, as normalize_url: the query's order and encoding stay as canonicalize_url left them
    return url_query_cleaner(url, unwanted, remove=True, unique=False, keep_fragments=True)


def _unwanted(key: str, value: str) -> bool:
    if key in TRACKING_PARAMETERS or key in SESSION_PARAMETERS or key.startswith(TRACKING_PREFIXES):
        return True
    if key.startswith("aspsessionid"):  # ASPSESSIONIDQQGGQGPC=...
        return True
    return key in AMBIGUOUS_SESSION_PARAMETERS and _TOKEN.match(value) is not None


def site_of(url: str) -> str:
    """The crawl's notion of a web site: the URL's host, lower-cased, without a leading ``www.``.

    Hosts, not registered domains: ``cs.cornell.edu`` and ``simon.cs.cornell.edu`` are two sites. Both
    the per-domain cap (MAX) and the relevant-domains metric count these.
    """
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def host_of(url_or_host: str) -> str:
    """The host of a URL (or a bare host), lower-cased, without a port: the name a server answers for (``www.``
    kept: another name, maybe another server). A fully qualified name's root dot (``a.org.``) is kept, as the URL
    wrote it: offline webs key their hosts by it, and the crawl's sites (``site_of``) are the same names; rules
    that compare names (``registered_domain``, ``in_domains``) drop it."""
    text = url_or_host.strip()
    if "://" in text:
        try:
            return (urlsplit(text).hostname or "").lower()
        except ValueError:
            return ""
    host = text.split("/", 1)[0]
    if host.startswith("["):  # [::1]:8080
        return host[1:].split("]", 1)[0].lower()
    return host.rsplit(":", 1)[0].lower() if host.count(":") == 1 else host.lower()


# Registered domains: ``a.example.co.uk`` and ``b.example.co.uk`` belong to ``example.co.uk``, which only the Public
# Suffix List can tell (``co.uk`` is a suffix, ``example.co.uk`` a domain). tldextract reads it from the copy bundled
# with the package: no network, no cache directory, so a crawl gives the same answer on every machine and never
# fetches the list. Hosts the list does not cover keep a meaning: an IP address or a single-label host
# (``localhost``) is its own domain, and a host under an unknown suffix (``birds.test``) counts its last two labels.
_EXTRACT = None


def _extractor() -> tldextract.TLDExtract:
    global _EXTRACT
    if _EXTRACT is None:  # loading the bundled list takes a moment: only when a rule needs it
        _EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)
    return _EXTRACT


@lru_cache(maxsize=65536)
def registered_domain(url_or_host: str) -> str:
    """The registered domain of a URL or host: ``https://a.b.example.co.uk/x`` -> ``example.co.uk``."""
    host = host_of(url_or_host).rstrip(".")
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
    """Whether ``host`` is one of ``domains`` (hosts or registered domains, lower-case, without a root dot), or a
    host under one."""
    host = host.rstrip(".")
    if host in domains or registered_domain(host) in domains:
        return True
    return any(host.endswith("." + d) for d in domains)
