"""The TRES agent (journal Appendix B, Algorithm 4) and its ablations, behind the policy contract.

One crawl step, as the engine drives it::

    select():  Tree-Frontier sampling (Algorithm 2): one representative per leaf, scored in one batch by the
               online Q-network; epsilon-greedy exploration (see ``epsilon_at``) picks a uniformly random
               representative instead. The chosen frontier sample is removed; x(s_t, a_t) and the id of
               the page that extracted it travel in the Selection's memo.
    observe(): the engine fetched it and gives r_{t+1} and the page's outlinks. Then (Algorithm 3 / 4):
               the page's path statistics are recorded; e_new = (x(s_t, a_t), r_{t+1}) goes into the tree
               (split attempt in its leaf only) and into the replay together with the outlinks' features
               (A~_{t+1}); the host's domain features are refreshed (re-routing its frontier samples if their
               buckets changed); new outlinks become frontier samples (one classifier call for all anchors);
               the action executed now is appended to the previous transition's A~; one DDQN update.

Initialisation (Algorithm 4 lines 3-8): every seed is a frontier sample with zero state features (the empty
graph s_-1) and also an experience sample with reward 1, in the tree and in the replay.

Choices where the papers leave room (documented here; the numeric ones are constructor options):
- One frontier sample per URL. A URL rediscovered from another page keeps its sample unless the new parent
  has a higher reward, in which case the sample is replaced (O(1) removal + O(depth) insertion): the paper's
  frontier holds (path, url) pairs, and this keeps the best path without multiplying samples.
- Exploration: ``explore_steps`` fully random steps while the replay fills (the authors' code waits
  REPLAY_START_SIZE steps), then epsilon-greedy with epsilon decaying linearly from ``eps_start`` to
  ``eps_end`` over ``eps_decay_steps``. An exploring step is Algorithm 2 line 4: a uniformly random leaf
  representative (so it is a Tree-Random step, not a uniformly random frontier URL).
- Defaults: gamma 0.3 (the paper's own example of a suitably myopic agent, 2.7.3), Adam lr 1e-3, batch 64,
  one update per step, target sync every 100 steps, replay 20,000, hidden layers 30 and 15 (authors' code),
  tree depth <= 18 and >= 5 experience samples in a leaf to split it, no per-child minimum (authors'
  code). The authors' code also uses gamma 0.99, a target sync every 500 steps and a warm-up of a few
  hundred random steps: the ``tres-paper`` preset.
- Dead ends (non-200 pages) are ordinary experience with reward 0.
- ``anchor_prob`` (default ``anchor_model="reward+tfidf"``): the mean of the reward classifier's probability
  (the arXiv paper's KwBiLSTM) and a TF-IDF + logistic-regression model's, both trained on the topic's
  example texts. The journal leaves the classifier open ("e.g. a BiLSTM"). Measured
  (docs/history/results-protocol-1.md, section 1, "Diagnosis: the anchor feature"): the KwBiLSTM ranks
  anchors well overall (it generalises through word vectors: Biology) but its top ranks are less precise
  than a lexical model's (Physics); the mean beat either alone in AUC on all four benchmark topics and held
  up on two held-out ones.
  ``anchor_model="reward"`` is the paper-literal feature (see ``parse_anchor_model`` for the syntax).
- ``parent_feature="probability"`` (not the default) gives outlinks their parent page's classifier
  probability instead of its binary reward: a departure from the paper's state, kept as an option for
  the Physics experiment in docs/history/results-protocol-1.md.

Variants are composed, not branched on: the frontier selector is a component (``selector`` option, the
classes below ``TresPolicy``), the rest are options. Presets (``focuscrawl.strategies.tres``):
``tree-random`` (``TreeRandom``: a random leaf, then a random sample; no network); ``tres-async``
(``ScoredOnce``: Han et al.'s asynchronous method instead of the tree: each new outlink is scored once when
discovered and pushed in a priority queue; domain features are frozen at discovery); ``tres-sync``
(``ExactArgmax``: the synchronous method, the exact argmax over the whole frontier every step, batched:
the slow reference); ``tres-nh`` (``hub_features=False``); ``tres-svm`` (an SVM as the reward classifier).
"""

from __future__ import annotations

import functools
import heapq
import itertools

import numpy as np
from threadpoolctl import ThreadpoolController

from focuscrawl.policy import Count, CrawlContext, Fraction, Policy, PositiveFloat, ShardAware
from focuscrawl.strategies.tres.ddqn import DDQN, DDQNConfig, epsilon_at
from focuscrawl.strategies.tres.features import (
    FeatureBuilder,
    anchor_classifiers,
    parse_anchor_model,
    url_words,
)
from focuscrawl.strategies.tres.tree_frontier import TreeFrontier
from focuscrawl.types import Observation, Selection
from focuscrawl.urls import site_of

SYNC_CHUNK = 1 << 16

# A choice: the frontier sample id, its Q-value (None when not greedy) and why it was chosen.
Choice = tuple[int, float | None, str]


def one_blas_thread(method):
    """Run ``method`` with the BLAS libraries on one thread, then give them back the threads they had.

    The networks' matrices are tiny: BLAS threads only add synchronisation, and on a busy 2-core machine their
    spin-waits made a training step several times slower. The limit must not outlive the call: BLAS settings
    are process-wide, and a limit left on changed the rest of the process (a logistic regression later fitted
    in the same interpreter got coefficients ~1e-15 apart, enough to change a crawl). ~12 us a call."""
    @functools.wraps(method)
    def limited(self, *args, **kwargs):
        with _blas_libraries().limit(limits=1):
            return method(self, *args, **kwargs)
    return limited


@functools.cache
def _blas_libraries():
    # Created once, at the first call (from reset, after NumPy's BLAS is loaded); a BLAS loaded later, by
    # SciPy, is left alone: TRES's own arithmetic is NumPy's.
    return ThreadpoolController().select(user_api="blas")


class TresPolicy(ShardAware, Policy):
    def __init__(self, *, selector: str = "tree", hub_features: bool = True, lr: PositiveFloat = 1e-3,
                 gamma: Fraction = 0.3, batch_size: Count = 64, target_sync: Count = 100, replay_size: Count = 20_000,
                 train_every: Count = 1, hidden1: Count = 30, hidden2: Count = 15, max_next: Count = 64,
                 explore_steps: int = 30, eps_start: Fraction = 0.1, eps_end: Fraction = 0.01,
                 eps_decay_steps: Count = 300, max_depth: Count = 18, min_samples_split: Count = 5,
                 min_samples_leaf: Count = 1, min_gain: float = 0.0,
                 anchor_model: str = "reward+tfidf", parent_feature: str = "reward"):
        if selector not in SELECTORS:
            raise ValueError(f"selector must be one of {', '.join(SELECTORS)}, got {selector!r}")
        self.selector_name = selector
        self.hub_features = hub_features
        self.anchor_groups = parse_anchor_model(anchor_model)
        if parent_feature not in ("reward", "probability"):
            raise ValueError(f"parent_feature must be 'reward' or 'probability', got {parent_feature!r}")
        self.parent_feature = parent_feature
        self.config = DDQNConfig(lr=lr, gamma=gamma, batch_size=batch_size, target_sync=target_sync,
                                 replay_size=replay_size, train_every=train_every, hidden1=hidden1,
                                 hidden2=hidden2, max_next=max_next)
        self.explore_steps, self.eps_start, self.eps_end = explore_steps, eps_start, eps_end
        self.eps_decay_steps = eps_decay_steps
        self.max_depth, self.min_samples_split, self.min_gain = max_depth, min_samples_split, min_gain
        self.min_samples_leaf = min_samples_leaf

    # -- Algorithm 4, lines 1-9 -----------------------------------------------------------------
    @one_blas_thread
    def reset(self, context: CrawlContext) -> None:
        self.selector = SELECTORS[self.selector_name]()
        self.rng = np.random.default_rng([context.seed, 1])
        self.features = FeatureBuilder(context, hub_features=self.hub_features,
                                       classifiers=anchor_classifiers(context, self.anchor_groups))
        self.frontier = TreeFrontier(self.features.n_features, np.random.default_rng([context.seed, 2]),
                                     max_depth=self.max_depth if self.selector.tree else 0,
                                     min_samples_split=self.min_samples_split,
                                     min_samples_leaf=self.min_samples_leaf, min_gain=self.min_gain)
        self.ddqn = DDQN(self.features.n_features, self.config, context.seed) if self.selector.learns else None
        self.hub_cache: dict[str, tuple[float, float]] = {}
        self.steps = 0
        self.last_transition: int | None = None

        seeds = list(dict.fromkeys(context.seeds))
        hosts = [site_of(u) for u in seeds]
        x = self.features.outlink_features(-1, seeds, [url_words(u) for u in seeds], hosts)
        self._insert(seeds, x, hosts, np.full(len(seeds), -1))
        for row in x:
            if self.selector.experience:
                self.frontier.add_experience(row, 1.0)
            if self.ddqn is not None:
                self.ddqn.replay.add(row, 1.0)

    # -- Algorithm 2 ----------------------------------------------------------------------------
    @one_blas_thread
    def select(self) -> Selection | None:
        if len(self.frontier) == 0:
            return None
        choice = self.selector.choose(self)
        if choice is None:
            return None
        chosen, score, reason = choice
        url, x, parent = self.frontier.pop(chosen)
        # memo: x(s_t, a_t) and the id of the page that extracted the link, for observe
        return Selection(url, score, reason, memo=(x, parent))

    def epsilon(self) -> float:
        return epsilon_at(self.steps, self.explore_steps, self.eps_start, self.eps_end, self.eps_decay_steps)

    def greedy_or_explore(self, candidates: np.ndarray, one: str, many: str) -> Choice | None:
        """Epsilon-greedy over candidate frontier samples: the best by the online Q-network, or a random one.
        ``one`` and ``many`` name what a candidate stands for in the reason ("group of similar links")."""
        if candidates.size == 0:
            return None
        epsilon = self.epsilon()
        if self.rng.random() < epsilon:
            return int(candidates[self.rng.integers(candidates.size)]), None, self.exploring_reason(f"a random {one}")
        q = np.concatenate([self.ddqn.q(self.frontier.X[candidates[i:i + SYNC_CHUNK]])
                            for i in range(0, candidates.size, SYNC_CHUNK)])
        best = int(np.argmax(q))
        reason = f"the learned agent's best estimate among {candidates.size} {many if candidates.size > 1 else one}"
        return int(candidates[best]), float(q[best]), reason

    def exploring_reason(self, what: str) -> str:
        """The reason of an exploring step that picked ``what``, with how often the agent explores now."""
        if self.steps < self.explore_steps:
            return f"exploring: {what}, as every step of the first {self.explore_steps}"
        return f"exploring: {what}, as {self.epsilon():.0%} of steps now"

    # -- Algorithm 3 and Algorithm 4 lines 13-20 ------------------------------------------------
    @one_blas_thread
    def observe(self, observation: Observation) -> None:
        if observation.selection.memo is None:
            return  # not a URL this policy selected (cannot happen with the engine; be safe)
        url = observation.url
        x, parent = observation.selection.memo
        reward = float(observation.reward)
        parent_value = float(observation.relevance) if self.parent_feature == "probability" else None
        page = self.features.add_page(parent, reward, parent_value)
        if self.selector.experience:
            self.frontier.add_experience(x, reward)
        host = site_of(url)
        self.features.add_host_fetch(host, reward)
        if self.hub_features and self.selector.refresh_hosts:
            self._refresh_host(host)

        X = self._add_links(page, observation.links)

        if self.ddqn is not None:
            replay = self.ddqn.replay
            if self.last_transition is not None:
                replay.append_next(self.last_transition, x)  # the action Tree-Frontier returned at t+1
            self.last_transition = replay.add(x, reward, self.ddqn.cap_next(X))
            self.ddqn.step()
        self.steps += 1

    @one_blas_thread
    def adopt(self, observation: Observation) -> None:
        """Links another shard found (distributed crawls): into the frontier, with the parent page's reward as
        their parent feature; no learning (the fetch was not this agent's action). The parent's path (length,
        relevant pages on it) stays with the other shard: the links start a path, as seeds' do."""
        reward = float(observation.reward)
        parent_value = float(observation.relevance) if self.parent_feature == "probability" else None
        self._add_links(self.features.add_page(-1, reward, parent_value), observation.links)

    def _add_links(self, page: int, links) -> np.ndarray:
        """Outlinks of fetched page ``page`` into the frontier (a better path replaces a sample); their features."""
        urls = [link.url for link in links]
        hosts = [link.host for link in links]
        X = self.features.outlink_features(page, urls, [link.anchor for link in links], hosts)
        fresh = []
        for k, link_url in enumerate(urls):
            existing = self.frontier.get(link_url)
            if existing is None:
                fresh.append(k)
            elif X[k, 0] > self.frontier.X[existing, 0]:
                self.frontier.remove(link_url)  # a better path to the same URL: replace its sample
                fresh.append(k)
        if fresh:
            self._insert([urls[k] for k in fresh], X[fresh], [hosts[k] for k in fresh],
                         np.full(len(fresh), page))
        return X

    def _insert(self, urls: list[str], X: np.ndarray, hosts: list[str], parents: np.ndarray) -> None:
        self.frontier.add(urls, X, hosts, parents)
        self.selector.inserted(self, urls, X)

    def _refresh_host(self, host: str) -> None:
        values = self.features.hub_values(host)
        if self.hub_cache.get(host) != values:
            self.hub_cache[host] = values
            self.frontier.update_host(host, self.features.hub_columns, values)

    def on_host_capped(self, host: str) -> None:
        self.frontier.remove_host(host)

    # -- learning across shards (distributed crawls with -s average_every=K: off by default) ----------
    def parameters(self) -> dict[str, np.ndarray] | None:
        """The online Q-network's weights (one flat vector); each shard keeps its own target network, Adam
        moments and replay buffer. None for selectors that learn nothing."""
        return None if self.ddqn is None else {"online": self.ddqn.online.flat.copy()}

    def load_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        if self.ddqn is not None:
            self.ddqn.online.flat[:] = np.asarray(parameters["online"], dtype=self.ddqn.online.flat.dtype)

    def diagnostics(self) -> dict[str, float]:
        return {"leaves": self.frontier.n_leaves, "splits": self.frontier.splits,
                "experience": self.frontier.n_experience, "epsilon": self.epsilon(),
                "updates": self.ddqn.updates if self.ddqn else 0}


# -- frontier selectors: how the next URL is chosen among the frontier samples ------------------------
class TreeSampling:
    """Algorithm 2 (the paper): one representative per Tree-Frontier leaf, the best by Q, epsilon-greedy."""

    tree = True            # the Tree-Frontier grows (otherwise one flat leaf: an indexed frontier)
    learns = True          # a DDQN is trained
    experience = True      # fetched samples are experience samples of the tree
    refresh_hosts = True   # a host's frontier samples get its new domain features as it is fetched

    def choose(self, agent: TresPolicy) -> Choice | None:
        # a leaf's links look alike to the tree: its representative stands for a group of similar links
        return agent.greedy_or_explore(agent.frontier.representatives(), "group of similar links",
                                       "groups of similar links")

    def inserted(self, agent: TresPolicy, urls: list[str], X: np.ndarray) -> None:
        """New frontier samples (the tree has routed them already)."""


class TreeRandom(TreeSampling):
    """Tree-Random (the paper's baseline): a uniformly random non-empty leaf, then a random sample in it."""

    learns = False

    def choose(self, agent: TresPolicy) -> Choice | None:
        chosen = agent.frontier.random_sample()
        return None if chosen is None else (chosen, None, "a random group of similar links, then a random link in it")


class ExactArgmax(TreeSampling):
    """The synchronous method: every frontier sample scored by Q at every step, the exact (slow) argmax."""

    tree = False

    def choose(self, agent: TresPolicy) -> Choice | None:
        return agent.greedy_or_explore(agent.frontier.all_samples(), "frontier link", "frontier links")


class ScoredOnce(TreeSampling):
    """Han et al.'s asynchronous method: each outlink scored once when discovered, a priority queue after.

    Domain features are frozen at discovery (a re-score would be the synchronous method), so neither host
    refreshes nor tree experience are kept.
    """

    tree = False
    experience = False
    refresh_hosts = False

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, int, str]] = []
        self.counter = itertools.count()

    def choose(self, agent: TresPolicy) -> Choice | None:
        if agent.rng.random() < agent.epsilon():
            chosen = agent.frontier.random_sample()
            return None if chosen is None else (chosen, None, agent.exploring_reason("a random link"))
        while self.heap:
            negative, _, i, url = heapq.heappop(self.heap)
            if agent.frontier.url_of[i] == url:  # lazy deletion: stale entries are skipped here
                return i, -negative, "the learned agent's best estimate when the link was found"
        chosen = agent.frontier.random_sample()
        return None if chosen is None else (chosen, None, "a random link: none is left with an estimate")

    def inserted(self, agent: TresPolicy, urls: list[str], X: np.ndarray) -> None:
        if urls:
            ids = agent.frontier.id_of_url
            for url, value in zip(urls, agent.ddqn.q(X).tolist()):
                heapq.heappush(self.heap, (-value, next(self.counter), ids[url], url))


SELECTORS: dict[str, type[TreeSampling]] = {"tree": TreeSampling, "tree-random": TreeRandom, "sync": ExactArgmax,
                                            "async": ScoredOnce}
