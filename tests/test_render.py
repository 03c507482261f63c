"""JavaScript rendering (focuscrawl.http.render, fetch.render / --render): on a served web whose pages add links
from scripts, ``never`` misses them, ``auto`` and ``always`` find them, ``auto`` leaves plain pages alone, and a
render sends the server nothing.

The browser tests drive Debian's chromium through Playwright (the render extra) and skip without either (under
.ci/run they fail: conftest.needs_tool); the rule, the settings and the one-line errors for a missing extra or
browser are tested without them. What keeps a render from hurting the user: tests/test_render_safety.py.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web
from conftest import BIRD_WORDS, OTHER_WORDS, _text, needs_tool
from typer.testing import CliRunner

from focuscrawl import extras
from focuscrawl.cli.main import app
from focuscrawl.html import script_links_tag
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.render import Renderer, RenderError, merge_rendered, needs_rendering
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import Link
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import OfflineWeb, WebWriter

CHROMIUM = shutil.which("chromium")
PLAYWRIGHT = importlib.util.find_spec("playwright") is not None
needs_browser = needs_tool(CHROMIUM is not None and PLAYWRIGHT, "rendering needs Debian's chromium and the render "
                           "extra (pip install 'focuscrawl[render]')")

A, B = "http://a.test", "http://b.test"
SCRIPTED = [f"{A}/s{i}" for i in range(4)]  # pages with links that only their script adds
PLAIN = [f"{A}/p{i}" for i in range(3)] + [f"{B}/q{i}" for i in range(2)]
HIDDEN = [f"{B}/hidden{i}" for i in range(3)]  # linked from scripts only


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def build_web(directory: Path) -> Path:
    """Text-only pages served rendered (render_html): plain ones, and ones whose script adds links, some to
    pages nothing else links to. Two pages the hook serves: one that tries every way of sending a request,
    one whose script never ends."""
    with WebWriter(directory, {"name": "scripted"}) as w:
        for i, url in enumerate(PLAIN + SCRIPTED + HIDDEN):
            words = BIRD_WORDS if i % 2 else OTHER_WORDS
            w.add_page(url, title=url.rsplit("/", 1)[-1], text=_text(words, i), labels=["topic.birds"])
        for i, url in enumerate(PLAIN):
            w.add_link(url, PLAIN[(i + 1) % len(PLAIN)], "next")
            w.add_link(url, f"{A}/gone{i}", "gone")
        w.add_link(PLAIN[0], SCRIPTED[0], "scripted")
        for i, url in enumerate(SCRIPTED):
            w.add_link(url, PLAIN[i], "plain")
            w.add_link(url, SCRIPTED[(i + 1) % len(SCRIPTED)], "next scripted")
            w.add_script_link(url, HIDDEN[i % len(HIDDEN)], f"hidden {i}")
            w.add_script_link(url, f"{B}/q{i % 2}", "a plain page, by script")
        for url in HIDDEN:
            w.add_link(url, PLAIN[0], "home")
        for path in ("/hostile", "/endless"):
            w.add_page(f"{A}{path}", title=path, text="served by the hook")
    return directory


def hostile_page(base: str) -> str:
    """A page that tries, every way a page can, to reach the server at its real loopback address; its script
    also writes a link, so that ``auto`` renders it."""
    return f"""<!DOCTYPE html><html><head><title>hostile</title>
<link rel="preconnect" href="{base}"><link rel="prefetch" href="{base}/leak-prefetch">
<link rel="stylesheet" href="{base}/leak-css"><script src="{base}/leak-script.js"></script>
<meta http-equiv="refresh" content="0;url={base}/leak-refresh"></head>
<body><p>Hostile text that stays.</p><img src="{base}/leak-img.png"><iframe src="{base}/leak-frame"></iframe>
<a id="away" href="{base}/leak-click" ping="{base}/leak-ping">away</a>
<form id="form" action="{base}/leak-form" method="post"><input name="x" value="1"></form>
<script>
document.write('<a href="/written">written by a script</a>');
fetch('{base}/leak-fetch').catch(function () {{}});
navigator.sendBeacon('{base}/leak-beacon', 'x');
try {{ new WebSocket('{base.replace("http", "ws")}/leak-ws'); }} catch (e) {{}}
var xhr = new XMLHttpRequest(); xhr.open('GET', '{base}/leak-xhr'); xhr.send();
setTimeout(function () {{
  document.getElementById('away').click(); window.open('{base}/leak-popup');
  document.getElementById('form').submit(); location.href = '{base}/leak-location';
}}, 0);
</script></body></html>"""


def endless_page() -> str:
    return ("<html><head><title>endless</title></head><body><p>Endless text.</p><a href='/p0'>plain</a><script>"
            "document.write('<a href=\"/never\">never written</a>'); while (true) {}</script></body></html>")


@pytest.fixture(scope="module")
def scripted_web(tmp_path_factory) -> Path:
    return build_web(tmp_path_factory.mktemp("render") / "web")


async def hook(request: web.Request, host: str, url: str) -> web.StreamResponse | None:
    if request.path == "/hostile":  # at the server's real address, which the browser could reach if let
        ip, port = request.transport.get_extra_info("sockname")[:2]
        return web.Response(text=hostile_page(f"http://{ip}:{port}"), content_type="text/html")
    if request.path == "/endless":
        return web.Response(text=endless_page(), content_type="text/html")
    return None


def fetch_all(web_dir: Path, mode: str, urls: list[str], *, one_by_one: bool = False, **settings):
    """Every URL fetched once with ``render=mode``: the pages, the render statistics, the server's request log."""
    async def go():
        async with serve_web(web_dir, base_ip="127.0.9.1", hook=hook) as server:
            config = FetchConfig.loopback(server.hosts, min_delay=0, render=mode, **settings)
            async with HttpFetcher(config) as fetcher:
                if one_by_one:
                    pages = [await fetcher.fetch(url) for url in urls]
                else:
                    pages = await asyncio.gather(*(fetcher.fetch(url) for url in urls))
                stats = fetcher.render_stats
            return {p.url: p for p in pages}, stats, [(entry.host, entry.path) for entry in server.log]
    return run(go())


@pytest.fixture(scope="module")
def fetched(scripted_web):
    urls = PLAIN + SCRIPTED + HIDDEN + [f"{A}/hostile"]
    return {mode: fetch_all(scripted_web, mode, urls) for mode in ("never", "auto", "always")}


# -- with a browser ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@needs_browser
def test_never_misses_script_links_and_auto_and_always_find_them(scripted_web, fetched):
    offline = OfflineWeb(scripted_web)
    for mode in ("never", "auto", "always"):
        pages = fetched[mode][0]
        for url in PLAIN + SCRIPTED + HIDDEN:
            want = offline.fetch(url, render=mode != "never")
            got = pages[url]
            assert (got.status, got.title, got.text, got.outlinks) == \
                   (want.status, want.title, want.text, want.outlinks), (mode, url)
        never = {link.url for page in fetched["never"][0].values() for link in page.outlinks}
        assert not never & set(HIDDEN)
    for mode in ("auto", "always"):
        found = {link.url for page in fetched[mode][0].values() for link in page.outlinks}
        assert set(HIDDEN) <= found, mode
        hostile = fetched[mode][0][f"{A}/hostile"]
        assert f"{A}/written" in [link.url for link in hostile.outlinks]
        assert "Hostile text that stays." in hostile.text


@pytest.mark.slow
@needs_browser
def test_auto_renders_only_pages_whose_scripts_write_links(fetched):
    auto, always = fetched["auto"][1], fetched["always"][1]
    assert (auto.pages, auto.failures) == (len(SCRIPTED) + 1, 0)  # the scripted pages and the hostile one
    assert (always.pages, always.failures) == (len(PLAIN + SCRIPTED + HIDDEN) + 1, 0)
    # each scripted page's two script links, and the hostile page's written one
    assert auto.links_added == always.links_added == 2 * len(SCRIPTED) + 1
    assert fetched["never"][1].pages == 0 and auto.seconds > 0


@pytest.mark.slow
@needs_browser
def test_a_render_sends_the_server_no_request(fetched):
    """Every mode sends the server exactly the requests of a crawler that runs no script: each page once, one
    robots.txt per host; nothing the hostile page tried (subresources, fetch, beacons, sockets, navigations)."""
    logs = {mode: Counter(fetched[mode][2]) for mode in fetched}
    assert logs["auto"] == logs["always"] == logs["never"]
    assert all(count == 1 for count in logs["always"].values())
    assert not [path for _, path in logs["always"] if "leak" in path]


@pytest.mark.slow
@needs_browser
def test_a_script_that_never_ends_times_out_and_the_page_keeps_its_html(scripted_web):
    pages, stats, _ = fetch_all(scripted_web, "auto", [f"{A}/endless", SCRIPTED[0]], one_by_one=True,
                                render_timeout=5)  # long enough for the page after it on a loaded machine
    endless = pages[f"{A}/endless"]
    assert endless.ok and endless.text.startswith("Endless text.")
    assert [link.url for link in endless.outlinks] == [PLAIN[0]]
    # the render after it gets a page of its own
    assert set(HIDDEN) & {link.url for link in pages[SCRIPTED[0]].outlinks}
    assert (stats.pages, stats.failures) == (1, 1)


@pytest.mark.slow
@needs_browser
def test_crawl_with_render_auto_reaches_pages_only_scripts_link_to(scripted_web, tmp_path):
    """--render reaches the fetcher: the crawl with auto fetches the pages only scripts link to."""
    topic = tmp_path / "topic"
    topic.mkdir()
    (topic / "keywords.txt").write_text("bird\nnest\n")
    (topic / "positive").mkdir()
    (topic / "negative").mkdir()
    (topic / "positive" / "a.txt").write_text(BIRD_WORDS)
    (topic / "negative" / "a.txt").write_text(OTHER_WORDS)
    (tmp_path / "seeds.txt").write_text(PLAIN[0] + "\n")

    async def crawl(mode: str) -> set[str]:
        async with serve_web(scripted_web, base_ip="127.0.9.1", hook=hook) as server:
            hosts = tmp_path / "hosts.json"
            hosts.write_text(json.dumps(server.hosts))
            out = tmp_path / mode
            result = await asyncio.to_thread(CliRunner().invoke, app, [
                "crawl", "--seeds", str(tmp_path / "seeds.txt"), "--topic", str(topic), "-o", str(out),
                "--hosts-map", str(hosts), "--budget", "30", "--strategy", "bfs", "--progress", "none",
                "--render", mode, "-s", "fetch.min_delay=0", "-s", "plot=false"])
            assert result.exit_code == 0, result.output
        return {json.loads(line)["url"] for line in (out / "pages.jsonl").read_text().splitlines()}

    never, auto = run(crawl("never")), run(crawl("auto"))
    assert not never & set(HIDDEN) and set(HIDDEN) <= auto


@pytest.mark.slow
@needs_browser
def test_renderer_alone_returns_the_dom_after_scripts():
    async def go():
        renderer = Renderer(CHROMIUM, timeout=20)
        try:
            html = "<html><body><p>x</p>" + script_links_tag([Link("http://c.test/y", "why")]) + "</body></html>"
            return await renderer.render("http://c.test/", html)
        finally:
            await renderer.aclose()
    assert '<a href="http://c.test/y">why</a>' in run(go())


# -- without a browser ----------------------------------------------------------------------------------------
def test_the_auto_rule_picks_scripts_that_write_links():
    script_menu = script_links_tag([Link("http://a.test/x", "x")])  # the messy web's
    picked = [
        f"<html><body><p>text</p>{script_menu}</body></html>",
        "<body><script>document.write('<a href=\"/x\">x</a>')</script></body>",
        "<body><div id=m></div><script>m.innerHTML = '<a href=\"/x\">x</a>';</script></body>",
        "<body><script>var a = document.createElement('a'); a.href = '/x'; document.body.appendChild(a);</script>",
    ]
    left = [
        "<html><body><p>no script at all</p><a href='/x'>x</a></body></html>",
        "<body><script src='/app.js'></script><div id=root></div></body>",  # its code is not run: nothing fetched
        # an analytics snippet inserts a script element, not links
        "<body><script>(function(){var s=document.createElement('script');s.src='//t.test/a.js';"
        "document.head.appendChild(s);})();</script></body>",
        "<body><script>if (!ok) { window.location.href = '/elsewhere'; }</script></body>",  # a redirect
        "<body><script type='application/ld+json'>{\"url\": \"/x\", \"html\": \"document.write(href)\"}</script>",
        "<body><script>el.innerHTML = count + ' items';</script></body>",  # writes, but no link
    ]
    assert all(needs_rendering(html) for html in picked)
    assert not any(needs_rendering(html) for html in left)


def test_merge_keeps_the_html_reading_and_adds_what_scripts_wrote():
    a, b, c = (Link(f"http://a.test/{x}", x) for x in "abc")
    assert merge_rendered(("T", "long text", [a, b]), ("", "", [b, c]), max_links=10) == ("T", "long text", [a, b, c])
    assert merge_rendered(("", "", [a]), ("App", "text the script wrote", [a]), max_links=10) == \
        ("App", "text the script wrote", [a])
    assert merge_rendered(("T", "", [a, b]), ("T", "", [c]), max_links=2)[2] == [a, b]


def test_render_settings_are_checked():
    with pytest.raises(ValueError, match="render must be one of never, auto, always"):
        FetchConfig(render="sometimes")
    with pytest.raises(ValueError, match="render_timeout"):
        FetchConfig(render_timeout=0)
    assert HttpFetcher(FetchConfig()).renderer is None  # never: no browser is ever started


def crawl_args(tmp_path: Path, *extra: str) -> list[str]:
    topic = tmp_path / "topic"
    topic.mkdir(exist_ok=True)
    (topic / "keywords.txt").write_text("bird\n")
    (tmp_path / "seeds.txt").write_text(f"{A}/p0\n")
    hosts = tmp_path / "hosts.json"
    hosts.write_text(json.dumps({"a.test": "127.0.9.1:9"}))
    return ["crawl", "--seeds", str(tmp_path / "seeds.txt"), "--topic", str(topic), "-o", str(tmp_path / "run"),
            "--hosts-map", str(hosts), "--progress", "none", *extra]


def one_error_line(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in result.output, result.output
    for fragment in fragments:
        assert fragment in lines[0], result.output


def test_a_missing_extra_or_browser_or_a_wrong_mode_is_one_line(tmp_path, monkeypatch):
    runner = CliRunner()
    one_error_line(runner.invoke(app, crawl_args(tmp_path, "--render", "sometimes")),
                   "render must be one of never, auto, always")
    one_error_line(runner.invoke(app, crawl_args(tmp_path, "--render", "always", "--web", "embedded")),
                   "--hosts-map")
    if PLAYWRIGHT:
        one_error_line(runner.invoke(app, crawl_args(tmp_path, "--render", "auto", "-s",
                                                     f"fetch.render_browser={tmp_path / 'no-chromium'}")),
                       "needs Chromium", "no-chromium", "apt-get install chromium")
    real_import = extras.importlib.import_module

    def without_playwright(name, *args, **kwargs):
        if name.split(".")[0] == "playwright":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(extras.importlib, "import_module", without_playwright)
    one_error_line(runner.invoke(app, crawl_args(tmp_path, "--render", "auto")),
                   "needs the 'render' extra (pip install 'focuscrawl[render]')")
    assert not (tmp_path / "run").exists()  # checked before the run folder is made


@pytest.mark.slow
def test_a_renderer_whose_browser_does_not_start_fails_each_render_quickly(tmp_path):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    if not PLAYWRIGHT:
        pytest.skip("the render extra is not installed")

    async def go():
        renderer = Renderer(str(fake), timeout=5)
        errors = []
        for _ in range(2):
            with pytest.raises(RenderError) as caught:
                await renderer.render("http://a.test/", "<html></html>")
            errors.append(str(caught.value))
        await renderer.aclose()
        return errors
    first, second = run(go())
    assert "did not start" in first and first == second  # tried once, not once per page
