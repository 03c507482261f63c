"""Algorithm 1 of Gouriten et al. as a ``Policy``: scoreFrontier, getBatchSize, getNextNodes.

select() runs lines 5-8 when the previous batch is spent: refresh the estimator (scoreFrontier), then
take b nodes (getNextNodes: greedy or altered greedy). observe() is crawlNode (line 11): the fetched
node's beta, its out-edges' alpha, and the incremental update of the graph and of the rankings.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

import numpy as np

from focuscrawl.policy import CrawlContext, Policy
from focuscrawl.strategies.frontier.graph import CrawlGraph
from focuscrawl.strategies.frontier.ranking import Ranking
from focuscrawl.strategies.gouriten.bandits import (
    Bandit,
    EpsilonFirst,
    EpsilonGreedy,
    VariableReset,
)
from focuscrawl.strategies.gouriten.estimators import (
    ESTIMATORS,
    Estimator,
    LinearRegression,
    Oracle,
    make_estimator,
)
from focuscrawl.strategies.gouriten.scoring import ClassifierScores, KeywordTfidfScores
from focuscrawl.types import Observation, Selection
from focuscrawl.urls import site_of

BANDITS = ("mab-eps", "mab-eps-first", "mab-var")
BANDIT_ARMS = ("fl-deg", "fl-n", "fl-e", "fl-ne", "lr-fl")  # "first-level neighborhood, including the lr"


class GouritenPolicy(Policy):
    """One estimator (or a bandit over the first-level ones) driving a greedy / altered-greedy crawl.

    Options: ``estimator`` (a name of Sec. 7), ``batch`` b (re-estimate every b fetches), ``q`` and ``zeta``
    (altered greedy; q = 1 is greedy), ``scores`` ("classifier" or "tfidf") and ``window`` (alpha's context
    in characters), ``epsilon`` and ``reset`` (bandits), ``nr`` (dict for NavigationalRank: eta, every,
    iterations, tol), ``lr`` (dict for LinearRegression: ridge, refresh_every), ``keep`` (heap size after a
    rebuild).
    """

    def __init__(self, estimator: str = "fl-ne", *, batch: int = 1, q: float = 1.0, zeta: float = 0.0,
                 scores: str = "classifier", window: int = 100, epsilon: float | None = None,
                 reset: int = 200, nr: dict | None = None, lr: dict | None = None, keep: int = 512,
                 judge: Callable[[str], bool] | None = None):
        if batch < 1 or not 0.0 <= q <= 1.0 or not 0.0 <= zeta <= 1.0:
            raise ValueError("need batch >= 1 and q, zeta in [0, 1]")
        if judge is None and estimator not in ESTIMATORS + BANDITS:
            raise ValueError(f"unknown estimator {estimator!r}; known: {', '.join(ESTIMATORS + BANDITS)}")
        if scores not in ("classifier", "tfidf"):
            raise ValueError(f"scores must be 'classifier' or 'tfidf', not {scores!r}")
        self.estimator_name, self.batch, self.q, self.zeta = estimator, batch, q, zeta
        self.scores_kind, self.window, self.epsilon, self.reset_base = scores, window, epsilon, reset
        self.nr_options, self.lr_options, self.keep, self.judge = nr or {}, lr or {}, keep, judge

    # -- setup ---------------------------------------------------------------------------------
    def _estimators(self) -> list[Estimator]:
        if self.judge is not None:
            return [Oracle(self.judge)]
        if self.estimator_name in BANDITS:
            return [make_estimator(n, **(self.lr_options if n == "lr-fl" else {})) for n in BANDIT_ARMS]
        options = {"nr": self.nr_options, "lr-fl": self.lr_options, "lr-sl": self.lr_options}
        return [make_estimator(self.estimator_name, **options.get(self.estimator_name, {}))]

    def _bandit(self, budget: int, rng: random.Random) -> Bandit | None:
        arms = len(BANDIT_ARMS)
        if self.estimator_name == "mab-eps":
            return EpsilonGreedy(arms, rng, self.epsilon if self.epsilon is not None else 0.1)
        if self.estimator_name == "mab-eps-first":
            return EpsilonFirst(arms, rng, self.epsilon if self.epsilon is not None else 0.1, budget)
        if self.estimator_name == "mab-var":
            return VariableReset(arms, rng, self.epsilon if self.epsilon is not None else 0.2, self.reset_base)
        return None

    def reset(self, context: CrawlContext) -> None:
        self.estimators = self._estimators()
        self.graph = CrawlGraph(second_level=any(e.needs_second_level for e in self.estimators),
                                edges=any(e.needs_edges for e in self.estimators))
        for estimator in self.estimators:
            estimator.bind(self.graph)
        self.rankings = [Ranking(self.graph, e.score, self.keep) for e in self.estimators]
        self.needs_alpha = any(e.needs_alpha for e in self.estimators)
        self.scorer = (KeywordTfidfScores(context.topic, self.window) if self.scores_kind == "tfidf"
                       else ClassifierScores(context.classifier, self.window))
        self.rng = context.rng(f"gouriten:{self.estimator_name}")
        self.bandit = self._bandit(context.budget, context.rng("gouriten:bandit"))
        self.learners = [e for e in self.estimators if isinstance(e, LinearRegression)]
        # (node, the arm whose ranking chose it, whether altered greedy's random branch did)
        self.batch_nodes: deque[tuple[int, int, bool]] = deque()
        self.left = 0  # fetches left before the next estimation
        self.estimations = 0
        ids, _ = self.graph.intern(context.seeds, [site_of(u) for u in context.seeds])
        self.graph.depth[ids] = 0  # l(v) is the distance to V0
        self._discovered(ids, ids)

    def _discovered(self, new: np.ndarray, changed: np.ndarray) -> None:
        for estimator in self.estimators:
            estimator.on_discover(new)
        for ranking in self.rankings:
            ranking.update(changed)

    # -- Algorithm 1, lines 5-8 ----------------------------------------------------------------
    def select(self) -> Selection | None:
        # memo: the bandit arm whose estimator chose the node (its reward goes to that arm), None if random
        if self.left <= 0:
            self._estimate()
        self.left -= 1
        if self.batch_nodes:
            i, arm, altered = self.batch_nodes.popleft()
            value = float(self.rankings[arm].value[i])
            return Selection(self.graph.urls[i], value, self._reason(i, arm, value, altered), memo=arm)
        # No estimated node left in this batch: pick at random, as the paper's batch experiments do.
        frontier = self.graph.frontier()
        if len(frontier) == 0:
            return None
        i = int(frontier[self.rng.randrange(len(frontier))])
        self.graph.take(i)
        return Selection(self.graph.urls[i], None, f"a random link: the batch of {self.batch} ran out of links "
                                                   "scored together")

    def _reason(self, i: int, arm: int, value: float, altered: bool) -> str:
        """In words: what scored node ``i`` (the estimator's own explanation), and how it was picked among the
        frontier (greedy, altered greedy's random branch, one of a batch, the bandit's choice of estimator)."""
        reason = self.estimators[arm].explain(i, value)
        if altered:
            reason = f"a random link among those scoring at least {self.zeta:.0%} of the best: {reason}"
        if self.batch > 1:
            reason += f" (one of {self.batch} scored together)"
        if self.bandit is None:
            return reason
        # The bandit's record (sums and pulls; mab-var resets them each period) says what the choice rested on.
        means, pulls = self.bandit.means(), int(self.bandit.pulls[arm])
        ways = f"{self.bandit.arms} ways to rank links"
        if not pulls:
            return f"trying one of {ways}, with no record yet: {reason}"
        record = f"mean relevance {means[arm]:.2f} over {pulls} page{'s' if pulls > 1 else ''} it chose"
        if means[arm] == means.max():
            return f"of {ways}, the one whose pages were most relevant ({record}): {reason}"
        return f"trying one of {ways} ({record}): {reason}"

    def _estimate(self) -> None:
        self.estimations += 1
        self.left = self.batch
        for estimator, ranking in zip(self.estimators, self.rankings):
            if estimator.refresh():
                ranking.rebuild()
        arm = self.bandit.pull() if self.bandit is not None else 0
        ranking = self.rankings[arm]
        for _ in range(self.batch):
            altered = self.q < 1.0 and self.rng.random() >= self.q
            i = self._altered(ranking) if altered else ranking.best()
            if i is None:
                break
            self.graph.take(i)
            self.batch_nodes.append((i, arm, altered))

    def _altered(self, ranking: Ranking) -> int | None:
        """Strategy 2's random branch: uniform among nodes scoring >= zeta x the best score. O(frontier)."""
        frontier = self.graph.frontier()
        if len(frontier) == 0:
            return None
        scores = ranking.value[frontier]
        # Scores are non-negative in the model; a regression may go below 0, which must not widen the set.
        candidates = frontier[scores >= self.zeta * max(float(scores.max()), 0.0)]
        return int(candidates[self.rng.randrange(len(candidates))])

    # -- Algorithm 1, line 11: crawlNode ---------------------------------------------------------
    def observe(self, observation: Observation) -> None:
        graph = self.graph
        w = graph.ids.get(observation.url)
        if w is None:  # not ours (cannot happen with the engine); record it as a seed would be
            w = int(graph.intern([observation.url], [site_of(observation.url)])[0][0])
        beta_w = self.scorer.node(observation)
        arm = observation.selection.memo
        if self.bandit is not None and arm is not None:
            self.bandit.reward(arm, beta_w)
        for learner in self.learners:
            learner.learn(w, beta_w)

        links = observation.links
        kids, new = graph.intern([link.url for link in links], [link.host for link in links])
        anchors = [link.anchor for link in links]
        crawled_kids = np.zeros(0, np.int64)
        if graph.edges:  # edges to already crawled pages are not in observation.links; find them in the page
            crawled_kids, crawled_anchors = self.graph.crawled_targets(observation.url, observation.page.outlinks, kids)
            anchors += crawled_anchors
        alpha = (self.scorer.edges(observation.page, anchors) if self.needs_alpha and anchors
                 else np.zeros(len(anchors)))
        for estimator in self.estimators:  # before the crawl: OPIC's new nodes hold their initial cash
            estimator.on_discover(kids[new])
        changed = [graph.crawl(w, beta_w, kids, alpha[: len(kids)], crawled_kids, alpha[len(kids):])]
        for estimator in self.estimators:
            extra = estimator.on_crawl(w, kids, alpha[: len(kids)])
            if extra is not None and len(extra):
                changed.append(extra)
        touched = graph.frontier_among(changed)
        for ranking in self.rankings:
            ranking.update(touched)

    def on_host_capped(self, host: str) -> None:
        self.graph.drop_host(host)
