"""The loopback server: what it serves, and that fetching it over HTTP gives what OfflineWeb.fetch gives."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from focuscrawl.html import parse_html
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import Link
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.serve import allocate_addresses, serve_web
from focuscrawl.webs.store import OfflineWeb, WebWriter


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def build_html_web(directory: Path) -> Path:
    """Two hosts, stored HTML (served as is), a redirect, a dead end, a 500 and a www. host."""
    with WebWriter(directory, {"name": "html-web"}) as w:
        hosts = ["http://one.test", "https://www.two.test"]
        for h, host in enumerate(hosts):
            for i in range(5):
                url = f"{host}/dir/page{i}.html?lang=en"
                links = [f"{hosts[1 - h]}/dir/page{(i + 1) % 5}.html?lang=en", f"{host}/gone{i}", f"{host}/old"]
                body = "".join(f'<a href="{u}">to {k} &amp; more</a> ' for k, u in enumerate(links))
                html = (f"<html><head><title>{host} {i}</title></head><body><nav>menu</nav>"
                        f"<p>Caf\u00e9 text {i}, broken <b>markup<p>{body}</body></html>")
                title, text, parsed = parse_html(html, url)
                w.add_page(url, title=title, text=text, html=html)
                for link in parsed:
                    w.add_link(url, link.url, link.anchor)
        w.add_page("http://one.test/old", status=301, location="http://one.test/dir/page0.html?lang=en",
                   content_type="")
        w.add_page("http://one.test/broken", status=500, content_type="")
    return directory


async def _fetch_both(web_dir: Path, urls: list[str]):
    offline = OfflineWeb(web_dir)
    async with serve_web(web_dir, base_ip="127.0.7.1") as server:
        config = FetchConfig.loopback(server.hosts, min_delay=0, per_host_concurrency=16)
        async with HttpFetcher(config) as fetcher:
            served = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
    return [offline.fetch(u) for u in urls], served


def test_served_stored_html_web_equals_offline_fetch(tmp_path):
    web_dir = build_html_web(tmp_path / "web")
    urls = [r.url for r in OfflineWeb(web_dir).records()]
    offline, served = run(_fetch_both(web_dir, urls))
    assert len(urls) == 23  # 10 pages, 11 dead ends, a redirect and a 500
    for want, got in zip(offline, served):
        assert (got.status, got.final_url, got.title, got.text, got.outlinks) == \
               (want.status, want.final_url, want.title, want.text, want.outlinks), want.url


def test_served_embedded_web_matches_offline_fetch():
    """A text-only web served over HTTP reads back exactly as the in-process fetch: same title, text and
    links in the same order. This is what makes a served crawl equal to the offline crawl."""
    web_dir = resolve_web_dir("embedded")
    web = OfflineWeb(web_dir)
    urls = [r.url for r in web.records()][:80]
    offline, served = run(_fetch_both(web_dir, urls))
    for want, got in zip(offline, served):
        assert (got.status, got.final_url, got.title, got.text, got.outlinks) == \
               (want.status, want.final_url, want.title, want.text, want.outlinks), want.url


def test_server_statuses_robots_latency_and_errors(tmp_path):
    web_dir = build_html_web(tmp_path / "web")

    async def go():
        async with serve_web(web_dir, base_ip="127.0.7.1", latency_ms=100, disallow={"one.test": ["/dir/"]},
                             crawl_delay=2) as server:
            assert set(server.hosts) == {"one.test", "www.two.test"}
            one = server.hosts["one.test"]
            assert one.startswith("127.0.7.") and one != server.hosts["www.two.test"]
            async with aiohttp.ClientSession() as session:
                async def get(path, host="one.test"):
                    async with session.get(f"http://{server.hosts[host]}{path}", allow_redirects=False,
                                           headers={"Host": host}) as resp:
                        return resp.status, resp.headers.get("Location"), await resp.text()

                started = time.monotonic()
                robots = await get("/robots.txt")
                assert time.monotonic() - started >= 0.1
                assert robots[0] == 200 and "Disallow: /dir/" in robots[2] and "Crawl-delay: 2" in robots[2]
                assert "Disallow:\n" in (await get("/robots.txt", "www.two.test"))[2]
                assert (await get("/old"))[:2] == (301, "http://one.test/dir/page0.html?lang=en")
                assert (await get("/gone1"))[0] == 404 and (await get("/nothing"))[0] == 404
                assert (await get("/broken"))[0] == 500
                page = await get("/dir/page1.html?lang=en")
                assert page[0] == 200 and "one.test 1" in page[2]
                # Addressed by IP alone, the address tells the host.
                async with session.get(f"http://{one}/dir/page1.html?lang=en") as resp:
                    assert resp.status == 200
            return list(server.log)

    log = run(go())
    assert log[0].path == "/robots.txt" and log[0].host == "one.test" and log[0].url == "http://one.test/robots.txt"

    async def errors(seed):
        async with serve_web(web_dir, base_ip="127.0.7.1", error_rate=0.5, seed=seed) as server:
            async with aiohttp.ClientSession() as session:
                statuses = []
                for _ in range(40):
                    async with session.get(f"http://{server.hosts['one.test']}/dir/page1.html?lang=en",
                                           headers={"Host": "one.test"}) as resp:
                        statuses.append(resp.status)
            return statuses

    first, again = run(errors(3)), run(errors(3))
    assert first == again and 5 < first.count(503) < 35 and set(first) == {200, 503}


def test_allocate_addresses():
    assert allocate_addresses(3, "127.0.1.254") == ["127.0.1.254", "127.0.2.1", "127.0.2.2"]


@pytest.mark.slow
def test_cli_serve_prints_the_mapping_and_logs_each_request(tmp_path):
    map_file, log_file = tmp_path / "hosts.json", tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from focuscrawl.cli.main import app; app()", "web", "serve", "embedded", "--port", "0",
         "--base-ip", "127.0.8.1", "--map", str(map_file), "--log", str(log_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not map_file.exists() or not map_file.read_text().strip().endswith("}"):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        hosts = json.loads(map_file.read_text())
        assert list(hosts) == ["schools-wikipedia.org"] and hosts["schools-wikipedia.org"].startswith("127.0.8.1:")

        async def fetch():
            async with HttpFetcher(FetchConfig.loopback(hosts, min_delay=0)) as fetcher:
                return await fetcher.fetch("https://schools-wikipedia.org/wp/other/18th_century.htm")

        page = run(fetch())
        assert page.ok and page.title == "18th century" and Link in {type(x) for x in page.outlinks}
        # Written before the response goes out, so the client's answer means the line is there.
        logged = [json.loads(line) for line in log_file.read_text().splitlines()]
        assert [(entry["path"], entry["status"]) for entry in logged] == [
            ("/robots.txt", 200), ("/wp/other/18th_century.htm", 200)]
        assert logged[1]["url"] == "https://schools-wikipedia.org/wp/other/18th_century.htm"  # the scheme it meant
        assert logged[0]["time"] <= logged[1]["time"] and logged[1]["host"] == "schools-wikipedia.org"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
def test_cli_serve_log_in_a_missing_folder_is_one_error_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", "from focuscrawl.cli.main import app; app()", "web", "serve", "embedded", "--port", "0",
         "--base-ip", "127.0.8.1", "--log", str(tmp_path / "missing" / "requests.jsonl")],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("error:") and len(proc.stderr.strip().splitlines()) == 1
