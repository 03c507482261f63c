"""Strategy names: a few strategies, the presets built on them, and the one function that resolves a name.

A *strategy* is a policy class (or factory) with a description, the relevance model it uses as its
reward, and whether it reads ground truth (only oracles do). A *preset* is a named set of options of a
strategy (``han-sync`` is ``han`` with ``sync: true``), for the variants the papers name and the tables
of docs/results.md use. Any option can also be set directly (``-s options.han.sync=true``); a preset is
only a name for a documented combination.

Beyond registered names, ``module:attribute`` names a ``Policy`` subclass (or factory) in any importable
module, so a new strategy can live in a file of one's own: ``focuscrawl bench --strategy mine:MyPolicy``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.policy import Policy

Judge = Callable[[str], bool]


@dataclass(frozen=True)
class StrategySpec:
    name: str
    description: str
    factory: Callable[..., Policy]
    reward_model: str = "tfidf"  # a name of focuscrawl.topic.models: the classifier whose output is the reward
    needs_ground_truth: bool = False  # built with the judge: an oracle, a reference point, never a crawler


@dataclass(frozen=True)
class Preset:
    name: str
    strategy: str
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)
    reward_model: str | None = None  # None: the strategy's


@dataclass(frozen=True)
class Resolved:
    """A name resolved: the strategy, the preset's options (if any) and the reward model it uses."""

    name: str
    spec: StrategySpec
    options: Mapping[str, Any]
    reward_model: str

    def make(self, judge: Judge | None = None, **options: Any) -> Policy:
        """The policy, with the preset's options overridden by ``options``."""
        merged = {**self.options, **options}
        if self.spec.needs_ground_truth:
            if judge is None:
                raise ValueError(f"strategy {self.name!r} reads ground truth and only runs on a labelled web")
            return self.spec.factory(judge, **merged)
        try:
            return self.spec.factory(**merged)
        except TypeError as exc:  # an option the strategy does not have
            raise ValueError(f"strategy {self.name!r} does not accept option(s) {', '.join(sorted(options))}: "
                             f"{exc}") from None


class UnknownStrategy(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


STRATEGIES: dict[str, StrategySpec] = {}
PRESETS: dict[str, Preset] = {}


def register(spec: StrategySpec) -> None:
    if spec.name in STRATEGIES or spec.name in PRESETS:
        raise ValueError(f"strategy name {spec.name!r} registered twice")
    STRATEGIES[spec.name] = spec


def register_preset(preset: Preset) -> None:
    if preset.name in STRATEGIES or preset.name in PRESETS:
        raise ValueError(f"strategy name {preset.name!r} registered twice")
    if preset.strategy not in STRATEGIES:
        raise ValueError(f"preset {preset.name!r} names unknown strategy {preset.strategy!r}")
    PRESETS[preset.name] = preset


def names() -> list[str]:
    """Every registered name: strategies, then presets."""
    return [*STRATEGIES, *PRESETS]


def resolve(name: str) -> Resolved:
    """A strategy or preset name, or ``module:attribute``; raises ``UnknownStrategy`` naming the known ones."""
    if name in STRATEGIES:
        spec = STRATEGIES[name]
        return Resolved(name, spec, {}, spec.reward_model)
    if name in PRESETS:
        preset = PRESETS[name]
        spec = STRATEGIES[preset.strategy]
        return Resolved(name, spec, dict(preset.options), preset.reward_model or spec.reward_model)
    if ":" in name:
        module, _, attribute = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as exc:
            raise UnknownStrategy(f"cannot load strategy {name!r}: {exc}") from None
        spec = StrategySpec(name, getattr(factory, "__doc__", "") or "", factory,
                            reward_model=getattr(factory, "reward_model", "tfidf"))
        return Resolved(name, spec, {}, spec.reward_model)
    raise UnknownStrategy(f"unknown strategy {name!r}; known: {', '.join(names())} (or module:Class)")


def make_policy(name: str, judge: Judge | None = None, **options: Any) -> Policy:
    """Build a strategy or preset by name. Only strategies that read ground truth receive ``judge``."""
    return resolve(name).make(judge, **options)
