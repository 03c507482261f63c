"""Sitemaps: parsed by the protocol's rules and safely, read over loopback HTTP through the crawler's own fetcher
(robots.txt, politeness), used as seeds (``--seeds-from-sitemap``) and offered to the policy on entering a site.

Every sitemap is served by ``serve_web`` on 127.x addresses, the web's ``.test`` names mapped to them.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import os
import sqlite3
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from aiohttp import web
from conftest import BIRD_WORDS, OTHER_WORDS, ThreadServedWeb, _text, write_birds_topic

from focuscrawl.config import CrawlConfig, load_config
from focuscrawl.crawl import Crawler
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.http.sitemaps import SitemapError, parse_sitemap, read_sitemaps, sitemap_urls
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

SRC = str(Path(__file__).resolve().parents[1] / "src")
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*urls: str) -> bytes:
    entries = "".join(f"<url><loc>{u}</loc><lastmod>2024-01-01</lastmod></url>\n" for u in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{entries}</urlset>\n'.encode()


def index(*sitemaps: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{u}</loc></sitemap>\n" for u in sitemaps)
    return f'<?xml version="1.0"?>\n<sitemapindex {NS}>\n{entries}</sitemapindex>\n'.encode()


@functools.cache
def huge() -> bytes:
    """A sitemap over the protocol's 50,000 URLs (3.5 MB)."""
    return urlset(*(f"http://site.test/many/{i}" for i in range(50_010)))


@functools.cache
def bomb() -> bytes:
    """60 MiB of blanks in a sitemap, in 60 KiB of gzip."""
    return gzip.compress(urlset("http://site.test/a")[:-11] + b" " * (60 * 1024 * 1024) + b"</urlset>", 9)


XML = {"Content-Type": "application/xml"}
# (host, path) -> (body, headers) of the sitemaps the web serves besides its pages
SITEMAPS: dict[tuple[str, str], tuple[bytes, dict]] = {
    ("site.test", "/sitemap.xml"): (urlset("http://site.test/a", "http://site.test/hidden"), XML),
    ("site.test", "/pages.xml.gz"): (gzip.compress(urlset("/b", "http://www.site.test/c")),
                                     {"Content-Type": "application/x-gzip"}),
    ("site.test", "/encoded.xml"): (gzip.compress(urlset("http://site.test/b")),
                                    {**XML, "Content-Encoding": "gzip"}),
    ("site.test", "/index.xml"): (index("/sitemap.xml", "http://site.test/pages.xml.gz", "http://evil.test/s.xml"),
                                  XML),
    ("site.test", "/foreign.xml"): (urlset("http://site.test/a", "http://other.test/x", "ftp://site.test/f"), XML),
    ("site.test", "/broken.xml"): (urlset("http://site.test/a", "http://site.test/b")[:-40], XML),
    ("site.test", "/garbage.xml"): (b"<urlset><url><loc>http://site.test/a", XML),
    ("site.test", "/page.xml"): (b"<html><body>not a sitemap</body></html>", {"Content-Type": "text/html"}),
    ("site.test", "/list.txt"): (b"http://site.test/a\n\nhttp://site.test/b\n", {"Content-Type": "text/plain"}),
    ("site.test", "/private/sitemap.xml"): (urlset("http://site.test/secret"), XML),
    ("site.test", "/huge.xml"): (huge, XML),
    ("site.test", "/bomb.xml.gz"): (bomb, {"Content-Type": "application/x-gzip"}),
    ("site.test", "/deep1.xml"): (index("/deep2.xml"), XML),
    ("site.test", "/deep2.xml"): (index("/deep3.xml"), XML),
    ("site.test", "/deep3.xml"): (index("/sitemap.xml"), XML),
    ("other.test", "/cross.xml"): (urlset("http://site.test/b", "http://other.test/x"), XML),
    ("other.test", "/sitemap.xml"): (urlset("http://other.test/x"), XML),
}
ROBOTS = {"site.test": "User-agent: *\nDisallow: /private/\nSitemap: /index.xml\nSitemap: http://other.test/cross.xml\n",
          "other.test": "User-agent: *\nDisallow:\n"}


async def serve_sitemaps(request: web.Request, host: str, url: str) -> web.StreamResponse | None:
    found = SITEMAPS.get((host, request.path))
    if found is None:
        return None
    body, headers = found
    return web.Response(body=body() if callable(body) else body, headers=headers)


def build_web(directory: Path) -> Path:
    """site.test: a relevant site whose /hidden is linked from no page, only listed in its sitemap; other.test."""
    with WebWriter(directory, {"name": "sitemaps"}) as w:
        for i, path in enumerate(["/", "/a", "/b", "/c", "/hidden", "/many/1"]):
            w.add_page(f"http://site.test{path}", title=path, text=_text(BIRD_WORDS, i), labels=["topic.birds"])
        w.add_link("http://site.test/", "http://site.test/a", "bird")
        w.add_link("http://site.test/a", "http://site.test/b", "bird")
        w.add_page("http://other.test/x", title="x", text=_text(OTHER_WORDS, 0), labels=["topic.other"])
    return directory


@pytest.fixture(scope="module")
def web_dir(tmp_path_factory):
    return build_web(tmp_path_factory.mktemp("sitemapweb"))


def read(web_dir: Path, urls, **settings):
    """(what read_sitemaps found, the server's request log) for ``urls`` on the served web."""
    async def go():
        async with serve_web(web_dir, hook=serve_sitemaps, robots=ROBOTS, base_ip="127.0.9.1") as server:
            settings.setdefault("min_delay", 0.0)
            async with HttpFetcher(FetchConfig.loopback(server.hosts, **settings)) as fetcher:
                return await read_sitemaps(fetcher, urls), list(server.log)

    return asyncio.run(asyncio.wait_for(go(), 120))


# -- parsing ------------------------------------------------------------------------------------------------------
def test_parsing_follows_the_protocol_by_local_names_and_refuses_entities():
    body = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            b'xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
            b'<url><loc> http://a.test/p1 </loc><image:image><image:loc>http://a.test/i.png</image:loc></image:image>'
            b'<xhtml:link rel="alternate" hreflang="de" href="http://a.test/de/p1"/></url>'
            b'<url><lastmod>2020-01-01</lastmod></url><url><loc>http://a.test/p2</loc></url></urlset>')
    assert parse_sitemap(body).locs == ["http://a.test/p1", "http://a.test/p2"]  # not the image's loc
    assert parse_sitemap(body, alternates=True).locs == ["http://a.test/p1", "http://a.test/de/p1", "http://a.test/p2"]
    assert parse_sitemap(gzip.compress(body)).locs == ["http://a.test/p1", "http://a.test/p2"]  # by its magic bytes
    assert parse_sitemap(index("http://a.test/s1.xml")).kind == "sitemapindex"
    text = parse_sitemap(b"\xef\xbb\xbfhttp://a.test/1\r\nhttp://a.test/2\n")
    assert (text.kind, text.locs) == ("text", ["http://a.test/1", "http://a.test/2"])
    partial = parse_sitemap(body[:-20])  # cut in the middle: what came before is kept, and said
    assert partial.locs == ["http://a.test/p1"] and "malformed XML" in partial.problem
    for bad, reason in [(b"", "empty"), (b"<html><p>hi</p></html>", "root element is <html>"),
                        (b'<!DOCTYPE u [<!ENTITY e "x">]><urlset>&e;</urlset>', "refused XML"),
                        (b"<urlset><url><loc>http://a", "malformed XML"), (b"just words", "not a sitemap"),
                        (gzip.compress(body)[:30], "gzip stream cut short")]:
        with pytest.raises(SitemapError, match=reason):
            parse_sitemap(bad)


def test_a_gzip_bomb_is_cut_at_the_cap_in_constant_memory():
    # 12 MiB of blanks in 12 KiB of gzip, cut at 8 MiB here (the protocol's 50 MiB over HTTP: the slow test below)
    body = gzip.compress(urlset("http://site.test/a")[:-11] + b" " * (12 * 1024 * 1024) + b"</urlset>")
    tracemalloc.start()
    try:
        sitemap = parse_sitemap(body, max_bytes=8 * 1024 * 1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sitemap.locs == ["http://site.test/a"]
    assert sitemap.problem == "cut at 8,388,608 bytes: 1 entries read"
    assert peak < 1024 * 1024, peak  # the 8 MiB read were never held


# -- reading over HTTP --------------------------------------------------------------------------------------------
def test_sitemaps_plain_gzipped_indexes_and_robots_announced_over_http(web_dir):
    found, log = read(web_dir, ["http://site.test/sitemap.xml", "http://site.test/pages.xml.gz",
                                "http://site.test/encoded.xml", "http://site.test/list.txt"])
    assert found.urls == ["http://site.test/a", "http://site.test/hidden", "http://site.test/b",
                          "http://www.site.test/c"] and not found.problems
    # an index: its sitemaps in turn, the one on another site dropped
    found, _ = read(web_dir, "http://site.test/index.xml")
    assert found.files == ["http://site.test/index.xml", "http://site.test/sitemap.xml", "http://site.test/pages.xml.gz"]
    assert found.urls == ["http://site.test/a", "http://site.test/hidden", "http://site.test/b", "http://www.site.test/c"]
    assert found.problems == ["sitemap http://site.test/index.xml: 1 entries dropped (not http(s) URLs of its own "
                              "site)"]
    # a site: the sitemaps its robots.txt names, including one on other.test that may list site.test's pages
    found, log = read(web_dir, "http://site.test/")
    assert set(found.files) == {"http://site.test/index.xml", "http://site.test/sitemap.xml",
                                "http://site.test/pages.xml.gz", "http://other.test/cross.xml"}
    assert "http://site.test/b" in found.urls and "http://other.test/x" in found.urls
    assert not any(r.path == "/sitemap.xml" and r.host == "other.test" for r in log)
    # a site whose robots.txt names none: its /sitemap.xml
    found, _ = read(web_dir, "http://other.test/")
    assert found.urls == ["http://other.test/x"] and found.files == ["http://other.test/sitemap.xml"]


def test_bad_sitemaps_give_one_line_each_and_robots_txt_is_obeyed(web_dir):
    found, log = read(web_dir, ["http://site.test/foreign.xml", "http://site.test/broken.xml",
                                "http://site.test/garbage.xml", "http://site.test/page.xml",
                                "http://site.test/missing.xml", "http://site.test/private/sitemap.xml"])
    assert found.urls == ["http://site.test/a"]  # foreign's own URL, and broken's first before the break
    assert found.problems == [
        "sitemap http://site.test/foreign.xml: 2 entries dropped (not http(s) URLs of its own site)",
        "sitemap http://site.test/broken.xml: malformed XML (unclosed token: line 4, column 34): 1 entries read "
        "before it",
        "sitemap http://site.test/garbage.xml: malformed XML (no element found: line 1, column 36)",
        "sitemap http://site.test/page.xml: not a sitemap (its root element is <html>)",
        "sitemap http://site.test/missing.xml: HTTP 404",
        "sitemap http://site.test/private/sitemap.xml: disallowed by robots.txt"]
    assert all("\n" not in line for line in found.problems)
    assert not any(r.path.startswith("/private/") for r in log)  # robots.txt disallows it: never asked


def test_politeness_holds_between_sitemap_requests(web_dir):
    found, log = read(web_dir, "http://site.test/", min_delay=0.3)
    assert len(found.files) == 4
    times = sorted(r.time for r in log if r.host == "site.test")
    assert len(times) == 4  # robots.txt and three sitemaps
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.25


def test_caps_of_deep_indexes_files_and_urls(web_dir):
    found, _ = read(web_dir, "http://site.test/deep1.xml")
    assert found.files == ["http://site.test/deep1.xml", "http://site.test/deep2.xml", "http://site.test/deep3.xml"]
    assert found.problems == ["sitemap http://site.test/deep3.xml: an index 3 deep, not followed "
                              "(fetch.sitemap_max_depth)"]
    found, _ = read(web_dir, "http://site.test/index.xml", sitemap_max_files=2)
    assert found.files == ["http://site.test/index.xml", "http://site.test/sitemap.xml"]
    assert "fetch.sitemap_max_files" in found.problems[0]
    found, _ = read(web_dir, ["http://site.test/sitemap.xml", "http://site.test/pages.xml.gz"], sitemap_max_urls=1)
    assert found.urls == ["http://site.test/a", "http://site.test/b"]  # each URL asked for has its own caps
    assert found.problems == ["sitemap http://site.test/sitemap.xml: more than 1 entries: the first 1 read",
                              "sitemap http://site.test/pages.xml.gz: more than 1 entries: the first 1 read"]


@pytest.mark.slow
def test_huge_sitemaps_and_gzip_bombs_are_cut_at_the_protocols_caps(web_dir):
    found, _ = read(web_dir, "http://site.test/huge.xml")
    assert len(found.urls) == 50_000 and found.urls[-1] == "http://site.test/many/49999"
    assert found.problems == ["sitemap http://site.test/huge.xml: more than 50,000 entries: the first 50,000 read"]
    found, _ = read(web_dir, "http://site.test/huge.xml", sitemap_max_bytes=100_000)
    assert 0 < len(found.urls) < 2_000
    assert found.problems[0].startswith("sitemap http://site.test/huge.xml: cut at 100,000 bytes: ")
    found, _ = read(web_dir, "http://site.test/bomb.xml.gz")
    assert found.urls == ["http://site.test/a"]
    assert found.problems == ["sitemap http://site.test/bomb.xml.gz: cut at 52,428,800 bytes: 1 entries read"]


# -- in a crawl ---------------------------------------------------------------------------------------------------
def crawl(web_dir: Path, topic: Path, run: Path, **settings) -> tuple[list[dict], list]:
    """Crawl the served web with bfs; (pages.jsonl's records, the server's request log)."""
    async def go():
        async with serve_web(web_dir, hook=serve_sitemaps, robots=ROBOTS, base_ip="127.0.9.1") as server:
            fetch = {"min_delay": 0.0, **settings.pop("fetch", {})}
            async with HttpFetcher(FetchConfig.loopback(server.hosts, **fetch)) as fetcher:
                crawler = Crawler(topic=topic, out=run, progress="none", plot=False, fetcher=fetcher, strategy="bfs",
                                  fetch=fetch, **settings)
                async for _ in crawler.run():
                    pass
            return list(server.log)

    log = asyncio.run(asyncio.wait_for(go(), 300))
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()], log


def test_a_crawl_entering_a_site_is_offered_its_sitemap_and_resumes_with_it(web_dir, tmp_path):
    topic = write_birds_topic(tmp_path / "topic", ["http://site.test/"])
    records, log = crawl(web_dir, topic, tmp_path / "on", budget=2)
    records, log = crawl(web_dir, topic, tmp_path / "on", budget=30)  # resumed: the offer is replayed
    urls = [r["url"] for r in records]
    assert "http://site.test/hidden" in urls  # linked from no page: only the sitemap tells of it
    assert "http://other.test/x" in urls  # the cross-submitted sitemap's (robots.txt of site.test names it)
    assert len(urls) == len(set(urls))
    ops = sqlite3.connect(tmp_path / "on" / "state.sqlite").execute(
        "SELECT url FROM ops WHERE kind = 'A'").fetchall()
    assert [row[0] for row in ops][:1] == ["sitemap:site.test"]
    off, log = crawl(web_dir, topic, tmp_path / "off", budget=30, fetch={"sitemaps": False})
    assert {r["url"] for r in off} == {"http://site.test/", "http://site.test/a", "http://site.test/b"}
    assert not any(r.path != "/robots.txt" and r.path not in ("/", "/a", "/b") for r in log)
    # seeds from a sitemap, from Python: they replace the topic's seeds.txt, and a resume keeps them
    seeded, log = crawl(web_dir, topic, tmp_path / "seeded", budget=2, seeds_from_sitemap=["http://site.test/list.txt"],
                        fetch={"sitemaps": False})
    assert [(r["url"], r["depth"]) for r in seeded] == [("http://site.test/a", 0), ("http://site.test/b", 0)]
    seeded, log = crawl(web_dir, topic, tmp_path / "seeded", budget=3, seeds_from_sitemap=["http://site.test/list.txt"],
                        fetch={"sitemaps": False})
    assert not any(r.path == "/list.txt" for r in log)  # resumed with the seeds it recorded


def test_sitemaps_settings_are_in_the_one_settings_system():
    config = load_config(CrawlConfig, overrides=["fetch.sitemaps=false", "fetch.sitemap_max_urls=10",
                                                 "seeds_from_sitemap=http://a.test/s.xml,http://b.test/"])
    assert config.fetch.sitemaps is False and config.fetch.sitemap_max_urls == 10
    assert config.seeds_from_sitemap == ["http://a.test/s.xml", "http://b.test/"]
    assert "seeds_from_sitemap" not in CrawlConfig().identity()  # run folders made before it still resume
    with pytest.raises(ValueError, match="offline web"):
        CrawlConfig(seeds_from_sitemap=["http://a.test/"], web="embedded")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from focuscrawl.cli.main import main; sys.exit(main())", *args]


@pytest.mark.slow
def test_cli_seeds_from_sitemap_and_its_error(web_dir, tmp_path):
    topic = write_birds_topic(tmp_path / "topic", [])
    server = ThreadServedWeb(web_dir, tmp_path / "hosts.json", hook=serve_sitemaps, robots=ROBOTS,
                             base_ip="127.0.9.1")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    common = ["--topic", str(topic), "--hosts-map", str(server.map_file), "--strategy", "bfs", "--progress", "none",
              "-s", "fetch.min_delay=0", "-s", "plot=false"]
    try:
        run = tmp_path / "run"
        done = subprocess.run(_cli("crawl", "--seeds-from-sitemap", "http://site.test/sitemap.xml", "-o", str(run),
                                   "--budget", "3", "-s", "fetch.sitemaps=false", *common),
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        pages = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
        assert {p["url"] for p in pages} >= {"http://site.test/a", "http://site.test/hidden"}
        assert [p["depth"] for p in pages[:2]] == [0, 0]  # the sitemap's URLs are the seeds
        empty = tmp_path / "empty"
        done = subprocess.run(_cli("crawl", "--seeds-from-sitemap", "http://site.test/missing.xml,"
                                   "http://site.test/page.xml", "-o", str(empty), "--budget", "3", *common),
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            "error: --seeds-from-sitemap http://site.test/missing.xml, http://site.test/page.xml: no URL found "
            "(sitemap http://site.test/missing.xml: HTTP 404; sitemap http://site.test/page.xml: not a sitemap (its "
            "root element is <html>))"]
        assert not empty.exists()  # the mistake left no run folder behind
        found = sitemap_urls("http://site.test/", FetchConfig.loopback(server.server.hosts, min_delay=0))
        assert "http://site.test/hidden" in found.urls  # the same, synchronously from Python
    finally:
        server.close()
