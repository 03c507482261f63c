"""One way to build a crawl: settings, a topic and seeds in; a started engine with its policy out.

Everything that crawls (``focuscrawl bench``, ``focuscrawl crawl``, ``bench-policy``, the tests) builds its
crawls here, so a strategy name, its options and its reward model mean the same thing everywhere::

    classifiers = Classifiers(topic, seed=0)              # each relevance model trained once per topic
    crawl = build_crawl(settings, "tres", topic, seeds, classifiers=classifiers, judge=truth)
    crawl.engine.run(web)

A name is resolved once per build, into a ``StrategyPlan``; a real crawl makes the plan first, as its check of the
strategy and options before anything expensive, and builds its engines from it (``build_crawl(settings, plan,
...)``).

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
from focuscrawl.strategies import resolve
from focuscrawl.topic.models import ModelOptions, train_relevance_model
from focuscrawl.topic.relevance import MemoizedRelevance
from focuscrawl.topic.thin import ThinPages
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
        model = self.get(name)
        # a model that learns online: its answers change; a user's judge may read more than the text: no memo
        if not self.memoize or getattr(model, "learns_online", False) or hasattr(model, "judge_page"):
            return self.get(name)
        if name not in self._scorers:
            self._scorers[name] = MemoizedRelevance(self.get(name))
        return self._scorers[name]


class StrategyPlan:
    """A strategy or preset resolved once for one crawl's settings; everything a build needs of it comes from here.

    Making one is a crawl's strategy check, cheap and done before anything expensive: the name is resolved (an
    unknown one is ``UnknownStrategy``), the options ``settings`` give it are merged into the preset's and checked
    against the policy's signature, every ``settings.options`` key must name a strategy, and the policy is built,
    because its constructor checks what a type cannot (``estimator=nonsense``). That policy is the one the first
    ``policy()`` returns, so a crawl built from the plan builds its policy once; a later call (a resume that falls
    back from its checkpoint to the whole log builds a second engine) builds another.

    ``judge`` goes to a strategy that reads ground truth (an oracle); without one such a strategy is refused here.
    """

    def __init__(self, settings: RunSettings, strategy: str, judge: Judge | None = None):
        self.strategy = resolve(strategy)
        name = self.strategy.spec.name
        self.options = self.strategy.checked(**strategy_options(settings, strategy, name))
        self.judge = judge
        self._unused: Policy | None = self._build()
        # what the distributed driver combines the shards' parameters with (a factory may be a function)
        self.policy_class: type[Policy] = type(self._unused)
        for other in settings.options:
            if other not in (strategy, name):
                resolve(other)  # a key that names no strategy is a typo: say so now
        self._reward_model = settings.reward_model or self.strategy.reward_model
        self._user_judge = settings.judge  # a relevance model of the user's (not ground truth, ``self.judge``)

    def reward_model(self, topic: TopicInputs) -> str:
        """The relevance model whose verdict is the crawl's reward: the user's judge (``settings.judge``, whatever
        the topic), else the settings', else the strategy's; for a topic from a few words (no example pages) the
        ``keywords`` model, which learns from the crawl itself."""
        if self._user_judge:
            return self._user_judge
        return self._reward_model if topic.example_texts else "keywords"

    def policy(self) -> Policy:
        """A new policy of the strategy (not yet reset): the one built by the check, then others."""
        policy, self._unused = self._unused, None
        return policy if policy is not None else self._build()

    def _build(self) -> Policy:
        # a copy of the options: a policy may keep a mapping it was given and change it
        return self.strategy.build(self.judge, copy.deepcopy(self.options))


@dataclass
class Crawl:
    """One crawl, assembled and started: the engine (which holds the policy) and the context it was given."""

    engine: CrawlEngine
    context: CrawlContext
    plan: StrategyPlan
    reward_model: str

    @property
    def policy(self) -> Policy:
        return self.engine.policy


def make_strategy_policy(settings: RunSettings, strategy: str, judge: Judge | None = None) -> Policy:
    """The policy of ``strategy`` with its options from ``settings`` (not yet reset)."""
    return StrategyPlan(settings, strategy, judge).policy()


def check_strategies(settings: RunSettings, strategies: Iterable[str]) -> None:
    """Fail now, before hours of crawling, on an unknown name or an option a strategy does not have."""
    for name in strategies:
        StrategyPlan(settings, name, judge=lambda url: False)  # an oracle is checked as a benchmark builds it


def build_crawl(
    settings: RunSettings,
    strategy: str | StrategyPlan,
    topic: TopicInputs,
    seeds: Sequence[str],
    *,
    classifiers: Classifiers | None = None,
    judge: Judge | None = None,
    sinks: Iterable[EventSink] = (),
    context_budget: int | None = None,
    owns: Callable[[str], bool] | None = None,
) -> Crawl:
    """Build and start one crawl of ``strategy`` (a strategy or preset name, or the ``StrategyPlan`` of one made
    from the same settings) from ``seeds`` towards ``topic``.

    ``classifiers`` shares trained models between crawls of the topic (default: trained here, with the
    settings' seed). ``judge`` labels the engine's events for scoring, and goes to an oracle (a plan carries
    its own). ``context_budget`` is the budget the policy is told, when it differs from the engine's: a resumed
    crawl keeps its first run's, so that a policy planning with it replays the same way. ``owns`` makes it one
    shard of a distributed crawl (``CrawlEngine``'s partition of the hosts).
    """
    plan = strategy if isinstance(strategy, StrategyPlan) else StrategyPlan(settings, strategy, judge)
    reward_model = plan.reward_model(topic)
    classifiers = classifiers or Classifiers(topic, settings.seed, page_encoder=settings.page_encoder)
    policy = plan.policy()
    own = classifiers.for_crawl(reward_model)
    scorer = own if own is not classifiers.get(reward_model) else classifiers.scorer(reward_model)
    first_budget = context_budget if context_budget is not None else settings.budget
    engine = CrawlEngine(policy, scorer, budget=settings.budget,
                          max_per_domain=DomainCap.parse(settings.max_per_domain), judge=judge, sinks=sinks,
                          max_outlinks=settings.max_outlinks, scope=settings.scope.rules(), owns=owns,
                          defences=settings.defences.build(settings.seed, first_budget),
                          thin_pages=ThinPages.from_examples(topic.example_texts, topic.example_labels,
                                                             settings.thin_page_ratio))
    context = CrawlContext(topic=topic, classifier=own, seeds=list(seeds), budget=first_budget, seed=settings.seed)
    engine.start(context)
    return Crawl(engine, context, plan, reward_model)
