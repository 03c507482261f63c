"""``gym-agent``: a Stable-Baselines3 model trained in ``focuscrawl/Crawl-v0``, as a strategy ``focuscrawl bench``
and ``focuscrawl crawl`` can run beside the built-in ones::

    focuscrawl bench --strategy gym-agent,adaptive,best-first -s options.gym-agent.model=runs/dqn.zip

The name comes from this package's entry point (``focuscrawl.strategies.registry``). At each selection the model
picks among the candidates the environment would offer, computed the same way (``focuscrawl.gym.choice``), so
its decision time counts in the crawl's as every strategy's does. Options: ``model``, the path of the saved model
(``model.save(PATH)``), and ``algorithm``, the Stable-Baselines3 class that saved it (DQN by default). A missing
path, a file that is not such a model, or a model trained on other observations is one line of error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from focuscrawl.extras import require
from focuscrawl.gym.choice import FEATURES, ChoicePolicy

_LOADED: dict[tuple[str, float, str], Any] = {}  # (path, mtime, algorithm) -> the model: loaded once per process


def load_agent(path: str, algorithm: str = "DQN") -> Any:
    """The Stable-Baselines3 ``algorithm`` model saved at ``path`` (a ValueError in one line when it cannot be)."""
    if not path:
        raise ValueError("strategy 'gym-agent' needs a trained model: -s options.gym-agent.model=PATH (a "
                         "Stable-Baselines3 .zip, as benchmarks/gym_dqn.py saves)")
    sb3 = require("stable_baselines3", "gym", "strategy 'gym-agent'")
    file = Path(path)
    if not file.is_file() and Path(f"{path}.zip").is_file():
        file = Path(f"{path}.zip")  # as Stable-Baselines3's save and load name it
    if not file.is_file():
        raise ValueError(f"strategy 'gym-agent': no model at {path}")
    cls = getattr(sb3, algorithm, None)
    if not isinstance(cls, type) or not hasattr(cls, "load"):
        raise ValueError(f"strategy 'gym-agent': {algorithm!r} is not a Stable-Baselines3 algorithm (DQN, PPO, "
                         "A2C, ...)")
    key = (str(file.resolve()), file.stat().st_mtime, algorithm)
    if key not in _LOADED:
        try:
            agent = cls.load(str(file), device="cpu")
        except Exception as exc:  # a zip of something else, another algorithm's model, a damaged file, ...
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"strategy 'gym-agent': {path} is not a Stable-Baselines3 {algorithm} model "
                             f"({reason})") from None
        shape = getattr(agent.observation_space, "shape", None)
        actions = getattr(agent.action_space, "n", None)
        if shape is None or len(shape) != 2 or shape[1] != len(FEATURES) or actions != shape[0]:
            raise ValueError(f"strategy 'gym-agent': {path} was not trained in focuscrawl/Crawl-v0 (its observations "
                             f"{shape}, actions {agent.action_space}; the environment's are (K, {len(FEATURES)}) "
                             "and Discrete(K))")
        _LOADED[key] = agent
    return _LOADED[key]


class TrainedAgent(ChoicePolicy):
    """A Stable-Baselines3 model trained in focuscrawl/Crawl-v0 picks among adaptive's best frontier URLs
    (options: model=PATH, algorithm=DQN)"""

    def __init__(self, model: str = "", algorithm: str = "DQN"):
        self.model_path, self.algorithm = model, algorithm
        self.agent = load_agent(model, algorithm)
        super().__init__(candidates=int(self.agent.observation_space.shape[0]))

    def decide(self, observation: np.ndarray) -> int:
        action, _ = self.agent.predict(observation, deterministic=True)
        return int(action)

    # Checkpoints name the model by its path rather than pickling it (the policy contract: picklable).
    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "agent"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.agent = load_agent(self.model_path, self.algorithm)
