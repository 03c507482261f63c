"""The HTTP fetcher end to end on loopback: politeness, robots.txt, safety, limits, robustness.

Every test serves a small offline web with ``serve_web`` on 127.x addresses and maps the web's ``.test``
host names to them (``resolve_overrides``): nothing here resolves or contacts a real host. Addresses
that must be refused are asserted refused by the resolver *before* any fetch could try them.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from pathlib import Path

import pytest
from aiohttp import web

from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.response import parse_retry_after
from focuscrawl.http.safety import AddressPolicy, BlockedAddressError, CachingResolver, check_url, is_trap_url
from focuscrawl.http.settings import FetchConfig
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

A, B = "http://a.test", "http://b.test"


def build_web(directory: Path) -> Path:
    with WebWriter(directory, {"name": "fetcher-test"}) as w:
        for host in (A, B):
            for i in range(6):
                url = f"{host}/p{i}"
                w.add_page(url, title=f"{host} {i}", text=f"page {i} of {host}")
                w.add_link(url, f"{host}/p{(i + 1) % 6}", "next")
                w.add_link(url, f"{host}/private/s{i}", "secret")
            for i in range(3):
                w.add_page(f"{host}/private/s{i}", title="secret", text="secret")
        w.add_page(f"{A}/moved", status=301, location=f"{A}/p1", content_type="")
        w.add_page(f"{A}/to-private", status=302, location=f"{A}/private/s0", content_type="")
        w.add_page(f"{A}/to-evil", status=302, location="http://evil.test/", content_type="")
        w.add_page(f"{A}/to-metadata", status=302, location="http://169.254.169.254/latest", content_type="")
        w.add_page(f"{A}/to-ftp", status=302, location="ftp://a.test/file", content_type="")
        w.add_page(f"{A}/loop1", status=302, location=f"{A}/loop2", content_type="")
        w.add_page(f"{A}/loop2", status=302, location=f"{A}/loop1", content_type="")
        for i in range(8):
            w.add_page(f"{A}/chain{i}", status=302, location=f"{A}/chain{i + 1}", content_type="")
    return directory


BOMB = gzip.compress(b"<html><body>" + b" " * (30 * 1024 * 1024), compresslevel=9)
BROKEN = (b"<html><head><title>Broken \xff page</title><body><p>unclosed <a href='/p2'>two<div><table><tr>"
          b"<td>cell</b></i>"
          b"<a href=\"javascript:alert(1)\">js</a><a href='mailto:x@y'>m</a><a href='/a/a/a/a/a'>trap</a>"
          b"<a href='http://[::1'>bad</a></td></tr></table><script>var x = '<a href=/hidden>';</script>")


async def special(request: web.Request, host: str, url: str) -> web.StreamResponse | None:
    """Pages the offline web cannot express: huge, compressed, binary, broken, throttled."""
    path = request.path
    if path == "/big":
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        try:
            for _ in range(400):  # 40 MB if nobody hangs up
                await response.write(b"<p>" + b"x" * 100_000 + b"</p>")
        except (ConnectionError, RuntimeError):
            pass
        return response
    if path == "/bomb":
        return web.Response(body=BOMB, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})
    if path == "/gzipped":
        body = gzip.compress(b"<html><title>Zipped</title><body>small <a href='/p1'>one</a></body></html>")
        return web.Response(body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})
    if path == "/image":
        return web.Response(body=b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000, headers={"Content-Type": "image/png"})
    if path == "/untyped-html":
        return web.Response(body=b"<!DOCTYPE html><title>Sniffed</title><p>hi", headers={"Content-Type": ""})
    if path == "/untyped-binary":
        return web.Response(body=b"\x00\x01\x02" * 1000, headers={"Content-Type": "application/octet-stream"})
    if path == "/broken":
        return web.Response(body=BROKEN, headers={"Content-Type": "text/html"})
    if path == "/latin":
        body = "<html><head><meta charset='windows-1252'><title>Café</title></head><body>crème</body></html>"
        return web.Response(body=body.encode("cp1252"), headers={"Content-Type": "text/html"})
    if path == "/slow":
        await asyncio.sleep(5)
        return web.Response(text="too late")
    if path == "/throttled":
        hits = THROTTLE_HITS[host] = THROTTLE_HITS.get(host, 0) + 1
        if hits == 1:
            return web.Response(status=429, headers={"Retry-After": "1"}, text="slow down")
        return web.Response(body=b"<title>Finally</title>", headers={"Content-Type": "text/html"})
    return None


THROTTLE_HITS: dict[str, int] = {}


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


async def _fetch_all(web_dir, urls, *, server_opts=None, **config):
    async with serve_web(web_dir, hook=special, **(server_opts or {})) as server:
        config.setdefault("min_delay", 0.0)
        fetcher = HttpFetcher(FetchConfig.loopback(server.hosts, **config))
        try:
            pages = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        finally:
            await fetcher.aclose()
        return pages, list(server.log), fetcher


@pytest.fixture(scope="module")
def web_dir(tmp_path_factory):
    return build_web(tmp_path_factory.mktemp("fetchweb"))


def test_robots_disallow_is_never_violated(web_dir):
    urls = [f"{h}/p{i}" for h in (A, B) for i in range(6)] + [f"{h}/private/s{i}" for h in (A, B) for i in range(3)]
    urls += [f"{A}/to-private"]
    pages, log, _ = run(_fetch_all(web_dir, urls, server_opts={"disallow": {"a.test": ["/private/"]}},
                                   per_host_concurrency=4))
    by_url = {p.url: p for p in pages}
    assert not [entry for entry in log if entry.host == "a.test" and entry.path.startswith("/private/")]
    assert all("robots.txt" in by_url[f"{A}/private/s{i}"].error for i in range(3))
    assert by_url[f"{B}/private/s0"].ok, "b.test has no rule"
    assert "robots.txt" in by_url[f"{A}/to-private"].error, "a redirect hop is checked against robots.txt too"
    assert sum(entry.path == "/robots.txt" for entry in log) == 2, "one robots.txt fetch per host, cached"


def test_robots_unreachable_means_disallow_and_missing_means_allow(web_dir):
    urls = [f"{A}/p0", f"{A}/p1", f"{B}/p0"]
    opts = {"robots": {"a.test": None}}  # 404 on a.test
    pages, log, _ = run(_fetch_all(web_dir, urls, server_opts={**opts, "error_rate": 0.0}))
    assert all(p.ok for p in pages)

    async def robots_500(request, host, url):
        if request.path == "/robots.txt" and host == "b.test":
            return web.Response(status=500)
        return None

    async def go():
        async with serve_web(web_dir, hook=robots_500) as server:
            async with HttpFetcher(FetchConfig.loopback(server.hosts, min_delay=0)) as fetcher:
                pages = [await fetcher.fetch(u) for u in (f"{B}/p0", f"{B}/p1", f"{A}/p0")]
            return pages, list(server.log)

    pages, log = run(go())
    assert [p.ok for p in pages] == [False, False, True]
    assert [e.path for e in log if e.host == "b.test"] == ["/robots.txt"], "5xx robots.txt: nothing fetched, cached"


@pytest.mark.slow
def test_min_delay_and_crawl_delay_between_requests_to_one_host(web_dir):
    urls = [f"{A}/p{i}" for i in range(4)] + [f"{B}/p{i}" for i in range(4)]
    started = time.monotonic()
    pages, log, _ = run(_fetch_all(web_dir, urls, min_delay=0.25, server_opts={"crawl_delay": None}))
    elapsed = time.monotonic() - started
    assert all(p.ok for p in pages)
    for host in ("a.test", "b.test"):
        times = [e.time for e in log if e.host == host]
        assert len(times) == 5  # robots.txt + 4 pages
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert min(gaps) >= 0.25, gaps
    assert elapsed < 4 * 0.25 * 2 + 2, "the two hosts are crawled in parallel"

    pages, log, _ = run(_fetch_all(web_dir, urls[:3], min_delay=0.05, server_opts={"crawl_delay": 0.4}))
    times = [e.time for e in log if e.host == "a.test"]
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.4, "robots.txt Crawl-delay is honoured"


def test_429_with_retry_after_backs_off_and_retries(web_dir):
    THROTTLE_HITS.clear()
    pages, log, _ = run(_fetch_all(web_dir, [f"{A}/throttled"]))
    assert pages[0].status == 200 and pages[0].title == "Finally"
    hits = [e for e in log if e.path == "/throttled"]
    assert [e.status for e in hits] == [429, 200]
    assert hits[1].time - hits[0].time >= 1.0


def test_redirects_are_followed_and_every_hop_rechecked(web_dir):
    urls = [f"{A}/moved", f"{A}/to-evil", f"{A}/to-metadata", f"{A}/to-ftp", f"{A}/loop1", f"{A}/chain0"]

    async def precheck():
        # evil.test maps to a private address: the resolver must refuse it before anything connects.
        resolver = CachingResolver(AddressPolicy(allow_loopback=True), {"evil.test": "10.1.2.3"})
        with pytest.raises(BlockedAddressError):
            await resolver.addresses("evil.test")
        with pytest.raises(BlockedAddressError):
            await resolver.addresses("169.254.169.254")

    run(precheck())
    pages, log = run(_fetch_evil(web_dir, urls))
    moved, evil, metadata, ftp, loop, chain = pages
    assert moved.ok and moved.final_url == f"{A}/p1" and moved.title == f"{A} 1"
    assert evil.status == 0 and "refused address" in evil.error and evil.final_url == "http://evil.test/"
    assert metadata.status == 0 and "refused address" in metadata.error
    assert ftp.status == 302 and "unusable" in ftp.error
    assert "loop" in loop.error and "too many redirects" in chain.error
    assert {e.host for e in log} == {"a.test"}


async def _fetch_evil(web_dir, urls):
    async with serve_web(web_dir) as server:
        hosts = {**server.hosts, "evil.test": "10.1.2.3"}
        async with HttpFetcher(FetchConfig.loopback(hosts, min_delay=0, per_host_concurrency=8)) as fetcher:
            pages = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        return pages, list(server.log)


def test_loopback_refused_by_default(web_dir):
    async def go():
        async with serve_web(web_dir) as server:
            async with HttpFetcher(FetchConfig(resolve_overrides=server.hosts, min_delay=0)) as fetcher:
                page = await fetcher.fetch(f"{A}/p0")
                direct = await fetcher.fetch(f"http://{server.hosts['a.test']}/p0")
            return page, direct, list(server.log)

    page, direct, log = run(go())
    assert page.status == 0 and "refused address" in page.error
    assert direct.status == 0 and "refused address" in direct.error
    assert log == [], "nothing may reach the server"


def test_oversized_and_gzip_bomb_bodies_are_cut(web_dir):
    started = time.monotonic()
    limit = 200_000
    pages, _, _ = run(_fetch_all(web_dir, [f"{A}/big", f"{A}/bomb", f"{A}/gzipped"], max_body_bytes=limit,
                                 per_host_concurrency=3))
    big, bomb, small = pages
    assert time.monotonic() - started < 15
    for page in (big, bomb):
        assert page.status == 200 and "cut" in page.error
        assert page.html is not None and len(page.html.encode()) <= limit
    assert small.ok and small.title == "Zipped" and [link.url for link in small.outlinks] == [f"{A}/p1"]


def test_non_html_is_skipped_and_sniffed(web_dir):
    pages, _, _ = run(_fetch_all(web_dir, [f"{A}/image", f"{A}/untyped-html", f"{A}/untyped-binary"],
                                 per_host_concurrency=3))
    image, sniffed, binary = pages
    assert image.status == 200 and "not HTML" in image.error and image.text == "" and image.html is None
    assert sniffed.title == "Sniffed" and sniffed.error == ""
    assert "not HTML" in binary.error and binary.html is None


def test_broken_html_and_charsets_do_not_crash(web_dir):
    pages, _, _ = run(_fetch_all(web_dir, [f"{A}/broken", f"{A}/latin"], per_host_concurrency=2))
    broken, latin = pages
    assert broken.ok and broken.title.startswith("Broken")
    urls = [link.url for link in broken.outlinks]
    assert urls == [f"{A}/p2"], "js/mailto/malformed links dropped, the trap link filtered"
    assert "hidden" not in broken.text
    assert latin.title == "Café" and latin.text == "crème"


def test_refusals_without_network():
    assert check_url("ftp://x.test/") and check_url("http:///nohost") and check_url("http://x.test/" + "a" * 3000)
    assert check_url("http://user:pw@x.test/")
    assert check_url("https://x.test/a?b=1") is None
    assert is_trap_url("http://x.test/a/b/a/b/a/b/a/b/")
    assert is_trap_url("http://x.test/" + "/".join(f"d{i}" for i in range(20)))
    assert not is_trap_url("http://x.test/wiki/a/b/c.html")
    policy = AddressPolicy()
    assert not any(policy.allows(ip) for ip in ("127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.169.254",
                                                "::1", "fe80::1", "224.0.0.1", "0.0.0.0", "100.64.0.1",
                                                "::ffff:127.0.0.1", "240.0.0.1"))
    assert policy.allows("93.184.216.34") and AddressPolicy(allow_loopback=True).allows("127.5.6.7")
    assert parse_retry_after("7") == 7.0 and parse_retry_after("soon") is None


def test_timeouts_and_traps_cost_no_hang(web_dir):
    started = time.monotonic()
    pages, log, _ = run(_fetch_all(web_dir, [f"{A}/slow", f"{A}/a/a/a/a/x"], total_timeout=0.5,
                                   per_host_concurrency=2))
    slow, trap = pages
    assert slow.status == 0 and "timeout" in slow.error and time.monotonic() - started < 4
    assert trap.status == 0 and "trap" in trap.error
    assert not [e for e in log if e.path.startswith("/a/")]


def test_resolver_caches_and_filters_at_resolution(monkeypatch):
    """DNS answers are cached, and refused addresses are removed from what the connection may use."""
    answers = {"mixed.test": ["93.184.216.34", "10.0.0.7"], "inside.test": ["127.0.0.1"]}
    calls = []

    async def fake_getaddrinfo(host, port, **kwargs):
        calls.append(host)
        if host not in answers:
            raise OSError("no such host")
        return [(2, 1, 6, "", (ip, port)) for ip in answers[host]]

    async def go():
        monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", fake_getaddrinfo)
        resolver = CachingResolver(AddressPolicy())
        assert await resolver.addresses("mixed.test") == ["93.184.216.34"]
        answers["mixed.test"] = ["10.0.0.8"]  # a rebinding attempt within the TTL changes nothing
        assert [r["host"] for r in await resolver.resolve("mixed.test", 443)] == ["93.184.216.34"]
        with pytest.raises(BlockedAddressError):
            await resolver.addresses("inside.test")
        with pytest.raises(OSError):
            await resolver.addresses("nowhere.test")
        with pytest.raises(OSError):
            await resolver.addresses("nowhere.test")  # negative answers are cached too
        assert calls == ["mixed.test", "inside.test", "nowhere.test"]

    run(go())


def test_prepare_fetches_robots_ahead_and_ready_in_says_when_the_host_is_due(web_dir):
    """What the crawl driver asks before starting a fetch: robots.txt is fetched in the background (keeping the
    host's delay before the page), and ``ready_in`` says how long the host's schedule has to run."""

    async def go():
        async with serve_web(web_dir, hook=special) as server:
            async with HttpFetcher(FetchConfig.loopback(server.hosts, min_delay=0.3)) as fetcher:
                slot = fetcher.slot(f"{A}/p0")
                assert fetcher.ready_in(slot) == 0.0, "a host never asked is due at once"
                fetcher.prepare(f"{A}/p0")
                fetcher.prepare(f"{A}/p1")  # its robots.txt is on its way already
                fetcher.prepare("ftp://a.test/file")  # refused without asking anyone: nothing to prepare
                assert fetcher.ready_in(slot) >= 0.3, "robots.txt first, then the delay before the page"
                deadline = time.monotonic() + 10
                while not fetcher.robots.known(f"{A}/p0") and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.01)  # the background task's bookkeeping ends after the rules are kept
                wait = fetcher.ready_in(slot)
                assert 0 < wait <= 0.3
                await asyncio.sleep(wait)
                assert fetcher.ready_in(slot) == 0.0
                page = await fetcher.fetch(f"{A}/p0")
                return page, list(server.log), fetcher.robots.fetches

    page, log, robots_fetches = run(go())
    assert page.ok
    assert robots_fetches == 1
    assert [entry.path for entry in log] == ["/robots.txt", "/p0"]
    assert log[1].time - log[0].time >= 0.3, "the page still waited its delay after robots.txt"


def test_fetch_settings_are_typed_checked_and_frozen():
    # a fetcher's settings are fixed when it is made; wrong types and unknown keys never reach it
    from pydantic import ValidationError

    config = FetchConfig(content_types=[" Text/HTML", "application/PDF "], min_delay="2")
    assert config.content_types == ("text/html", "application/pdf") and config.min_delay == 2.0
    with pytest.raises(ValidationError):
        config.min_delay = 0  # type: ignore[misc]
    for wrong in ({"min_delay": "abc"}, {"max_concurrency": "x"}, {"per_host_concurrency": 0}, {"minimum_delay": 1}):
        with pytest.raises(ValidationError):
            FetchConfig(**wrong)
    loopback = FetchConfig.loopback({"a.test": "127.0.0.2:80"}, min_delay=0)
    assert loopback.allow_loopback and loopback.resolve_overrides == {"a.test": "127.0.0.2:80"}
