"""Crawl scope: each rule keeps out what it should, out-of-scope links never enter the frontier (so they cost
no step), content types are checked before a body is downloaded, and politeness can be per registered
domain. The crawls serve an offline web on loopback (``serve_web``); nothing contacts a real host.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest
from aiohttp import web
from conftest import BIRD_WORDS, OTHER_WORDS, _text

from focuscrawl.cli.main import main
from focuscrawl.config import CrawlConfig
from focuscrawl.crawl import Crawler
from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.engine.scope import Scope, url_media_type
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.urls import registered_domain
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

A, B, OTHER = "http://a.example.org", "http://b.example.org", "http://elsewhere.net"


# -- the rules, alone ------------------------------------------------------------------------------------
def test_registered_domains_come_from_the_bundled_suffix_list_without_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("registered_domain must not touch the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    registered_domain.cache_clear()
    assert registered_domain("https://a.b.example.co.uk/x?y") == "example.co.uk"
    assert registered_domain("a.example.org") == registered_domain("b.example.org") == "example.org"
    assert registered_domain("http://127.0.0.1:8080/") == "127.0.0.1"
    assert registered_domain("localhost") == "localhost"
    assert registered_domain("http://[::1]/") == "::1"
    assert registered_domain("github.io") == "github.io"  # a public suffix is nobody's domain but its own
    assert registered_domain("birds.test") == "birds.test"  # unknown suffix: its last two labels
    assert registered_domain("deep.birds.test") == "birds.test"


def test_each_rule_keeps_out_what_it_should():
    assert Scope().allows("http://anything.example/x.pdf", depth=99)
    domains = Scope.build(allowed_domains=["example.org"], denied_domains=["b.example.org"])
    assert domains.allows(f"{A}/p") and domains.allows("http://example.org/") and domains.allows("http://www.example.org/")
    assert not domains.allows(f"{B}/p"), "denied wins over allowed"
    assert not domains.allows(f"{OTHER}/p") and not domains.allows("http://notexample.org/")
    host_only = Scope.build(allowed_domains=["https://a.example.org/"])  # a host (a URL is read as its host)
    assert host_only.allows(f"{A}/p") and host_only.allows("http://x.a.example.org/") and not host_only.allows(f"{B}/")
    patterns = Scope.build(include=[r"/docs/", r"/blog/"], exclude=[r"\?print=", r"/docs/old/"])
    assert patterns.allows(f"{A}/docs/a") and patterns.allows(f"{A}/blog/b")
    assert not patterns.allows(f"{A}/shop/c") and not patterns.allows(f"{A}/docs/a?print=1")
    assert not patterns.allows(f"{A}/docs/old/a")
    depth = Scope.build(max_depth=2)
    assert depth.allows(f"{A}/x", 2) and not depth.allows(f"{A}/x", 3)
    html = Scope.build(content_types=["text/html"])
    assert html.allows(f"{A}/page") and html.allows(f"{A}/page.html") and html.allows(f"{A}/index.php")
    assert html.allows(f"{A}/v1.2/") and not html.allows(f"{A}/report.pdf") and not html.allows(f"{A}/a.JPG")
    assert url_media_type(f"{A}/a.pdf") == "application/pdf" and url_media_type(f"{A}/a") is None
    assert "denied" in domains.reason(f"{B}/p") and "max_depth" in depth.reason(f"{A}/x", 5)
    with pytest.raises(ValueError, match="not a valid regular expression"):
        Scope.build(include=["(unclosed"])


def test_config_keys_reach_the_rules_and_a_bad_one_is_refused():
    config = CrawlConfig.model_validate({"scope": {"allowed_domains": "example.org", "max_depth": 3}})
    rules = config.scope.rules()
    assert rules.allows(f"{A}/x", 3) and not rules.allows(f"{OTHER}/x") and not rules.allows(f"{A}/x", 4)
    assert "scope" not in CrawlConfig().identity(), "the default scope leaves older run folders resumable"
    assert config.identity()["scope"]["max_depth"] == 3
    with pytest.raises(ValueError, match="regular expression"):
        CrawlConfig.model_validate({"scope": {"exclude": ["*bad"]}})
    with pytest.raises(ValueError):
        CrawlConfig.model_validate({"scope": {"max_depth": -1}})


# -- a served crawl ----------------------------------------------------------------------------------------
IN_SCOPE = [f"{A}/", f"{A}/d1", f"{A}/d1/d2", f"{B}/", f"{B}/docs"]


def _scoped_web(directory: Path) -> Path:
    """Two hosts of example.org that link to each other, to a third domain, to an excluded path, to a PDF and
    down a chain deeper than the scope's max_depth; every page relevant-looking, so no strategy avoids them."""
    with WebWriter(directory, {"name": "scope"}) as w:
        def page(url: str, links: list[str]) -> None:
            w.add_page(url, title=url, text=_text(BIRD_WORDS, len(url)))
            for target in links:
                w.add_link(url, target, "bird nest")
        page(f"{A}/", [f"{A}/d1", f"{B}/", f"{OTHER}/", f"{A}/private/x", f"{A}/report.pdf"])
        page(f"{A}/d1", [f"{A}/d1/d2", f"{OTHER}/far"])
        page(f"{A}/d1/d2", [f"{A}/d1/d2/d3"])
        page(f"{A}/d1/d2/d3", [f"{A}/d1/d2/d3/d4"])  # depth 3: out
        page(f"{A}/d1/d2/d3/d4", [])
        page(f"{B}/", [f"{B}/docs", f"{A}/private/y"])
        page(f"{B}/docs", [f"{OTHER}/x"])
        for url in (f"{OTHER}/", f"{OTHER}/far", f"{OTHER}/x", f"{A}/private/x", f"{A}/private/y"):
            page(url, [f"{A}/"])
        w.add_page(f"{A}/report.pdf", content_type="application/pdf", text="")
    return directory


def _topic(tmp_path: Path, seeds: list[str]) -> Path:
    topic_dir = tmp_path / "topic"
    texts = [_text(BIRD_WORDS, i) for i in range(5)] + [_text(OTHER_WORDS, i) for i in range(5)]
    write_topic_dir(topic_dir, TopicInputs("birds", ["bird"], texts, [1] * 5 + [0] * 5, seeds=seeds))
    return topic_dir


def _crawl(web_dir: Path, topic_dir: Path, run: Path, *, hook=None, **settings) -> list[dict]:
    async def go() -> None:
        async with serve_web(web_dir, base_ip="127.0.9.1", hook=hook) as server:
            hosts_map = run.parent / f"{run.name}-hosts.json"
            hosts_map.write_text(json.dumps(server.hosts))
            crawler = Crawler(topic=topic_dir, out=run, progress="none", plot=False, hosts_map=hosts_map,
                              fetch={"min_delay": 0}, **settings)
            async for _ in crawler.run():
                pass

    asyncio.run(asyncio.wait_for(go(), 120))
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("strategy", ["bfs", "adaptive"])
def test_out_of_scope_links_never_enter_the_frontier_and_cost_no_step(tmp_path, strategy):
    web_dir = _scoped_web(tmp_path / "web")
    topic_dir = _topic(tmp_path, [f"{A}/"])
    scope = {"allowed_domains": ["example.org"], "exclude": ["/private/"], "max_depth": 2,
             "content_types": ["text/html"]}
    records = _crawl(web_dir, topic_dir, tmp_path / "run", strategy=strategy, budget=50, concurrency=2, scope=scope)
    fetched = sorted(r["url"] for r in records if r["verdict"] != PROBE)  # not the engine's soft-404 probes
    assert fetched == sorted(IN_SCOPE), "exactly the in-scope pages, each once"
    assert len(records) < 50, "the crawl ran out of in-scope URLs long before its budget: nothing else was queued"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stopped"] == "frontier" and summary["frontier_size"] == 0
    depth = {r["url"]: r["depth"] for r in records}
    assert max(depth.values()) == 2 and depth[f"{A}/d1/d2"] == 2

    # Without a scope the same crawl goes everywhere (the rules, not the web, kept those pages out).
    everything = _crawl(web_dir, topic_dir, tmp_path / "open", strategy=strategy, budget=50, concurrency=2)
    assert {f"{OTHER}/", f"{A}/private/x", f"{A}/d1/d2/d3"} <= {r["url"] for r in everything}


async def _pdf_without_extension(request: web.Request, host: str, url: str) -> web.StreamResponse | None:
    if request.path == "/d1":  # an extensionless URL whose response is not HTML
        return web.Response(body=b"%PDF-1.4 " + b"x" * 200_000, content_type="application/pdf")
    return None


def test_a_response_of_an_unaccepted_type_is_not_downloaded(tmp_path):
    web_dir = _scoped_web(tmp_path / "web")
    topic_dir = _topic(tmp_path, [f"{A}/"])
    records = _crawl(web_dir, topic_dir, tmp_path / "run", hook=_pdf_without_extension, strategy="bfs", budget=4,
                     concurrency=1, scope={"content_types": ["text/html"], "allowed_domains": ["example.org"]})
    d1 = next(r for r in records if r["url"] == f"{A}/d1")
    assert "application/pdf" in d1["error"] and "scope" in d1["error"] and d1["text"] == "" and d1["outlinks"] == 0


def test_a_redirect_out_of_scope_is_fetched_but_not_followed(tmp_path):
    with WebWriter(tmp_path / "web", {"name": "redirect"}) as w:
        w.add_page(f"{A}/", title="a", text=_text(BIRD_WORDS, 1))
        w.add_link(f"{A}/", f"{A}/away", "bird")
        w.add_page(f"{A}/away", status=301, location=f"{OTHER}/landing", content_type="")
        w.add_page(f"{OTHER}/landing", title="o", text=_text(BIRD_WORDS, 2))
        w.add_link(f"{OTHER}/landing", f"{OTHER}/more", "bird")
        w.add_page(f"{OTHER}/more", title="m", text=_text(BIRD_WORDS, 3))
    records = _crawl(tmp_path / "web", _topic(tmp_path, [f"{A}/"]), tmp_path / "run", strategy="bfs", budget=10,
                     concurrency=1, scope={"allowed_domains": ["example.org"]})
    assert [r["url"] for r in records] == [f"{A}/", f"{A}/away"]


# -- politeness per registered domain --------------------------------------------------------------------
def _two_host_web(directory: Path) -> Path:
    with WebWriter(directory, {"name": "two-hosts"}) as w:
        for host in (A, B):
            for i in range(3):
                w.add_page(f"{host}/p{i}", title=f"{host} {i}", text=f"page {i}")
    return directory


async def _fetch_all(web_dir: Path, urls: list[str], **config):
    async with serve_web(web_dir, base_ip="127.0.9.1", crawl_delay=None) as server:
        fetcher = HttpFetcher(FetchConfig.loopback(server.hosts, per_host_concurrency=1, **config))
        try:
            pages = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        finally:
            await fetcher.aclose()
        return pages, list(server.log)


@pytest.mark.slow
def test_politeness_per_domain_spaces_the_hosts_of_one_domain(tmp_path):
    web_dir = _two_host_web(tmp_path / "web")
    urls = [f"{host}/p{i}" for i in range(3) for host in (A, B)]
    delay = 0.2

    pages, log = asyncio.run(_fetch_all(web_dir, urls, min_delay=delay, politeness="domain"))
    assert all(p.ok for p in pages)
    times = sorted(e.time for e in log if not e.path.startswith("/robots.txt"))
    assert len(times) == 6
    assert min(b - a for a, b in zip(times, times[1:])) >= delay * 0.95, "one schedule for both hosts"

    started = time.monotonic()
    pages, log = asyncio.run(_fetch_all(web_dir, urls, min_delay=delay))  # per host (the default)
    times = sorted(e.time for e in log if not e.path.startswith("/robots.txt"))
    assert min(b - a for a, b in zip(times, times[1:])) < delay / 2, "two hosts, two schedules: in parallel"
    assert time.monotonic() - started < 6 * delay + 2


def test_fetch_politeness_must_be_host_or_domain():
    with pytest.raises(ValueError, match="politeness"):
        FetchConfig(politeness="site")


# -- the command line ------------------------------------------------------------------------------------
def _one_error_line(capsys, code: int) -> str:
    out, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in out + err
    lines = [line for line in err.strip().split("\n") if line.strip()]
    assert len(lines) <= 2 and lines[-1].startswith("error:"), err
    return err


def test_cli_scope_flags_and_their_mistakes(tmp_path, capsys):
    topic_dir = _topic(tmp_path, [f"{A}/"])
    base = ["crawl", "--topic", str(topic_dir), "--web", "embedded", "--progress", "none", "--budget", "5"]
    err = _one_error_line(capsys, main([*base, "-o", str(tmp_path / "r1"), "--include", "(oops"]))
    assert "regular expression" in err
    err = _one_error_line(capsys, main([*base, "-o", str(tmp_path / "r2"), "--deny-domain", "example.org"]))
    assert "out of the crawl's scope" in err
    err = _one_error_line(capsys, main([*base, "-o", str(tmp_path / "r3"), "--politeness", "site"]))
    assert "politeness" in err
    _one_error_line(capsys, main([*base, "-o", str(tmp_path / "r4"), "--max-depth", "-2"]))


def test_cli_scope_flags_are_recorded_and_a_resume_cannot_change_them(tmp_path, capsys):
    web_dir = _scoped_web(tmp_path / "web")
    topic_dir = _topic(tmp_path, [f"{A}/"])
    run = tmp_path / "run"
    base = ["crawl", "--topic", str(topic_dir), "--web", str(web_dir), "-o", str(run), "--progress", "none",
            "--strategy", "bfs", "--budget", "50"]
    code = main([*base, "--allow-domain", "example.org", "--exclude", "/private/", "--max-depth", "2",
                 "--content-type", "text/html"])
    assert code == 0, capsys.readouterr().err
    records = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
    assert sorted(r["url"] for r in records if r["verdict"] != PROBE) == sorted(IN_SCOPE)
    stored = (run / "config.yml").read_text()
    assert "example.org" in stored and "max_depth: 2" in stored
    err = _one_error_line(capsys, main([*base, "--max-depth", "3"]))
    assert "scope" in err
