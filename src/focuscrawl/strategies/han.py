"""Han, Wuillemin & Senellart (ICWE 2018), "Focused Crawling through Reinforcement Learning".

SARSA with linear function approximation over discretised page (state) and link (action) features, the
frontier holding (state, action) pairs scored by their action value (their Algorithm 1). Two options
make their three variants (presets ``han-sync``, ``han-async``, ``han-moderated``):

- ``sync`` (``han-sync``): after every weight update the whole frontier is re-scored (§3.3, lines
  40-43). We do it in ``select`` so that its cost shows in the step's decision time. The frontier holds
  (s, a) *pairs*, each grouping the links with identical discretised features, so a re-score is one
  gather-and-sum over the non-empty pairs (about 800 after 1000 Wikispeedia steps, for some 22,000
  frontier links). Without it (``han-async``) only the pairs that receive the new page's outlinks are
  scored (lines 44-47); every other pair keeps the value it got when it was last touched;
- ``moderated`` (``han-moderated``, asynchronous): the moderated update of their Eq. (4),
  ``w += α [r + γ (q(s',a') - δ) - q(s,a)] ∇q(s,a)`` with ``δ = r + γ q(s',a') - q(s,a)``, which is, as
  the paper notes, the original update with step size α (1 - γ) (tests/test_han.py checks it).

Features (§3.1), each continuous value in [0, 1] coded by two tilings, 5 buckets of width 0.2 and 6
buckets with edges 0.1, 0.3, ..., 0.9 ("two indexes discretized into 5 and 6 buckets"), one binary
feature per bucket, so that a state is an (8 + 2C)-index vector and an action a (6 + 2C)-index one, C the
number of related categories, exactly the paper's dimensions (§4):

state of page p:   relevance to the topic; relevance change rl(p) - max over parents of wrl, with
                   wrl(p) = β rl(p) + (1 - β) max_parents wrl (5 buckets: |Δ| <= δ1, up to +δ2, more, down
                   to -δ2, less); relevance to each category; mean relevance of all parents; mean relevance
                   of the relevant parents; distance from the last relevant page (0 for a relevant page,
                   else 1 + the smallest parent distance, capped at 9);
action of link l:  relevance of its URL words and anchor text(s) to the topic and to each category (the
                   paper's "surrounding text" is not in the page model); mean relevance of all its parents;
                   mean relevance of its relevant parents.

Links keep every parent: a rediscovered link (``Outlink.new`` False) gains the new page as a parent, and,
as in their Algorithm (lines 26-31 and 44-47), moves to the pair of the page that just rediscovered it
(state s', action features recomputed with all parents and anchors so far).

Choices where the paper is silent or does not transfer, all options of ``HanPolicy``:

- relevance values are tf-idf cosines, scaled to [0, 1], from ``focuscrawl.topic.similarity.TopicSimilarity``;
- a page is *relevant* (for the relevant-parents mean, the distance feature and the terminal update of
  lines 32-33) when the agent's classifier says so (``Observation.reward`` > 0). The paper's test (tf-idf
  relevance > 0 or the topic word appears) would call nearly every Wikipedia page relevant;
- reward (§4: 30 relevant, 20 "rather related" by a word2vec similarity above 0.4, -1 otherwise): the
  classifier's probability plays word2vec's part: 30 when >= 0.5, 20 when >= ``related_threshold`` (0.4),
  else -1. No embeddings are downloaded;
- related categories (picked by hand from ODP in the paper) come from the ``related_keywords`` option, a
  list of keyword lists; by default every topic keyword is one category;
- seeds are fetched first (lines 5-13) and cause no update; weights start at zero, so the first choices
  tie and ``argmax`` takes the oldest pair; a link taken from a pair is its oldest member (FIFO);
- a page without parents (a seed) has relevance change 0, parent means 0 and distance 0 if relevant else
  9; a page without unfetched outlinks ends the episode like a relevant page (no q(s', a') to bootstrap);
- the bucket intervals are closed on the left, [0.0, 0.2) -> 0, with 1.0 in the last bucket;
- one crawl is one task: weights are not carried from run to run (the paper keeps them across its 100
  tasks; our benchmark compares strategies on fresh runs).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from focuscrawl.policy import CrawlContext, Fraction, Policy, PositiveFloat
from focuscrawl.strategies.registry import (
    Preset,
    StrategySpec,
    register,
    register_preset,
)
from focuscrawl.topic.similarity import TopicSimilarity
from focuscrawl.topic.text import url_text
from focuscrawl.types import Observation, Outlink, Page, Selection

COARSE_EDGES = np.array([0.2, 0.4, 0.6, 0.8])  # 5 buckets
FINE_EDGES = np.array([0.1, 0.3, 0.5, 0.7, 0.9])  # 6 buckets
TILE_SIZES = [5, 6]
CHANGE_BUCKETS = 5
DISTANCE_CAP = 9


def tiles(values: np.ndarray) -> np.ndarray:
    """Values in [0, 1] of shape (..., m) -> bucket indices of shape (..., 2m): coarse, fine per value."""
    v = np.clip(np.asarray(values, dtype=float), 0.0, 1.0)
    coarse = np.searchsorted(COARSE_EDGES, v, side="right")
    fine = np.searchsorted(FINE_EDGES, v, side="right")
    return np.stack([coarse, fine], axis=-1).reshape(*v.shape[:-1], -1)


def change_bucket(change: float, delta1: float = 0.1, delta2: float = 0.3) -> int:
    """§3.1: 0 within ±δ1, 1 increase up to δ2, 2 larger increase, 3 decrease down to δ2, 4 larger decrease."""
    if abs(change) <= delta1:
        return 0
    if change > 0:
        return 1 if change <= delta2 else 2
    return 3 if change >= -delta2 else 4


class FeatureLayout:
    """Where each bucket of each feature sits in the weight vector (one binary feature per bucket)."""

    def __init__(self, n_categories: int):
        self.n_categories = n_categories
        state_sizes = TILE_SIZES + [CHANGE_BUCKETS] + TILE_SIZES * n_categories + TILE_SIZES * 2 + [DISTANCE_CAP + 1]
        action_sizes = TILE_SIZES * (1 + n_categories) + TILE_SIZES * 2
        sizes = np.array(state_sizes + action_sizes)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.state_offsets = offsets[: len(state_sizes)]
        self.action_offsets = offsets[len(state_sizes):]
        self.dim = int(sizes.sum())

    def state(self, relevance: float, change: int, categories: np.ndarray, parents_mean: float,
              relevant_parents_mean: float, distance: int) -> np.ndarray:
        """Global indices of the 8 + 2C active features of a page's state."""
        buckets = np.concatenate([
            tiles([relevance]), [change], tiles(categories).ravel(), tiles([parents_mean, relevant_parents_mean]),
            [min(distance, DISTANCE_CAP)],
        ])
        return (buckets + self.state_offsets).astype(np.int64)

    def actions(self, relevance: np.ndarray, categories: np.ndarray, parents_mean: np.ndarray,
                relevant_parents_mean: np.ndarray) -> np.ndarray:
        """Global indices of the 6 + 2C active features of n links: shape (n, 6 + 2C)."""
        values = np.column_stack([relevance, categories, parents_mean, relevant_parents_mean])
        return (tiles(values) + self.action_offsets).astype(np.int64)


def sarsa_update(w: np.ndarray, x: np.ndarray, reward: float, q_next: float | None, alpha: float, gamma: float,
                 moderated: bool) -> float:
    """One gradient SARSA step on the active features ``x`` of (s, a); returns the TD error δ.

    ``q_next`` None is a terminal transition (lines 32-33: relevant page, or nothing left to follow).
    With binary features ∇q(s, a) is the indicator of ``x``, so only those weights move.
    """
    q = float(w[x].sum())
    if q_next is None:
        delta = reward - q
        w[x] += alpha * delta
        return delta
    delta = reward + gamma * q_next - q
    target = reward + gamma * (q_next - delta) if moderated else reward + gamma * q_next  # Eq. (4) or (3)
    w[x] += alpha * (target - q)
    return delta


@dataclass(slots=True)
class LinkInfo:
    """What a frontier link knows about its parents, aggregated as parents arrive."""

    parents: int = 0
    relevance_sum: float = 0.0
    relevant_parents: int = 0
    relevant_relevance_sum: float = 0.0
    best_smoothed: float = 0.0  # max over parents of wrl
    min_distance: int = DISTANCE_CAP
    anchors: list[str] = field(default_factory=list)
    text_relevance: np.ndarray | None = None  # cached topic + category relevance of URL and anchors


class HanPolicy(Policy):
    def __init__(self, sync: bool = False, moderated: bool = False, epsilon: Fraction = 0.1, gamma: Fraction = 0.9,
                 alpha: PositiveFloat = 0.001, beta: Fraction = 0.4, delta1: float = 0.1, delta2: float = 0.3,
                 related_keywords: list[list[str]] | None = None, reward_relevant: float = 30.0,
                 reward_related: float = 20.0, reward_other: float = -1.0, related_threshold: Fraction = 0.4):
        self.sync, self.moderated = bool(sync), bool(moderated)
        self.epsilon, self.gamma, self.alpha, self.beta = epsilon, gamma, alpha, beta
        self.delta1, self.delta2 = delta1, delta2
        self.related_keywords = related_keywords
        self.rewards = (reward_relevant, reward_related, reward_other)
        self.related_threshold = related_threshold

    # -- setup ---------------------------------------------------------------------------------
    def reset(self, context: CrawlContext) -> None:
        topic = context.topic
        categories = self.related_keywords if self.related_keywords is not None else [[k] for k in topic.keywords]
        self.similarity = TopicSimilarity(topic.example_texts, topic.example_labels, topic.keywords, categories)
        self.layout = FeatureLayout(len(categories))
        self.w = np.zeros(self.layout.dim)
        self.select_rng = context.rng("han-select")
        self.sarsa_rng = context.rng("han-sarsa")
        self.seeds: deque[str] = deque(context.seeds)
        self.links: dict[str, LinkInfo] = {}
        self.slot_of: dict[str, int] = {}
        self.slot_by_key: dict[bytes, int] = {}
        width = 14 + 4 * len(categories)
        self.codes = np.zeros((1024, width), dtype=np.int64)  # active features of each (s, a) pair
        self.q = np.full(1024, -np.inf)  # -inf marks an empty pair
        self.count = np.zeros(1024, dtype=np.int64)
        self.members: list[deque[str]] = []
        self.alive: list[int] = []  # non-empty pairs, for the uniform random choice of line 17
        self.alive_pos: dict[int, int] = {}
        self.updates = 0

    # -- frontier of (s, a) pairs ----------------------------------------------------------------
    def _slot(self, key: np.ndarray) -> int:
        raw = key.tobytes()
        slot = self.slot_by_key.get(raw)
        if slot is None:
            slot = len(self.members)
            if slot == len(self.q):
                self.codes = np.concatenate([self.codes, np.zeros_like(self.codes)])
                self.q = np.concatenate([self.q, np.full(len(self.q), -np.inf)])
                self.count = np.concatenate([self.count, np.zeros_like(self.count)])
            self.codes[slot] = key
            self.members.append(deque())
            self.slot_by_key[raw] = slot
        return slot

    def _add(self, url: str, slot: int) -> None:
        old = self.slot_of.get(url)
        if old == slot:
            return
        if old is not None:
            self._leave(old)
        self.slot_of[url] = slot
        self.members[slot].append(url)
        self.count[slot] += 1
        if self.count[slot] == 1:
            self.alive_pos[slot] = len(self.alive)
            self.alive.append(slot)

    def _leave(self, slot: int) -> None:
        self.count[slot] -= 1
        if self.count[slot] == 0:
            self.q[slot] = -np.inf
            self.members[slot].clear()  # only stale entries were left
            position = self.alive_pos.pop(slot)
            last = self.alive.pop()
            if last != slot:
                self.alive[position] = last
                self.alive_pos[last] = position

    def _score(self, slots: np.ndarray) -> None:
        self.q[slots] = self.w[self.codes[slots]].sum(axis=1)

    def _take(self, url: str) -> LinkInfo | None:
        slot = self.slot_of.pop(url, None)
        if slot is not None:
            self._leave(slot)
        return self.links.pop(url, None)

    # -- the two policy calls --------------------------------------------------------------------
    def select(self) -> Selection | None:
        # memo: the followed pair's active features (None for a seed) and what the link knew of its parents
        if self.seeds:
            url = self.seeds.popleft()
            return Selection(url, None, "a seed", memo=(None, self._take(url)))
        if not self.alive:
            return None
        if self.sync:
            # The synchronous method: every pair of the frontier re-scored with the current weights, every step.
            self._score(np.fromiter(self.alive, dtype=np.int64, count=len(self.alive)))
        # a pair groups the links whose page and link features fall in the same buckets: similar links
        if self.select_rng.random() < self.epsilon:
            slot = self.alive[self.select_rng.randrange(len(self.alive))]
            score, reason = None, f"exploring: a random group of similar links, as {self.epsilon:.0%} of steps"
        else:
            slot = int(np.argmax(self.q[: len(self.members)]))
            score = float(self.q[slot])
            groups = f"{len(self.alive)} group{'s' if len(self.alive) > 1 else ''}"
            reason = f"the learned agent's best estimate among {groups} of similar links"
        members = self.members[slot]
        while True:
            url = members.popleft()
            if self.slot_of.get(url) == slot:
                break
        codes = self.codes[slot].copy()
        return Selection(url, score, reason, memo=(codes, self._take(url)))

    def observe(self, observation: Observation) -> None:
        x_sa, info = observation.selection.memo or (None, None)
        relevant = observation.reward > 0
        relevance, categories = self._page_relevance(observation.page)
        state, smoothed, distance = self._state(info, relevance, categories, relevant)
        self._become_parent(observation.links, relevance, relevant, smoothed, distance)
        urls = [link.url for link in observation.links]
        actions = self._actions(urls) if urls else None
        if x_sa is not None:  # SARSA update of the pair that was followed (none for seeds)
            self._learn(x_sa, self._reward(observation.relevance), state, actions, relevant)
        if actions is not None:
            # Outlinks join the (s', a') pairs; those pairs get their value from the new weights.
            touched = []
            for url, action in zip(urls, actions):
                slot = self._slot(np.concatenate([state, action]))
                self._add(url, slot)
                touched.append(slot)
            self._score(np.unique(touched))

    def _page_relevance(self, page: Page) -> tuple[float, np.ndarray]:
        """The fetched page's similarity to the topic, and to each category."""
        if page.ok and (page.text or page.title):
            sims = self.similarity.pages([f"{page.title}\n{page.text}"])[0]
        else:
            sims = np.zeros(1 + self.layout.n_categories)
        return float(sims[0]), sims[1:]

    def _state(self, info: LinkInfo | None, relevance: float, categories: np.ndarray,
               relevant: bool) -> tuple[np.ndarray, float, int]:
        """State features of the fetched page, from the parents it collected while in the frontier; and its
        smoothed relevance and distance from a relevant page, which its outlinks inherit."""
        if info is not None and info.parents:
            best = info.best_smoothed
            change = relevance - best
            smoothed = self.beta * relevance + (1 - self.beta) * best
            parents_mean = info.relevance_sum / info.parents
            relevant_mean = info.relevant_relevance_sum / info.relevant_parents if info.relevant_parents else 0.0
            distance = 0 if relevant else min(DISTANCE_CAP, info.min_distance + 1)
        else:
            change, smoothed, parents_mean, relevant_mean = 0.0, relevance, 0.0, 0.0
            distance = 0 if relevant else DISTANCE_CAP
        state = self.layout.state(relevance, change_bucket(change, self.delta1, self.delta2), categories,
                                  parents_mean, relevant_mean, distance)
        return state, smoothed, distance

    def _become_parent(self, links: list[Outlink], relevance: float, relevant: bool, smoothed: float,
                       distance: int) -> None:
        """The fetched page becomes a parent of each of its unfetched outlinks; a link's text relevance is
        computed again when it comes with an anchor not seen before."""
        stale = []
        for link in links:
            child = self.links.get(link.url)
            if child is None:
                child = self.links[link.url] = LinkInfo()
            child.parents += 1
            child.relevance_sum += relevance
            if relevant:
                child.relevant_parents += 1
                child.relevant_relevance_sum += relevance
            child.best_smoothed = max(child.best_smoothed, smoothed)
            child.min_distance = min(child.min_distance, distance)
            if child.text_relevance is None or (link.anchor and link.anchor not in child.anchors):
                if link.anchor:
                    child.anchors.append(link.anchor)
                stale.append(link.url)
        if stale:
            texts = [" ".join([url_text(u)] + self.links[u].anchors) for u in stale]
            for u, row in zip(stale, self.similarity.links(texts)):
                self.links[u].text_relevance = row

    def _actions(self, urls: list[str]) -> np.ndarray:
        """The action features of following each of ``urls``: its text's relevance, its parents' means."""
        infos = [self.links[u] for u in urls]
        text = np.stack([i.text_relevance for i in infos])
        parents = np.array([i.relevance_sum / i.parents for i in infos])
        relevant_parents = np.array([i.relevant_relevance_sum / i.relevant_parents if i.relevant_parents else 0.0
                                     for i in infos])
        return self.layout.actions(text[:, 0], text[:, 1:], parents, relevant_parents)

    def _learn(self, x_sa: np.ndarray, reward: float, state: np.ndarray, actions: np.ndarray | None,
               relevant: bool) -> None:
        """One SARSA step for the pair followed: terminal on a relevant page or one without links, else towards
        the value of the next pair, epsilon-greedily chosen among the page's links."""
        q_next = None
        if not relevant and actions is not None:
            x_next = np.concatenate([np.broadcast_to(state, (len(actions), len(state))), actions], axis=1)
            q_values = self.w[x_next].sum(axis=1)
            if self.sarsa_rng.random() < self.epsilon:
                q_next = float(q_values[self.sarsa_rng.randrange(len(q_values))])
            else:
                q_next = float(q_values.max())
        sarsa_update(self.w, x_sa, reward, q_next, self.alpha, self.gamma, self.moderated)
        self.updates += 1

    def _reward(self, probability: float) -> float:
        relevant, related, other = self.rewards
        if probability >= 0.5:
            return relevant
        return related if probability >= self.related_threshold else other


register(StrategySpec("han", "Han et al. 2018: SARSA + linear function approximation over (state, action) pairs",
                      HanPolicy))
register_preset(Preset("han-sync", "han", "whole frontier re-scored every step (their synchronous method)",
                       {"sync": True}))
register_preset(Preset("han-async", "han", "only new outlinks scored (their asynchronous method)"))
register_preset(Preset("han-moderated", "han", "asynchronous with the moderated update (Eq. 4)",
                       {"moderated": True}))
