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
- **Off the reactor** (``FOCUSCRAWL_READ_QUEUE`` > 0): pages are read and recorded by a ``reader.PageReader``
  thread, in the order Scrapy delivered them, from a queue of that many pages (nothing new is sent while it is
  full); the engine is touched by one thread at a time (``lock``). A close records every page handed over first.
  Off by default: on a quiet machine the thread was slower than reading in the reactor (it shares the GIL).
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
import threading
import time
import weakref
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

from focuscrawl.builder import Classifiers, StrategyPlan, build_crawl
from focuscrawl.config import RunSettings, describe_validation_error, load_config
from focuscrawl.engine import CrawlEngine
from focuscrawl.extras import MissingExtra
from focuscrawl.http.response import followable
from focuscrawl.scrapy.jobdir import STATE_FILE, read_requests, read_state, write_state
from focuscrawl.scrapy.loopback import LoopbackDownloadHandler
from focuscrawl.scrapy.reader import PAGE_PARSING, PageReader, download_error, page_of_response
from focuscrawl.storage import PagesWriter, StepRecord
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import ForeignLinks, Link, Page, Selection

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
    "FOCUSCRAWL_READ_QUEUE": "pages waiting to be read and recorded off Scrapy's reactor thread (default 0: read "
                             "in the reactor thread; e.g. 32 for a worker thread)",
}
# 0 by default: measured on a quiet machine (docs/scrapy.md), the worker thread was slower than the reactor
READ_QUEUE = 0
READER_FAILED = "focuscrawl_reader_failed"  # the finish reason of a spider whose page reader failed
SPIDER_MIDDLEWARE, SPIDER_MIDDLEWARE_ORDER = "focuscrawl.scrapy.FocusedSpiderMiddleware", 20  # < HttpError's 50
DOWNLOADER_MIDDLEWARE, DOWNLOADER_MIDDLEWARE_ORDER = "focuscrawl.scrapy.FocusedDownloaderMiddleware", 10
# After OffsiteMiddleware (50), before RobotsTxtMiddleware (100): a refused host's robots.txt is not asked for.
ADDRESS_GUARD, ADDRESS_GUARD_ORDER = "focuscrawl.scrapy.guard.AddressGuardMiddleware", 60
# One scheduler per crawler, found by the middlewares (built before it).
_SCHEDULERS: weakref.WeakKeyDictionary[Any, FocusedScheduler] = weakref.WeakKeyDictionary()
_USER_ERRORS = (ValueError, KeyError, OSError, MissingExtra)


class SettingsError(ValueError):
    """A FOCUSCRAWL_* setting, or the components, are not as a focused crawl needs them."""


def policy_request(request: Request) -> bool:
    """Whether a request a callback yields is the policy's to order (module docstring): GET, http(s), no
    ``dont_filter``, priority 0, no body."""
    return (request.method == "GET" and not request.dont_filter and request.priority == 0 and not request.body
            and urlsplit(request.url).scheme in ("http", "https"))


def _user_error(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc)
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}{f': {exc.filename}' if exc.filename else ''}"
    return str(exc)


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
    others through Scrapy's own ``Scheduler`` first."""

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
        self.engine: CrawlEngine | None = None
        self.requests: dict[str, Request] = {}  # frontier URL -> the spider's request for it
        self.dispatched: dict[str, Request] = {}  # selection sent, not yet recorded -> its request
        self.redo: dict[str, Request | None] = {}  # a resumed crawl's selections in flight at the stop (None: probe)
        self.ready: Selection | None = None  # selected by has_pending_requests, sent by next_request
        self.pages: PagesWriter | None = None
        self.page_s = 0.0  # building pages from responses (parsing, main text)
        self.record_s = 0.0  # the engine recording them (classifier, defences, the policy's observe)
        self.refused = False
        self.spider = None
        # The engine and the state above are touched by one thread at a time: the reactor's (selecting, sending) or
        # the page reader's (recording). The reactor never waits for it: if the reader holds it, the reactor sends
        # nothing and the reader wakes Scrapy when its page is recorded.
        self.lock = threading.RLock()
        self.reader: PageReader | None = None
        _SCHEDULERS[crawler] = self

    # -- Scrapy's scheduler interface ---------------------------------------------------------------------------
    def open(self, spider):
        self.spider = spider
        try:
            self._prepare(spider)
        except (ValidationError, *_USER_ERRORS) as exc:
            # One error line; the spider closes once it is open (a CloseSpider raised here would leave Scrapy's
            # scraper unopened, and its closing would log an error of its own). Scrapy's scheduler is never opened.
            error = _refuse(_user_error(exc))
            self.refused = True

            def close(**_) -> None:
                raise error

            self.crawler.signals.connect(close, signal=signals.spider_opened, weak=False)
            return None
        from twisted.internet import reactor

        self.reader = PageReader(self.read_queue, reactor.callFromThread, self._wake, self._reader_failed)
        self.crawler.signals.connect(self._idle, signal=signals.spider_idle)
        return self.scrapy.open(spider)

    def close(self, reason: str):
        if self.refused:
            return None
        if self.reader is not None:
            self.reader.close()  # every page fetched is recorded first
        if self.engine is not None:
            if self.jobdir and self.failed is None:
                self._save()
            elif self.jobdir:
                logger.warning("focuscrawl: the crawl's state is not written to JOBDIR after the page reader failed")
            stats, engine = self.crawler.stats, self.engine
            stats.set_value("focuscrawl/pages", engine.stats.steps)
            stats.set_value("focuscrawl/relevant_by_classifier", self.relevant)
            stats.set_value("focuscrawl/decision_s", round(engine.stats.decision_s, 3))
            stats.set_value("focuscrawl/page_s", round(self.page_s, 3))
            stats.set_value("focuscrawl/record_s", round(self.record_s, 3))
            stats.set_value("focuscrawl/frontier", engine.frontier_size)
            stats.set_value("focuscrawl/read_queue_waits", self.reader.waits if self.reader is not None else 0)
            logger.info("focuscrawl: %d pages chosen by %s, %d of them on topic by the classifier; pages read in "
                        "%.1f s and recorded in %.1f s, the policy's decisions %.1f s", engine.stats.steps,
                        self.strategy, self.relevant, self.page_s, self.record_s, engine.stats.decision_s)
        if self.pages is not None:
            self.pages.close()
        return self.scrapy.close(reason)

    @property
    def failed(self) -> BaseException | None:
        return self.reader.failed if self.reader is not None else None

    def has_pending_requests(self) -> bool:
        if self.refused or self.failed is not None:
            return False
        if (self.scrapy.has_pending_requests() or self.redo or self.ready is not None or self.dispatched
                or self.reader.pending):
            return True
        if self.engine is None:
            return False
        if not self.lock.acquire(blocking=False):
            return True  # the reader is recording a page: it wakes Scrapy when it is done
        try:
            self.ready = self.engine.next_selection()
        finally:
            self.lock.release()
        return self.ready is not None

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
            self.reader.submit(partial(self._record_dispatched, url,
                                       Page(url=url, final_url=request.url, status=0, error=error)))
        return False

    def next_request(self) -> Request | None:
        if self.refused or self.failed is not None or self.reader.full():
            return None  # the reader is behind: nothing new is sent until it has room (it wakes Scrapy)
        if not self.lock.acquire(blocking=False):
            return None  # the reader is recording a page: it wakes Scrapy when it is done
        try:
            return self._next_request()
        finally:
            self.lock.release()

    def _next_request(self) -> Request | None:
        request = self.scrapy.next_request()
        if request is not None:
            url = request.meta.get(SELECTION)
            if url is not None:  # a redirect or retry of a selection (a resumed crawl's too: not sent again)
                self.redo.pop(url, None)
                self.dispatched[url] = request
            return request
        engine = self.engine
        while engine is not None and len(self.dispatched) < self.in_flight:
            if self.redo:
                url, request = next(iter(self.redo.items()))
                del self.redo[url]
            else:
                selection, self.ready = self.ready or engine.next_selection(), None
                if selection is None:
                    return None
                url, request = selection.url, self.requests.pop(selection.url, None)
            if engine.is_probe(url):
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
        if self.refused:
            return added
        if self.engine is None:
            seeds = [request.url for request in ours]
            if not seeds:
                added = [Request(url) for url in self.topic.seeds]
                ours, seeds = added, list(self.topic.seeds)
            try:
                crawl = build_crawl(self.settings, self.plan, self.topic, seeds, classifiers=self.classifiers)
            except _USER_ERRORS as exc:
                self.refused = True
                message = _user_error(exc)
                raise _refuse(f"{message}: give the spider start requests (start_urls) or the topic seeds.txt"
                              if message.startswith("no seeds") else message) from None
            self.engine = crawl.engine
        with self.lock:
            for request in ours:
                url = self.engine.normalize(request.url)
                if url in self.engine.parent and url not in self.engine.fetched and url not in self.requests:
                    self.requests[url] = request
                    request.meta[HELD] = True
                else:  # a duplicate start URL, or one a resumed crawl has fetched or never had as a seed
                    request.meta[NOT_SEED] = True
        return added

    def page_done(self, response, links: list[Request]) -> None:
        """A response's callback output has ended: ``links`` are the policy's requests it yielded. The page reader
        reads and records it."""
        if self.engine is not None and self.reader is not None:
            self.reader.submit(partial(self._read, response, links))

    def _read(self, response, links: list[Request]) -> None:
        """The page reader's job for a response: the page read, then recorded (a selection's) or adopted."""
        url = response.meta.get(SELECTION)
        ours = url in self.dispatched  # only this job removes it: read without the lock
        page = Page(url=response.url, final_url=response.url, status=response.status)
        if ours or links:
            started = time.perf_counter()
            page = page_of_response(url if ours else response.url, response)  # reads nothing of the engine: no lock
            self.page_s += time.perf_counter() - started
        with self.lock:
            self._record_read(url if ours else None, response, page, links)

    def _record_read(self, url: str | None, response, page: Page, links: list[Request]) -> None:
        engine = self.engine
        if url is not None or links:  # a page's links are the requests its callback yielded, none if none
            started = time.perf_counter()
            page.outlinks = self._links(page, links)
            self.page_s += time.perf_counter() - started
        if url is not None:
            self._record(url, page, response.meta.get("download_latency", 0.0))
        elif (source := engine.normalize(response.url)) is not None:
            # A page the policy did not choose: fetched (never again by the policy), its links reach the policy as
            # another fetcher's (CrawlEngine.adopt).
            candidates = [(link_url, link.anchor) for link in page.outlinks
                          if (link_url := engine.normalize(link.url)) is not None]
            relevance = engine.relevance(page, learn=False) if candidates else 0.0
            engine.adopt(ForeignLinks(source, page, relevance, 1.0 if engine.rewards(relevance) else 0.0,
                                      engine.depth.get(source, 0), candidates, fetched=[source]))
        self._hold(links)

    def download_failed(self, request: Request, exception: BaseException) -> None:
        """A selection's download failed for good (after Scrapy's retries): a page of status 0."""
        url = request.meta.get(SELECTION)
        if url in self.dispatched:
            self.reader.submit(partial(self._record_dispatched, url, Page(
                url=url, final_url=request.url, status=0, error=download_error(exception))))

    # -- internals --------------------------------------------------------------------------------------------
    def _prepare(self, spider) -> None:
        """Read and check the settings, the topic and the strategy; train the classifier; resume from JOBDIR."""
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
        self.read_queue = settings.getint("FOCUSCRAWL_READ_QUEUE", READ_QUEUE)
        if self.read_queue < 0:
            raise SettingsError(f"FOCUSCRAWL_READ_QUEUE is {self.read_queue}: give the pages the page reader may "
                                "hold (0: none, pages read in the reactor thread)")
        overrides = settings.getdict("FOCUSCRAWL_SETTINGS")
        budget = settings.get("FOCUSCRAWL_BUDGET")
        self.settings = load_config(RunSettings, settings.get("FOCUSCRAWL_CONFIG"), (),
                                    **{**overrides, **({"budget": budget} if budget is not None else {})})
        self.strategy = settings.get("FOCUSCRAWL_STRATEGY") or "adaptive"
        self.plan = StrategyPlan(self.settings, self.strategy)
        self.topic_dir = Path(topic).resolve()
        self.topic = load_topic_dir(self.topic_dir)
        self.classifiers = Classifiers(self.topic, self.settings.seed, page_encoder=self.settings.page_encoder)
        self.classifiers.get(self.plan.reward_model(self.topic))  # trained now: a mistake shows before any fetch
        self.identity = {"topic": str(self.topic_dir), "strategy": self.strategy,
                         "settings": self.settings.model_dump(mode="json", exclude={"budget"})}
        if settings.get("FOCUSCRAWL_PAGES"):
            self.pages = PagesWriter(settings["FOCUSCRAWL_PAGES"], self.strategy)
        self.relevant = 0
        if self.jobdir and (Path(self.jobdir) / STATE_FILE).exists():
            self._resume(Path(self.jobdir) / STATE_FILE, spider)

    def _links(self, page: Page, requests: list[Request]) -> list[Link]:
        """The policy's requests as the page's outlinks: in the page's order with its anchors, then the URLs the page
        does not link to (no anchor)."""
        normalize = self.engine.normalize
        asked = dict.fromkeys(url for request in requests if (url := normalize(request.url)) is not None)
        links = [link for link in page.outlinks if normalize(link.url) in asked]
        found = {normalize(link.url) for link in links}
        return links + followable([Link(url) for url in asked if url not in found], PAGE_PARSING)

    def _hold(self, requests: list[Request]) -> None:
        """Keep the request for each URL the frontier has and nothing holds yet, to send when it is selected."""
        engine = self.engine
        for request in requests:
            url = engine.normalize(request.url)
            if (url in engine.parent and url not in engine.fetched and url not in self.requests
                    and url not in self.dispatched):
                self.requests[url] = request

    def _record_dispatched(self, url: str, page: Page, probe: bool = False) -> None:
        """The page reader's job for a selection that ended without a response, or a soft-404 probe's answer."""
        with self.lock:
            if url in self.dispatched or (probe and url in self.engine.in_flight):
                self._record(url, page)

    def _record(self, url: str, page: Page, fetch_s: float = 0.0) -> None:
        """Record a page in the engine (the page reader's thread, with the lock held)."""
        self.dispatched.pop(url, None)
        started, fetched_at = time.perf_counter(), time.time()
        # the wall clock: the host breaker's seconds (kept in JOBDIR's snapshot, so a resumed crawl goes on with them)
        event = self.engine.record(url, page, fetch_s, at=fetched_at)
        self.record_s += time.perf_counter() - started
        self.relevant += int(event.reward > 0)
        if self.pages is not None:
            self.pages.write(StepRecord.of(event, page, fetch_s, fetched_at))

    def _probe(self, url: str) -> None:
        """The engine's own fetch (a soft-404 probe): downloaded through Scrapy's downloader, never the spider."""
        async def fetch() -> None:
            request = Request(url, callback=NO_CALLBACK, dont_filter=True)
            try:
                response = await self.crawler.engine.download_async(request)
            except Exception as exc:  # noqa: BLE001 - a failed probe is a page of status 0, as any failed fetch
                page = Page(url=url, final_url=url, status=0, error=f"{type(exc).__name__}: {exc}"[:500])
            else:
                page = page_of_response(url, response)
            self.reader.submit(partial(self._record_dispatched, url, page, probe=True))

        deferred_from_coro(fetch())

    def _wake(self) -> None:
        """Have Scrapy ask for a request again (the page reader has recorded a page). Scrapy has no public call for
        it: without it, the next request would wait for Scrapy's 5-second heartbeat."""
        slot = getattr(self.crawler.engine, "_slot", None)
        if slot is not None and slot.closing is None:
            slot.nextcall.schedule()

    def _reader_failed(self, exc: BaseException) -> None:
        """The page reader's job raised (a bug): one error line, and the spider closes."""
        logger.error("focuscrawl: reading and recording pages failed: %s: %s; the spider closes",
                     type(exc).__name__, exc, exc_info=(type(exc), exc, exc.__traceback__))
        engine = self.crawler.engine
        if engine is not None and self.spider is not None:
            deferred_from_coro(engine.close_spider_async(reason=READER_FAILED))

    def _idle(self) -> None:
        """Nothing is in progress in Scrapy: a selection not recorded yet was lost on the way (an exception in a
        downloader middleware's process_response), and is a failed page; then the crawl goes on if it may."""
        if self.failed is not None:
            raise CloseSpider(READER_FAILED)
        if self.reader is None:
            return
        self.reader.drain()  # the pages handed over are recorded: a selection left is lost
        lost = list(self.dispatched)
        for url in lost:
            self.reader.submit(partial(self._record_dispatched, url, Page(url=url, final_url=url, status=0,
                                                                         error="no answer reached the spider")))
        self.reader.drain()
        if lost and self.has_pending_requests():
            raise DontCloseSpider

    def _save(self) -> None:
        """Write the engine and the requests it holds to JOBDIR (a stop; module docstring)."""
        with self.lock:
            in_flight = {url: self.dispatched.get(url) or self.requests.get(url) or self.redo.get(url)
                         for url in self.engine.in_flight}
            write_state(Path(self.jobdir) / STATE_FILE, self.spider, self.engine, self.identity, self.relevant,
                        self.requests, in_flight)

    def _resume(self, path: Path, spider) -> None:
        state = read_state(path, self.identity)
        crawl = build_crawl(self.settings, self.plan, self.topic, state["seeds"], classifiers=self.classifiers,
                            context_budget=state["context_budget"])
        crawl.engine.restore(state["snapshot"])
        self.engine, self.relevant = crawl.engine, state["relevant"]
        self.requests = {url: request for url, request in read_requests(state["requests"], spider).items()
                         if request is not None}
        self.redo = read_requests(state["in_flight"], spider)
        logger.info("focuscrawl: resuming a crawl of %d pages, %d in its frontier", self.engine.stats.steps,
                    self.engine.frontier_size)


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
