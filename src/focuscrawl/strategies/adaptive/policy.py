"""``AdaptivePolicy``: reset, select, observe (the package's docstring says what it does and why)."""

from __future__ import annotations

from itertools import repeat
from typing import Annotated

import numpy as np
from pydantic import Field

from focuscrawl.policy import Count, CrawlContext, Fraction, Policy, PositiveFloat, Ready, ShardAware
from focuscrawl.strategies.adaptive import pooling, reasons
from focuscrawl.strategies.adaptive.evidence import (
    EVIDENCE,
    EVIDENCE_BLOCK,
    PATH_ZERO,
    SCORES,
    SEED_EVIDENCE,
    Evidence,
    encode_own,
)
from focuscrawl.strategies.adaptive.hosts import Hosts
from focuscrawl.strategies.adaptive.linkwords import Lexicon, PageLinks
from focuscrawl.strategies.adaptive.models import OnlineLeastSquares, OnlineLogistic, hashed_words
from focuscrawl.strategies.frontier.graph import FRONTIER, CrawlGraph
from focuscrawl.strategies.frontier.link_context import anchor_windows
from focuscrawl.strategies.frontier.ranking import Ranking
from focuscrawl.strategies.frontier.spill import SPILL_AFTER
from focuscrawl.topic.similarity import TopicSimilarity
from focuscrawl.types import Link, Observation, Selection
from focuscrawl.urls import site_of

WINDOW = 100  # characters of page text around a link: its context, as Gouriten et al.'s alpha
RERANK_URLS_PER_STEP = 2000
LEFT_BELOW = 10.0  # subtracted from a left host's predictions: below any other URL's, their own order kept
EXPLORE_SAMPLE = 20_000  # frontier URLs an exploring step reads at most (a uniform sample on larger frontiers)


class AdaptivePolicy(ShardAware, Policy):
    """Fetches the frontier URL whose evidence an online linear model predicts most relevant; one step in
    ``explore`` follows one piece of evidence alone instead."""

    def __init__(self, *, explore: Fraction = 0.1, prior: dict[str, float] | None = None,
                 prior_strength: PositiveFloat = 0.01, rerank_every: Count = 10, keep: Count = 512,
                 site_prior: PositiveFloat = 2.0, window: Annotated[int, Field(ge=0)] = WINDOW,
                 forget: Annotated[float, Field(gt=0, le=1)] = 0.995, gamma: Fraction = 0.0,
                 spill_after: Annotated[int, Field(ge=0)] = SPILL_AFTER, ready_score: Fraction = 0.8,
                 leave_share: Fraction = 0.1):
        # Defaults chosen on the development suite's tuning half (docs/benchmark.md, "How defaults are chosen"):
        # no evidence trusted a priori (a best-first prior lost 4 of the then 8 tuning rows and tied 4), old samples
        # forgotten slowly, one selection in ten following a single piece of evidence, 100-character link
        # contexts (benchmarks/adaptive_grid.py has each change from them).
        weights = dict(prior or {})
        unknown = set(weights) - set(EVIDENCE) - {"bias"}
        if unknown:
            raise ValueError(f"prior names unknown evidence {', '.join(sorted(unknown))}; known: {', '.join(EVIDENCE)}")
        self.prior = np.array([weights.get(name, 0.0) for name in EVIDENCE] + [weights.get("bias", 0.0)])
        self.explore, self.prior_strength, self.site_prior = explore, prior_strength, site_prior
        self.rerank_every, self.keep, self.window, self.forget, self.gamma = rerank_every, keep, window, forget, gamma
        # URL strings and hashed words held in RAM before they move to a scratch store on disk (frontier.spill):
        # exact, so it changes memory, never the crawl
        self.spill_after = spill_after
        # A polite crawl (Policy.select_ready) takes a URL on a host it may fetch now over its best URL, whose host
        # must wait, when the URL's predicted relevance is at least this: the fetches that would otherwise wait go to
        # pages the model expects to be relevant, not to whatever is ready. Lower is faster and harvests less a page;
        # 0.8 chosen on a tuning web (benchmarks/full_crawl_vs_scrapy.py, -s options.adaptive.ready_score=F).
        self.ready_score = ready_score
        # A host that has taken at least this share of the fetches without paying back (Hosts.left) is predicted
        # below every other host's URLs until its share falls under it again: 0 never leaves a host. 0.1 by a rule
        # written before its crawls (docs/history/trials/adaptive-site-payback-rule.md)
        self.leave_share = leave_share

    def reset(self, context: CrawlContext) -> None:
        topic = context.topic
        self.classifier = context.classifier
        self.similarity = TopicSimilarity(topic.example_texts, topic.example_labels, topic.keywords)
        self.lexicon = Lexicon(self.similarity)  # the words of new links, for PageLinks
        self.rng = context.rng("adaptive")
        self.sample_rng = np.random.default_rng(context.rng("adaptive-sample").getrandbits(64))
        self.model = OnlineLeastSquares(self.prior, self.prior_strength, self.forget)
        self.link_model = OnlineLogistic()
        self._pooled: pooling.Parameters | None = None  # the last pooling across shards (load_parameters)
        self.graph = CrawlGraph(second_level=True, depth=False, spill_after=self.spill_after)
        self.hosts = Hosts(self.graph, self.site_prior)
        self.evidence = Evidence(self.graph, self.hosts, self.spill_after)
        self.ranking = Ranking(self.graph, self._predict, self.keep)
        self.left = np.zeros(0, dtype=bool)  # per host number: left for other hosts (``leave_share``)
        self.anchor_cache: dict[str, float] = {}  # anchor -> the classifier's probability (``window=0``)
        self.since_rerank = 0
        hosts = [site_of(u) for u in context.seeds]
        seeds, new = self.graph.intern(context.seeds, hosts)
        first = np.flatnonzero(new).tolist()  # a seed listed twice is one URL
        scores, halvings, halves = encode_own([SEED_EVIDENCE] * len(first))
        self.evidence.add(seeds[first].tolist(), [hosts[k] for k in first],
                          [hashed_words(context.seeds[k], "") for k in first], scores, halvings, halves)
        self.ranking.update(seeds)

    # -- select ----------------------------------------------------------------------------------------
    def select(self) -> Selection | None:
        return self.select_ready(None)

    def select_ready(self, ready: Ready | None) -> Selection | None:
        """``select``, taking the best URL whose host ``ready`` accepts if it is predicted relevant (``ready_score``;
        ``Ranking.best``). Exploring steps keep their own choice: they are a tenth of the steps, and a wait for one
        of them costs no more than before."""
        if self.graph.n_front == 0:
            return None
        self._rerank_if_due()
        if self.rng.random() < self.explore:
            i, reason = self._explore()
            return self._take(i, None, reason)
        i = self.ranking.best(ready, self.ready_score)
        if i is None:
            return None
        score = float(self.ranking.value[i])
        hid = int(self.graph.host[i])
        row = self.evidence.rows(np.array([i]))[0]  # what the reason quotes and the model will learn from
        if hid < len(self.left) and self.left[hid]:
            # every other host's URLs are gone or waiting: the left host's best, at its unpenalised prediction
            score += LEFT_BELOW
            hosts = self.hosts
            return self._take(i, score, f"its site left for others ({int(hosts.relevant[hid])} of "
                                        f"{int(hosts.fetched[hid])} pages relevant), nothing else to fetch; "
                                        + self._explain(i, score, row), row)
        return self._take(i, score, self._explain(i, score, row), row)

    def _explore(self) -> tuple[int, str]:
        """The best frontier URL by one piece of evidence chosen uniformly at random, so that the model also
        learns what the evidence it does not trust yet would have found; and the reason."""
        column = self.rng.randrange(len(EVIDENCE))
        frontier = self.graph.frontier()
        if len(frontier) > EXPLORE_SAMPLE:
            # Exploring shows the model what one piece of evidence would find: a top URL by it among a
            # uniform sample does that too (on 1M URLs, about the 50th best), at a fiftieth of the cost.
            frontier = frontier[self.sample_rng.integers(0, len(frontier), EXPLORE_SAMPLE)]
        values = self.evidence.column(frontier, column)
        best = int(np.argmax(values))
        i = int(frontier[best])
        return i, reasons.exploring(self.evidence, column, i, float(values[best]))

    def _rerank_if_due(self) -> None:
        """One selection's turn of the re-ranking cadence: every ``rerank_every`` selections, more rarely on large
        frontiers."""
        self.since_rerank += 1
        # A re-rank is O(frontier), about 0.4 us per URL: spaced out on large frontiers (every 500 steps at 1M
        # URLs, where it is under half a millisecond of a step amortised: focuscrawl bench-policy measures it).
        if self.since_rerank >= max(self.rerank_every, self.graph.n_front // RERANK_URLS_PER_STEP):
            self._rerank()

    def _rerank(self) -> None:
        """Every frontier URL predicted again: new weights, new link model, new site records."""
        self.since_rerank = 0
        frontier = self.graph.frontier()
        if self.link_model.trained and len(frontier):
            self.evidence.rescore_links(frontier, self.link_model)
        if self.leave_share:
            self.left = self.hosts.left(self.leave_share)
        self.ranking.rebuild()

    def _predict(self, ids: np.ndarray) -> np.ndarray:
        predicted = self._predict_evidence(ids)
        if self.left.any():
            hosts = self.graph.host[ids]
            known = hosts < len(self.left)
            predicted[known] -= LEFT_BELOW * self.left[hosts[known]]
        return predicted

    def _predict_evidence(self, ids: np.ndarray) -> np.ndarray:
        """The model's prediction for each URL of ``ids``, EVIDENCE_BLOCK URLs at a time: each block's evidence is
        gathered into one reused matrix (1 MB, in the CPU's cache) and multiplied there. A whole re-rank's matrix
        was 128 bytes a URL, allocated and paged in afresh each time (1.3 GB at 10M URLs; at 1M URLs 51 ms a
        prediction against 36 ms in blocks). BLAS computes a row's dot product alike whatever the block's length
        (checked bit for bit with this machine's OpenBLAS, one thread, up to 2M rows; a test checks it to 1e-12),
        so the predictions are those of one whole matrix."""
        w = self.model.w
        out = np.empty(len(ids))
        block = np.empty((min(len(ids), EVIDENCE_BLOCK), len(EVIDENCE)))
        for start in range(0, len(ids), EVIDENCE_BLOCK):
            part = ids[start:start + EVIDENCE_BLOCK]
            np.matmul(self.evidence.rows(part, out=block[:len(part)]), w[:-1], out=out[start:start + len(part)])
        out += w[-1]
        return out

    def _explain(self, i: int, score: float, row: np.ndarray | None = None) -> str:
        return reasons.explain(self.evidence, self.model.w, i, score, row)

    def _take(self, i: int, score: float | None, reason: str, row: np.ndarray | None = None) -> Selection:
        """URL ``i`` leaves the frontier as the selection; a subclass that chooses otherwise (focuscrawl.gym) takes
        its choice here too, so that the model learns from it as from its own. ``row``: its evidence, if read."""
        if row is None:
            row = self.evidence.rows(np.array([i]))[0]
        self.graph.take(i)
        # memo: the evidence at selection time, what the model learns from once the page is scored
        return Selection(self.graph.urls[i], score, reason, memo=np.append(row, 1.0))

    # -- observe ---------------------------------------------------------------------------------------
    def observe(self, observation: Observation) -> None:
        relevance = float(observation.relevance)
        relevant = observation.reward > 0
        memo = observation.selection.memo  # None: a selection this policy did not make evidence for
        w = self._page_id(observation.url)
        if memo is not None:
            self.link_model.learn(self.evidence.words.get(w), float(relevant))
        hid = int(self.graph.host[w])
        self.hosts.count(hid, relevant, observation.page.ok)
        # a relevant page's links are one link from it; each irrelevant page on the way halves that (stored as
        # the number of halvings, which stops at PATH_ZERO, where path is 0.0 as halving 0.0 leaves it)
        halvings = 0 if relevant else min(int(self.evidence.own_path[w]) + 1, PATH_ZERO)
        kids, crawled_kids, alpha = self._add_links(observation, hid, relevance, halvings)
        changed = self.graph.crawl(w, relevance, kids, alpha[:len(kids)], crawled_kids, alpha[len(kids):])
        self.ranking.update(self.graph.frontier_among([changed, kids]))
        if memo is not None:
            # The target: the page's relevance, plus (gamma > 0) the discounted best prediction among the links
            # it opens, so that evidence of pages that lead somewhere (a hub, a live site) earns credit too.
            target = relevance
            if self.gamma and len(kids):
                target += self.gamma * max(0.0, float(self.ranking.value[kids].max()))
            self.model.learn(memo, target)

    def _page_id(self, url: str) -> int:
        """The graph's id of a fetched URL; one not ours (cannot happen with the engine) is recorded as a seed."""
        w = self.graph.ids.get(url)
        if w is None:
            host = site_of(url)
            w = int(self.graph.intern([url], [host])[0][0])
            self.evidence.add([w], [host], [hashed_words(url, "")], *encode_own([SEED_EVIDENCE]))
        return w

    def _add_links(self, observation: Observation, hid: int, relevance: float,
                   halvings: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The evidence of a page's links: new URLs get all of theirs, frontier URLs linked again the best of old
        and new. Their ids, the crawled URLs it links to, and the context relevance of each (kids', then
        crawled kids')."""
        graph, links, page = self.graph, observation.links, observation.page
        kids, new = graph.intern([link.url for link in links], [link.host for link in links])
        crawled_kids, crawled_anchors = graph.crawled_targets(observation.url, page.outlinks, kids)
        alpha = self._context_relevance(page.text, [link.anchor for link in links] + crawled_anchors,
                                        np.concatenate([kids, crawled_kids]),
                                        np.concatenate([new, np.zeros(len(crawled_kids), dtype=bool)]))
        halves = self.hosts.local_halves(hid, [link.host for link in links])
        known = np.flatnonzero(~new & (graph.state[kids] == FRONTIER))
        self.evidence.relink(kids[known], relevance, halvings, halves[known])
        fresh = np.flatnonzero(new)
        if len(fresh):
            self._first_links([links[k] for k in fresh.tolist()], kids[fresh], relevance, alpha[fresh], halvings,
                              halves[fresh])
        return kids, crawled_kids, alpha

    def _first_links(self, links: list[Link], ids: np.ndarray, relevance: float, alpha: np.ndarray,
                     halvings: int, halves: np.ndarray) -> None:
        """All the evidence of new URLs, for all of them at once: their topic words (of their URL and the anchor
        each was first seen with), their hashed words and the link model's probability on them."""
        page_links = PageLinks(self.lexicon, [link.url for link in links], [link.anchor for link in links])
        words = page_links.similarity()
        hashed, lengths = page_links.hashed_words()
        link_prob = self.link_model.predict_many(hashed, lengths) if self.link_model.trained else [0.5] * len(links)
        scores = list(zip(repeat(relevance), alpha.tolist(), words.tolist(), link_prob))
        ends = np.cumsum(lengths).tolist()
        self.evidence.add(ids.tolist(), [link.host for link in links],
                          [hashed[start:end] for start, end in zip([0, *ends], ends)], scores, halvings, halves)

    def _context_relevance(self, text: str, anchors: list[str], ids: np.ndarray, new: np.ndarray) -> np.ndarray:
        """The classifier's probability on the context of each link (Gouriten et al.'s alpha): ``window``
        characters of text around its anchor, or (``window=0``) the anchor alone, whose answers repeat and
        are kept. Only a URL's first link is read: a link to a URL seen before reuses that URL's context
        relevance, which keeps the classifier's work to the new links of a page (a tenth of them, late in a
        Wikispeedia crawl)."""
        alpha = np.zeros(len(anchors))
        old = np.flatnonzero(~new)
        alpha[old] = self.evidence.own_scores[ids[old], SCORES.index("anchor")]
        fresh = np.flatnonzero(new).tolist()
        if not fresh:
            return alpha
        if self.window > 0:
            alpha[fresh] = self.classifier.predict_proba(anchor_windows(text, anchors, self.window, fresh))
            return alpha
        cache = self.anchor_cache
        missing = [a for a in dict.fromkeys(anchors[k] for k in fresh) if a not in cache]
        if missing:
            cache.update(zip(missing, np.asarray(self.classifier.predict_proba(missing), dtype=float).tolist()))
        alpha[fresh] = [cache[anchors[k]] for k in fresh]
        return alpha

    def on_host_capped(self, host: str) -> None:
        self.graph.drop_host(host)

    def diagnostics(self) -> dict[str, float]:
        return {f"w_{name}": float(w) for name, w in zip([*EVIDENCE, "bias"], self.model.w)}

    # -- learning across shards (distributed crawls; ``pooling``) --------------------------------------
    # Every 100 pages unless the settings say otherwise: chosen on the suite's WebKB tuning rows at N=4 (of 20
    # and 100), confirmed on the held-out ones (benchmarks/distributed_quality.py).
    combine_every = 100

    def parameters(self) -> pooling.Parameters:
        return pooling.changes(self.model, self.link_model, self._reference(), self.hosts.fetched_total)

    @classmethod
    def combine_parameters(cls, shared: list[tuple[int, pooling.Parameters]]) -> pooling.Parameters:
        return pooling.combine(shared)

    def load_parameters(self, parameters: pooling.Parameters) -> None:
        self._pooled = pooling.load(parameters, self.model, self.link_model, self._reference())
        self.hosts.others_fetched = max(0, int(parameters["fetched"][0]) - self.hosts.fetched_total)

    def _reference(self) -> pooling.Parameters:
        """What this shard started from at the last pooling."""
        if self._pooled is not None:
            return self._pooled
        return pooling.unpooled(self.prior, self.prior_strength, self.forget, len(self.link_model.w))
