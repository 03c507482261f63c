"""The policy interface: the only thing a new crawling strategy has to implement.

The engine owns the closure, URL normalisation, per-domain caps and the budget. A policy owns its
frontier and decides the order. The engine calls, per step::

    url = policy.select()            # pop the next URL to fetch (None: frontier exhausted)
    ... engine fetches url, scores the page with the agent's classifier ...
    policy.observe(observation)      # page, reward, and its outlinks not yet fetched

In a concurrent crawl several ``select`` calls come before their ``observe`` calls, which arrive in
completion order: keep what ``select`` knew about a URL keyed by URL until its observation arrives.

``select`` may return a URL that became useless (fetched meanwhile through another path, or its host
capped); the engine then simply asks again, so policies need no eager deletion. Strategies that do a
whole-frontier pass do it inside ``select``, so that its cost shows in the step's decision time.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from focuscrawl.topic.inputs import TopicInputs
from focuscrawl.topic.relevance import RelevanceModel
from focuscrawl.types import Observation


@dataclass
class CrawlContext:
    """What a policy is given at the start of a crawl. No ground truth: see ``GroundTruth`` for that."""

    topic: TopicInputs
    classifier: RelevanceModel
    seeds: list[str]
    budget: int
    seed: int = 0
    options: dict = field(default_factory=dict)

    def rng(self, salt: str = "") -> random.Random:
        """A random generator derived from the crawl's seed, independent per named use."""
        return random.Random(f"{self.seed}:{salt}")


class Policy(ABC):
    """Base class of crawling strategies. Subclasses set ``name`` and implement the three methods."""

    name: ClassVar[str] = ""
    # The strategy's score of the URL ``select`` just returned (its priority or Q-value), or None. The real
    # crawl writes it to pages.jsonl as ``score``, so users can see why a page was fetched when it was.
    selected_score: float | None = None

    @abstractmethod
    def reset(self, context: CrawlContext) -> None:
        """Start a new crawl: forget everything, put ``context.seeds`` in the frontier."""

    @abstractmethod
    def select(self) -> str | None:
        """Remove and return the URL to fetch next, or None when the frontier is empty."""

    @abstractmethod
    def observe(self, observation: Observation) -> None:
        """Learn from the fetch of a URL this policy selected, and add its outlinks to the frontier."""

    def on_host_capped(self, host: str) -> None:
        """The engine will not fetch from ``host`` again (per-domain cap). Optional eager cleanup."""

    def state_dict(self) -> dict:
        """Checkpointable state for crash-safe resume; strategies that learn override this."""
        return {}
