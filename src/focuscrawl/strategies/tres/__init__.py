"""TRES (Kontogiannis et al.): a DDQN focused crawler whose frontier is a Tree-Frontier.

features.py      state-action features x(s, a) and their bucketing
tree_frontier.py the online regression tree holding experience and frontier samples
ddqn.py          online/target Q-networks, replay, the double-Q target, the exploration schedule
agent.py         the Policy (Algorithm 4) and the registered variants
"""

from __future__ import annotations

import importlib

from focuscrawl.strategies import StrategySpec, register
from focuscrawl.strategies.base import Policy

# The reward classifier: the paper's KwBiLSTM (focuscrawl.topic.models).
REWARD_MODEL = "kwbilstm"


def _lazy(class_name: str):
    """A factory that imports the agent (and so torch, ~3 s) only when a TRES policy is built, so that
    listing strategies or running a non-TRES crawl does not pay for it."""

    def factory(**options) -> Policy:
        agent = importlib.import_module("focuscrawl.strategies.tres.agent")
        return getattr(agent, class_name)(**options)

    factory.__name__ = class_name
    return factory


register(StrategySpec("tres", "TRES: DDQN + Tree-Frontier sampling (Kontogiannis et al.)", _lazy("TresPolicy"),
                      reward_model=REWARD_MODEL))
register(StrategySpec("tree-random", "Tree-Frontier, random leaf then random URL (TRES baseline)",
                      _lazy("TreeRandomPolicy"), reward_model=REWARD_MODEL))
register(StrategySpec("tres-async", "TRES with Han's asynchronous method (outlinks scored once, priority queue)",
                      _lazy("TresAsyncPolicy"), reward_model=REWARD_MODEL))
register(StrategySpec("tres-sync", "TRES with the synchronous method (whole frontier scored each step; slow)",
                      _lazy("TresSyncPolicy"), reward_model=REWARD_MODEL))
register(StrategySpec("tres-nh", "TRES without the web-domain (hub) features", _lazy("TresNoHubPolicy"),
                      reward_model=REWARD_MODEL))
register(StrategySpec("tres-svm", "TRES with an SVM reward classifier (ablation)", _lazy("TresSvmPolicy"),
                      reward_model="svm"))
