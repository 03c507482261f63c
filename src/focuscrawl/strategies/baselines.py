"""Baselines every comparison needs: random, breadth-first, and the ground-truth oracles (upper bounds)."""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from itertools import islice

from focuscrawl.policy import CrawlContext, Policy, Ready
from focuscrawl.strategies.registry import StrategySpec, register
from focuscrawl.types import Observation, Selection
from focuscrawl.urls import site_of


class RandomPolicy(Policy):
    """Uniformly random frontier URL: the floor any learning crawler must beat."""

    def reset(self, context: CrawlContext) -> None:
        self.rng = context.rng("random")
        self.frontier: list[str] = list(context.seeds)

    def select(self) -> Selection | None:
        if not self.frontier:
            return None
        # Swap-remove keeps popping a random element O(1).
        index = self.rng.randrange(len(self.frontier))
        self.frontier[index], self.frontier[-1] = self.frontier[-1], self.frontier[index]
        return Selection(self.frontier.pop(), reason="a random frontier link")

    def observe(self, observation: Observation) -> None:
        self.frontier.extend(link.url for link in observation.links if link.new)


READY_WINDOW = 2048  # queued URLs a polite breadth-first step looks through for one on a ready host


class BreadthFirstPolicy(Policy):
    """First discovered, first fetched; in a polite crawl, the first on a host a fetch could start on now."""

    def reset(self, context: CrawlContext) -> None:
        self.queue: deque[tuple[str, str]] = deque((url, site_of(url)) for url in context.seeds)

    def select(self) -> Selection | None:
        return Selection(self.queue.popleft()[0], reason="first in, first out") if self.queue else None

    def select_ready(self, ready: Ready) -> Selection | None:
        """The first of the first ``READY_WINDOW`` queued URLs whose host is ready, else the first: a host within its
        politeness delay does not hold up the others (as Scrapy's per-host download slots)."""
        verdict: dict[str, bool] = {}
        for k, (url, host) in enumerate(islice(self.queue, READY_WINDOW)):
            ok = verdict.get(host)
            if ok is None:
                ok = verdict[host] = ready(host)
            if ok:
                del self.queue[k]
                return Selection(url, reason="first in, first out among hosts that are ready")
        return self.select()

    def observe(self, observation: Observation) -> None:
        self.queue.extend((link.url, link.host) for link in observation.links if link.new)


class GreedyOraclePolicy(Policy):
    """Greedy on ground truth: every relevant frontier URL before any irrelevant one, BFS order within.

    Gouriten et al.'s oracle greedy, kept for their tables (``g-oracle`` crawls as it does). Not an upper
    bound where relevant pages are scattered: once no relevant URL is in the frontier it fetches irrelevant
    ones in discovery order, wherever they lead; ``oracle`` looks ahead instead.
    """

    def __init__(self, judge: Callable[[str], bool]):
        self.judge = judge

    def reset(self, context: CrawlContext) -> None:
        self.relevant: deque[str] = deque()
        self.other: deque[str] = deque()
        for url in context.seeds:
            self._add(url)

    def _add(self, url: str) -> None:
        (self.relevant if self.judge(url) else self.other).append(url)

    def select(self) -> Selection | None:
        if self.relevant:
            return Selection(self.relevant.popleft(), 1.0, "relevant (ground truth)")
        if not self.other:
            return None
        return Selection(self.other.popleft(), 0.0, "no relevant link in the frontier (ground truth)")

    def observe(self, observation: Observation) -> None:
        for link in observation.links:
            if link.new:
                self._add(link.url)


class OraclePolicy(Policy):
    """Ground truth with lookahead, the reference that strategies are normalised by.

    Every relevant frontier URL first (discovery order); when none is left, the frontier URL fewest links
    away (in the whole web's link graph) from a relevant page not fetched yet, ties in discovery order, so
    that it walks towards the nearest relevant pages instead of wandering (``greedy-oracle``). It needs a
    judge that knows the graph (the benchmark's ``GroundTruth.steps_to_relevant``); with one that does not,
    it crawls as the greedy oracle. Not provably optimal (finding the best crawl is a hard planning problem),
    an upper bound in practice: the benchmark reports any strategy that scores above it.
    """

    def __init__(self, judge: Callable[[str], bool]):
        self.judge = judge

    def reset(self, context: CrawlContext) -> None:
        self.relevant: deque[str] = deque()
        self.others: dict[str, int] = {}  # irrelevant frontier URL -> discovery order
        self.heap: list[tuple[float, int, str]] = []  # (links to a relevant page, order, url)
        self.found: set[str] = set()  # relevant pages fetched: no longer targets
        self.steps: dict[str, int] = {}
        self.steps_for = -1  # len(found) when ``steps`` was computed
        for url in context.seeds:
            self._add(url)

    def _add(self, url: str) -> None:
        if self.judge(url):
            self.relevant.append(url)
        elif url not in self.others:
            self.others[url] = len(self.others)
            if self.steps_for >= 0:
                heapq.heappush(self.heap, (self.steps.get(url, math.inf), self.others[url], url))

    def select(self) -> Selection | None:
        if self.relevant:
            return Selection(self.relevant.popleft(), 1.0, "relevant (ground truth)")
        if self.steps_for != len(self.found):  # the targets changed: distances from the graph again
            steps_to_relevant = getattr(self.judge, "steps_to_relevant", None)
            self.steps = steps_to_relevant(self.found) if steps_to_relevant is not None else {}
            self.steps_for = len(self.found)
            self.heap = [(self.steps.get(url, math.inf), order, url) for url, order in self.others.items()]
            heapq.heapify(self.heap)
        while self.heap:
            steps, order, url = heapq.heappop(self.heap)
            if self.others.get(url) == order:
                del self.others[url]
                if math.isinf(steps):
                    return Selection(url, 0.0, "no relevant page reachable: discovery order")
                away = f"{steps} link{'s' if steps > 1 else ''}"
                return Selection(url, 1.0 / (1.0 + steps), f"a relevant page {away} away (ground truth)")
        return None

    def observe(self, observation: Observation) -> None:
        for url in {observation.url, observation.page.final_url}:
            if url and self.judge(url):
                self.found.add(url)
        for link in observation.links:
            if link.new:
                self._add(link.url)


register(StrategySpec("random", "uniformly random frontier URL", RandomPolicy))
register(StrategySpec("bfs", "breadth-first (FIFO frontier)", BreadthFirstPolicy))
register(StrategySpec("oracle", "ground truth with lookahead: relevant frontier URLs first, then the one nearest "
                                "a relevant page (the reference)", OraclePolicy, needs_ground_truth=True))
register(StrategySpec("greedy-oracle", "greedy on ground truth: relevant frontier URLs first, then discovery "
                                       "order (Gouriten et al.'s oracle greedy)", GreedyOraclePolicy,
                      needs_ground_truth=True))
