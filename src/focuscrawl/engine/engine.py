"""The crawl loop: the one place that knows the order of select, fetch, score, observe.

The same ``CrawlEngine`` serves the offline benchmark (``run``, synchronous) and the real web (an async
driver calls ``next_url`` for as many requests as it keeps in flight and ``record`` as they complete).
It owns everything that must be identical across strategies for a comparison to be fair: the closure
(never fetch a URL twice), URL normalisation, the per-domain cap, the budget and the event stream.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from focuscrawl.engine.caps import DomainCap
from focuscrawl.strategies.base import CrawlContext, Policy
from focuscrawl.topic.relevance import RelevanceModel
from focuscrawl.types import Observation, Outlink, Page, StepEvent
from focuscrawl.urls import domain_of, normalize_url
from focuscrawl.web import Web

EventSink = Callable[[StepEvent], None]
REWARD_THRESHOLD = 0.5


@dataclass
class CrawlStats:
    steps: int = 0
    relevant: int = 0
    skipped_selections: int = 0
    decision_s: float = 0.0
    fetch_s: float = 0.0
    relevant_hosts: set[str] = field(default_factory=set)


class CrawlEngine:
    """Drives one policy over one crawl. Ground truth (``judge``) only labels events, never reaches the policy."""

    def __init__(
        self,
        policy: Policy,
        classifier: RelevanceModel,
        *,
        budget: int,
        max_per_domain: DomainCap | str | int | None = None,
        judge: Callable[[str], bool] | None = None,
        sinks: Iterable[EventSink] = (),
        max_outlinks: int = 1000,
    ):
        if budget <= 0:
            raise ValueError("budget must be positive")
        self.policy = policy
        self.classifier = classifier
        self.budget = budget
        self.cap = max_per_domain if isinstance(max_per_domain, DomainCap) else DomainCap.parse(max_per_domain)
        self.judge = judge
        self.sinks = list(sinks)
        self.max_outlinks = max_outlinks
        self.stats = CrawlStats()
        self.fetched: set[str] = set()
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        self.fetches_per_host: Counter[str] = Counter()
        self.pending_per_host: Counter[str] = Counter()
        self.capped_hosts: set[str] = set()
        self.frontier_size = 0
        self._limit = self.cap.limit(0, budget)
        self._in_flight: set[str] = set()
        self._in_flight_per_host: Counter[str] = Counter()

    # -- setup ---------------------------------------------------------------------------------
    def start(self, context: CrawlContext) -> None:
        """Normalise the seeds, register them as discovered and hand the context to the policy."""
        seeds = []
        for raw in context.seeds:
            url = normalize_url(raw)
            if url is None:
                raise ValueError(f"seed {raw!r} is not an http(s) URL")
            if url not in self.parent:
                self._discover(url, None, domain_of(url))
                seeds.append(url)
        if not seeds:
            raise ValueError("no seeds: a crawl needs at least one seed URL")
        context.seeds = seeds
        started = time.perf_counter()
        self.policy.reset(context)
        self.stats.decision_s += time.perf_counter() - started

    # -- the step, split in two halves so that async drivers can interleave fetches ------------
    @property
    def done(self) -> bool:
        return self.stats.steps + len(self._in_flight) >= self.budget

    def next_url(self) -> str | None:
        """Ask the policy for the next URL worth fetching; None when the budget or frontier is spent."""
        if self.done:
            return None
        started = time.perf_counter()
        try:
            while True:
                url = self.policy.select()
                if url is None:
                    return None
                host = domain_of(url)
                # Fetches in flight count against the cap: every fetch counts once recorded, whatever its
                # status, so a host whose cap they would reach is as good as capped (concurrent crawls).
                if (url in self.fetched or url in self._in_flight or host in self.capped_hosts
                        or self.fetches_per_host[host] + self._in_flight_per_host[host] >= self._limit):
                    self.stats.skipped_selections += 1
                    continue
                if url not in self.parent:
                    self._discover(url, None, host)
                self._in_flight.add(url)
                self._in_flight_per_host[host] += 1
                self._selection_s = time.perf_counter() - started
                return url
        finally:
            self.stats.decision_s += time.perf_counter() - started

    def record(self, url: str, page: Page, fetch_s: float = 0.0) -> StepEvent:
        """Account for the fetch of ``url``: closure, caps, reward, observation, event."""
        host = domain_of(url)
        if url in self._in_flight:
            self._in_flight.discard(url)
            self._in_flight_per_host[host] -= 1
        step = self.stats.steps
        self.stats.steps += 1
        self.stats.fetch_s += fetch_s
        self._mark_fetched(url, host)

        final_url = url
        if page.final_url and page.final_url != url:
            final_url = normalize_url(page.final_url) or url
        duplicate = False
        if final_url != url:
            duplicate = final_url in self.fetched
            if not duplicate:
                self._mark_fetched(final_url, domain_of(final_url))

        relevance = 0.0
        if page.ok and not duplicate and (page.text or page.title):
            relevance = float(self.classifier.predict_proba([f"{page.title}\n{page.text}"])[0])
        reward = 1.0 if relevance >= REWARD_THRESHOLD else 0.0
        links = [] if duplicate else self._new_links(url, page)

        started = time.perf_counter()
        self.policy.observe(Observation(step, url, page, relevance, reward, links))
        observe_s = time.perf_counter() - started
        self.stats.decision_s += observe_s

        relevant = None
        if self.judge is not None:
            relevant = bool(page.ok and not duplicate and self.judge(final_url))
            if relevant:
                self.stats.relevant += 1
                self.stats.relevant_hosts.add(domain_of(final_url))
        self._update_cap(step + 1)
        event = StepEvent(
            step=step,
            url=url,
            host=host,
            status=page.status,
            reward=reward,
            relevance=relevance,
            relevant=relevant,
            frontier_size=self.frontier_size,
            decision_ms=(getattr(self, "_selection_s", 0.0) + observe_s) * 1000.0,
            parent=self.parent.get(url),
            depth=self.depth.get(url, 0),
        )
        self._selection_s = 0.0
        for sink in self.sinks:
            sink(event)
        return event

    def run(self, web: Web) -> CrawlStats:
        """Synchronous loop for in-process environments such as offline webs."""
        while not self.done:
            url = self.next_url()
            if url is None:
                break
            started = time.perf_counter()
            page = web.fetch(url)
            self.record(url, page, time.perf_counter() - started)
        return self.stats

    # -- bookkeeping ---------------------------------------------------------------------------
    def _discover(self, url: str, parent: str | None, host: str) -> None:
        self.parent[url] = parent
        self.depth[url] = 0 if parent is None else self.depth.get(parent, 0) + 1
        if host not in self.capped_hosts:
            self.pending_per_host[host] += 1
            self.frontier_size += 1

    def _mark_fetched(self, url: str, host: str) -> None:
        if url in self.fetched:
            return
        self.fetched.add(url)
        if url in self.parent and host not in self.capped_hosts and self.pending_per_host[host] > 0:
            self.pending_per_host[host] -= 1
            self.frontier_size -= 1
        self.fetches_per_host[host] += 1
        if self.fetches_per_host[host] >= self._limit:
            self._cap_host(host)

    def _cap_host(self, host: str) -> None:
        if host in self.capped_hosts:
            return
        self.capped_hosts.add(host)
        self.frontier_size -= self.pending_per_host.pop(host, 0)
        self.policy.on_host_capped(host)

    def _update_cap(self, next_step: int) -> None:
        limit = self.cap.limit(next_step, self.budget)
        if limit < self._limit:
            self._limit = limit
            for host, count in list(self.fetches_per_host.items()):
                if count >= limit:
                    self._cap_host(host)

    def _new_links(self, parent: str, page: Page) -> list[Outlink]:
        links: list[Outlink] = []
        seen: set[str] = set()
        for link in page.outlinks:
            url = normalize_url(link.url)
            if url is None or url in seen or url in self.fetched or url == parent:
                continue
            seen.add(url)
            host = domain_of(url)
            if host in self.capped_hosts:
                continue
            new = url not in self.parent
            if new:
                self._discover(url, parent, host)
            links.append(Outlink(url, link.anchor, host, new))
            if len(links) >= self.max_outlinks:
                break
        return links
