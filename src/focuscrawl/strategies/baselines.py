"""Baselines every comparison needs: random, breadth-first, and the ground-truth oracle (upper bound)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from focuscrawl.policy import CrawlContext, Policy
from focuscrawl.strategies.registry import StrategySpec, register
from focuscrawl.types import Observation, Selection


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
        return Selection(self.frontier.pop(), reason="random")

    def observe(self, observation: Observation) -> None:
        self.frontier.extend(link.url for link in observation.links if link.new)


class BreadthFirstPolicy(Policy):
    """First discovered, first fetched."""

    def reset(self, context: CrawlContext) -> None:
        self.queue: deque[str] = deque(context.seeds)

    def select(self) -> Selection | None:
        return Selection(self.queue.popleft(), reason="first in, first out") if self.queue else None

    def observe(self, observation: Observation) -> None:
        self.queue.extend(link.url for link in observation.links if link.new)


class OraclePolicy(Policy):
    """Greedy on ground truth: every relevant frontier URL before any irrelevant one, BFS order within.

    This is the upper bound strategies are normalised by (Gouriten et al.'s oracle greedy). It is the only
    policy that receives the judge, and the benchmark builds it explicitly with one.
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
        return Selection(self.other.popleft(), 0.0, "no relevant URL in the frontier") if self.other else None

    def observe(self, observation: Observation) -> None:
        for link in observation.links:
            if link.new:
                self._add(link.url)


register(StrategySpec("random", "uniformly random frontier URL", RandomPolicy))
register(StrategySpec("bfs", "breadth-first (FIFO frontier)", BreadthFirstPolicy))
register(StrategySpec("oracle", "greedy on ground truth: relevant frontier URLs first (upper bound)", OraclePolicy,
                      needs_ground_truth=True))
