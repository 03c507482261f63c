"""Crawling strategies behind one interface, and the registry that names them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from focuscrawl.strategies.base import CrawlContext, Policy


@dataclass(frozen=True)
class StrategySpec:
    name: str
    description: str
    factory: Callable[..., Policy]
    needs_ground_truth: bool = False
    reward_model: str = "tfidf"  # name in focuscrawl.topic.models: the classifier whose output is the reward


STRATEGIES: dict[str, StrategySpec] = {}


def register(spec: StrategySpec) -> None:
    if spec.name in STRATEGIES:
        raise ValueError(f"strategy {spec.name!r} registered twice")
    STRATEGIES[spec.name] = spec


# Each module registers its strategies when imported: add a strategy family by adding its module here.
_STRATEGY_MODULES = [
    "focuscrawl.strategies.baselines",
    "focuscrawl.strategies.best_first",
    "focuscrawl.strategies.han",
    "focuscrawl.strategies.kaleel",
    "focuscrawl.strategies.gouriten",
    "focuscrawl.strategies.tres",
]
for _module in _STRATEGY_MODULES:
    importlib.import_module(_module)


def make_policy(name: str, judge: Callable[[str], bool] | None = None, **options) -> Policy:
    """Build a strategy by name. Only strategies that declare ``needs_ground_truth`` receive ``judge``."""
    spec = STRATEGIES.get(name)
    if spec is None:
        raise KeyError(f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}")
    if spec.needs_ground_truth:
        if judge is None:
            raise ValueError(f"strategy {name!r} needs ground truth and can only run on a labelled web")
        return spec.factory(judge, **options)
    return spec.factory(**options)


__all__ = ["STRATEGIES", "CrawlContext", "Policy", "StrategySpec", "make_policy", "register"]
