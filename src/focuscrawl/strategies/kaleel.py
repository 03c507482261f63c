"""Kaleel & Sheen (IAJIT 2023), "Focused Crawler Based on Reinforcement Learning and Decaying Epsilon-Greedy
Exploration Policy".

Han et al.'s asynchronous SARSA crawler reduced to three continuous features (§4.5), with the exploration
rate as the object of study (§4.2, Table 4). Q(s, a) = w · x with

    x1  tf-idf cosine relevance of the page holding the link (the state),
    x2  tf-idf cosine relevance of the link's anchor text,
    x3  URL relevance P(relevant | URL) by Bayes' theorem (Eq. 2, §4.4).

Their Algorithm 1: seeds fetched first; each outlink enters the frontier with the value q = w · x computed
with the weights of the moment (asynchronous: nothing is re-scored later); a link is drawn uniformly at
random with probability ε, else the highest-valued one; after each fetch the weights move by the
*moderated* update of line 51, w += α [r + γ (q(s', a') - δ) - q(s, a)] x(s, a) (the update of Han et al.'s
Eq. 4; ``update="original"`` gives their Eq. 3), or by w += α [r - q(s, a)] x(s, a) when the page is
relevant (line 46). Table 4: γ = 0.9, α = 0.001, fixed ε = 0.1, decaying ε from 0.9 to 0.1.

Presets of the ``kaleel`` strategy (their Table 1, plus the future work of §7; ``reward`` and ``epsilon``
options):

    pr-greedy      reward from page relevance only, fixed ε
    pr-decay       reward from page relevance only, ε decays linearly 0.9 -> 0.1 over the budget
    url-greedy     reward from URL relevance only (30 when P >= 0.5, else -1), fixed ε
    url-decay      reward from URL relevance only, linear decay
    hybrid-decay   Algorithm 2: 30 relevant page and URL, 25 page only, 20 URL only, else -1; linear decay
    hybrid-reward-decay  Algorithm 2 reward, *reward-based* decay (§7, designed here): the linear schedule
                   is clocked by reward instead of by steps. Each fetch lowers ε by the linear step
                   (0.9 - 0.1) / budget times (r+ / 30) / ``target_harvest``, r+ = max(r, 0). An agent that
                   collects rewarded pages at the target rate (default 0.5) or better decays as fast as the
                   linear schedule or faster; one that finds nothing keeps exploring, since exploitation has
                   not proved itself. ε never rises again (it is a decay) and never goes below 0.1.

Choices where the paper is silent or does not transfer:

- page relevance for the *reward* and the terminal test ("pr > maxthreshold", 0.10 in §5.2) is the agent's
  own classifier (``Observation.reward`` > 0), the project's relevance judge for every strategy; the tf-idf
  cosine (``focuscrawl.topic.similarity``, scaled to [0, 1]) is the feature x1, and the anchor cosine x2;
- the Bayes URL model is multinomial naive Bayes over URL words (``UrlBayes``) with P(URL) expanded by total
  probability over relevant / not relevant, so Eq. 2 is a proper probability. Its "set of URLs relevant to
  the domain" is the seeds plus the URLs of fetched pages the agent's classifier judged relevant; fetched
  pages judged irrelevant are the other class. Ground truth never enters. A fetched URL's own URL score is
  computed before its page's verdict is added to the model;
- the frontier holds one entry per (link, discovering page): a link rediscovered from another page gets a
  second entry with that page's features (Algorithm 1 adds (lnk', st', act') for every unvisited outlink);
  the first entry drawn fetches it, the others are dropped. Weights start at zero, ties go to the oldest
  entry;
- the paper's "top n links" per page (§4.3) is left to the engine's ``max_outlinks``.
"""

from __future__ import annotations

import math
from collections import Counter, deque

import numpy as np

from focuscrawl.policy import CrawlContext, Fraction, Policy, PositiveFloat
from focuscrawl.strategies.registry import (
    Preset,
    StrategySpec,
    register,
    register_preset,
)
from focuscrawl.topic.similarity import TopicSimilarity, term_counts
from focuscrawl.topic.text import url_text
from focuscrawl.types import Observation, Selection

EPSILON_FIXED = 0.1
EPSILON_MAX, EPSILON_MIN = 0.9, 0.1
POS_REWARDS = (30.0, 25.0, 20.0)  # Algorithm 2: pos_reward1..3
NEG_REWARD = -1.0


class UrlBayes:
    """P(relevant | URL) by Bayes' theorem over the URL's words, learnt online (multinomial naive Bayes).

    P(R | U) = P(U | R) P(R) / (P(U | R) P(R) + P(U | ¬R) P(¬R)), word likelihoods Laplace-smoothed with
    ``smoothing`` over the vocabulary seen so far, class priors with add-one counts.
    """

    def __init__(self, smoothing: float = 1.0):
        self.smoothing = smoothing
        self.words: tuple[Counter[str], Counter[str]] = (Counter(), Counter())  # (irrelevant, relevant)
        self.totals = [0, 0]
        self.docs = [0, 0]
        self.vocab: set[str] = set()

    @staticmethod
    def tokens(url: str) -> Counter[str]:
        return term_counts(url_text(url))

    def add(self, url: str, relevant: bool) -> None:
        c = int(relevant)
        counts = self.tokens(url)
        self.words[c].update(counts)
        self.totals[c] += sum(counts.values())
        self.docs[c] += 1
        self.vocab.update(counts)

    def prob(self, url: str) -> float:
        counts = self.tokens(url)
        v = len(self.vocab) + sum(1 for word in counts if word not in self.vocab)
        n = self.docs[0] + self.docs[1]
        log_joint = []
        for c in (0, 1):
            denominator = math.log(self.totals[c] + self.smoothing * v) if v else 0.0
            log_p = math.log((self.docs[c] + 1) / (n + 2))
            for word, k in counts.items():
                log_p += k * (math.log(self.words[c][word] + self.smoothing) - denominator)
            log_joint.append(log_p)
        top = max(log_joint)
        relevant, irrelevant = math.exp(log_joint[1] - top), math.exp(log_joint[0] - top)
        return relevant / (relevant + irrelevant)

    def probs(self, urls: list[str]) -> np.ndarray:
        return np.array([self.prob(u) for u in urls])


def hybrid_reward(relevant: bool, url_relevance: float) -> float:
    """Algorithm 2 (pr > maxthreshold read as: the agent's classifier judged the page relevant)."""
    url_ok = url_relevance >= 0.5
    if relevant:
        return POS_REWARDS[0] if url_ok else POS_REWARDS[1]
    return POS_REWARDS[2] if url_ok else NEG_REWARD


def page_reward(relevant: bool, url_relevance: float) -> float:
    return POS_REWARDS[0] if relevant else NEG_REWARD


def url_reward(relevant: bool, url_relevance: float) -> float:
    return POS_REWARDS[0] if url_relevance >= 0.5 else NEG_REWARD


REWARDS = {"pr": page_reward, "url": url_reward, "hybrid": hybrid_reward}


class EpsilonSchedule:
    """Fixed, linearly decaying (Algorithm 1, lines 16-17 and 57-58) or reward-based (§7) exploration rate."""

    def __init__(self, kind: str, budget: int, target_harvest: float = 0.5):
        if kind not in ("fixed", "linear", "reward"):
            raise ValueError(f"epsilon schedule must be fixed, linear or reward, not {kind!r}")
        self.kind = kind
        self.value = EPSILON_FIXED if kind == "fixed" else EPSILON_MAX
        self.step = (EPSILON_MAX - EPSILON_MIN) / max(budget, 1)
        self.target_harvest = target_harvest

    def after_fetch(self, reward: float) -> None:
        if self.kind == "linear":
            self.value = max(EPSILON_MIN, self.value - self.step)
        elif self.kind == "reward":
            earned = max(reward, 0.0) / POS_REWARDS[0]
            self.value = max(EPSILON_MIN, self.value - self.step * earned / self.target_harvest)


def sarsa_update(w: np.ndarray, x: np.ndarray, reward: float, q_next: float | None, alpha: float, gamma: float,
                 moderated: bool = True) -> float:
    """Lines 45-51: terminal update when ``q_next`` is None, else Eq. 3 or its moderated form. Returns δ."""
    q = float(w @ x)
    if q_next is None:
        delta = reward - q
        w += alpha * delta * x
        return delta
    delta = reward + gamma * q_next - q
    target = reward + gamma * (q_next - delta) if moderated else reward + gamma * q_next
    w += alpha * (target - q) * x
    return delta


class KaleelPolicy(Policy):
    def __init__(self, reward: str = "hybrid", epsilon: str = "linear", gamma: Fraction = 0.9,
                 alpha: PositiveFloat = 0.001, update: str = "moderated", target_harvest: Fraction = 0.5):
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if update not in ("moderated", "original"):
            raise ValueError(f"update must be moderated or original, not {update!r}")
        self.reward_fn = REWARDS[reward]
        self.epsilon_kind = epsilon
        self.gamma, self.alpha = gamma, alpha
        self.moderated = update == "moderated"
        self.target_harvest = target_harvest

    def reset(self, context: CrawlContext) -> None:
        topic = context.topic
        self.similarity = TopicSimilarity(topic.example_texts, topic.example_labels, topic.keywords)
        self.urls = UrlBayes()
        for url in context.seeds:
            self.urls.add(url, True)
        self.known_seeds = set(context.seeds)
        self.epsilon = EpsilonSchedule(self.epsilon_kind, context.budget, self.target_harvest)
        self.w = np.zeros(3)
        self.select_rng = context.rng("kaleel-select")
        self.sarsa_rng = context.rng("kaleel-sarsa")
        self.seeds: deque[str] = deque(context.seeds)
        self.features = np.zeros((1024, 3))
        self.q = np.full(1024, -np.inf)  # -inf marks a used entry
        self.entry_url: list[str] = []
        self.alive: list[int] = []
        self.alive_pos: dict[int, int] = {}
        self.taken: set[str] = set()

    # -- frontier: one entry per (link, discovering page) -----------------------------------------
    def _push(self, urls: list[str], features: np.ndarray) -> None:
        start = len(self.entry_url)
        end = start + len(urls)
        while end > len(self.q):
            self.features = np.concatenate([self.features, np.zeros_like(self.features)])
            self.q = np.concatenate([self.q, np.full(len(self.q), -np.inf)])
        self.features[start:end] = features
        self.q[start:end] = features @ self.w  # asynchronous: valued once, with today's weights
        self.entry_url.extend(urls)
        for i in range(start, end):
            self.alive_pos[i] = len(self.alive)
            self.alive.append(i)

    def _pop(self, entry: int) -> None:
        self.q[entry] = -np.inf
        position = self.alive_pos.pop(entry)
        last = self.alive.pop()
        if last != entry:
            self.alive[position] = last
            self.alive_pos[last] = position

    def select(self) -> Selection | None:
        # memo: the followed entry's features x(s, a), for its SARSA update (None for a seed)
        if self.seeds:
            url = self.seeds.popleft()
            self.taken.add(url)
            return Selection(url, None, "a seed")
        while self.alive:
            explore = self.select_rng.random() < self.epsilon.value
            entry = (self.alive[self.select_rng.randrange(len(self.alive))] if explore
                     else int(np.argmax(self.q[: len(self.entry_url)])))
            score = None if explore else float(self.q[entry])
            self._pop(entry)
            url = self.entry_url[entry]
            if url in self.taken:  # an older entry of a rediscovered link already fetched it
                continue
            self.taken.add(url)
            x = self.features[entry].copy()
            if explore:
                reason = f"exploring: a random link, as {self.epsilon.value:.0%} of steps now"
            else:
                page, anchor, url_relevance = x
                reason = (f"the learned agent's best estimate when the link was found: the page linking to it "
                          f"matches the topic {page:.2f}, its anchor text {anchor:.2f}, its URL looks relevant "
                          f"{url_relevance:.2f}")
            return Selection(url, score, reason, memo=x)
        return None

    def observe(self, observation: Observation) -> None:
        url, x_sa = observation.url, observation.selection.memo
        page = observation.page
        relevant = observation.reward > 0
        url_relevance = self.urls.prob(url)
        if url not in self.known_seeds:
            self.urls.add(url, relevant)
        reward = self.reward_fn(relevant, url_relevance)

        links = [link for link in observation.links if link.url not in self.taken]
        features = None
        if links:
            page_relevance = 0.0
            if page.ok and (page.text or page.title):
                page_relevance = float(self.similarity.pages([f"{page.title}\n{page.text}"])[0, 0])
            features = np.column_stack([
                np.full(len(links), page_relevance),
                self.similarity.links([link.anchor for link in links])[:, 0],
                self.urls.probs([link.url for link in links]),
            ])

        if x_sa is not None:
            q_next = None
            if not relevant and features is not None:
                q_values = features @ self.w
                if self.sarsa_rng.random() < self.epsilon.value:
                    q_next = float(q_values[self.sarsa_rng.randrange(len(q_values))])
                else:
                    q_next = float(q_values.max())
            sarsa_update(self.w, x_sa, reward, q_next, self.alpha, self.gamma, self.moderated)
        if features is not None:
            self._push([link.url for link in links], features)
        self.epsilon.after_fetch(reward)


register(StrategySpec("kaleel", "Kaleel & Sheen 2023: SARSA over page, anchor and Bayes URL relevance, "
                                "with a chosen reward and exploration schedule", KaleelPolicy))
register_preset(Preset("pr-greedy", "kaleel", "page-relevance reward, fixed epsilon 0.1",
                       {"reward": "pr", "epsilon": "fixed"}))
register_preset(Preset("pr-decay", "kaleel", "page-relevance reward, epsilon 0.9 -> 0.1 linearly",
                       {"reward": "pr", "epsilon": "linear"}))
register_preset(Preset("url-greedy", "kaleel", "Bayes URL-relevance reward, fixed epsilon 0.1",
                       {"reward": "url", "epsilon": "fixed"}))
register_preset(Preset("url-decay", "kaleel", "Bayes URL-relevance reward, epsilon 0.9 -> 0.1 linearly",
                       {"reward": "url", "epsilon": "linear"}))
register_preset(Preset("hybrid-decay", "kaleel", "hybrid reward (Algorithm 2), epsilon 0.9 -> 0.1 linearly",
                       {"reward": "hybrid", "epsilon": "linear"}))
register_preset(Preset("hybrid-reward-decay", "kaleel", "hybrid reward, reward-based epsilon decay (their "
                       "future work)", {"reward": "hybrid", "epsilon": "reward"}))
