"""The Scrapy add-on's page reader (focuscrawl.scrapy.reader): jobs in order in one worker thread, a bounded queue
that holds back whoever hands over a job while it is full, a drain that waits for every job, and a job's
exception surfaced once, never a hang. The add-on's crawls with it are in test_scrapy.py."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("scrapy")

from focuscrawl.scrapy.reader import PageReader  # noqa: E402


class Reactor:
    """Stands for Scrapy's reactor: what the reader asks to run there, run in order by ``run_pending``."""

    def __init__(self):
        self.calls: list = []
        self.woken = 0
        self.failures: list[BaseException] = []

    def call(self, function) -> None:
        self.calls.append(function)

    def run_pending(self) -> None:
        while self.calls:
            self.calls.pop(0)()

    def reader(self, capacity: int) -> PageReader:
        return PageReader(capacity, self.call, self.wake, self.failures.append)

    def wake(self) -> None:
        self.woken += 1


def test_jobs_run_in_order_in_one_worker_thread_and_wake_the_reactor():
    reactor, done, threads = Reactor(), [], set()
    reader = reactor.reader(4)

    def job(i: int):
        def run() -> None:
            threads.add(threading.current_thread().name)
            done.append(i)
        return run

    for i in range(50):
        reader.submit(job(i))
    reader.close()
    reactor.run_pending()
    assert done == list(range(50)) and threads == {"focuscrawl-reader"} and reactor.woken == 50
    assert reader.pending == 0 and reader.failed is None


def test_a_full_queue_holds_back_the_submitter_until_the_worker_takes_a_job():
    reactor, release, done = Reactor(), threading.Event(), []
    reader = reactor.reader(2)
    reader.submit(lambda: (release.wait(10), done.append(0)))  # the worker takes it and waits
    deadline = time.monotonic() + 5
    while reader.jobs.qsize() and time.monotonic() < deadline:
        time.sleep(0.01)
    reader.submit(lambda: done.append(1))
    reader.submit(lambda: done.append(2))
    assert reader.full() and reader.pending == 3 and reader.waits == 0
    submitted = threading.Event()
    waiting = threading.Thread(target=lambda: (reader.submit(lambda: done.append(3)), submitted.set()))
    waiting.start()
    assert not submitted.wait(0.3), "a submit to a full queue must wait"
    release.set()
    assert submitted.wait(5)
    waiting.join(5)
    reader.drain()
    assert done == [0, 1, 2, 3] and reader.waits == 1 and reader.pending == 0 and not reader.full()
    reader.close()


def test_drain_waits_for_every_job_handed_over():
    reactor, done = Reactor(), []
    reader = reactor.reader(8)
    for i in range(8):
        reader.submit(lambda i=i: (time.sleep(0.02), done.append(i)))
    reader.drain()
    assert done == list(range(8)) and reader.pending == 0
    reader.close()
    assert reader.thread is None


def test_a_failing_job_is_surfaced_once_and_nothing_waits_for_the_dead_worker():
    reactor, done = Reactor(), []
    reader = reactor.reader(2)
    release = threading.Event()

    def fail() -> None:
        release.wait(10)
        raise RuntimeError("the engine broke")

    reader.submit(fail)
    reader.submit(lambda: done.append(1))
    reader.submit(lambda: done.append(2))  # the queue is full now: the next submit waits for the worker
    threading.Timer(0.2, release.set).start()
    started = time.monotonic()
    reader.submit(lambda: done.append(3))  # returns once the worker has failed, never hangs
    reader.drain()
    reader.close()
    assert time.monotonic() - started < 5 and done == []
    reactor.run_pending()
    assert len(reactor.failures) == 1 and str(reactor.failures[0]) == "the engine broke"
    assert isinstance(reader.failed, RuntimeError)
    reader.submit(lambda: done.append(4))  # after a failure a job is dropped at once
    assert done == []


def test_capacity_zero_runs_each_job_at_once_in_the_callers_thread():
    reactor, threads = Reactor(), []
    reader = reactor.reader(0)
    reader.submit(lambda: threads.append(threading.current_thread()))
    assert threads == [threading.current_thread()] and reader.thread is None and not reader.full()
    reader.close()
