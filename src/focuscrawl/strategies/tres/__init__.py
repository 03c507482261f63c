"""TRES (Kontogiannis et al.): a DDQN focused crawler whose frontier is a Tree-Frontier.

features.py      state-action features x(s, a) and their bucketing
tree_frontier.py the online regression tree holding experience and frontier samples
ddqn.py          online/target Q-networks, replay, the double-Q target, the exploration schedule
agent.py         the policy (Algorithm 4) and its frontier selectors
"""

from __future__ import annotations

from focuscrawl.strategies.registry import (
                      Preset,
                      StrategySpec,
                      register,
                      register_preset,
)
from focuscrawl.strategies.tres.agent import TresPolicy

# The reward classifier: the paper's KwBiLSTM (focuscrawl.topic.models, which imports torch only when used).
REWARD_MODEL = "kwbilstm"

register(StrategySpec("tres", "TRES: DDQN + Tree-Frontier sampling (Kontogiannis et al.)", TresPolicy,
                      reward_model=REWARD_MODEL))
register_preset(Preset("tree-random", "tres", "Tree-Frontier, random leaf then random URL (TRES baseline)",
                       {"selector": "tree-random"}))
register_preset(Preset("tres-async", "tres", "TRES with Han's asynchronous method (outlinks scored once, "
                       "priority queue)", {"selector": "async"}))
register_preset(Preset("tres-sync", "tres", "TRES with the synchronous method (whole frontier scored each step; "
                       "slow)", {"selector": "sync"}))
register_preset(Preset("tres-nh", "tres", "TRES without the web-domain (hub) features", {"hub_features": False}))
register_preset(Preset("tres-svm", "tres", "TRES with an SVM reward classifier (ablation)", reward_model="svm"))
# The hyper-parameters of the authors' code where they differ from our defaults (which follow the journal's
# text: gamma 0.3, 2.7.3): a far-sighted agent, a slow target network and a 400-step random warm-up.
register_preset(Preset("tres-paper", "tres", "TRES with the authors' code's hyper-parameters: gamma 0.99, target "
                       "sync 500, 400 random warm-up steps", {"gamma": 0.99, "target_sync": 500, "explore_steps": 400}))

__all__ = ["TresPolicy"]
