"""The policy contract: the only thing a new crawling strategy implements, and what the engine promises it.

The engine (``focuscrawl.engine``) owns the closure, URL normalisation, per-domain caps, the budget and
the event stream. A policy owns its frontier and decides the order. Per step the engine calls::

    selection = policy.select()       # the next URL, its score, a reason, a memo (None: frontier empty)
    ... the engine fetches selection.url and scores the page with the agent's classifier ...
    policy.observe(observation)       # observation.selection is that same Selection object

What the engine promises:

- ``reset(context)`` comes first, with the seeds already normalised and de-duplicated.
- Every selection the engine fetches comes back in exactly one ``Observation`` whose ``selection`` is
  the object ``select`` returned, memo included. In a concurrent crawl up to N ``select`` calls come
  before their observations, which arrive in completion order; ``memo`` is how a policy gets back what
  it knew at selection time without a table of its own.
- A selection the engine does not fetch (its URL was fetched meanwhile through another path, or its
  host reached the per-domain cap) is dropped silently and ``select`` is asked again, so policies may
  delete lazily. ``on_host_capped`` says a host is closed, for policies that prefer to clean up.
- ``observation.links`` are the page's outlinks, normalised, de-duplicated, without fetched URLs or
  capped hosts; ``Outlink.new`` is False for a URL discovered before from another page.
- No ground truth ever reaches a policy: the context holds the user's topic inputs and the agent's own
  classifier; ``relevance`` and ``reward`` come from that classifier.

What a policy promises (a resumed crawl depends on it; ``tests/test_policy_contract.py`` checks every
registered strategy):

- **Deterministic**: the same context (seed included) and the same observations give the same
  selections. Every random generator derives from ``context.seed`` (``context.rng(purpose)``, or
  ``numpy.random.default_rng([context.seed, k])``); nothing depends on hash order or the clock.
- **Picklable**: the engine's checkpoints pickle the policy with the engine state (the context's topic
  and classifier are stored by reference, not copied; see ``CrawlEngine.snapshot``), and a restored
  policy continues exactly as the original would. A policy holding something unpicklable defines
  ``__getstate__``/``__setstate__``.
- **Honest timing**: work over the whole frontier happens inside ``select`` or ``observe``, so that it
  counts in the step's decision time.

Distributed crawls (``focuscrawl crawl --workers N``) give each shard its own policy over the hosts it owns.
Links found by another shard reach it as a ``foreign`` observation of the parent page as the other shard
fetched it, with only the links this shard owns (memo None, as for a URL the policy did not select): a plain
``Policy`` gets it through ``observe``. What only distributed crawls need lives in the optional mixin
``ShardAware``: ``adopt`` for a strategy that must not learn from a page it did not fetch (TRES), and
``parameters`` / ``combine_parameters`` / ``load_parameters`` / ``combine_every`` for one whose learning the
shards pool or average (adaptive, TRES). A single-process crawl never uses any of it, but for ``adopt``:
``focuscrawl.scrapy`` hands a policy the links of a page Scrapy fetched outside it the same way, and a crawl over
HTTP the URLs of a site's sitemap, as links of the first page it fetched there (``focuscrawl.crawl.sitemaps``).

Polite crawls (the HTTP driver with fetches in flight) call ``select_ready(ready)`` instead of ``select``:
``ready(host)`` says whether a fetch from that host could start now, or must wait for the host's politeness
(a delay since its last fetch, a fetch in flight, robots.txt being read). It is a hint: the default is
``select()``, and a policy that takes it (adaptive, bfs) returns its best URL on a ready host if it expects that
URL to be worth the fetch, and its best URL otherwise. A selection on a host that is not ready is still fetched,
after the wait; without the hint, a policy whose best URLs crowd on the few hosts it has just fetched makes the
crawl go at one page per such host per delay, whatever the network allows. Offline webs, benchmarks and
``concurrency=1`` never pass it, so their crawls do not depend on the clock.

Optional: ``diagnostics()`` returns numbers worth showing about the policy's internals (tree leaves,
epsilon, ...), read by ``focuscrawl bench-policy`` and progress displays.

A strategy's options are the keyword arguments of its class (or factory), annotated with their types. The
registry converts and checks what a user sets (``-s options.adaptive.explore=0.2``) against those
annotations before building the policy, so a wrong type or value is one clear error; ``Fraction``,
``PositiveFloat`` and ``Count`` below add the usual ranges.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, TypeAlias

import numpy as np
from pydantic import Field

from focuscrawl.types import Observation, RelevanceModel, Selection, TopicInputs

# Option types with their ranges, read by the registry's check of a strategy's options.
Fraction = Annotated[float, Field(ge=0, le=1)]  # a probability, a rate, a discount
PositiveFloat = Annotated[float, Field(gt=0)]
Count = Annotated[int, Field(ge=1)]

Ready: TypeAlias = Callable[[str], bool]  # whether a fetch from this host could start now (``Policy.select_ready``)

__all__ = ["Count", "CrawlContext", "Fraction", "Observation", "Policy", "PositiveFloat", "Ready", "Selection",
           "ShardAware", "adopt"]


@dataclass
class CrawlContext:
    """What a policy is given at the start of a crawl. No ground truth.

    ``budget`` is the crawl's budget when it started (a resumed crawl may run longer; a policy planning
    with the budget, such as a decaying exploration rate, keeps the first one so that a replay matches).
    """

    topic: TopicInputs
    classifier: RelevanceModel
    seeds: list[str]
    budget: int
    seed: int = 0

    def rng(self, salt: str = "") -> random.Random:
        """A random generator derived from the crawl's seed, independent per named use."""
        return random.Random(f"{self.seed}:{salt}")


class Policy(ABC):
    """Base class of crawling strategies: implement ``reset``, ``select`` and ``observe``."""

    @abstractmethod
    def reset(self, context: CrawlContext) -> None:
        """Start a new crawl: forget everything, put ``context.seeds`` in the frontier."""

    @abstractmethod
    def select(self) -> Selection | None:
        """Remove the next URL to fetch from the frontier and return it as a Selection; None when empty."""

    @abstractmethod
    def observe(self, observation: Observation) -> None:
        """Learn from the fetch of one of this policy's selections and add its outlinks to the frontier."""

    def select_ready(self, ready: Ready) -> Selection | None:
        """Like ``select``, preferring a URL whose host ``ready(host)`` accepts (a hint of polite crawls; None only
        when the frontier is empty). Optional: the default ignores the hint.

        A resume replays a selection telling the policy that only the selected URL's host is ready
        (``focuscrawl.crawl.resume``): from the same state, that must give the same URL. It does when the choice is
        the best URL on a ready host, or else what ``select`` would give, and the hint changes nothing else."""
        return self.select()

    def on_host_capped(self, host: str) -> None:
        """The engine will not fetch from ``host`` again (per-domain cap). Optional eager clean-up."""

    def diagnostics(self) -> dict[str, float]:
        """Numbers about the policy's internals worth reporting (frontier tree leaves, epsilon, ...)."""
        return {}


class ShardAware:
    """Optional mixin of a ``Policy`` for distributed crawls: how it takes another shard's links, and the learned
    arrays the shards may combine. A policy without it gets foreign observations through ``observe`` and shares
    nothing; the distributed crawler checks ``isinstance(policy, ShardAware)``."""

    def adopt(self, observation: Observation) -> None:
        """Add the links another shard found (``observation.foreign``) to the frontier. Default: ``observe``."""
        self.observe(observation)  # type: ignore[attr-defined]

    # Pages between two combinations of the shards' parameters when the settings do not say (0: never). Chosen
    # by measurement (benchmarks/distributed_quality.py): adaptive's pooling helps at N=4, tres's averaging hurts.
    combine_every: int = 0

    def parameters(self) -> dict[str, np.ndarray] | None:
        """Learned parameters a distributed crawl may share across shards (None: nothing to share)."""
        return None

    @classmethod
    def combine_parameters(cls, shared: list[tuple[int, dict[str, np.ndarray]]]) -> dict[str, np.ndarray]:
        """One set of parameters from several shards' ``parameters()``, each with the pages its shard fetched.
        Default: their average, weighted by pages; a policy whose parameters add up overrides it."""
        total = sum(weight for weight, _ in shared)
        return {name: sum(weight * np.asarray(params[name], dtype=np.float64) for weight, params in shared) / total
                for name in shared[0][1]}

    def load_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        """Replace the learned parameters by ``parameters`` (``combine_parameters`` of the shards')."""


def adopt(policy: Policy, observation: Observation) -> None:
    """Give ``policy`` another shard's links: ``ShardAware.adopt`` where the policy has it, else ``observe``."""
    if isinstance(policy, ShardAware):
        policy.adopt(observation)
    else:
        policy.observe(observation)
