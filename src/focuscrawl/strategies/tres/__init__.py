"""TRES (Kontogiannis et al.): a DDQN focused crawler whose frontier is a Tree-Frontier.

features.py      state-action features x(s, a) and their bucketing
tree_frontier.py the online regression tree holding experience and frontier samples
ddqn.py          online/target Q-networks, replay, the double-Q target, the exploration schedule
agent.py         the Policy (Algorithm 4) and the registered variants
"""

from __future__ import annotations

from focuscrawl.strategies import StrategySpec, register
from focuscrawl.strategies.tres.agent import (
    TreeRandomPolicy,
    TresAsyncPolicy,
    TresNoHubPolicy,
    TresPolicy,
    TresSvmPolicy,
    TresSyncPolicy,
)

# The reward classifier: the paper's KwBiLSTM (focuscrawl.topic.models, which imports torch only when used).
REWARD_MODEL = "kwbilstm"

register(StrategySpec("tres", "TRES: DDQN + Tree-Frontier sampling (Kontogiannis et al.)", TresPolicy,
                      reward_model=REWARD_MODEL))
register(StrategySpec("tree-random", "Tree-Frontier, random leaf then random URL (TRES baseline)",
                      TreeRandomPolicy, reward_model=REWARD_MODEL))
register(StrategySpec("tres-async", "TRES with Han's asynchronous method (outlinks scored once, priority queue)",
                      TresAsyncPolicy, reward_model=REWARD_MODEL))
register(StrategySpec("tres-sync", "TRES with the synchronous method (whole frontier scored each step; slow)",
                      TresSyncPolicy, reward_model=REWARD_MODEL))
register(StrategySpec("tres-nh", "TRES without the web-domain (hub) features", TresNoHubPolicy,
                      reward_model=REWARD_MODEL))
register(StrategySpec("tres-svm", "TRES with an SVM reward classifier (ablation)", TresSvmPolicy, reward_model="svm"))

__all__ = ["TreeRandomPolicy", "TresAsyncPolicy", "TresNoHubPolicy", "TresPolicy", "TresSvmPolicy", "TresSyncPolicy"]
