"""Multi-armed bandits over estimators (Gouriten et al., Sec. 7.4, Estimators 6-8).

An arm is an estimator; pulling it crawls that estimator's top frontier node; the reward is the crawled
node's score beta. All three keep per-arm reward sums and pull counts; an arm never pulled averages 0.
Ties between best arms are broken at random (seeded), not by arm order, so that no estimator is favoured
by its position in the list.

Reading of the paper where it is ambiguous:

- mab_eps: the text says "with a probability eps the slot machine with the highest average reward is
  used", which with eps = 0.1 would explore 90% of the time and contradicts both the usual epsilon-greedy
  and the paper's own epsilon-first (eps = fraction of *exploration*). We explore with probability eps.
- mab_eps-first: N is the crawl budget; the first floor(eps N) pulls are uniformly random.
- mab_var: epsilon-first with variable reset. Periods follow each other; a period of length r explores
  for floor(eps r) pulls, then exploits; at its end all averages are reset to 0. p counts how many
  consecutive periods ended their exploration with the same best arm (0 when it changed), and the next
  period lasts r = h(p) = reset (p + 1) (the paper's mab_var-0.2-200: eps = 0.2, h(p) = 200 (p + 1)). The
  last period is cut by the budget. During exploitation we use the current best average, which may
  change as the exploited arm's average moves.
"""

from __future__ import annotations

import random

import numpy as np


class Bandit:
    def __init__(self, arms: int, rng: random.Random):
        self.arms = arms
        self.rng = rng
        self.sums = np.zeros(arms)
        self.pulls = np.zeros(arms)
        self.history: list[int] = []  # arm of each pull, for inspection and tests

    def means(self) -> np.ndarray:
        return np.divide(self.sums, self.pulls, out=np.zeros(self.arms), where=self.pulls > 0)

    def best(self) -> int:
        means = self.means()
        ties = np.flatnonzero(means == means.max())
        return int(ties[self.rng.randrange(len(ties))])

    def random_arm(self) -> int:
        return self.rng.randrange(self.arms)

    def choose(self) -> int:
        raise NotImplementedError

    def pull(self) -> int:
        arm = self.choose()
        self.history.append(arm)
        return arm

    def reward(self, arm: int, value: float) -> None:
        self.sums[arm] += value
        self.pulls[arm] += 1


class EpsilonGreedy(Bandit):
    def __init__(self, arms: int, rng: random.Random, epsilon: float = 0.1):
        super().__init__(arms, rng)
        self.epsilon = epsilon

    def choose(self) -> int:
        return self.random_arm() if self.rng.random() < self.epsilon else self.best()


class EpsilonFirst(Bandit):
    def __init__(self, arms: int, rng: random.Random, epsilon: float = 0.1, horizon: int = 1000):
        super().__init__(arms, rng)
        self.explore = int(epsilon * horizon)

    def choose(self) -> int:
        return self.random_arm() if len(self.history) < self.explore else self.best()


class VariableReset(Bandit):
    def __init__(self, arms: int, rng: random.Random, epsilon: float = 0.2, reset: int = 200):
        super().__init__(arms, rng)
        self.epsilon, self.reset_base = epsilon, reset
        self.streak = 0  # p
        self.previous_best: int | None = None
        self.period = reset  # r = h(0)
        self.step = 0  # pulls in the current period
        self.periods: list[tuple[int, int]] = []  # (length, best arm after exploration), for inspection

    def choose(self) -> int:
        if self.step == self.period:
            self._next_period()
        explore = int(self.epsilon * self.period)
        if self.step == explore:  # exploration just ended: is it the same winner as last period?
            winner = self.best()
            self.streak = self.streak + 1 if winner == self.previous_best else 0
            self.previous_best = winner
            self.periods.append((self.period, winner))
        self.step += 1
        return self.random_arm() if self.step <= explore else self.best()

    def _next_period(self) -> None:
        self.sums[:] = 0.0
        self.pulls[:] = 0.0
        self.period = self.reset_base * (self.streak + 1)
        self.step = 0
