"""``politeness="ip"``: one request schedule per resolved address, over HTTP on loopback.

Host names that share a server are served on one 127.x address (``serve_web(max_addresses=...)``), others on
their own. The first test resolves them through the resolver's real lookup path (its TTL cache, the address
guard) with the event loop's ``getaddrinfo`` answering from a table, so nothing asks a real DNS server; the
crawl through the command line maps them with a hosts map (``resolve_overrides``), as every served crawl does.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import ThreadServedWeb, build_tiny_web, write_birds_topic

from focuscrawl.cli.main import main
from focuscrawl.config import CrawlConfig, load_config
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.safety import AddressPolicy, CachingResolver
from focuscrawl.http.settings import FetchConfig
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

HOSTS = [f"h{i}.test" for i in range(6)]  # sorted, so serve_web gives h0, h2, h4 one address and h1, h3, h5 another
PAGES = 3


def _free_port(ip: str) -> int:
    with socket.socket() as sock:
        sock.bind((ip, 0))
        return sock.getsockname()[1]


def _web(directory: Path, port: int) -> Path:
    """Six hosts of three pages each, their URLs on ``port`` (every address serves that port)."""
    with WebWriter(directory, {"name": "shared-addresses"}) as w:
        for host in HOSTS:
            for i in range(PAGES):
                w.add_page(f"http://{host}:{port}/p{i}", title=f"{host} {i}", text=f"page {i} of {host}")
    return directory


def _gaps(times: list[float]) -> list[float]:
    times = sorted(times)
    return [b - a for a, b in zip(times, times[1:])]


async def _fetch_through_dns(web_dir: Path, port: int, monkeypatch, **config):
    """Fetch every page of the web at once (and one of a host whose lookup fails) with names resolved by the
    resolver's lookup; returns (pages, the server's log, lookups per name, the fetcher's slots of a few URLs)."""
    lookups: Counter[str] = Counter()
    async with serve_web(web_dir, base_ip="127.0.9.1", port=port, max_addresses=2) as server:
        answers = {host: served.split(":")[0] for host, served in server.hosts.items()}

        async def table_getaddrinfo(host, port, **kwargs):
            lookups[host] += 1
            if host not in answers:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]

        monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", table_getaddrinfo)
        urls = [f"http://{host}:{port}/p{i}" for i in range(PAGES) for host in HOSTS]
        async with HttpFetcher(FetchConfig(allow_loopback=True, **config)) as fetcher:
            before = fetcher.slot(urls[0])
            pages = await asyncio.gather(*(fetcher.fetch(u) for u in [*urls, f"http://gone.test:{port}/p0"]))
            slots = {"before": before, "h0": fetcher.slot(urls[0]), "h2": fetcher.slot(urls[2]),
                     "h1": fetcher.slot(urls[1]), "gone": fetcher.slot(f"http://gone.test:{port}/p1")}
        return pages, list(server.log), lookups, slots


@pytest.mark.slow
def test_per_address_schedules_space_the_names_of_one_server_and_let_others_run(tmp_path, monkeypatch):
    port = _free_port("127.0.9.1")
    web_dir = _web(tmp_path / "web", port)
    delay = 0.15

    started = time.monotonic()
    pages, log, lookups, slots = asyncio.run(_fetch_through_dns(web_dir, port, monkeypatch, min_delay=delay,
                                                                politeness="ip"))
    elapsed = time.monotonic() - started
    assert all(p.ok for p in pages[:-1]), [p.error for p in pages if not p.ok]
    assert pages[-1].status == 0 and "DNS lookup failed for gone.test" in pages[-1].error, "reported as before"
    assert not any(e.host == "gone.test" for e in log)
    assert set(lookups.values()) == {1}, f"each name resolved once for its robots.txt and pages: {lookups}"
    assert slots == {"before": "h0.test", "h0": "127.0.9.1", "h2": "127.0.9.1", "h1": "127.0.9.2", "gone": "gone.test"}

    by_address = defaultdict(list)
    for entry in log:  # robots.txt requests keep the address's schedule too
        by_address[entry.address].append(entry.time)
    assert sorted(by_address) == ["127.0.9.1", "127.0.9.2"]
    for address, times in by_address.items():
        assert len(times) == 3 * (PAGES + 1)
        assert min(_gaps(times)) >= delay * 0.95, f"{address}: one schedule for its three names"
    first, second = by_address.values()
    assert min(abs(a - b) for a in first for b in second) < delay / 2, "two addresses, two schedules: in parallel"
    assert elapsed < 12 * delay + 3, "the two addresses' requests overlap"

    # Per host (the default) the three names of one address are three schedules.
    _, log, _, _ = asyncio.run(_fetch_through_dns(web_dir, port, monkeypatch, min_delay=delay))
    times = [e.time for e in log if e.address == "127.0.9.1"]
    assert min(_gaps(times)) < delay / 2


def test_the_resolver_knows_an_address_without_a_lookup_only_once_it_resolved_it(monkeypatch):
    calls: list[str] = []

    async def table_getaddrinfo(host, port, **kwargs):
        calls.append(host)
        if host == "gone.test":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        ips = {"a.test": ["127.0.3.1", "127.0.3.2"], "inside.test": ["10.0.0.1"]}[host]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ips]

    async def go():
        monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", table_getaddrinfo)
        resolver = CachingResolver(AddressPolicy(allow_loopback=True), {"mapped.test": "127.0.4.4:8080"}, ttl=0)
        assert resolver.known_address("a.test") is None, "never resolved: unknown, and no lookup"
        assert resolver.known_address("mapped.test") == "127.0.4.4"
        assert resolver.known_address("127.0.5.5") == "127.0.5.5"
        assert resolver.known_address("10.0.0.1") is None, "an address the guard refuses is nobody's schedule"
        assert await resolver.addresses("a.test") == ["127.0.3.1", "127.0.3.2"]
        assert resolver.known_address("A.test") == "127.0.3.1", "the first, which a connection tries first"
        for host in ("gone.test", "inside.test"):
            with pytest.raises(OSError):
                await resolver.addresses(host)
            assert resolver.known_address(host) is None
        assert calls == ["a.test", "gone.test", "inside.test"]
        await resolver.addresses("a.test")  # past its TTL (0 here): looked up again
        assert calls[-1] == "a.test" and len(calls) == 4

    asyncio.run(go())


def test_politeness_ip_is_a_setting_of_the_config_and_of_the_fetcher():
    cfg = load_config(CrawlConfig, None, ["fetch.politeness=ip"], web="embedded")
    assert cfg.fetch.politeness == "ip"
    with pytest.raises(ValueError, match="politeness"):
        FetchConfig(politeness="address")


@pytest.mark.slow
def test_crawl_politeness_ip_from_the_command_line(tmp_path, capsys):
    """``focuscrawl crawl --politeness ip`` over a served web whose three hosts share two addresses."""
    web_dir = build_tiny_web(tmp_path / "web")
    topic_dir = write_birds_topic(tmp_path / "topic", ["http://birds.test/b0", "http://far.test/f0"])
    served = ThreadServedWeb(web_dir, tmp_path / "hosts.json", base_ip="127.0.9.1", max_addresses=2)
    delay = 0.2
    try:
        run = tmp_path / "run"
        code = main(["crawl", "--topic", str(topic_dir), "--hosts-map", str(served.map_file), "-o", str(run),
                     "--strategy", "bfs", "--budget", "16", "--concurrency", "4", "--progress", "none",
                     "--politeness", "ip", "-s", f"fetch.min_delay={delay}"])
        assert code == 0, capsys.readouterr().err
        log = list(served.server.log)
    finally:
        served.close()
    assert len((run / "pages.jsonl").read_text().splitlines()) == 16
    hosts_at = defaultdict(set)
    times = defaultdict(list)
    for entry in log:
        hosts_at[entry.address].add(entry.host)
        times[entry.address].append(entry.time)
    shared = next(address for address, hosts in hosts_at.items() if len(hosts) == 2)
    assert hosts_at[shared] == {"birds.test", "trains.test"}, hosts_at
    assert len(times[shared]) > 8 and min(_gaps(times[shared])) >= delay * 0.95, "two names, one schedule"
    assert "politeness: ip" in (run / "config.yml").read_text()
    assert json.loads((tmp_path / "hosts.json").read_text())["birds.test"].startswith(shared)
