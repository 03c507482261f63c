"""The add-on's page reader: focuscrawl's reading and recording of pages, off Scrapy's reactor thread.

Reading a page (HTML parsing, main text, links) and recording it (the classifier, the engine's defences, the
policy's observe) take a few milliseconds a page; in the reactor thread they stall every download meanwhile. A
``PageReader`` runs them (jobs: callables) in one worker thread, in the order they were handed over (the order
Scrapy delivered the pages: the policy sees them in that order), from a bounded queue:

- **Backpressure**: ``submit`` waits while the queue is full (the reactor with it: the last resort); the scheduler
  sends nothing new while ``full()``, so that in a crawl the wait is rare.
- **Wake-up**: after each job the worker calls ``wake`` in the reactor thread (``reactor.callFromThread``): Scrapy
  asks the scheduler for a request again, now that the policy knows more.
- **Drain**: ``drain()`` waits until every job handed over is done (a spider's close: every fetched page recorded).
- **Failure**: an exception in a job stops the reader; ``failed`` holds it, ``on_failure`` is called once in the
  reactor thread (the scheduler closes the spider, one error line), and ``submit``/``drain`` return at once.

With ``capacity`` 0 there is no thread: ``submit`` runs each job at once, in the caller's thread (the add-on as it
was, for comparison). The module also reads a Scrapy response as focuscrawl's fetcher reads an answer
(``page_of_response``, ``download_error``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from functools import partial

from scrapy.exceptions import IgnoreRequest

from focuscrawl.http.response import page_from_body, parse_retry_after
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import Page, retry_after_error

_STOP = object()
POLL_S = 0.5  # how often a waiting submit or drain looks whether the worker failed
# Pages are parsed as focuscrawl's fetcher parses them (main text, outlinks); the HTML is not kept.
PAGE_PARSING = FetchConfig(keep_html=False)


class PageReader:
    """One worker thread calling each job submitted, in order (module docstring)."""

    def __init__(self, capacity: int, call_in_reactor: Callable[[Callable[[], None]], None],
                 wake: Callable[[], None], on_failure: Callable[[BaseException], None]):
        self.capacity = capacity
        self.call_in_reactor = call_in_reactor
        self.wake = wake
        self.on_failure = on_failure
        self.jobs: queue.Queue = queue.Queue(maxsize=max(1, capacity))
        self.failed: BaseException | None = None
        self.waits = 0  # submits that found the queue full
        self.thread: threading.Thread | None = None
        if capacity > 0:
            self.thread = threading.Thread(target=self._work, name="focuscrawl-reader", daemon=True)
            self.thread.start()

    @property
    def pending(self) -> int:
        """Jobs handed over and not done yet."""
        return self.jobs.unfinished_tasks if self.thread is not None else 0

    def full(self) -> bool:
        return self.thread is not None and self.jobs.full()

    def submit(self, job: Callable[[], None]) -> None:
        if self.failed is not None:
            return
        if self.thread is None:
            job()
            return
        if self.jobs.full():
            self.waits += 1
        while self.failed is None:
            try:
                self.jobs.put(job, timeout=POLL_S)
                return
            except queue.Full:
                continue

    def drain(self) -> None:
        """Wait until every job submitted is done, or the worker has failed."""
        with self.jobs.all_tasks_done:
            while self.jobs.unfinished_tasks and self.failed is None:
                self.jobs.all_tasks_done.wait(POLL_S)

    def close(self) -> None:
        """Drain, then end the worker thread."""
        if self.thread is None:
            return
        self.drain()
        if self.failed is None:
            self.jobs.put(_STOP)
        self.thread.join(timeout=10)
        self.thread = None

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            if job is _STOP:
                self.jobs.task_done()
                return
            try:
                job()
            except BaseException as exc:  # noqa: BLE001 - a bug in a job: surfaced in the reactor, never a hang
                self.failed = exc
                with self.jobs.all_tasks_done:
                    self.jobs.all_tasks_done.notify_all()  # a drain waiting returns
                self.call_in_reactor(partial(self.on_failure, exc))
                return
            self.jobs.task_done()
            self.call_in_reactor(self.wake)


def page_of_response(url: str, response) -> Page:
    """The Page of a Scrapy response to ``url``, read as focuscrawl's fetcher reads an answer (a 429 or 503's
    Retry-After too, which the host breaker honours)."""
    links = b", ".join(response.headers.getlist(b"Link")).decode("latin-1") or None
    retry_after = parse_retry_after(response.headers.get(b"Retry-After", b"").decode("latin-1")) \
        if response.status in (429, 503) else None
    return page_from_body(url, response.url, response.status,
                          response.headers.get(b"Content-Type", b"").decode("latin-1"), response.body, PAGE_PARSING,
                          link_header=links, error=retry_after_error(retry_after) if retry_after is not None else "")


def download_error(exception: BaseException) -> str:
    """A failed download's error, in the engine's words for a refusal of the crawler's own (robots.txt, the
    address guard, another middleware's IgnoreRequest): a refusal is not the host failing (HostHealth)."""
    if isinstance(exception, IgnoreRequest):
        message = str(exception)
        if "robots.txt" in message:
            return "disallowed by robots.txt"
        return message if message.startswith("refused") else f"refused by Scrapy: {message}"[:500]
    return f"{type(exception).__name__}: {exception}"[:500]
