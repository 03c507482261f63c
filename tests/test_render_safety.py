"""Rendering that cannot hurt the user (http/browser_launch.py, http/render.py): the browser runs in Chromium's
sandbox, as an unprivileged account when we are root; a download is refused; WebRTC sends nothing; the DOM a
script builds is cut to max_body_bytes; where the sandbox cannot run, --render is refused with one line naming
--render-no-sandbox, and that flag works. And CI fails, not skips, when it cannot install chromium.

Each browser test would fail with its fix undone: without ``chromium_sandbox=True`` (Playwright then adds
--no-sandbox) the renderers have no seccomp filter and share the browser's namespaces; without
``accept_downloads=False`` the payload lands in Playwright's artifacts folder; without
``--webrtc-ip-handling-policy`` the STUN server on loopback gets packets; without the cut the DOM comes back whole.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pwd
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import needs_tool, write_birds_topic
from test_render import CHROMIUM, HIDDEN, PLAIN, PLAYWRIGHT, build_web, hook
from typer.testing import CliRunner

from focuscrawl.cli.main import app
from focuscrawl.http import browser_launch
from focuscrawl.http.browser_launch import DEFAULT_RENDER_USER, SandboxUnavailable
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.render import Renderer, RenderError
from focuscrawl.http.settings import FetchConfig
from focuscrawl.webs.serve import serve_web

ROOT = Path(__file__).resolve().parents[1]
needs_browser = needs_tool(CHROMIUM is not None and PLAYWRIGHT, "rendering needs Debian's chromium and the render "
                           "extra (pip install 'focuscrawl[render]')")
PAYLOAD = "downloaded-payload-7f3a"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 180))


def descendants() -> list[int]:
    """This process's descendants (Playwright's driver, the browser, its zygotes and renderers), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def process(pid: int) -> dict[str, str]:
    """A process's command line, real uid, seccomp mode and user namespace."""
    proc = Path(f"/proc/{pid}")
    status = dict(line.split(":\t", 1) for line in (proc / "status").read_text().splitlines() if ":\t" in line)
    return {"cmdline": (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(), "uid": status["Uid"].split()[0],
            "seccomp": status.get("Seccomp", "").strip(), "userns": os.readlink(proc / "ns" / "user")}


def browser_processes() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(browser main processes, renderer processes) among this process's descendants."""
    procs = []
    for pid in descendants():
        try:
            procs.append(process(pid))
        except (OSError, KeyError):
            continue  # ended meanwhile
    chromium = [p for p in procs if "chromium" in p["cmdline"].split(" ", 1)[0]]
    return ([p for p in chromium if "--type=" not in p["cmdline"]],
            [p for p in chromium if "--type=renderer" in p["cmdline"]])


async def render_and_look(renderer: Renderer, html: str):
    """Render ``html``, then (the browser still open) its processes, and the launch folder."""
    try:
        dom = await renderer.render("http://c.test/", html)
        return dom, browser_processes(), renderer._launch
    finally:
        await renderer.aclose()


# -- the sandbox -----------------------------------------------------------------------------------------------
@pytest.mark.slow
@needs_browser
def test_the_browser_runs_in_chromiums_sandbox_as_an_unprivileged_user():
    dom, (browsers, renderers), launch = run(render_and_look(Renderer(CHROMIUM, timeout=60), "<p>sandboxed</p>"))
    assert "sandboxed" in dom
    assert browsers and renderers
    expected_uid = pwd.getpwnam(DEFAULT_RENDER_USER).pw_uid if os.geteuid() == 0 else os.getuid()
    ours = os.readlink("/proc/self/ns/user")
    for browser in browsers:
        assert "--no-sandbox" not in browser["cmdline"]
        assert browser["uid"] == str(expected_uid) != "0"
    for renderer in renderers:  # what the sandbox does to each renderer: a seccomp filter, a user namespace
        assert "--no-sandbox" not in renderer["cmdline"]
        assert renderer["seccomp"] == "2", renderer
        assert renderer["userns"] != ours and renderer["uid"] == str(expected_uid)
    if launch is not None and launch.workdir is not None:  # as root: the account's home goes with the browser
        assert not launch.workdir.exists()


@pytest.mark.slow
@needs_browser
def test_without_the_sandbox_the_renderers_are_unconfined():
    """The opt-out does what it says (and the evidence above tells the two apart)."""
    dom, (browsers, renderers), _ = run(render_and_look(Renderer(CHROMIUM, timeout=60, sandbox=False), "<p>open</p>"))
    assert "open" in dom and renderers
    assert all("--no-sandbox" in b["cmdline"] for b in browsers)
    assert all(r["seccomp"] == "0" for r in renderers)


def simulate_no_namespaces(monkeypatch) -> None:
    monkeypatch.setattr(browser_launch, "namespace_problem",
                        lambda account: "this user cannot create user namespaces (simulated)")


def crawl_args(tmp_path: Path, hosts: dict[str, str], *extra: str) -> list[str]:
    if not (tmp_path / "topic").exists():
        write_birds_topic(tmp_path / "topic", [PLAIN[0]])
    (tmp_path / "hosts.json").write_text(json.dumps(hosts))
    return ["crawl", "--topic", str(tmp_path / "topic"), "-o", str(tmp_path / "run"), "--hosts-map",
            str(tmp_path / "hosts.json"), "--budget", "30", "--strategy", "bfs", "--progress", "none",
            "-s", "fetch.min_delay=0", "-s", "plot=false", *extra]


def test_where_the_sandbox_cannot_run_render_is_refused_in_one_line(tmp_path, monkeypatch):
    simulate_no_namespaces(monkeypatch)
    result = CliRunner().invoke(app, crawl_args(tmp_path, {"a.test": "127.0.9.1:9"}, "--render", "auto"))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in result.output
    assert "sandbox" in lines[0] and "(simulated)" in lines[0] and "--render-no-sandbox" in lines[0], lines[0]
    assert not (tmp_path / "run").exists()  # refused before anything is written
    if os.geteuid() == 0:  # really impossible, not simulated: no account to drop to
        monkeypatch.undo()
        result = CliRunner().invoke(app, crawl_args(tmp_path, {"a.test": "127.0.9.1:9"}, "--render", "auto", "-s",
                                                    "fetch.render_user=no-such-account-here"))
        assert result.exit_code == 2 and "no account 'no-such-account-here'" in result.output, result.output
        assert "--render-no-sandbox" in result.output and len(result.output.strip().splitlines()) == 1
        with pytest.raises(SandboxUnavailable, match="is root too"):
            browser_launch.check_sandbox("root")


@pytest.mark.slow
@needs_browser
def test_render_no_sandbox_renders_where_the_sandbox_cannot_run(tmp_path, monkeypatch):
    simulate_no_namespaces(monkeypatch)
    with pytest.raises(RenderError, match="--render-no-sandbox"):  # from Python, without the crawl's check
        run(Renderer(CHROMIUM).render("http://c.test/", "<p>x</p>"))
    web_dir = build_web(tmp_path / "web")

    async def crawl() -> set[str]:
        async with serve_web(web_dir, base_ip="127.0.9.1", hook=hook) as server:
            args = crawl_args(tmp_path, server.hosts, "--render", "auto", "--render-no-sandbox")
            result = await asyncio.to_thread(CliRunner().invoke, app, args)
            assert result.exit_code == 0, result.output
        return {json.loads(line)["url"] for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()}

    assert set(HIDDEN) <= run(crawl())  # pages only scripts link to: it rendered
    config = yaml.safe_load((tmp_path / "run" / "config.yml").read_text())
    assert config["fetch"]["render_sandbox"] is False  # kept for a resume


# -- downloads, WebRTC, the DOM's size --------------------------------------------------------------------------
DOWNLOADER = f"""<html><body><p>downloads</p><script>
for (const [name, url] of [['a.bin', URL.createObjectURL(new Blob(['{PAYLOAD}'], {{type: 'application/zip'}}))],
                           ['b.bin', 'data:application/octet-stream,{PAYLOAD}']]) {{
  const a = document.createElement('a'); a.href = url; a.download = name; document.body.appendChild(a); a.click();
}}
</script></body></html>"""


def files_holding(folder: Path, text: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.slow
@needs_browser
@pytest.mark.parametrize("sandbox", [True, False])
def test_a_download_is_refused_and_nothing_is_written(tmp_path, monkeypatch, sandbox):
    """Both ways: a browser run by root without the sandbox could write Playwright's artifacts folder (made by
    root), where an accepted download lands; the unprivileged account could not, but has its own home."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # Playwright's driver keeps downloads (its artifacts) under it

    async def go():
        renderer = Renderer(CHROMIUM, timeout=60, settle_ms=1500, sandbox=sandbox)
        try:
            dom = await renderer.render("http://c.test/", DOWNLOADER)
            launch = renderer._launch
            return dom, [*files_holding(tmp_path, PAYLOAD),
                         *(files_holding(launch.workdir, PAYLOAD) if launch and launch.workdir else [])]
        finally:
            await renderer.aclose()

    dom, written = run(go())
    assert "downloads" in dom and written == []


@pytest.mark.slow
@needs_browser
def test_webrtc_sends_no_packet():
    """A page asks a STUN server on loopback for its address: with WebRTC's UDP off, nothing reaches it (neither
    request interception nor the resolver rule sees WebRTC's packets to an address literal)."""
    stun = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stun.bind(("127.0.0.1", 0))
    stun.settimeout(1.0)
    page = f"""<html><body><p id=out>no candidate</p><script>
const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{stun.getsockname()[1]}'}}]}});
pc.createDataChannel('leak');
const out = document.getElementById('out');
pc.onicecandidate = e => {{ if (e.candidate) out.textContent += ' ' + e.candidate.candidate; }};
pc.createOffer().then(offer => pc.setLocalDescription(offer));
</script></body></html>"""

    async def go():
        renderer = Renderer(CHROMIUM, timeout=60, settle_ms=2000)
        try:
            return await renderer.render("http://c.test/", page)
        finally:
            await renderer.aclose()

    try:
        dom = run(go())
        with pytest.raises(TimeoutError):
            stun.recvfrom(2048)
    finally:
        stun.close()
    assert "no candidate</p>" in dom  # and no ICE candidate gathered


@pytest.mark.slow
@needs_browser
def test_a_50_mb_dom_is_cut_to_max_body_bytes_with_a_log_line(caplog):
    cap = 1_000_000
    # 50 MB of two-byte characters, hidden (laying out 50 MB of visible text alone takes the browser seconds)
    page = "<p>start</p><div hidden id=d></div><script>d.textContent = '\u00fc'.repeat(25e6);</script>"

    async def go():
        renderer = Renderer(CHROMIUM, timeout=60, max_dom_bytes=cap)
        try:
            small = await renderer.render("http://c.test/small", "<p>small page</p>")
            big = await renderer.render("http://c.test/big", page)
            return small, big, renderer.stats
        finally:
            await renderer.aclose()

    with caplog.at_level(logging.WARNING, logger="focuscrawl.http.render"):
        small, big, stats = run(go())
    assert "small page" in small
    assert big.startswith("<html>") and "start" in big and cap - 4 <= len(big.encode()) <= cap
    assert stats.truncated == 1 and stats.pages == 2
    [line] = [r.getMessage() for r in caplog.records if "http://c.test/" in r.getMessage()]
    assert re.fullmatch(r"render of http://c\.test/big: the DOM its scripts built is 25,000,\d{3} characters, over "
                        r"max_body_bytes \(1,000,000 bytes\): cut to it", line), line


@pytest.mark.slow
@needs_browser
def test_a_page_cannot_undo_the_cut_by_replacing_what_reads_the_dom():
    """The DOM is read in an isolated world: a page that redefines slice and outerHTML in its own changes nothing."""
    page = ("<p>the real text</p><div hidden id=d></div><script>d.textContent = 'x'.repeat(5e6);"
            "String.prototype.slice = function () { return this + ''; };"
            "Object.defineProperty(Element.prototype, 'outerHTML', {get() { return 'spoofed'.repeat(1e6); }});"
            "</script>")

    async def go():
        renderer = Renderer(CHROMIUM, timeout=60, max_dom_bytes=100_000)
        try:
            return await renderer.render("http://c.test/", page), renderer.stats
        finally:
            await renderer.aclose()

    dom, stats = run(go())
    assert "the real text" in dom and "spoofed" not in dom and len(dom) == 100_000 and stats.truncated == 1


def test_the_fetcher_gives_its_renderer_the_settings():
    config = FetchConfig(render="auto", max_body_bytes=12_345, render_sandbox=False, render_user="daemon")
    renderer = HttpFetcher(config).renderer
    assert (renderer.max_dom_bytes, renderer.sandbox, renderer.user) == (12_345, False, "daemon")
    assert FetchConfig().render_sandbox is True


# -- CI --------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_ci_fails_when_it_cannot_install_chromium(tmp_path):
    """.ci/run with no chromium on PATH and an apt-get that fails stops with one error line (it used to warn and
    go on, and the browser tests then skipped)."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for tool in ("bash", "dirname", "id", "env", "mktemp"):
        (fake_bin / tool).symlink_to(shutil.which(tool))
    for tool, body in (("apt-get", "echo 'E: simulated failure'; exit 100"), ("sudo", 'exec "$@"')):
        (fake_bin / tool).write_text(f"#!/bin/sh\n{body}\n")
        (fake_bin / tool).chmod(0o755)
    result = subprocess.run([str(ROOT / ".ci" / "run")], env={"PATH": str(fake_bin)}, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip() == ("error: could not install chromium (see /tmp/focuscrawl-ci-chromium.log): the "
                                     "browser tests need it")
