"""One way to build a crawl: settings, a topic and seeds in; a started engine with its policy out.

Everything that crawls (``focuscrawl bench``, ``focuscrawl crawl``, ``bench-policy``, the tests) builds its
crawls here, so a strategy name, its options and its reward model mean the same thing everywhere::

    classifiers = Classifiers(topic, seed=0)              # each relevance model trained once per topic
    crawl = build_crawl(settings, "tres", topic, seeds, classifiers=classifiers, judge=truth)
    crawl.engine.run(web)

Ground truth (``judge``) goes to the engine, to label events for scoring, and to strategies that declare
they read it (oracles); never to any other policy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from focuscrawl.config import RunSettings, strategy_options
from focuscrawl.engine import CrawlEngine, DomainCap, EventSink
from focuscrawl.policy import CrawlContext, Policy
from focuscrawl.strategies import Resolved, resolve
from focuscrawl.topic.models import ModelOptions, train_relevance_model
from focuscrawl.topic.relevance import MemoizedRelevance
from focuscrawl.types import RelevanceModel, TopicInputs

Judge = Callable[[str], bool]


class Classifiers:
    """The relevance models of one topic by name, each trained once on the topic's examples and shared.

    ``memoize`` wraps the engine's scorer in a per-text memo (a benchmark scores the same pages again and
    again; the model is a pure function of the text). The policy always gets the raw model, so that its
    own classifier calls are timed honestly in the decision time.
    """

    def __init__(self, topic: TopicInputs, seed: int = 0, *, trained: Mapping[str, RelevanceModel] | None = None,
                 memoize: bool = False, page_encoder: bool = False):
        self.topic, self.seed, self.memoize, self.page_encoder = topic, seed, memoize, page_encoder
        self._models: dict[str, RelevanceModel] = dict(trained or {})
        self._scorers: dict[str, RelevanceModel] = {}

    def get(self, name: str) -> RelevanceModel:
        if name not in self._models:
            self._models[name] = train_relevance_model(name, self.topic, self.seed, ModelOptions(self.page_encoder))
        return self._models[name]

    def for_crawl(self, name: str) -> RelevanceModel:
        """The model one crawl uses: the shared one, or a copy of its own for a model that learns online."""
        model = self.get(name)
        return copy.deepcopy(model) if getattr(model, "learns_online", False) else model

    def scorer(self, name: str) -> RelevanceModel:
        if not self.memoize or getattr(self.get(name), "learns_online", False):  # its answers change: no memo
            return self.get(name)
        if name not in self._scorers:
            self._scorers[name] = MemoizedRelevance(self.get(name))
        return self._scorers[name]


@dataclass
class Crawl:
    """One crawl, assembled and started: the engine (which holds the policy) and the context it was given."""

    engine: CrawlEngine
    context: CrawlContext
    strategy: Resolved
    reward_model: str

    @property
    def policy(self) -> Policy:
        return self.engine.policy


def make_strategy_policy(settings: RunSettings, strategy: str, judge: Judge | None = None) -> Policy:
    """The policy of ``strategy`` with its options from ``settings`` (not yet reset)."""
    resolved = resolve(strategy)
    return resolved.make(judge, **strategy_options(settings, strategy, resolved.spec.name))


def reward_model_for(settings: RunSettings, strategy: str, topic: TopicInputs) -> str:
    """The relevance model whose verdict is the crawl's reward: the settings', else the strategy's; for a topic
    from a few words (no example pages) the ``keywords`` model, which learns from the crawl itself."""
    if not topic.example_texts:
        return "keywords"
    return settings.reward_model or resolve(strategy).reward_model


def check_strategies(settings: RunSettings, strategies: Iterable[str]) -> None:
    """Fail now, before hours of crawling, on an unknown name or an option a strategy does not have."""
    for name in strategies:
        make_strategy_policy(settings, name, judge=lambda url: False)
    for name in settings.options:
        resolve(name)


def build_crawl(
    settings: RunSettings,
    strategy: str,
    topic: TopicInputs,
    seeds: Sequence[str],
    *,
    classifiers: Classifiers | None = None,
    judge: Judge | None = None,
    sinks: Iterable[EventSink] = (),
    context_budget: int | None = None,
    owns: Callable[[str], bool] | None = None,
) -> Crawl:
    """Build and start one crawl of ``strategy`` (a strategy or preset name) from ``seeds`` towards ``topic``.

    ``classifiers`` shares trained models between crawls of the topic (default: trained here, with the
    settings' seed). ``context_budget`` is the budget the policy is told, when it differs from the engine's:
    a resumed crawl keeps its first run's, so that a policy planning with it replays the same way. ``owns``
    makes it one shard of a distributed crawl (``CrawlEngine``'s partition of the hosts).
    """
    resolved = resolve(strategy)
    reward_model = reward_model_for(settings, strategy, topic)
    classifiers = classifiers or Classifiers(topic, settings.seed, page_encoder=settings.page_encoder)
    policy = make_strategy_policy(settings, strategy, judge)
    own = classifiers.for_crawl(reward_model)
    scorer = own if own is not classifiers.get(reward_model) else classifiers.scorer(reward_model)
    engine = CrawlEngine(policy, scorer, budget=settings.budget,
                          max_per_domain=DomainCap.parse(settings.max_per_domain), judge=judge, sinks=sinks,
                          max_outlinks=settings.max_outlinks, scope=settings.scope.rules(), owns=owns)
    context = CrawlContext(topic=topic, classifier=own, seeds=list(seeds),
                           budget=context_budget if context_budget is not None else settings.budget,
                           seed=settings.seed)
    engine.start(context)
    return Crawl(engine, context, resolved, reward_model)
