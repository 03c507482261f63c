"""focuscrawl inside Scrapy: an existing spider's requests fetched in the order of a focuscrawl policy.

    # the spider's custom_settings, or the project's settings.py (the ``scrapy`` extra)
    ADDONS = {"focuscrawl.scrapy.FocusedCrawl": 0}
    FOCUSCRAWL_TOPIC = "topics/birds"          # a topic directory (focuscrawl topic init)
    FOCUSCRAWL_STRATEGY = "adaptive"           # the default
    FOCUSCRAWL_BUDGET = 5000                   # pages the policy chooses (default 1000)

The add-on sets four components, which may also be set by hand: ``SCHEDULER`` = ``FocusedScheduler``, the spider
middleware ``FocusedSpiderMiddleware`` (order 20) and the downloader middlewares ``FocusedDownloaderMiddleware``
(order 10) and ``guard.AddressGuardMiddleware`` (order 60: the crawler's address guard, ``FOCUSCRAWL_ALLOW_LOOPBACK``
and ``FOCUSCRAWL_ALLOW_PRIVATE``). It turns ``ROBOTSTXT_OBEY`` on unless a project, spider or command line setting
says otherwise. The spider keeps its parsing, items, pipelines and Scrapy's politeness (delays, concurrency,
robots.txt, retries, redirects); the scheduler only decides which of its requests goes next. docs/scrapy.md has a
complete spider.

How a crawl goes (one ``CrawlEngine`` built by ``focuscrawl.builder``, as ``focuscrawl crawl`` builds its own):

- **Seeds** are the spider's start requests (GET, http(s)), all read before the first is sent, since a policy
  is given its seeds at once; a spider without any crawls from the topic's ``seeds.txt`` with its ``parse``.
- **The policy's requests** are the GET http(s) requests a callback yields from a response, without
  ``dont_filter`` and with priority 0. They are the links of that response: when its callback's output ends,
  the engine records the page (its text from the response's body, parsed as every fetched page is, scored by the
  topic's classifier) with those requests as its outlinks (anchor texts from the page's HTML, "" for a URL the
  page does not link to) and the scheduler keeps each one, to send when the policy selects its URL. A URL is
  fetched once (the engine's closure is the duplicate filter), whichever page asked for it.
- **Other requests** (``dont_filter``, a priority the spider set, another method or scheme, requests from an
  errback or an extension, redirects and retries of any request) go through Scrapy's own scheduler, its
  duplicate filter and priority order, ahead of the policy's. robots.txt never reaches a scheduler. The links a
  callback yields from the response to such a request are the policy's still: they reach it as links found on a
  page it did not choose (``CrawlEngine.adopt``), and are fetched when it selects them.
- **Non-HTML responses** (an image, a PDF, JSON) are pages without text: relevance 0; the requests their
  callbacks yield are their links, without anchors. A non-2xx answer is a page of its status (Scrapy's
  ``HttpErrorMiddleware`` keeps it from the callback, unless the spider allows it), a download that fails (after
  Scrapy's retries) a page of status 0; each counts against the budget, as in ``focuscrawl crawl``.
- **In flight**: at most ``CONCURRENT_REQUESTS`` of the policy's pages are sent and not yet recorded (``focuscrawl
  crawl``'s concurrency), so that a page's links reach the policy before it chooses again; at 1 a crawl fetches
  what ``focuscrawl crawl --concurrency 1`` fetches, in the same order.
- **In its own process** (``FOCUSCRAWL_READ_QUEUE`` > 0, e.g. 32; 0 by default): the engine is a ``reader.Recorder``'s,
  in a child process; the scheduler hands it each response's answer (status, headers, body) with the URLs of the
  policy's requests its callback yielded, in the order Scrapy delivered them, and sends the selections it answers
  with, keeping the spider's requests by URL. Scrapy downloads and runs callbacks while the child reads and records
  (another core); nothing new is sent while that many pages wait for it. With 0 the recorder runs in Scrapy's
  thread, each page read and recorded at once. A close has every page handed over recorded first; a failure of the
  reader (a bug, its process killed) is one error line, and the spider closes.
- **The budget** counts the policy's pages (and the engine's own soft-404 probes); when it is spent, or the
  frontier is empty, the spider closes as any spider does once nothing is left to do.
- **Resume** (``JOBDIR``): on close the engine (closure, frontier, the policy's state: ``CrawlEngine.snapshot``)
  and the requests it holds are written to ``JOBDIR/focuscrawl.state``; the same spider with the same ``JOBDIR``
  continues the crawl without fetching a page again. As Scrapy's own queues, this needs a clean stop (one
  Ctrl-C, ``CLOSESPIDER_*``), which lets the pages in flight finish. A resumed crawl keeps its first seeds.

``FOCUSCRAWL_PAGES`` names a file that gets ``focuscrawl crawl``'s ``pages.jsonl`` record of each step (the policy's
score and reason included); ``FOCUSCRAWL_HOSTS_MAP`` crawls a web served by ``focuscrawl web serve --map`` on
loopback (``LoopbackDownloadHandler``). A mistake in the settings is one error line, and the spider closes.
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler, Scheduler
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object

from focuscrawl.builder import StrategyPlan
from focuscrawl.config import RunSettings, load_config
from focuscrawl.scrapy.jobdir import STATE_FILE, read_requests, read_state, write_state
from focuscrawl.scrapy.loopback import LoopbackDownloadHandler
from focuscrawl.scrapy.reader import (
    USER_ERRORS,
    Answer,
    Holds,
    InlineReader,
    PageReader,
    ReaderError,
    Recorder,
    RecorderSpec,
    Selections,
    answer_of_response,
    download_error,
    user_error,
)
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import Page

logger = logging.getLogger(__name__)

# Request meta: the engine's URL of the selection a request fetches (a redirect or a retry keeps it), a request
# the scheduler holds already (a start request or a link of a page), a start request it refuses.
SELECTION = "focuscrawl_selection"
HELD = "focuscrawl_held"
NOT_SEED = "focuscrawl_not_seed"
REFUSED = "focuscrawl_bad_settings"  # the finish reason of a spider closed for a mistake in the settings
SETTINGS = {
    "FOCUSCRAWL_TOPIC": "the topic directory (required)",
    "FOCUSCRAWL_STRATEGY": "strategy or preset (default adaptive)",
    "FOCUSCRAWL_BUDGET": "pages the policy chooses (default 1000)",
    "FOCUSCRAWL_CONFIG": "a YAML file of run settings, as focuscrawl crawl -c takes",
    "FOCUSCRAWL_SETTINGS": "run settings as a dict (options, max_per_domain, scope, defences, seed, ...)",
    "FOCUSCRAWL_PAGES": "a file to append each step's pages.jsonl record to",
    "FOCUSCRAWL_HOSTS_MAP": "the hosts map of focuscrawl web serve --map: crawl that loopback-served web",
    "FOCUSCRAWL_ALLOW_LOOPBACK": "the address guard lets loopback addresses through (default False)",
    "FOCUSCRAWL_ALLOW_PRIVATE": "the address guard lets private addresses through (default False)",
    "FOCUSCRAWL_READ_QUEUE": "pages waiting for the page reader's process, which reads and records them beside "
                             "Scrapy's (default 0: no process, pages read and recorded in Scrapy's thread; e.g. 32)",
}
# 0 by default: at 16 in flight on the shared 2-core machine the process was faster only while a core was free for it
# (3 of 7 interleaved runs, 1.2x-1.56x), slower otherwise and at 1 in flight (docs/scrapy.md, "What it costs").
READ_QUEUE = 0
READER_FAILED = "focuscrawl_reader_failed"  # the finish reason of a spider whose page reader failed
SPIDER_MIDDLEWARE, SPIDER_MIDDLEWARE_ORDER = "focuscrawl.scrapy.FocusedSpiderMiddleware", 20  # < HttpError's 50
DOWNLOADER_MIDDLEWARE, DOWNLOADER_MIDDLEWARE_ORDER = "focuscrawl.scrapy.FocusedDownloaderMiddleware", 10
# After OffsiteMiddleware (50), before RobotsTxtMiddleware (100): a refused host's robots.txt is not asked for.
ADDRESS_GUARD, ADDRESS_GUARD_ORDER = "focuscrawl.scrapy.guard.AddressGuardMiddleware", 60
# One scheduler per crawler, found by the middlewares (built before it).
_SCHEDULERS: weakref.WeakKeyDictionary[Any, FocusedScheduler] = weakref.WeakKeyDictionary()


class SettingsError(ValueError):
    """A FOCUSCRAWL_* setting, or the components, are not as a focused crawl needs them."""


def policy_request(request: Request) -> bool:
    """Whether a request a callback yields is the policy's to order (module docstring): GET, http(s), no
    ``dont_filter``, priority 0, no body."""
    return (request.method == "GET" and not request.dont_filter and request.priority == 0 and not request.body
            and urlsplit(request.url).scheme in ("http", "https"))


def _refuse(message: str) -> CloseSpider:
    """Log a user's mistake as one error line; the CloseSpider to raise, which closes the spider quietly."""
    logger.error("focuscrawl: %s", message)
    return CloseSpider(REFUSED)


class FocusedCrawl:
    """The Scrapy add-on: ``ADDONS = {"focuscrawl.scrapy.FocusedCrawl": 0}`` sets the scheduler and the middlewares,
    robots.txt on (at the add-on's priority: a user's setting wins), and with ``FOCUSCRAWL_HOSTS_MAP`` the loopback
    download handler for http and https (every other scheme off)."""

    def update_settings(self, settings) -> None:
        settings.set("SCHEDULER", "focuscrawl.scrapy.FocusedScheduler", "addon")
        settings["SPIDER_MIDDLEWARES"][SPIDER_MIDDLEWARE] = SPIDER_MIDDLEWARE_ORDER
        settings["DOWNLOADER_MIDDLEWARES"][DOWNLOADER_MIDDLEWARE] = DOWNLOADER_MIDDLEWARE_ORDER
        settings["DOWNLOADER_MIDDLEWARES"][ADDRESS_GUARD] = ADDRESS_GUARD_ORDER
        # Scrapy's default is not to read robots.txt; a focused crawl does, unless the project, the spider or the
        # command line says otherwise (each has a higher priority than an add-on).
        settings.set("ROBOTSTXT_OBEY", True, "addon")
        if settings.get("FOCUSCRAWL_HOSTS_MAP"):
            handlers = {"http": "focuscrawl.scrapy.LoopbackDownloadHandler",
                        "https": "focuscrawl.scrapy.LoopbackDownloadHandler",
                        "ftp": None, "s3": None, "file": None, "data": None}
            for scheme, handler in handlers.items():
                settings["DOWNLOAD_HANDLERS"][scheme] = handler


class FocusedScheduler(BaseScheduler):
    """Scrapy's scheduler for a focused crawl (module docstring): the policy's requests in the policy's order, the
    others through Scrapy's own ``Scheduler`` first. The engine is a ``reader.Recorder``'s, in the page reader's
    process (or in this thread); the scheduler keeps the spider's requests by URL and sends the selections it gets."""

    recorder = Recorder  # the class of the page reader's recorder (a test may give its own)

    @classmethod
    def from_crawler(cls, crawler) -> FocusedScheduler:
        return cls(crawler)

    def __init__(self, crawler):
        self.crawler = crawler
        self.scrapy = Scheduler.from_crawler(crawler)  # requests that are not the policy's
        self.jobdir = job_dir(crawler.settings)
        # The policy's selections sent and not yet recorded, at most (focuscrawl crawl's concurrency): Scrapy would
        # send the next request as soon as a download ends, before the page's links reach the policy.
        self.in_flight = max(1, crawler.settings.getint("CONCURRENT_REQUESTS"))
        self.reader: PageReader | InlineReader | None = None
        self.requests: dict[str, Request] = {}  # frontier URL -> the spider's request for it
        self.dispatched: dict[str, Request] = {}  # selection sent, its response not handed to the reader yet
        self.redo: dict[str, Request | None] = {}  # a resumed crawl's selections in flight at the stop
        self.probes: set[str] = set()  # those of them that are the engine's soft-404 probes
        self.selected: deque[tuple[str, bool]] = deque()  # the reader's selections, not sent yet (URL, probe)
        self.refused = False
        self.spider = None
        _SCHEDULERS[crawler] = self

    # -- Scrapy's scheduler interface ---------------------------------------------------------------------------
    def open(self, spider):
        self.spider = spider
        try:
            self._prepare(spider)
        except (ValidationError, *USER_ERRORS, ReaderError) as exc:
            # One error line; the spider closes once it is open (a CloseSpider raised here would leave Scrapy's
            # scraper unopened, and its closing would log an error of its own). Scrapy's scheduler is never opened.
            if isinstance(exc, ReaderError) and not exc.refused:
                error = _refuse(f"the page reader failed to start: {exc}")
                logger.debug("%s", exc.traceback)
            else:
                error = _refuse(user_error(exc))
            self.refused = True
            if self.reader is not None:
                self.reader.close()
                self.reader = None

            def close(**_) -> None:
                raise error

            self.crawler.signals.connect(close, signal=signals.spider_opened, weak=False)
            return None
        self.crawler.signals.connect(self._idle, signal=signals.spider_idle)
        return self.scrapy.open(spider)

    def close(self, reason: str):
        if self.refused:
            return None
        reader, result = self.reader, None
        if reader is not None and reader.failed is None:
            try:
                result = reader.call(("finish", (bool(self.jobdir),)))  # every page handed over is recorded first
            except ReaderError:
                result = None
        if self.jobdir and result is not None and result["state"] is not None:
            self._save(result["state"])
        elif self.jobdir and reader is not None:
            logger.warning("focuscrawl: the crawl's state is not written to JOBDIR after the page reader failed")
        if reader is not None:
            reader.close()
        if result is not None and result["stats"] is not None:
            figures = result["stats"]
            stats = self.crawler.stats
            for name, value in figures.items():
                stats.set_value(f"focuscrawl/{name}", value)
            stats.set_value("focuscrawl/read_queue_waits", reader.waits)
            logger.info("focuscrawl: %d pages chosen by %s, %d of them on topic by the classifier; pages read in "
                        "%.1f s and recorded in %.1f s, the policy's decisions %.1f s", figures["pages"],
                        self.strategy, figures["relevant_by_classifier"], figures["page_s"], figures["record_s"],
                        figures["decision_s"])
        return self.scrapy.close(reason)

    @property
    def failed(self) -> ReaderError | None:
        return self.reader.failed if self.reader is not None else None

    def has_pending_requests(self) -> bool:
        if self.refused or self.reader is None or self.failed is not None:
            return False
        return bool(self.scrapy.has_pending_requests() or self.redo or self.selected or self.dispatched
                    or self.reader.pending)

    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        if meta.pop(HELD, False):  # a start request or a link of a page: held already
            return True
        if meta.pop(NOT_SEED, False):  # a start request a resumed crawl has fetched, or is not one of its seeds
            return False
        url = meta.get(SELECTION)
        if self.scrapy.enqueue_request(request):  # not the policy's, or a redirect or retry of a selection
            return True
        if url in self.dispatched:  # the duplicate filter dropped a redirect: the selection ends there
            error = "redirected to a URL Scrapy's duplicate filter had seen"
            self._ended(url, Page(url=url, final_url=request.url, status=0, error=error))
        return False

    def next_request(self) -> Request | None:
        if self.refused or self.reader is None or self.failed is not None:
            return None
        request = self.scrapy.next_request()
        if request is not None:
            url = request.meta.get(SELECTION)
            if url is not None:  # a redirect or retry of a selection (a resumed crawl's too: not sent again)
                self.redo.pop(url, None)
                self.dispatched[url] = request
            return request
        if self.reader.full():
            return None  # the reader is behind: nothing new is sent until it answers (and wakes Scrapy)
        while self.redo or self.selected:
            if self.redo:
                url, request = next(iter(self.redo.items()))
                del self.redo[url]
                probe = url in self.probes
            else:
                url, probe = self.selected.popleft()
                request = self.requests.pop(url, None)
            if probe:
                self._probe(url)
                continue
            if request is None:  # a frontier URL whose request was lost (not serialisable at a stop): the default
                request = Request(url)
            request.meta[SELECTION] = url
            self.dispatched[url] = request
            return request
        return None

    # -- what the middlewares report --------------------------------------------------------------------------
    def begin(self, start: list[Request]) -> list[Request]:
        """The spider's start requests, all of them: the seeds. Returns requests to add to them (the topic's
        seeds, for a spider that has none). Raises CloseSpider (one error line logged) for unusable seeds."""
        ours = [request for request in start if request.method == "GET"
                and urlsplit(request.url).scheme in ("http", "https")]
        added: list[Request] = []
        if self.refused or self.reader is None:
            return added
        if not ours and not self.resumed:
            added = ours = [Request(url) for url in self.topic.seeds]
        try:
            holds, selections = self.reader.call(("start", ([request.url for request in ours],)))
        except ReaderError as exc:
            self.refused = True
            message = str(exc)
            if not exc.refused:
                self.reader.close()
                self.reader = None
                raise _refuse(f"the page reader failed: {message}") from None
            self.reader.close()
            self.reader = None
            raise _refuse(f"{message}: give the spider start requests (start_urls) or the topic seeds.txt"
                          if message.startswith("no seeds") else message) from None
        for request, url in zip(ours, holds):
            if url is not None and url not in self.requests:
                self.requests[url] = request
                request.meta[HELD] = True
            else:  # a duplicate start URL, or one a resumed crawl has fetched or never had as a seed
                request.meta[NOT_SEED] = True
        self.selected.extend(selections)
        return added

    def page_done(self, response, links: list[Request]) -> None:
        """A response's callback output has ended: ``links`` are the policy's requests it yielded. The page reader
        reads it and records it (the answer to a selection) or adopts its links (a page the policy did not choose)."""
        if self.reader is None or self.failed is not None:
            return
        url = response.meta.get(SELECTION)
        ours = self.dispatched.pop(url, None) is not None
        urls = [request.url for request in links]
        answer = answer_of_response(response, body=ours or bool(links))
        self.reader.submit(("page", (url if ours else None, answer, urls, response.meta.get("download_latency", 0.0))),
                           partial(self._answered, links))

    def download_failed(self, request: Request, exception: BaseException) -> None:
        """A selection's download failed for good (after Scrapy's retries): a page of status 0."""
        url = request.meta.get(SELECTION)
        if url in self.dispatched:
            self._ended(url, Page(url=url, final_url=request.url, status=0, error=download_error(exception)))

    # -- internals --------------------------------------------------------------------------------------------
    def _prepare(self, spider) -> None:
        """Read and check the settings, the topic and the strategy; start the page reader (which trains the
        classifier, and resumes from JOBDIR)."""
        settings = self.crawler.settings
        unknown = sorted(name for name in settings if name.startswith("FOCUSCRAWL_") and name not in SETTINGS)
        if unknown:
            raise SettingsError(f"unknown setting {unknown[0]} (known: {', '.join(SETTINGS)})")
        for name, components in ((SPIDER_MIDDLEWARE, "SPIDER_MIDDLEWARES"),
                                 (DOWNLOADER_MIDDLEWARE, "DOWNLOADER_MIDDLEWARES"),
                                 (ADDRESS_GUARD, "DOWNLOADER_MIDDLEWARES")):
            if not any(_names(component, name) and order is not None
                       for component, order in settings.getwithbase(components).items()):
                raise SettingsError(f"{components} lacks {name}: set ADDONS = "
                                    "{'focuscrawl.scrapy.FocusedCrawl': 0} (docs/scrapy.md)")
        topic = settings.get("FOCUSCRAWL_TOPIC")
        if not topic:
            raise SettingsError("FOCUSCRAWL_TOPIC is not set: name a topic directory (focuscrawl topic init)")
        if settings.get("FOCUSCRAWL_HOSTS_MAP"):
            LoopbackDownloadHandler.read_map(settings["FOCUSCRAWL_HOSTS_MAP"])
        read_queue = _read_queue(settings.get("FOCUSCRAWL_READ_QUEUE", READ_QUEUE))
        overrides = settings.getdict("FOCUSCRAWL_SETTINGS")
        budget = settings.get("FOCUSCRAWL_BUDGET")
        run_settings = load_config(RunSettings, settings.get("FOCUSCRAWL_CONFIG"), (),
                                   **{**overrides, **({"budget": budget} if budget is not None else {})})
        self.strategy = settings.get("FOCUSCRAWL_STRATEGY") or "adaptive"
        StrategyPlan(run_settings, self.strategy)  # the strategy and its options checked: cheap, before a process
        topic_dir = Path(topic).resolve()
        self.topic = load_topic_dir(topic_dir)
        self.identity = {"topic": str(topic_dir), "strategy": self.strategy,
                         "settings": run_settings.model_dump(mode="json", exclude={"budget"})}
        state = None
        if self.jobdir and (Path(self.jobdir) / STATE_FILE).exists():
            state = read_state(Path(self.jobdir) / STATE_FILE, self.identity)
        self.resumed = state is not None
        pages = settings.get("FOCUSCRAWL_PAGES")
        spec = RecorderSpec(run_settings, self.strategy, topic_dir, self.in_flight, str(pages) if pages else None,
                            state and {key: state[key] for key in ("seeds", "context_budget", "relevant", "snapshot")})
        from twisted.internet import reactor

        reader_class = PageReader if read_queue else InlineReader
        self.reader = reader_class(spec, self.recorder, read_queue, reactor.callFromThread, self._wake,
                                   self._reader_failed)
        ready = self.reader.open()
        if state is not None:
            self.requests = {url: request for url, request in read_requests(state["requests"], spider).items()
                             if request is not None}
            self.redo = read_requests(state["in_flight"], spider)
            self.probes = set(ready["probes"])
            logger.info("focuscrawl: resuming a crawl of %d pages, %d in its frontier", ready["steps"],
                        ready["frontier"])

    def _answered(self, links: list[Request], reply: tuple[Holds, Selections]) -> None:
        """A page's reply: keep the request for each URL the frontier has and nothing holds yet; the selections."""
        holds, selections = reply
        for request, url in zip(links, holds):
            if url is not None and url not in self.requests and url not in self.dispatched:
                self.requests[url] = request
        self.selected.extend(selections)

    def _ended(self, url: str, outcome: Page | Answer, probe: bool = False) -> None:
        """A selection that ended without a response, or a soft-404 probe's answer, to the reader."""
        if not probe:
            self.dispatched.pop(url, None)
        if self.reader is not None:
            self.reader.submit(("ended", (url, outcome, probe)), partial(self._answered, []))

    def _probe(self, url: str) -> None:
        """The engine's own fetch (a soft-404 probe): downloaded through Scrapy's downloader, never the spider."""
        async def fetch() -> None:
            request = Request(url, callback=NO_CALLBACK, dont_filter=True)
            try:
                response = await self.crawler.engine.download_async(request)
            except Exception as exc:  # noqa: BLE001 - a failed probe is a page of status 0, as any failed fetch
                outcome = Page(url=url, final_url=url, status=0, error=f"{type(exc).__name__}: {exc}"[:500])
            else:
                outcome = answer_of_response(response)
            self._ended(url, outcome, probe=True)
            self._wake()

        deferred_from_coro(fetch())

    def _wake(self) -> None:
        """Have Scrapy ask for a request again (the page reader has answered). Scrapy has no public call for it:
        without it, the next request would wait for Scrapy's 5-second heartbeat."""
        slot = getattr(self.crawler.engine, "_slot", None)
        if slot is not None and slot.closing is None:
            slot.nextcall.schedule()

    def _reader_failed(self, exc: ReaderError) -> None:
        """The page reader failed (a bug, or its process ended): one error line, and the spider closes."""
        logger.error("focuscrawl: reading and recording pages failed: %s; the spider closes", exc)
        if exc.traceback:
            logger.debug("focuscrawl: the page reader's traceback:\n%s", exc.traceback)
        engine = self.crawler.engine
        if engine is not None and self.spider is not None:
            deferred_from_coro(engine.close_spider_async(reason=READER_FAILED))

    def _idle(self) -> None:
        """Nothing is in progress in Scrapy: a selection not handed to the reader was lost on the way (an exception
        in a downloader middleware's process_response), and is a failed page; then the crawl goes on if it may."""
        if self.failed is not None:
            raise CloseSpider(READER_FAILED)
        lost = list(self.dispatched)
        for url in lost:
            self._ended(url, Page(url=url, final_url=url, status=0, error="no answer reached the spider"))
        if lost and self.has_pending_requests():
            raise DontCloseSpider

    def _save(self, state: dict) -> None:
        """Write the engine's state and the requests held to JOBDIR (a stop; module docstring)."""
        in_flight = {url: self.requests.get(url) or self.redo.get(url) for url in state["in_flight"]}
        write_state(Path(self.jobdir) / STATE_FILE, self.spider, state, self.identity, self.requests, in_flight)


def _read_queue(value: Any) -> int:
    """FOCUSCRAWL_READ_QUEUE as an int >= 0 (a number, or its digits on the command line), or SettingsError."""
    if (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (
            isinstance(value, str) and value.strip().isdigit()):
        return int(value)
    raise SettingsError(f"FOCUSCRAWL_READ_QUEUE is {value!r}: give the pages the page reader's process may have "
                        "waiting (e.g. 32), or 0 to read them in Scrapy's thread")


def _names(component: Any, path: str) -> bool:
    """Whether a component setting's key (a path or the class itself) is the component at ``path``."""
    return component == path or (isinstance(component, type) and component is load_object(path))


class FocusedSpiderMiddleware:
    """Reads the spider's start requests to the end (the seeds) and tells the scheduler when a response's callback
    output ends, with the policy's requests it yielded (module docstring). Order 20: outside HttpErrorMiddleware,
    so that a non-2xx answer reaches it too."""

    @classmethod
    def from_crawler(cls, crawler) -> FocusedSpiderMiddleware:
        return cls(crawler)

    def __init__(self, crawler):
        self.crawler = crawler

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        scheduler = _SCHEDULERS.get(self.crawler)
        if scheduler is None:  # another scheduler's crawl: nothing to do
            async for item in start:
                yield item
            return
        everything = [item async for item in start]
        everything += scheduler.begin([item for item in everything if isinstance(item, Request)])
        for item in everything:
            yield item

    async def process_spider_output(self, response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        scheduler = _SCHEDULERS.get(self.crawler)
        links: list[Request] = []
        try:
            async for item in result:
                if scheduler is not None and isinstance(item, Request) and policy_request(item):
                    item.meta[HELD] = True  # the scheduler takes it when the output ends
                    links.append(item)
                yield item
        finally:  # the output's end, or the callback's exception: the page is recorded either way
            if scheduler is not None:
                scheduler.page_done(response, links)


class FocusedDownloaderMiddleware:
    """Tells the scheduler of a selection whose download failed for good. Order 10: its ``process_exception`` comes
    after every other middleware's (a retry takes the exception before it)."""

    @classmethod
    def from_crawler(cls, crawler) -> FocusedDownloaderMiddleware:
        return cls(crawler)

    def __init__(self, crawler):
        self.crawler = crawler

    def process_exception(self, request: Request, exception: BaseException) -> None:
        scheduler = _SCHEDULERS.get(self.crawler)
        if scheduler is not None:
            scheduler.download_failed(request, exception)
