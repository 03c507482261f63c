"""What the environment offers an agent: ``adaptive``'s best frontier URLs, each with ``adaptive``'s evidence.

A ``ChoicePolicy`` is ``adaptive`` (``focuscrawl.strategies.adaptive``) with the last word given to someone
else. It keeps adaptive's frontier, its evidence per URL and its online model of the pages' relevance (learned
from every page fetched, whoever chose it), and at each selection offers the ``candidates`` frontier URLs the
model rates highest, best first (ties: the earliest discovered), as a matrix of one row per candidate:

    EVIDENCE     the 16 pieces of evidence adaptive weighs (its module docstring): Gouriten et al.'s
                 neighbourhood sums, the parent's and the link context's relevance, topic words, the link
                 model, path, locality, the site's record
    predicted    adaptive's prediction of the URL's relevance (its rank among the candidates)
    candidate    1 for a real candidate, 0 for a row past the end of a frontier smaller than ``candidates``

``decide`` picks a row: the environment's action (``EnvChoice``) or a trained agent (``focuscrawl.gym.agent``).
Everything in a row comes from pages, links and the agent's own classifier, as every policy's input does; no
label reaches it. A row past the end, or a candidate that left the frontier since it was offered (its host was
capped), gives the best candidate instead.
"""

from __future__ import annotations

import numpy as np

from focuscrawl.policy import Count, CrawlContext
from focuscrawl.strategies.adaptive import EVIDENCE, GRAPH, AdaptivePolicy
from focuscrawl.strategies.frontier.graph import FRONTIER
from focuscrawl.types import Selection

FEATURES = (*EVIDENCE, "predicted", "candidate")
# Each feature's range, the observation space's bounds: the neighbourhood sums are log-smoothed sums (no upper
# bound), the prediction any number (float32's largest stands for none), every other piece of evidence is in [0, 1].
_NONE = float(np.finfo(np.float32).max)
LOW = np.array([-_NONE if name == "predicted" else 0.0 for name in FEATURES], dtype=np.float32)
HIGH = np.array([_NONE if name in GRAPH or name == "predicted" else 1.0 for name in FEATURES], dtype=np.float32)


class ChoicePolicy(AdaptivePolicy):
    """adaptive's frontier, evidence and model; the choice among its ``candidates`` best URLs is ``decide``'s."""

    def __init__(self, candidates: Count = 8):
        super().__init__(explore=0.0)  # the chooser explores, if anything does
        self.candidates = candidates

    def reset(self, context: CrawlContext) -> None:
        super().reset(context)
        self.offered: np.ndarray | None = None  # graph ids of the candidates offered and not yet chosen from
        self.rows = np.zeros((self.candidates, len(FEATURES)), dtype=np.float32)

    def decide(self, observation: np.ndarray) -> int:
        """The row of ``observation`` (``offer``'s matrix) whose URL to fetch."""
        raise NotImplementedError

    def offer(self) -> np.ndarray:
        """The next selection's candidates as a (candidates x FEATURES) float32 matrix; the selection's turn of
        adaptive's re-ranking."""
        self._rerank_if_due()
        ids = self._shortlist(self.candidates)
        rows = np.zeros((self.candidates, len(FEATURES)), dtype=np.float32)
        if len(ids):
            rows[:len(ids), :len(EVIDENCE)] = self.evidence.rows(ids)
            rows[:len(ids), len(EVIDENCE)] = self.ranking.value[ids]
            rows[:len(ids), len(EVIDENCE) + 1] = 1.0
        self.offered, self.rows = ids, rows
        return rows

    def _shortlist(self, k: int) -> np.ndarray:
        """The ``k`` frontier ids of highest prediction, best first, ties to the earliest discovered."""
        frontier = self.graph.frontier()
        value = self.ranking.value
        if len(frontier) > k:
            frontier = frontier[np.argpartition(-value[frontier], k - 1)[:k]]
        return frontier[np.lexsort((frontier, -value[frontier]))]

    def select(self) -> Selection | None:
        if self.graph.n_front == 0:
            return None
        # no offer (a trained agent's select; the engine asking again after a dropped choice), or an empty one
        # made before the frontier grew
        if self.offered is None or not len(self.offered):
            self.offer()
        ids, rows = self.offered, self.rows
        self.offered = None
        action = int(self.decide(rows))
        chosen = action if 0 <= action < len(ids) else 0
        i = int(ids[chosen])
        if self.graph.state[i] != FRONTIER:  # left the frontier since it was offered
            chosen, i = 0, int(self._shortlist(1)[0])
        score = float(self.ranking.value[i])
        return self._take(i, score, f"the agent's choice, candidate {chosen + 1} of {len(ids)}: "
                                    f"{self._explain(i, score)}")


class EnvChoice(ChoicePolicy):
    """The environment's policy: ``pending`` is the action the environment's step was given, used once; asked
    again within the step (the engine dropped the choice: its host is backing off, or a defence closed it), it
    takes the best candidate."""

    pending: int | None = None

    def decide(self, observation: np.ndarray) -> int:
        action, self.pending = self.pending, None
        return 0 if action is None else action
