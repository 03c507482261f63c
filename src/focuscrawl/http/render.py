"""Run a fetched page's scripts in a headless browser, to see the links that only JavaScript adds.

``HttpFetcher`` calls this for ``fetch.render`` = ``always`` (every HTML page) or ``auto`` (the pages
``needs_rendering`` picks); the rendered DOM is then parsed like any HTML. The browser is Debian's
``chromium``, driven by Playwright's async API (the ``render`` extra): Playwright because it drives an
installed Chromium through ``executable_path``, answers the browser's requests itself (request
interception, below), and is async like the fetcher; its own browser download is never used.

**A render sends nothing.** The browser is handed the HTML the fetcher already downloaded: its first
request is answered from memory, every other request the page makes (scripts, styles, images, XHR,
frames) is refused before it leaves the browser, a navigation away (a link clicked by a script, a meta
refresh) is answered "204 No Content" so the page stays, and ``--host-resolver-rules`` makes every host
name and address unresolvable, which stops what request interception does not see (preconnects, web
sockets). So a render costs the site nothing and politeness is untouched; the price is that only the
page's *inline* scripts run: links built by an external script file (most single-page applications) stay
unseen. Each render gets a time limit and a slot among ``concurrency``; one browser serves a crawl,
started at the first render and closed with the fetcher.

**A render cannot hurt the user.** The page's scripts are untrusted, so the browser runs with Chromium's
sandbox on, as an unprivileged account when the crawler is root (``http/browser_launch.py``, which refuses
rendering with one line where the sandbox cannot run); downloads are denied, WebRTC sends nothing (its UDP
goes to address literals, past the two guards above), and the DOM a script builds is cut inside the browser
to ``max_dom_bytes`` (the fetcher's ``max_body_bytes``) before it reaches the crawler.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from focuscrawl.extras import require
from focuscrawl.http.browser_launch import (
    DEFAULT_RENDER_USER,
    PURPOSE,
    BrowserLaunch,
    SandboxUnavailable,
    check_sandbox,
    find_browser,
    prepare_launch,
)
from focuscrawl.types import Link

logger = logging.getLogger(__name__)

RENDER_MODES = ("never", "auto", "always")
# After the load event, timers a page sets to build its menu (setTimeout(f, 0) and the like) get this long.
SETTLE_MS = 50
# The load event is polled for (readyState), not listened to, and waited for this long at most: a navigation
# the page starts before it loads (answered 204 below) can stop the document loading, so that load never fires.
LOAD_WAIT_MS = 2000
# The page's DOM once it has loaded and its timers have had SETTLE_MS: what the crawler parses, cut inside the
# browser to maxChars (a script can build a DOM of any size: only the cut part crosses to the crawler), and its
# length in characters. Run in an isolated world (_Tab.render), whose built-ins and DOM getters the page's
# scripts cannot replace: a page that redefines String.prototype.slice or outerHTML changes nothing here.
_DOM_AFTER_LOAD = """async ([settleMs, loadWaitMs, maxChars]) => {
  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
  const start = performance.now();
  while (document.readyState !== 'complete' && performance.now() - start < loadWaitMs) await sleep(10);
  await sleep(settleMs);
  const html = document.documentElement.outerHTML;
  return [html.length > maxChars ? html.slice(0, maxChars) : html, html.length];
}"""


class RenderError(RuntimeError):
    """A render that did not finish: the fetcher keeps the page as its HTML parser read it."""


@dataclass
class RenderStats:
    """What rendering did in a crawl: pages rendered, renders that failed, their time, and what they found."""

    pages: int = 0
    failures: int = 0
    seconds: float = 0.0  # wall time of the renders, failed ones included, from when each had its slot
    links_added: int = 0  # outlinks of rendered pages that their HTML alone did not have (the fetcher counts)
    truncated: int = 0  # rendered DOMs longer than max_dom_bytes, cut to it

    @property
    def ms_per_page(self) -> float:
        renders = self.pages + self.failures
        return 1000.0 * self.seconds / renders if renders else 0.0


def check_renderer(executable: str | None = None, *, sandbox: bool = True, user: str = DEFAULT_RENDER_USER) -> str:
    """Before a crawl starts: the extra is installed, the browser found and, unless ``sandbox`` is False, Chromium's
    sandbox can run (http/browser_launch.py); one clear line if not."""
    require("playwright", "render", PURPOSE)
    found = find_browser(executable)
    if sandbox:
        check_sandbox(user)
    return found


class _Tab:
    """A browser page that renders one document after another (a new page costs a renderer process, several times
    the time of a render in a page that exists: benchmarks/render_cost.py). Between renders it rests on about:blank."""

    def __init__(self, page: Any, devtools: Any, frame_id: str):
        self.page = page
        self.devtools = devtools  # a DevTools protocol session on the page, for the isolated world
        self.frame_id = frame_id  # its main frame's, the same for each document it shows
        self.body = b""
        self.served = True

    async def answer(self, route: Any) -> None:
        """Every request the page makes: its document from memory, once; nothing else leaves the browser."""
        request = route.request
        if request.is_navigation_request():
            if not self.served and request.frame.parent_frame is None:
                self.served = True
                await route.fulfill(status=200, body=self.body, content_type="text/html; charset=utf-8")
            else:  # leaving the page, or a frame: "no content" keeps the page where it is, and sends nothing
                await route.fulfill(status=204)
        else:
            await route.abort("blockedbyclient")

    async def render(self, url: str, html: str, settle_ms: int, max_chars: int) -> tuple[str, int]:
        """The DOM after the page's scripts, at most ``max_chars`` of it, and its whole length in characters."""
        self.body, self.served = html.encode("utf-8"), False
        # Not wait_until="load": a navigation the page starts (answered 204 above) would leave goto waiting.
        await self.page.goto(url, wait_until="commit")
        world = await self.devtools.send("Page.createIsolatedWorld", {"frameId": self.frame_id,
                                                                      "worldName": "focuscrawl"})
        answer = await self.devtools.send("Runtime.evaluate", {
            "expression": f"({_DOM_AFTER_LOAD})({json.dumps([settle_ms, LOAD_WAIT_MS, max_chars])})",
            "contextId": world["executionContextId"], "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(answer["exceptionDetails"].get("text", "the DOM could not be read"))
        dom, length = answer["result"]["value"]
        await self.page.goto("about:blank")  # the document's timers stop; its memory goes
        return dom, length


class Renderer:
    """One browser for a crawl; ``render(url, html)`` returns the DOM after the page's scripts ran.

    Use inside one event loop and ``aclose`` at the end (``HttpFetcher`` owns one and closes it). Renders
    reuse a page each (``_Tab``): each is a new document, so no script state carries over, and per-site
    storage does as in any browser, with no request to carry it anywhere; a page whose render failed (a
    script that never ends) is closed and replaced.

    The browser runs with Chromium's sandbox on (``sandbox=False`` turns it off), as ``user`` when the crawler is
    root (http/browser_launch.py); it accepts no download, and a DOM longer than ``max_dom_bytes`` is cut to it.
    """

    def __init__(self, executable: str | None = None, *, timeout: float = 10.0, concurrency: int = 2,
                 settle_ms: int = SETTLE_MS, sandbox: bool = True, user: str = DEFAULT_RENDER_USER,
                 max_dom_bytes: int = 4 * 1024 * 1024):
        self.executable = executable
        self.timeout = timeout
        self.settle_ms = settle_ms
        self.sandbox = sandbox
        self.user = user
        self.max_dom_bytes = max_dom_bytes
        self._launch: BrowserLaunch | None = None
        self._slots = asyncio.Semaphore(concurrency)
        self._starting = asyncio.Lock()
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None
        self._idle: list[_Tab] = []
        self._launch_error: str | None = None
        self.stats = RenderStats()

    async def _start(self) -> Any:
        async with self._starting:
            if self._browser is not None and self._browser.is_connected():
                return self._context
            if self._launch_error is not None:  # a browser that would not start is not tried for every page
                raise RenderError(self._launch_error)
            if self._browser is not None:  # it crashed or was killed: a new one, for the renders to come
                await self._stop()
            executable = find_browser(self.executable)
            async_api = require("playwright.async_api", "render", PURPOSE)
            try:
                await self._launch_browser(async_api, executable)
            except SandboxUnavailable as exc:  # the crawl checked this first (check_renderer); Python callers may not
                self._launch_error = str(exc)
                raise RenderError(self._launch_error) from None
            except Exception as exc:  # noqa: BLE001 - whatever stops the browser, the crawl goes on without renders
                await self._stop()
                self._launch_error = f"{executable} did not start: {str(exc).splitlines()[0][:300]}"
                raise RenderError(self._launch_error) from None
            return self._context

    async def _launch_browser(self, async_api: Any, executable: str) -> None:
        self._launch = launch = await asyncio.to_thread(prepare_launch, executable, sandbox=self.sandbox,
                                                        user=self.user)
        self._playwright = await async_api.async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=launch.executable_path, args=list(launch.args), chromium_sandbox=launch.chromium_sandbox,
            headless=True, timeout=max(30.0, self.timeout) * 1000)
        # No download is accepted: Chromium is told to deny them, so none is written anywhere.
        self._context = await self._browser.new_context(service_workers="block", accept_downloads=False)
        # Pages a script opens (window.open) have no _Tab: their requests are refused here.
        await self._context.route("**/*", lambda route: route.abort("blockedbyclient"))

    async def _tab(self) -> _Tab:
        context = await self._start()
        if self._idle:
            return self._idle.pop()
        page = await context.new_page()
        devtools = await context.new_cdp_session(page)
        tree = await devtools.send("Page.getFrameTree")
        tab = _Tab(page, devtools, tree["frameTree"]["frame"]["id"])
        await page.route("**/*", tab.answer)
        page.on("popup", lambda popup: asyncio.ensure_future(_close_quietly(popup)))
        return tab

    async def render(self, url: str, html: str) -> str:
        """The HTML of ``url``'s DOM after its inline scripts ran, with ``html`` as the document the server sent.

        Raises RenderError when the page does not load in ``timeout`` seconds or the browser fails.
        """
        async with self._slots:
            tab = None
            started = time.monotonic()
            try:
                async with asyncio.timeout(self.timeout):
                    tab = await self._tab()
                    dom, length = await tab.render(url, html, self.settle_ms, self.max_dom_bytes)
            except TimeoutError:
                await self._discard(tab)
                self.stats.failures += 1
                raise RenderError(f"render timed out after {self.timeout:g} s") from None
            except RenderError:  # the browser would not start: said once, as it is
                self.stats.failures += 1
                raise
            except Exception as exc:  # noqa: BLE001 - a page that breaks the browser is a failed render, not a crash
                await self._discard(tab)
                self.stats.failures += 1
                raise RenderError(f"render failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}") from None
            finally:
                self.stats.seconds += time.monotonic() - started
            self._idle.append(tab)
            self.stats.pages += 1
            return self._capped(url, dom, length)

    def _capped(self, url: str, dom: str, length: int) -> str:
        """``dom`` (at most max_dom_bytes characters of a DOM ``length`` long) cut to max_dom_bytes bytes of UTF-8."""
        encoded = dom.encode("utf-8", "surrogatepass")
        if length <= len(dom) and len(encoded) <= self.max_dom_bytes:
            return dom
        self.stats.truncated += 1
        logger.warning("render of %s: the DOM its scripts built is %s characters, over max_body_bytes (%s bytes): "
                       "cut to it", url, f"{length:,}", f"{self.max_dom_bytes:,}")
        return encoded[:self.max_dom_bytes].decode("utf-8", "ignore")

    async def _discard(self, tab: _Tab | None) -> None:
        if tab is not None:
            await _close_quietly(tab.page, self.timeout)

    async def _stop(self) -> None:
        browser, playwright, launch = self._browser, self._playwright, self._launch
        self._browser = self._playwright = self._context = self._launch = None
        self._idle.clear()
        try:
            if browser is not None:
                await browser.close()
        finally:
            if playwright is not None:
                await playwright.stop()
            if launch is not None:  # after the browser closed: its profile and home go
                launch.cleanup()

    async def aclose(self) -> None:
        async with self._starting:
            await self._stop()


async def _close_quietly(page: Any, timeout: float = 10.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            await page.close()
    except Exception:  # noqa: BLE001 - a browser that died with the page: _start makes a new one
        pass


# -- which pages to render (fetch.render = auto) ------------------------------------------------------------
# Types a browser runs as JavaScript (no type, or one of these); data blocks (JSON, templates) are not run.
_JS_TYPES = ("", "text/javascript", "application/javascript", "module", "text/ecmascript", "application/ecmascript",
             "application/x-javascript", "text/x-javascript", "text/jscript")
# A script that writes to the page: markup, or an anchor element it makes. (Inserting elements in general,
# appendChild and the like, is left out: analytics snippets insert their own script elements.)
WRITES_TO_PAGE = re.compile(
    r"""document\s*\.\s*write(?:ln)?\s*\(|\.\s*(?:inner|outer)HTML\s*\+?=|insertAdjacentHTML\s*\(|"""
    r"""createElement\s*\(\s*['"]a['"]\s*\)""")
# ... and that has to do with links: anchor markup in a string, an anchor element made, or an href set or read.
MENTIONS_LINKS = re.compile(r"""<a\s|\\x3ca\s|\\u003ca\s|createElement\s*\(\s*['"]a['"]|href""", re.IGNORECASE)


def inline_scripts(html: str) -> list[str]:
    """The text of the page's inline JavaScript (scripts with a ``src`` or a data type left out).

    Read with the HTML parser (Lexbor), not a regular expression: on a hostile body of many unclosed
    ``<script`` tags a pattern would take quadratic time, and the parser ends scripts where a browser does.
    """
    out = []
    for node in LexborHTMLParser(html).css("script"):
        attributes = node.attributes
        if "src" in attributes or (attributes.get("type") or "").strip().lower() not in _JS_TYPES:
            continue
        text = node.text(deep=True)
        if text.strip():
            out.append(text)
    return out


def needs_rendering(html: str) -> str | None:
    """Why ``fetch.render = auto`` renders this page, or None: an inline script writes to the page and has to
    do with links (docs/crawl.md, "JavaScript", says how the rule was chosen on real pages)."""
    for text in inline_scripts(html):
        writes = WRITES_TO_PAGE.search(text)
        if writes is not None and MENTIONS_LINKS.search(text):
            return f"an inline script writes to the page ({clean(writes.group(0))}) and mentions links"
    return None


def clean(text: str) -> str:
    return re.sub(r"\s+", "", text)


Parsed = tuple[str, str, list[Link]]  # (title, text, outlinks), as parse_html returns them


def merge_rendered(plain: Parsed, rendered: Parsed, *, max_links: int) -> Parsed:
    """A page as the crawler keeps it after a render, from its HTML's reading and its rendered DOM's.

    Links: the HTML's, then those only the DOM has, in the DOM's order (as ``OfflineWeb.fetch(render=True)``
    puts a page's script links after its links). Text: the longer of the two, and the title the HTML's unless
    it has none, because scripts also take things away: on one of the real pages measured for the ``auto``
    rule a script emptied the page, and a consent wall or a paywall can hide the text the HTML had.
    """
    title, text, links = plain
    known = {link.url for link in links}
    added = [link for link in rendered[2] if link.url not in known]
    return (title or rendered[0], text if len(text) >= len(rendered[1]) else rendered[1],
            (links + added)[:max_links])
