"""The add-on's page reader: focuscrawl's side of a focused crawl in Scrapy, in its own process or in Scrapy's.

A ``Recorder`` owns the crawl's ``CrawlEngine`` (built by ``focuscrawl.builder`` from the scheduler's settings, its
classifier trained there) and does focuscrawl's work on each page: reading it (HTML parsing, main text, links),
recording it (the classifier's relevance, the defences, the policy's observe) and choosing what comes next. The
scheduler (``focuscrawl.scrapy``) hands it jobs, small picklable messages: the start URLs, each response's answer
(``Answer``: status, headers, body) with the URLs of the policy's requests its callback yielded, each selection that
ended without one; each job's reply says which of those URLs the scheduler should keep a request for, and the
selections (URLs) to send, as many as the in-flight rule allows. The scheduler keeps Scrapy's requests by URL.

Two readers run it, with the same jobs and replies in the same order:

- ``PageReader``: the recorder in a child process (``multiprocessing``, the 'spawn' start method: no copy of
  Twisted's reactor or threads), so that on a machine of two cores Scrapy downloads and runs callbacks while
  focuscrawl reads, with Python's one running thread a process each. Jobs go out through a pipe (a sender thread:
  the reactor never waits for the pipe), replies come back through another (a receiver thread, which has the
  reactor handle them, ``call_in_reactor``). **Bounded**: ``full()`` while ``capacity`` jobs are unanswered; the
  scheduler sends nothing new meanwhile. **Reaped**: ``close()`` ends the child (asked, then terminated, then
  killed); the child is a daemon (ended with the Scrapy process) and ends itself when its pipe closes (the Scrapy
  process gone); it ignores SIGINT, so that Scrapy's Ctrl-C stops the crawl cleanly, the child's state included.
- ``InlineReader``: the recorder in the caller's thread, each job answered at once (``FOCUSCRAWL_READ_QUEUE = 0``).

A recorder's mistake in the settings (a classifier that cannot be trained, no seeds) is a refusal (one line); an
exception in a job is a failure, reported once through ``on_failure``; either way the reader takes no more jobs.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from scrapy.exceptions import IgnoreRequest

from focuscrawl.builder import Classifiers, StrategyPlan, build_crawl
from focuscrawl.config import RunSettings, describe_validation_error
from focuscrawl.extras import MissingExtra
from focuscrawl.http.response import followable, page_from_body, parse_retry_after
from focuscrawl.http.settings import FetchConfig
from focuscrawl.storage import PagesWriter, StepRecord
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import ForeignLinks, Link, Page, retry_after_error

logger = logging.getLogger("focuscrawl.scrapy")

# Pages are parsed as focuscrawl's fetcher parses them (main text, outlinks); the HTML is not kept.
PAGE_PARSING = FetchConfig(keep_html=False)
USER_ERRORS = (ValidationError, ValueError, KeyError, OSError, MissingExtra)
POLL_S = 0.5  # how often a synchronous wait looks whether the child has ended
STOP_S = 10.0  # how long a closing reader waits for the child to end by itself before terminating it


def user_error(exc: BaseException) -> str:
    """A user's mistake (``USER_ERRORS``) in one line."""
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc)
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}{f': {exc.filename}' if exc.filename else ''}"
    return str(exc)


# -- what crosses the pipe ----------------------------------------------------------------------------------------
@dataclass
class Answer:
    """A Scrapy response as focuscrawl reads it (picklable): ``answer_of_response`` builds it in Scrapy's thread."""

    final_url: str
    status: int
    content_type: str
    body: bytes
    link_header: str | None
    retry_after: str

    def page(self, url: str) -> Page:
        """The Page of this answer to ``url``, read as focuscrawl's fetcher reads an answer (a 429 or 503's
        Retry-After too, which the host breaker honours)."""
        retry_after = parse_retry_after(self.retry_after) if self.status in (429, 503) else None
        return page_from_body(url, self.final_url, self.status, self.content_type, self.body, PAGE_PARSING,
                              link_header=self.link_header,
                              error=retry_after_error(retry_after) if retry_after is not None else "")


def answer_of_response(response, body: bool = True) -> Answer:
    """``response``'s answer; without its body when nothing will read it."""
    headers = response.headers
    return Answer(response.url, response.status, headers.get(b"Content-Type", b"").decode("latin-1"),
                  response.body if body else b"", b", ".join(headers.getlist(b"Link")).decode("latin-1") or None,
                  headers.get(b"Retry-After", b"").decode("latin-1"))


def download_error(exception: BaseException) -> str:
    """A failed download's error, in the engine's words for a refusal of the crawler's own (robots.txt, the
    address guard, another middleware's IgnoreRequest): a refusal is not the host failing (HostHealth)."""
    if isinstance(exception, IgnoreRequest):
        message = str(exception)
        if "robots.txt" in message:
            return "disallowed by robots.txt"
        return message if message.startswith("refused") else f"refused by Scrapy: {message}"[:500]
    return f"{type(exception).__name__}: {exception}"[:500]


@dataclass
class RecorderSpec:
    """What a recorder is built from (picklable): the scheduler's checked settings, and a JOBDIR state to resume."""

    settings: RunSettings
    strategy: str
    topic_dir: Path
    in_flight: int  # the policy's selections sent and not yet recorded, at most
    pages: str | None = None  # FOCUSCRAWL_PAGES
    state: dict | None = None  # jobdir.read_state's, to resume


Selections = list[tuple[str, bool]]  # (URL, whether it is the engine's own soft-404 probe)
Holds = list[str | None]  # for each URL of a job, the frontier URL to keep its request for, or None


class Recorder:
    """The engine's side of a focused crawl (module docstring). Its job methods return (holds, selections)."""

    def __init__(self, spec: RecorderSpec):
        self.in_flight = spec.in_flight
        self.settings, self.strategy = spec.settings, spec.strategy
        self.plan = StrategyPlan(spec.settings, spec.strategy)
        self.topic = load_topic_dir(spec.topic_dir)
        self.classifiers = Classifiers(self.topic, spec.settings.seed, page_encoder=spec.settings.page_encoder)
        self.classifiers.get(self.plan.reward_model(self.topic))  # trained now: a mistake shows before any fetch
        self.pages = PagesWriter(spec.pages, spec.strategy) if spec.pages else None
        self.engine = None
        self.relevant = 0
        self.page_s = 0.0  # building pages from answers (parsing, main text, links)
        self.record_s = 0.0  # the engine recording them (classifier, defences, the policy's observe)
        self.sent: set[str] = set()  # selections handed to the scheduler (not probes), not yet recorded
        if spec.state is not None:
            state = spec.state
            crawl = build_crawl(self.settings, self.plan, self.topic, state["seeds"], classifiers=self.classifiers,
                                context_budget=state["context_budget"])
            crawl.engine.restore(state["snapshot"])
            self.engine, self.relevant = crawl.engine, state["relevant"]
            self.sent = {url for url in self.engine.in_flight if not self.engine.is_probe(url)}

    def ready(self) -> dict:
        """What the scheduler needs to know once the recorder is built: a resumed crawl's probes in flight."""
        engine = self.engine
        return {"probes": [url for url in engine.in_flight if engine.is_probe(url)] if engine is not None else [],
                "steps": engine.stats.steps if engine is not None else 0,
                "frontier": engine.frontier_size if engine is not None else 0}

    # -- jobs ---------------------------------------------------------------------------------------------------
    def start(self, urls: list[str]) -> tuple[Holds, Selections]:
        """The spider's start URLs: the seeds (a resumed crawl keeps its first ones)."""
        if self.engine is None:
            self.engine = build_crawl(self.settings, self.plan, self.topic, urls, classifiers=self.classifiers).engine
        return self._holds(urls), self._select()

    def page(self, url: str | None, answer: Answer, links: list[str], fetch_s: float) -> tuple[Holds, Selections]:
        """A response whose callback output has ended, with the URLs of the policy's requests it yielded: recorded
        if it answers the selection ``url``, else its links adopted (a page the policy did not choose)."""
        engine = self.engine
        ours = url is not None and url in self.sent
        page = Page(url=answer.final_url, final_url=answer.final_url, status=answer.status)
        if ours or links:  # a page's links are the requests its callback yielded, none if none
            started = time.perf_counter()
            page = answer.page(url if ours else answer.final_url)
            page.outlinks = self._links(page, links)
            self.page_s += time.perf_counter() - started
        if ours:
            self._record(url, page, fetch_s)
        elif (source := engine.normalize(answer.final_url)) is not None:
            # fetched (never again by the policy), its links reach the policy as another fetcher's (adopt)
            candidates = [(link_url, link.anchor) for link in page.outlinks
                          if (link_url := engine.normalize(link.url)) is not None]
            relevance = engine.relevance(page, learn=False) if candidates else 0.0
            engine.adopt(ForeignLinks(source, page, relevance, 1.0 if engine.rewards(relevance) else 0.0,
                                      engine.depth.get(source, 0), candidates, fetched=[source]))
        return self._holds(links), self._select()

    def ended(self, url: str, outcome: Page | Answer, probe: bool = False) -> tuple[Holds, Selections]:
        """A selection that ended without a response (a page of status 0), or a soft-404 probe's answer."""
        if url in self.sent or (probe and url in self.engine.in_flight):
            if isinstance(outcome, Answer):
                started = time.perf_counter()
                outcome = outcome.page(url)
                self.page_s += time.perf_counter() - started
            self._record(url, outcome)
        return [], self._select()

    def finish(self, save: bool) -> dict:
        """The crawl's figures, and with ``save`` the engine's state for JOBDIR (jobdir.write_state)."""
        engine = self.engine
        if self.pages is not None:
            self.pages.close()
        if engine is None:
            return {"stats": None, "state": None}
        stats = {"pages": engine.stats.steps, "relevant_by_classifier": self.relevant,
                 "decision_s": round(engine.stats.decision_s, 3), "page_s": round(self.page_s, 3),
                 "record_s": round(self.record_s, 3), "frontier": engine.frontier_size}
        state = {"seeds": engine.context.seeds, "context_budget": engine.context.budget, "relevant": self.relevant,
                 "snapshot": engine.snapshot(), "in_flight": engine.in_flight} if save else None
        return {"stats": stats, "state": state}

    # -- internals ----------------------------------------------------------------------------------------------
    def _select(self) -> Selections:
        """The selections to send now: as many as keep the policy's pages in flight at most ``in_flight`` (a
        page's links reach the policy before it chooses again); the engine's own probes besides."""
        chosen: Selections = []
        while self.engine is not None and len(self.sent) < self.in_flight:
            selection = self.engine.next_selection()
            if selection is None:
                break
            probe = self.engine.is_probe(selection.url)
            if not probe:
                self.sent.add(selection.url)
            chosen.append((selection.url, probe))
        return chosen

    def _holds(self, urls: list[str]) -> Holds:
        """For each URL, its frontier URL if the frontier has it and it is neither fetched nor in flight."""
        engine = self.engine
        held: Holds = []
        for url in urls:
            url = engine.normalize(url)
            held.append(url if url in engine.parent and url not in engine.fetched and url not in engine.in_flight
                        else None)
        return held

    def _links(self, page: Page, urls: list[str]) -> list[Link]:
        """The policy's requests as the page's outlinks: in the page's order with its anchors, then the URLs the page
        does not link to (no anchor)."""
        normalize = self.engine.normalize
        asked = dict.fromkeys(url for request_url in urls if (url := normalize(request_url)) is not None)
        links = [link for link in page.outlinks if normalize(link.url) in asked]
        found = {normalize(link.url) for link in links}
        return links + followable([Link(url) for url in asked if url not in found], PAGE_PARSING)

    def _record(self, url: str, page: Page, fetch_s: float = 0.0) -> None:
        self.sent.discard(url)
        started, fetched_at = time.perf_counter(), time.time()
        # the wall clock: the host breaker's seconds (kept in JOBDIR's snapshot, so a resumed crawl goes on with them)
        event = self.engine.record(url, page, fetch_s, at=fetched_at)
        self.record_s += time.perf_counter() - started
        self.relevant += int(event.reward > 0)
        if self.pages is not None:
            self.pages.write(StepRecord.of(event, page, fetch_s, fetched_at))


# -- running a recorder -------------------------------------------------------------------------------------------
Job = tuple[str, tuple]  # a Recorder method's name and its arguments
REFUSING = ("start",)  # the jobs whose user errors are refusals (no seeds), not failures


def _build(recorder_class: type[Recorder], spec: RecorderSpec) -> tuple[Recorder | None, tuple]:
    """The recorder and its first message: ("ok", ready), ("refused", line) or ("failed", line, traceback)."""
    try:
        recorder = recorder_class(spec)
        return recorder, ("ok", recorder.ready())
    except USER_ERRORS as exc:
        return None, ("refused", user_error(exc))
    except Exception as exc:  # noqa: BLE001 - a bug: reported, never a hang
        return None, _failure(exc)


def _run(recorder: Recorder, job: Job) -> tuple:
    """A job's message: ("ok", its result), ("refused", line) or ("failed", line, traceback)."""
    name, args = job
    try:
        return "ok", getattr(recorder, name)(*args)
    except USER_ERRORS as exc:
        if name in REFUSING:
            return "refused", user_error(exc)
        return _failure(exc)
    except Exception as exc:  # noqa: BLE001 - a bug: reported, never a hang
        return _failure(exc)


def _failure(exc: BaseException) -> tuple:
    return "failed", f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc))


def _serve(recorder_class: type[Recorder], spec: RecorderSpec, jobs, answers) -> None:
    """The child process: build the recorder, then answer each job in order until told to stop or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is Scrapy's, which stops the crawl (and this) cleanly
    recorder, message = _build(recorder_class, spec)
    answers.send(message)
    if recorder is None:
        return
    try:
        while True:
            try:
                job = jobs.recv()
            except (EOFError, OSError):  # the Scrapy process is gone
                return
            if job is None:
                return
            message = _run(recorder, job)
            answers.send(message)
            if message[0] != "ok":
                return
    finally:
        if recorder.pages is not None:
            recorder.pages.close()


class ReaderError(RuntimeError):
    """The reader cannot answer: ``refused`` (a user's mistake, one line) or a failure (a bug)."""

    def __init__(self, message: tuple):
        super().__init__(message[1])
        self.refused = message[0] == "refused"
        self.traceback = message[2] if len(message) > 2 else ""


class _Reader:
    """What both readers share: replies handled in order (each job's callback), one failure reported once."""

    def __init__(self, capacity: int, call_in_reactor: Callable[[Callable[[], None]], None],
                 wake: Callable[[], None], on_failure: Callable[[ReaderError], None]):
        self.capacity = capacity
        self.call_in_reactor = call_in_reactor
        self.wake = wake
        self.on_failure = on_failure
        self.waiting: deque[Callable[[Any], None]] = deque()  # the callbacks of the jobs not answered yet, in order
        self.failed: ReaderError | None = None
        self.waits = 0  # times the scheduler found the reader full

    @property
    def pending(self) -> int:
        return len(self.waiting)

    def full(self) -> bool:
        if self.capacity and len(self.waiting) >= self.capacity:
            self.waits += 1
            return True
        return False

    def _handle(self, message: tuple) -> None:
        if self.failed is not None:
            return
        if message[0] == "ok":
            self.waiting.popleft()(message[1])
            return
        self.failed = ReaderError(message)
        self.waiting.clear()

    def _wait(self, box: list) -> Any:
        raise NotImplementedError

    def call(self, job: Job) -> Any:
        """A job's result, waited for (earlier jobs' replies are handled first); ReaderError if it fails."""
        box: list = []
        self.submit(job, box.append)
        return self._wait(box)


class InlineReader(_Reader):
    """The recorder in the caller's thread: each job answered at once (module docstring)."""

    def __init__(self, spec: RecorderSpec, recorder_class: type[Recorder], capacity: int, *args):
        super().__init__(0, *args)  # no queue: ``capacity`` is not used
        self.recorder, self.opening = _build(recorder_class, spec)

    def open(self) -> dict:
        if self.opening[0] != "ok":
            raise ReaderError(self.opening)
        return self.opening[1]

    def submit(self, job: Job, on_reply: Callable[[Any], None]) -> None:
        if self.failed is not None:
            return
        self.waiting.append(on_reply)
        self._handle(_run(self.recorder, job))
        if self.failed is not None and job[0] not in REFUSING:
            self.call_in_reactor(lambda: self.on_failure(self.failed))

    def _wait(self, box: list) -> Any:
        if not box:
            raise self.failed or ReaderError(("failed", "the page reader takes no more jobs"))
        return box[0]

    def close(self) -> None:
        if self.recorder is not None and self.recorder.pages is not None:
            self.recorder.pages.close()


class PageReader(_Reader):
    """The recorder in a child process (module docstring)."""

    def __init__(self, spec: RecorderSpec, recorder_class: type[Recorder], capacity: int, *args):
        super().__init__(capacity, *args)
        context = multiprocessing.get_context("spawn")
        jobs_in, self.jobs = context.Pipe(duplex=False)
        self.answers, answers_out = context.Pipe(duplex=False)
        self.process = context.Process(target=_serve, args=(recorder_class, spec, jobs_in, answers_out),
                                       name="focuscrawl-reader", daemon=True)
        self.process.start()
        jobs_in.close()  # the child's ends: the child sees the pipe close when this process ends, and this the child
        answers_out.close()
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.opening: list = []
        self.closing = False
        self.waiting.append(self.opening.append)  # the child's first message: the recorder built, or not
        self.sender = threading.Thread(target=self._send, name="focuscrawl-reader-send", daemon=True)
        self.receiver = threading.Thread(target=self._receive, name="focuscrawl-reader-receive", daemon=True)
        self.sender.start()
        self.receiver.start()

    def open(self) -> dict:
        return self._wait(self.opening)

    def submit(self, job: Job, on_reply: Callable[[Any], None]) -> None:
        if self.failed is not None:
            return
        self.waiting.append(on_reply)
        self.outbox.put(job)

    def close(self) -> None:
        """End the child: asked to (it has answered every job by now, or failed), else terminated, else killed."""
        self.closing = True
        self.outbox.put(None)
        process = self.process
        process.join(STOP_S)
        if process.is_alive():
            logger.warning("focuscrawl: the page reader process did not end; terminating it")
            process.terminate()
            process.join(STOP_S)
        if process.is_alive():
            process.kill()
            process.join()
        self.sender.join(STOP_S)
        self.receiver.join(STOP_S)
        self.jobs.close()
        self.answers.close()

    def deliver(self) -> None:
        """In the reactor: handle the replies received; a failure is reported once; Scrapy asks for requests again."""
        handled = False
        while not self.closing:
            try:
                message = self.inbox.get_nowait()
            except queue.Empty:
                break
            was_failed = self.failed is not None
            self._handle(message)
            handled = True
            if self.failed is not None and not was_failed:
                self.on_failure(self.failed)
                return
        if handled:
            self.wake()

    def _wait(self, box: list) -> Any:
        while not box:
            if self.failed is not None:
                raise self.failed
            try:
                self._handle(self.inbox.get(timeout=POLL_S))
            except queue.Empty:
                continue
        return box[0]

    def _send(self) -> None:
        while True:
            job = self.outbox.get()
            try:
                self.jobs.send(job)
            except (OSError, ValueError):  # the child is gone: the receiver reports it
                return
            if job is None:
                return

    def _receive(self) -> None:
        while True:
            try:
                message = self.answers.recv()
            except (EOFError, OSError):
                if self.closing:
                    return
                self.process.join(STOP_S)
                message = ("failed", f"the page reader process ended (exit code {self.process.exitcode})", "")
            self.inbox.put(message)
            self.call_in_reactor(self.deliver)
            if message[0] != "ok":
                return
