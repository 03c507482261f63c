"""Crawling strategies behind one interface, and the registry that names them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from focuscrawl.strategies.base import CrawlContext, Policy
from focuscrawl.strategies.baselines import BreadthFirstPolicy, OraclePolicy, RandomPolicy
from focuscrawl.strategies.best_first import BestFirstPolicy


@dataclass(frozen=True)
class StrategySpec:
    name: str
    description: str
    factory: Callable[..., Policy]
    needs_ground_truth: bool = False


STRATEGIES: dict[str, StrategySpec] = {}


def register(spec: StrategySpec) -> None:
    if spec.name in STRATEGIES:
        raise ValueError(f"strategy {spec.name!r} registered twice")
    STRATEGIES[spec.name] = spec


register(StrategySpec("random", "uniformly random frontier URL", RandomPolicy))
register(StrategySpec("bfs", "breadth-first (FIFO frontier)", BreadthFirstPolicy))
register(StrategySpec("oracle", "greedy on ground truth: relevant frontier URLs first (upper bound)", OraclePolicy, True))
register(StrategySpec("best-first", "ACHE-like: page classifier priorities + online link classifier", BestFirstPolicy))


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
