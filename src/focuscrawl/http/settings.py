"""``FetchConfig``: every setting of the HTTP fetcher, typed and checked when it is made.

A crawl's config carries it as ``fetch`` (``focuscrawl.config.CrawlConfig``), so ``-s fetch.min_delay=2`` or a
``fetch:`` mapping in a YAML file is checked with the rest of the config: a wrong type or an unknown key is one
error line naming the setting, before anything is written. The defaults are those of a polite crawler on the
public web.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from focuscrawl import __version__
from focuscrawl.http.browser_launch import DEFAULT_RENDER_USER
from focuscrawl.http.render import RENDER_MODES
from focuscrawl.urls import MAX_URL_LENGTH

DEFAULT_USER_AGENT = f"focuscrawl/{__version__} (+https://github.com/focuscrawl/focuscrawl; focused research crawler)"
ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least the first 500 KiB
# The sitemaps.org protocol's limits of one sitemap file: 50,000 URLs and 50 MiB (52,428,800 bytes) uncompressed.
SITEMAP_MAX_URLS = 50_000
SITEMAP_MAX_BYTES = 50 * 1024 * 1024


class FetchConfig(BaseModel):
    """Every knob of the fetcher (``focuscrawl.http.fetcher.HttpFetcher``). Frozen: one fetcher, one config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_agent: str = DEFAULT_USER_AGENT
    robots_agent: str = Field("focuscrawl", description="the product token robots.txt groups are matched against")
    obey_robots: bool = True
    robots_ttl: float = Field(24 * 3600.0, ge=0, description="seconds a site's robots.txt is kept")
    robots_error_ttl: float = Field(600.0, ge=0, description="how long a site whose robots.txt is unreachable "
                                    "stays disallowed")
    max_concurrency: int = Field(64, ge=1, description="requests in flight over all hosts")
    per_host_concurrency: int = Field(1, ge=1, description="requests in flight to one host (or domain, or address)")
    politeness: Literal["host", "domain", "ip"] = Field("host", description="host: each host its own schedule; "
                                                        "domain: one per registered domain; ip: one per resolved "
                                                        "address (the first a connection tries)")
    min_delay: float = Field(1.0, ge=0, description="seconds between requests to one host (or domain, or address: "
                             "end of one to start of the next)")
    max_crawl_delay: float = Field(60.0, ge=0, description="robots.txt Crawl-delay above this is clipped")
    throttle_retries: int = Field(2, ge=0, description="retries of a 429/503 answer, after waiting as the server "
                                  "asked")
    max_retry_after: float = Field(120.0, ge=0, description="a longer Retry-After is not waited for: the fetch "
                                   "returns the 429/503")
    connect_timeout: float = Field(10.0, gt=0, description="seconds to connect")
    read_timeout: float = Field(20.0, gt=0, description="seconds between two reads of the socket")
    total_timeout: float = Field(60.0, gt=0, description="seconds of one request, from connect to the last body "
                                 "byte")
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1, description="on the wire and after decompression; longer "
                                "bodies are cut")
    max_redirects: int = Field(5, ge=0)
    max_url_length: int = Field(MAX_URL_LENGTH, ge=1)
    max_outlinks: int = Field(1000, ge=0, description="links read from one page, at most")
    main_text: bool = Field(True, description="page text = the main content (boilerplate removed, html.py "
                            "extract_main_text), for relevance and pages.jsonl; false: the whole body minus "
                            "script/style/nav. Title and outlinks come from the whole page")
    content_types: tuple[str, ...] | None = Field(None, description="media types whose bodies are downloaded "
                                                  "(None: HTML); a response of another type is not read and its "
                                                  "page says so. The crawl's scope sets it (scope.content_types)")
    trap_max_segment_repeats: int = Field(3, ge=1, description="a URL path repeating a segment more often is a "
                                          "spider trap")
    trap_max_depth: int = Field(16, ge=1, description="a URL path deeper than this is a spider trap")
    allow_loopback: bool = False
    allow_private: bool = False
    resolve_overrides: dict[str, str] = Field(default_factory=dict, description="host -> 'ip[:port]', fetched "
                                              "over http (a web served on loopback)")
    dns_ttl: float = Field(300.0, ge=0, description="seconds a resolved address is kept")
    keep_html: bool = Field(True, description="Page.html holds the decoded document (for WARC writing)")
    sitemaps: bool = Field(True, description="when a crawl over HTTP first enters a site, offer the URLs of its "
                           "sitemaps (robots.txt Sitemap: lines, else /sitemap.xml) to the policy as links of the "
                           "first page fetched there (focuscrawl.http.sitemaps)")
    sitemap_max_urls: int = Field(SITEMAP_MAX_URLS, ge=1, description="URLs read from one site's sitemaps (or one "
                                  "--seeds-from-sitemap URL's), at most; one sitemap file holds at most 50,000")
    sitemap_max_bytes: int = Field(SITEMAP_MAX_BYTES, ge=1, description="bytes of one sitemap file, uncompressed, "
                                   "at most (the protocol's 50 MiB); a longer one is read up to there")
    sitemap_max_files: int = Field(20, ge=1, description="sitemap files (a sitemap index's children included) read "
                                   "for one site or one --seeds-from-sitemap URL, at most")
    sitemap_max_depth: int = Field(2, ge=0, description="sitemap indexes followed below the first file, at most "
                                   "(the protocol has 1: an index of sitemaps)")
    render: str = Field("never", description="run HTML pages' scripts (http/render.py, the render extra): never, "
                        "auto (the pages needs_rendering picks: an inline script writes links) or always. Page.html "
                        "stays the document the server sent")
    render_timeout: float = Field(10.0, gt=0, description="seconds one render may take; a page that takes longer "
                                  "keeps its HTML's links")
    render_concurrency: int = Field(2, ge=1, description="renders at once: each keeps a core busy")
    render_browser: str | None = Field(None, description="the Chromium executable (None: chromium on PATH)")
    render_sandbox: bool = Field(True, description="run the browser with Chromium's sandbox (a crawl refuses to "
                                 "render where it cannot run); false (--render-no-sandbox): page scripts run "
                                 "without it, at the user's risk")
    render_user: str = Field(DEFAULT_RENDER_USER, description="the unprivileged account (name or uid) the browser "
                             "runs as when the crawler runs as root, which Chromium's sandbox refuses")

    @field_validator("render")
    @classmethod
    def _render_mode(cls, value: str) -> str:
        if value not in RENDER_MODES:
            raise ValueError(f"render must be one of {', '.join(RENDER_MODES)}, not {value!r}")
        return value

    @field_validator("content_types")
    @classmethod
    def _media_types(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if value is None else tuple(t.strip().lower() for t in value)

    @classmethod
    def loopback(cls, resolve_overrides: dict[str, str] | None = None, **overrides) -> FetchConfig:
        """A configuration for crawling a web served on loopback by ``focuscrawl web serve``."""
        return cls(allow_loopback=True, resolve_overrides=dict(resolve_overrides or {}), **overrides)
