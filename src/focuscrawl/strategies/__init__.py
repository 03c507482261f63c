"""Crawling strategies behind the policy contract (``focuscrawl.policy``), and the names that build them.

One module (or package) per family, each registering its strategies and presets when imported:

    baselines    random, bfs, oracle (ground truth)
    best_first   best-first: ACHE-like page classifier priorities + online link classifier
    han          Han et al. 2018: SARSA with linear function approximation
    kaleel       Kaleel & Sheen 2023: decaying epsilon-greedy SARSA
    gouriten/    Gouriten et al. 2014: frontier estimators, bandits, altered greedy, batches
    tres/        TRES (Kontogiannis et al.): DDQN over a Tree-Frontier

A family imports no other family: what two of them use lives in ``frontier/`` (the crawled graph, the ranking
heap, a link's context; gouriten and adaptive share them), beside ``registry`` (tests/test_layers.py).

To add a family, add its module here; to try a policy without touching the package, name it as
``module:Class`` (see ``registry``).
"""

from __future__ import annotations

import focuscrawl.strategies.adaptive
import focuscrawl.strategies.baselines
import focuscrawl.strategies.best_first
import focuscrawl.strategies.gouriten
import focuscrawl.strategies.han
import focuscrawl.strategies.kaleel
import focuscrawl.strategies.tres  # noqa: F401
from focuscrawl.strategies.registry import (
                                            PRESETS,
                                            STRATEGIES,
                                            Preset,
                                            Resolved,
                                            StrategySpec,
                                            UnknownStrategy,
                                            make_policy,
                                            names,
                                            register,
                                            register_preset,
                                            resolve,
)

__all__ = ["PRESETS", "STRATEGIES", "Preset", "Resolved", "StrategySpec", "UnknownStrategy", "make_policy",
           "names", "register", "register_preset", "resolve"]
