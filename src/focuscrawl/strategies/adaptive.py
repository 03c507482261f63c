"""``adaptive``: a crawler that learns, on the web it is crawling, which evidence to trust.

Every frontier URL carries the evidence that some strategy of the literature relies on alone:

    fl-deg, fl-n,    its crawled parents: how many, the sum of their relevance, of their links' context
    fl-e, fl-ne      relevance, and of the two multiplied; each log-smoothed (Gouriten et al.'s first
                     level, which their lr-fl and bandits use)
    sl-n, sl-e,      the same sums over its parents' crawled children: are its parents hubs of relevant
    sl-ne            pages? (Gouriten et al.'s second level, lr-sl)
    parent           the best relevance among its parents (best-first, ACHE)
    anchor           the best relevance of the context of a link to it (TRES's anchor feature)
    words            tf-idf similarity of its URL words and first anchor to the topic (Han et al.)
    links            an online logistic model of URL and anchor words, trained on the crawl's own pages
                     (ACHE's link classifier)
    path             1 for a link from a relevant page, halved by each irrelevant page since (TRES, Han)
    local            1 for a link within its parent's host, 0.5 within its parent's registered domain, else 0
    site             how often pages of its host were relevant so far (TRES's domain features)
    known            whether a page of its host was fetched successfully (TRES's "known domain")
    rare             1 minus the share of the crawl's fetches its host has taken so far: a pull, if the crawl
                     learns to trust it, towards hosts it has spent little on (docs/results.md, section 2:
                     without it the crawl stayed on a large host of moderately relevant pages, WebKB's train
                     university, while other strategies reached other departments)

Which of them predicts relevance differs from web to web, and no single strategy wins everywhere
(docs/results.md). So the policy fits, online, a linear model of the fetched pages' relevance (the
agent's classifier's probability) on all of it: recursive least squares with a weak ridge prior
(``prior`` names evidence to trust from the start; by default none) whose older samples count a little
less (``forget``), and fetches the frontier URL with the highest prediction. With probability ``explore``
it follows one piece of evidence alone (the best URL by it), so that the model also learns what the
evidence it does not trust yet would have found.

Two options are off by default, measured on the development suite and not adopted (docs/results.md,
section 2): ``submodels``, models of some of the evidence fitted beside the full one, the frontier ranked by
whichever predicted the crawl's recent pages best; and ``learn_exploration``, exploring steps that choose
their evidence by Thompson sampling on what each found so far instead of uniformly.

Each selection says why: its predicted relevance as ``score``, and as ``reason`` the two pieces of evidence
that contributed most, in words with the numbers behind them ("predicted relevance 0.82: linked from 3
crawled pages of relevance 2.71 in all; its site's pages so far: 5 of 8 relevant"), or for an exploring step
the evidence it followed ("exploring, by one kind of evidence alone: links like it led to relevant pages
(0.91)"). The words come from what ``select`` holds already (the URL's evidence row, the graph's sums, the
host's counts); docs/interfaces.md, "Reasons", names the evidence behind each phrase.

Costs. The crawled graph and its neighbourhood sums are Gouriten et al.'s (``frontier.graph``, shared with
``gouriten``), maintained incrementally; the other evidence is computed once per link, for all of a page's new
links at once (one classifier call, one similarity pass, one sort of their hashed words and one sum of their
link-model weights per page, each the same numbers as link by link), and updated for the frontier URLs a page
links to again.
The ranking is ``frontier.ranking``'s lazily invalidated heap over predictions, updated for the URLs
whose evidence changed; the whole frontier is re-predicted (new weights, new link model, new site
records) every ``rerank_every`` selections, and more rarely on large frontiers, one numpy pass each. An
exploring step reads one evidence column of the frontier, or of a uniform sample of ``EXPLORE_SAMPLE`` URLs
on larger frontiers. Below 20,000 frontier URLs none of this spacing or sampling applies.

Memory. Each URL's evidence stays in RAM, in rows of numbers (the graph's, OWN, the ranking's prediction:
about 147 bytes a URL; OWN's path and local stored as small integers, losslessly: ``encode_own``); its string,
hashed words and parent edges, written once and read when it is selected, fetched or the link model re-scores
the frontier, move to disk past ``spill_after`` URLs (``frontier.spill``), exactly, so that
the threshold changes the process's size and never the crawl.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from itertools import repeat
from typing import Annotated

import numpy as np
from pydantic import Field

from focuscrawl.policy import Count, CrawlContext, Fraction, Policy, PositiveFloat, Ready, ShardAware
from focuscrawl.strategies.frontier.graph import FEATURES, FRONTIER, CrawlGraph
from focuscrawl.strategies.frontier.link_context import anchor_windows
from focuscrawl.strategies.frontier.ranking import Ranking
from focuscrawl.strategies.frontier.spill import SPILL_AFTER, WordColumn
from focuscrawl.strategies.registry import StrategySpec, register
from focuscrawl.topic.similarity import WORD_CACHE_SIZE, TopicSimilarity
from focuscrawl.topic.text import terms, url_text
from focuscrawl.types import Observation, Selection
from focuscrawl.urls import registered_domain, site_of

GRAPH = FEATURES  # the crawled graph's neighbourhood sums, log-smoothed
OWN = ("parent", "anchor", "words", "links", "path", "local")
# How OWN is stored, losslessly (13 bytes a URL less than six float64s): the scores as float64, ``path`` as how
# many times it was halved (it is always a power of 1/2, or 0 once halved past the smallest float) and ``local``
# in halves; PATH_VALUES and LOCAL_VALUES decode them to the very float64s that were stored before.
SCORES = OWN[:4]
PATH_ZERO = 1075  # halvings after which path is 0.0 (2^-1074 is the smallest float64)
PATH_VALUES = np.array([0.5 ** k for k in range(PATH_ZERO)] + [0.0])  # exact: each is half the one before
LOCAL_VALUES = np.array([0.0, 0.5, 1.0])
HOST = ("site", "known", "rare")  # read from the host's record when predicting, not stored per URL
EVIDENCE = GRAPH + OWN + HOST
SEED_EVIDENCE = (1.0, 1.0, 1.0, 0.5, 1.0, 1.0)
HASH_BITS = 18
_MASK = (1 << HASH_BITS) - 1
WINDOW = 100  # characters of page text around a link: its context, as Gouriten et al.'s alpha
RERANK_URLS_PER_STEP = 2000
EXPLORE_SAMPLE = 20_000  # frontier URLs an exploring step reads at most (a uniform sample on larger frontiers)
# Rows predicted at once in a re-rank. Frontiers up to this size are predicted in one pass, as before chunking
# (BLAS splits a matrix-vector product by row count, so a chunked row may differ from an unchunked one in the
# last bit: crawls whose frontier stays below it are unchanged).
PREDICT_ROWS = 1 << 20
EVIDENCE_BLOCK = 8192  # rows of evidence gathered at a time: 1 MB of the matrix, held in the CPU's cache


def hashed_words(url: str, anchor: str) -> np.ndarray:
    """The link model's features, hashed (deterministically: Python's own string hash changes from process to
    process): URL words and anchor words, kept apart, and the URL's shape, which words miss: how deep its path
    is, whether it is a user's directory (``/~name``), what its last segment is (a directory, an .html file,
    a query). Sorted, each once."""
    text = url_text(url)
    words = [f"u {t}" for t in terms(text)] + [f"a {t}" for t in terms(anchor)] + _shape_words(_url_shape(text))
    return np.array(sorted({zlib.crc32(w.encode()) & _MASK for w in words}), dtype=np.int32)


def hashed_words_many(urls: Sequence[str], anchors: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``hashed_words`` of many links at once: their features concatenated link after link, and how many each
    link has; the same ints in the same order. Per link only the words are looked up (their hashes are
    remembered: words recur from link to link); one sort of all links' (link, hash) keys then does what a set
    and a sort per link did."""
    flat: list[int] = []
    counts: list[int] = []
    url_hash, anchor_hash, shape_hash = _URL_WORD_HASHES.__getitem__, _ANCHOR_WORD_HASHES.__getitem__, _SHAPE_HASHES
    for url, anchor in zip(urls, anchors):
        before = len(flat)
        text = url_text(url)
        flat.extend(map(url_hash, terms(text)))
        flat.extend(map(anchor_hash, terms(anchor)))
        shape = _url_shape(text)
        hashes = shape_hash.get(shape)
        if hashes is None:
            if len(shape_hash) >= WORD_CACHE_SIZE:
                shape_hash.clear()
            hashes = shape_hash[shape] = [zlib.crc32(w.encode()) & _MASK for w in _shape_words(shape)]
        flat.extend(hashes)
        counts.append(len(flat) - before)
    keys = np.repeat(np.arange(len(counts), dtype=np.int64) << HASH_BITS, counts) | np.array(flat, dtype=np.int64)
    keys.sort()  # by link, then by hash; then each (link, hash) once
    once = np.empty(len(keys), dtype=bool)
    once[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=once[1:])
    keys = keys[once]
    return (keys & _MASK).astype(np.int32), np.bincount(keys >> HASH_BITS, minlength=len(counts))


def _url_shape(text: str) -> tuple[int, bool, bool, str]:
    """A URL's (without its scheme) shape: path depth (6 for deeper), ``~`` in the path, a query, how the last
    segment ends (its extension, ``file`` without one, ``dir`` for a directory)."""
    path = text.partition("/")[2]
    segments = [s for s in path.split("?", 1)[0].split("/") if s]
    last = segments[-1] if segments and not path.endswith("/") else ""
    return (min(len(segments), 6), "~" in path, "?" in path,
            last.rpartition(".")[2].lower() if "." in last else ("file" if last else "dir"))


def _shape_words(shape: tuple[int, bool, bool, str]) -> list[str]:
    depth, tilde, query, ends = shape
    return [f"s depth {depth}", f"s tilde {tilde}", f"s query {query}", f"s ends {ends}"]


class _WordHashes(dict):
    """Word -> the masked crc32 of ``prefix`` + word, computed on first use (from the prefix's crc32, which is the
    same as hashing the joined text); emptied when full (URLs bring words that never recur, such as page
    numbers)."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix_crc = zlib.crc32(prefix.encode())

    def __missing__(self, word: str) -> int:
        if len(self) >= WORD_CACHE_SIZE:
            self.clear()
        value = self[word] = zlib.crc32(word.encode(), self.prefix_crc) & _MASK
        return value


_URL_WORD_HASHES = _WordHashes("u ")
_ANCHOR_WORD_HASHES = _WordHashes("a ")
_SHAPE_HASHES: dict[tuple[int, bool, bool, str], list[int]] = {}


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def encode_own(rows: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OWN rows of float64s (n x 6) as they are stored: the scores (n x 4), path as halvings (int16), local in
    halves (int8). A path that is not a power of 1/2 (or 0), or a local not 0, 0.5 or 1, is an error: it could
    not be stored exactly."""
    rows = np.asarray(rows, dtype=np.float64).reshape(-1, len(OWN))
    path, local = rows[:, OWN.index("path")], rows[:, OWN.index("local")]
    exponent = np.frexp(path)[1]  # path = 0.5 x 2^exponent
    halvings = np.where(path == 0, PATH_ZERO, 1 - exponent).astype(np.int16)
    halves = (local * 2).astype(np.int8)
    if not (np.array_equal(PATH_VALUES[np.clip(halvings, 0, PATH_ZERO)], path) and (halvings >= 0).all()
            and np.array_equal(LOCAL_VALUES[np.clip(halves, 0, 2)], local)):
        raise ValueError("OWN rows whose path is not a power of 1/2 or whose local is not 0, 0.5 or 1")
    return rows[:, :len(SCORES)].copy(), halvings, halves


class OnlineLeastSquares:
    """Recursive least squares with a prior: the exact ridge solution around ``prior`` after every sample,
    samples weighted by ``forget`` per newer sample (1: all alike)."""

    samples = 0  # samples learned (a class default for checkpoints from before it was counted)

    def __init__(self, prior: np.ndarray, strength: float, forget: float = 1.0):
        self.w = prior.astype(np.float64).copy()
        self.P = np.eye(len(prior)) / strength
        self.forget = forget

    def learn(self, x: np.ndarray, y: float) -> None:
        px = self.P @ x
        gain = px / (self.forget + x @ px)
        self.w += gain * (y - self.w @ x)
        self.P = (self.P - np.outer(gain, px)) / self.forget
        self.samples += 1

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """The information form (A, b), w = A^-1 b: A = sum of forget^age * x x^T (plus the prior's strength),
        b likewise of x y. Learners' samples add up in it, which is how shards pool what they learned."""
        information = np.linalg.inv(self.P)
        return information, information @ self.w

    def set_statistics(self, information: np.ndarray, moment: np.ndarray) -> None:
        self.P = np.linalg.inv(information)
        self.w = self.P @ moment


class OnlineLogistic:
    """Logistic regression on hashed binary features by stochastic gradient descent, one example at a time."""

    def __init__(self, learning_rate: float = 0.2, l2: float = 1e-4):
        self.w = np.zeros(1 << HASH_BITS)
        self.bias = 0.0
        self.learning_rate, self.l2 = learning_rate, l2
        self.trained = 0

    def predict(self, features: np.ndarray) -> float:
        return _sigmoid(self.bias + float(self.w[features].sum()))

    def predict_many(self, features: np.ndarray, lengths: np.ndarray) -> list[float]:
        """``predict`` of many examples, their features concatenated (``lengths`` each): the same numbers.
        ``reduceat`` would start each sum from the example's first weight, while ``sum`` adds all of them to 0
        (numpy's pairwise summation, whose rounding differs): so each example's weights are summed after a 0."""
        lengths = np.asarray(lengths, dtype=np.int64)
        zeros = np.cumsum(lengths) - lengths + np.arange(len(lengths))  # where each example's 0 goes
        padded = np.zeros(len(features) + len(lengths))
        weights = np.ones(len(padded), dtype=bool)
        weights[zeros] = False
        padded[weights] = self.w[features]
        return [_sigmoid(self.bias + z) for z in np.add.reduceat(padded, zeros).tolist()] if len(lengths) else []

    def learn(self, features: np.ndarray, label: float) -> None:
        error = self.predict(features) - label
        self.w[features] -= self.learning_rate * (error + self.l2 * self.w[features])
        self.bias -= self.learning_rate * error
        self.trained += 1


class AdaptivePolicy(ShardAware, Policy):
    def __init__(self, *, explore: Fraction = 0.1, prior: dict[str, float] | None = None,
                 prior_strength: PositiveFloat = 0.01, rerank_every: Count = 10, keep: Count = 512,
                 site_prior: PositiveFloat = 2.0, window: Annotated[int, Field(ge=0)] = WINDOW,
                 forget: Annotated[float, Field(gt=0, le=1)] = 0.995, gamma: Fraction = 0.0,
                 learn_exploration: bool = False,
                 submodels: tuple[tuple[str, ...], ...] = (),
                 spill_after: Annotated[int, Field(ge=0)] = SPILL_AFTER, ready_score: Fraction = 0.8):
        # Defaults chosen on the development suite's tuning half (docs/benchmark.md, "How defaults are chosen"):
        # no evidence trusted a priori (a best-first prior did worse on all 8 tuning rows), old samples forgotten
        # slowly, one selection in ten following a single piece of evidence, 100-character link contexts.
        weights = dict(prior or {})
        unknown = set(weights) - set(EVIDENCE) - {"bias"}
        if unknown:
            raise ValueError(f"prior names unknown evidence {', '.join(sorted(unknown))}; known: {', '.join(EVIDENCE)}")
        self.prior = np.array([weights.get(name, 0.0) for name in EVIDENCE] + [weights.get("bias", 0.0)])
        self.explore, self.prior_strength, self.site_prior = explore, prior_strength, site_prior
        self.rerank_every, self.keep, self.window, self.forget, self.gamma = rerank_every, keep, window, forget, gamma
        self.learn_exploration = learn_exploration
        # URL strings and hashed words held in RAM before they move to a scratch store on disk (frontier.spill):
        # exact, so it changes memory, never the crawl
        self.spill_after = spill_after
        # A polite crawl (Policy.select_ready) takes a URL on a host it may fetch now over its best URL, whose host
        # must wait, when the URL's predicted relevance is at least this: the fetches that would otherwise wait go to
        # pages the model expects to be relevant, not to whatever is ready. Lower is faster and harvests less a page;
        # 0.8 chosen on a tuning web (docs/results.md, section 18).
        self.ready_score = ready_score
        for names in submodels:
            if set(names) - set(EVIDENCE):
                raise ValueError(f"a submodel names unknown evidence; known: {', '.join(EVIDENCE)}")
        # each submodel: its columns in the memo (evidence + bias), fitted beside the full model
        self.submodel_columns = [np.array([EVIDENCE.index(n) for n in names] + [len(EVIDENCE)]) for names in submodels]

    # -- setup ---------------------------------------------------------------------------------------
    def reset(self, context: CrawlContext) -> None:
        topic = context.topic
        self.classifier = context.classifier
        self.similarity = TopicSimilarity(topic.example_texts, topic.example_labels, topic.keywords)
        self.rng = context.rng("adaptive")
        self.sample_rng = np.random.default_rng(context.rng("adaptive-sample").getrandbits(64))
        self.model = OnlineLeastSquares(self.prior, self.prior_strength, self.forget)
        self.submodels = [OnlineLeastSquares(self.prior[c], self.prior_strength, self.forget)
                          for c in self.submodel_columns]
        self.model_error = np.zeros(1 + len(self.submodels))  # forgetful squared error, predicted before learning
        self.active = 0  # 0: the full model; k: submodel k - 1
        self.link_model = OnlineLogistic()
        self._pooled: dict[str, np.ndarray] | None = None  # the last pooling across shards (load_parameters)
        self.graph = CrawlGraph(second_level=True, depth=False, spill_after=self.spill_after)
        self._track_own()
        self.words = WordColumn(self.spill_after)  # each URL's hashed words, for the link model
        self.host_fetched = np.zeros(64)
        self.host_relevant = np.zeros(64)
        self.host_ok = np.zeros(64)
        self._number_domains()
        self.fetched_total = self.relevant_total = 0
        self.others_fetched = 0  # pages other shards of a distributed crawl had fetched at the last pooling
        self.ranking = Ranking(self.graph, self._predict, self.keep)
        self.anchor_cache: dict[str, float] = {}
        self.since_rerank = 0
        # exploring steps: per evidence column, pages fetched by following it alone and their summed relevance
        self.explored_pulls = np.zeros(len(EVIDENCE))
        self.explored_relevance = np.zeros(len(EVIDENCE))
        self.exploring: dict[str, int] = {}  # URL -> the column an exploring step followed to it
        hosts = [site_of(u) for u in context.seeds]
        seeds, new = self.graph.intern(context.seeds, hosts)
        first = np.flatnonzero(new).tolist()  # a seed listed twice is one URL
        scores, halvings, halves = encode_own([SEED_EVIDENCE] * len(first))
        self._first_seen(seeds[first].tolist(), [hosts[k] for k in first],
                         [hashed_words(context.seeds[k], "") for k in first], scores, halvings, halves)
        self.ranking.update(seeds)

    def _track_own(self) -> None:
        """OWN's per-URL arrays (``encode_own``'s layout), grown with the graph."""
        self.graph.track(self, "own_scores", columns=len(SCORES))
        self.graph.track(self, "own_path", dtype=np.int16)
        self.graph.track(self, "own_local", dtype=np.int8)

    def own_rows(self, ids: np.ndarray | Sequence[int]) -> np.ndarray:
        """The OWN evidence of each URL of ``ids`` as float64s, one row each, in OWN order."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty((len(ids), len(OWN)))
        self._own_into(ids, out)
        return out

    def _own_into(self, ids: np.ndarray, out: np.ndarray) -> None:
        np.take(self.own_scores, ids, axis=0, out=out[:, :len(SCORES)], mode="clip")
        np.take(PATH_VALUES, np.take(self.own_path, ids, mode="clip"), out=out[:, len(SCORES)], mode="clip")
        np.take(LOCAL_VALUES, np.take(self.own_local, ids, mode="clip"), out=out[:, len(SCORES) + 1], mode="clip")

    def __setstate__(self, state: dict) -> None:
        # A checkpoint written before the measured options existed resumes with them off (ready_score: the default;
        # it orders only polite concurrent crawls, whose order depends on the clock anyway).
        self.__dict__.update(learn_exploration=False, submodel_columns=[], submodels=[], model_error=np.zeros(1),
                             active=0, explored_pulls=np.zeros(len(EVIDENCE)),
                             explored_relevance=np.zeros(len(EVIDENCE)), exploring={}, _pooled=None,
                             others_fetched=0, ready_score=0.8)
        self.__dict__.update(state)
        if "host_domain" not in state:  # a checkpoint from before domains were numbered: numbered from now on
            self._number_domains()
        if "own" in state:  # a checkpoint from before OWN was stored compactly: the same values, re-encoded
            del self.own
            self.graph.untrack(self, "own")
            old = state["own"]
            self._track_own()
            self.own_scores[:], self.own_path[:], self.own_local[:] = encode_own(old)
        if "words" not in state:
            raise ValueError("an adaptive checkpoint from before its words were kept in frontier.spill")
        if len(self.model.w) != len(EVIDENCE) + 1:  # resume then replays the whole log with this version's evidence
            raise ValueError(f"an adaptive checkpoint with {len(self.model.w) - 1} pieces of evidence; this version "
                             f"has {len(EVIDENCE)}")

    # -- evidence --------------------------------------------------------------------------------------
    def _first_seen(self, ids: list[int], hosts: list[str], words: list[np.ndarray],
                    scores: np.ndarray | list[tuple[float, ...]], halvings: int | np.ndarray,
                    halves: np.ndarray) -> None:
        """Evidence of URLs seen for the first time: their hosts, their hashed words for the link model, and
        their OWN evidence as ``encode_own`` stores it (scores, path's halvings, local's halves; each an array
        or one value for all). One call per page (numpy's per-call cost is most of the work per URL)."""
        if not ids:
            return
        index = np.asarray(ids, dtype=np.int64)
        self.own_scores[index] = scores
        self.own_path[index] = halvings
        self.own_local[index] = halves
        for host in hosts:
            self._host_id(host)
        self.words.append(ids, words)  # new ids come in order: the graph numbers URLs as it first sees them
        self.words.spill_if_due()

    def _words(self, i: int) -> np.ndarray:
        return self.words.get(i)

    @property
    def host(self) -> np.ndarray:
        """Each URL's host, numbered by the graph."""
        return self.graph.host

    @property
    def host_names(self) -> list[str]:
        return self.graph.host_names

    def _host_id(self, host: str) -> int:
        """The graph's number for ``host`` (a host of a URL it knows), its fetch counts grown to hold it."""
        hid = self.graph.host_ids[host]
        if hid >= len(self.host_fetched):
            grow = max(len(self.host_fetched), hid + 1 - len(self.host_fetched))
            self.host_fetched, self.host_relevant, self.host_ok = (
                np.concatenate([a, np.zeros(grow)]) for a in (self.host_fetched, self.host_relevant, self.host_ok))
            self.host_domain = np.concatenate([self.host_domain, np.full(grow, -1, np.int32)])
        return hid

    def _number_domains(self) -> None:
        """Each host's registered domain as a number, looked up once per host (``_domain``): per link, the
        domain's own cache (65,536 hosts) misses most of the time on a frontier of 10M URLs over 200,000 hosts."""
        self.host_domain = np.full(len(self.host_fetched), -1, np.int32)  # -1: not looked up yet
        self.domain_ids: dict[str, int] = {}

    def _domain(self, hid: int) -> int:
        """The number of host ``hid``'s registered domain: hosts of one organisation share it."""
        if hid >= len(self.host_domain):
            self._host_id(self.host_names[hid])
        domain = int(self.host_domain[hid])
        if domain < 0:
            domain = self.host_domain[hid] = self.domain_ids.setdefault(registered_domain(self.host_names[hid]),
                                                                        len(self.domain_ids))
        return domain

    def _local_halves(self, hid: int, hosts: list[str]) -> np.ndarray:
        """``local`` of links to ``hosts`` from a page on host ``hid``, in halves: 2 within its host, 1 within its
        registered domain, else 0."""
        number, domain = self.graph.host_ids.get, self._domain
        page_domain = domain(hid)
        halves = []
        for host in hosts:
            h = number(host)
            if h is None:  # not the host its URL was first seen with, so no number: compare the names
                halves.append(int(registered_domain(host) == registered_domain(self.host_names[hid])))
            else:
                halves.append(2 if h == hid else 1 if domain(h) == page_domain else 0)
        return np.array(halves, dtype=np.int8)

    def _host_evidence(self, hosts: np.ndarray, out: np.ndarray) -> None:
        """The HOST columns of each host into ``out`` (one row per host, in HOST order). ``site``: how often its
        pages were relevant, shrunk towards the crawl's mean by ``site_prior`` pseudo-fetches (an unseen host
        gets the mean). ``known``: whether one was fetched successfully. ``rare``: 1 - its share of the crawl's
        fetches (1 for a host not fetched yet; on a one-host web 0 once a page is fetched: it says nothing
        there); a shard owns its hosts, so their counts are the crawl's, and the share is of the whole crawl's
        fetches (``others_fetched``, from the last pooling)."""
        self._host_rows(self.host_fetched[hosts], self.host_relevant[hosts], self.host_ok[hosts], out)

    def _host_table(self) -> np.ndarray:
        """``_host_evidence`` of every host the graph knows, one row per host number: the same operations on the
        same numbers as per URL, so the same values, at one row per host rather than per URL."""
        known = len(self.host_names)
        table = np.empty((known, len(HOST)))
        self._host_rows(self.host_fetched[:known], self.host_relevant[:known], self.host_ok[:known], table)
        return table

    def _host_rows(self, fetched: np.ndarray, relevant: np.ndarray, ok: np.ndarray, out: np.ndarray) -> None:
        mean = (self.relevant_total + 1.0) / (self.fetched_total + 2.0)
        out[:, 0] = (relevant + self.site_prior * mean) / (fetched + self.site_prior)
        out[:, 1] = ok > 0
        out[:, 2] = 1.0 - fetched / max(self.fetched_total + self.others_fetched, 1)

    def _column(self, ids: np.ndarray, column: int) -> np.ndarray:
        """One piece of evidence for each URL of ``ids``."""
        if column < len(GRAPH):
            return self.graph.feature(ids, column)
        if column < len(GRAPH) + len(SCORES):
            return self.own_scores[ids, column - len(GRAPH)]
        if column < len(GRAPH) + len(OWN):
            return self.own_rows(ids)[:, column - len(GRAPH)]
        host = np.empty((len(ids), len(HOST)))  # exploring reads one HOST column for the whole frontier
        self._host_evidence(self.host[ids], host)
        return host[:, column - len(GRAPH) - len(OWN)]

    def _evidence(self, ids: np.ndarray) -> np.ndarray:
        """The evidence of each URL, in EVIDENCE order: one row per id. Gathered into one preallocated matrix
        (``take`` without bounds checks: ids are always known URLs), which halves a 1M-URL re-rank against
        stacking gathered copies, EVIDENCE_BLOCK rows at a time, so that writing its columns (every 16th number)
        stays in the CPU's cache: a third of the time again at 1M URLs. The values are the same."""
        x = np.empty((len(ids), len(EVIDENCE)))
        # more URLs than hosts (a re-rank): each host's evidence computed once, gathered per URL
        table = self._host_table() if len(ids) > len(self.host_names) else None
        for start in range(0, len(ids), EVIDENCE_BLOCK):
            part, rows = ids[start:start + EVIDENCE_BLOCK], x[start:start + EVIDENCE_BLOCK]
            self.graph.features_of(part, out=rows[:, :len(GRAPH)])
            self._own_into(part, rows[:, len(GRAPH):len(GRAPH) + len(OWN)])
            hosts = np.take(self.host, part, mode="clip")
            if table is None:
                self._host_evidence(hosts, rows[:, len(GRAPH) + len(OWN):])
            else:
                np.take(table, hosts, axis=0, out=rows[:, len(GRAPH) + len(OWN):], mode="clip")
        return x

    def _active_weights(self) -> np.ndarray:
        if self.active == 0:
            return self.model.w
        w = np.zeros(len(EVIDENCE) + 1)
        w[self.submodel_columns[self.active - 1]] = self.submodels[self.active - 1].w
        return w

    def _predict(self, ids: np.ndarray) -> np.ndarray:
        w = self._active_weights()
        if len(ids) <= PREDICT_ROWS:
            return self._evidence(ids) @ w[:-1] + w[-1]
        # A re-rank of a huge frontier, PREDICT_ROWS URLs at a time: one evidence matrix for all of them would
        # hold 128 bytes a URL for the re-rank's length (1.3 GB at 10M URLs), more than the frontier's own rows.
        out = np.empty(len(ids))
        for start in range(0, len(ids), PREDICT_ROWS):
            part = ids[start:start + PREDICT_ROWS]
            out[start:start + len(part)] = self._evidence(part) @ w[:-1] + w[-1]
        return out

    def _refresh_link_model(self, ids: np.ndarray) -> None:
        """The link model's current probability for every URL of ``ids``: one pass over all URLs' words, a chunk
        of whole URLs at a time (read from disk for spilled ones), summed per URL in word order, so each URL's sum
        is the same as word by word and whatever was spilled. Cheaper than gathering a large frontier's words URL
        by URL."""
        sums = np.zeros(len(self.words))
        link_w = self.link_model.w
        for first, lengths, words in self.words.chunks():
            owners = np.repeat(np.arange(len(lengths)), lengths)
            sums[first:first + len(lengths)] = np.bincount(owners, weights=link_w[words], minlength=len(lengths))
        # 1 / (1 + exp(-(sum + bias))), each operation in place on one array (a frontier's worth of temporaries
        # costs more than the arithmetic)
        z = sums[ids]
        z += self.link_model.bias
        np.negative(z, out=z)
        np.exp(z, out=z)
        z += 1.0
        self.own_scores[ids, SCORES.index("links")] = np.divide(1.0, z, out=z)

    def _rerank(self) -> None:
        self.since_rerank = 0
        if self.submodels:  # rank by the model that has predicted the crawl's recent pages best
            self.active = int(np.argmin(self.model_error))
        frontier = self.graph.frontier()
        if self.link_model.trained and len(frontier):
            self._refresh_link_model(frontier)
        self.ranking.rebuild()

    # -- the policy ------------------------------------------------------------------------------------
    def select(self) -> Selection | None:
        return self.select_ready(None)

    def select_ready(self, ready: Ready | None) -> Selection | None:
        """``select``, taking the best URL whose host ``ready`` accepts if it is predicted relevant (``ready_score``;
        ``Ranking.best``). Exploring steps keep their own choice: they are a tenth of the steps, and a wait for one
        of them costs no more than before."""
        graph = self.graph
        if graph.n_front == 0:
            return None
        self._rerank_if_due()
        if self.rng.random() < self.explore:
            column = self._exploration_column()
            frontier = graph.frontier()
            if len(frontier) > EXPLORE_SAMPLE:
                # Exploring shows the model what one piece of evidence would find: a top URL by it among a
                # uniform sample does that too (on 1M URLs, about the 50th best), at a fiftieth of the cost.
                frontier = frontier[self.sample_rng.integers(0, len(frontier), EXPLORE_SAMPLE)]
            values = self._column(frontier, column)
            best = int(np.argmax(values))
            i = int(frontier[best])
            score = None
            reason = ("exploring: a seed" if self._is_seed(i) else
                      f"exploring, by one kind of evidence alone: {self._describe(column, i, float(values[best]))}")
            if self.learn_exploration:
                self.exploring[graph.urls[i]] = column
        else:
            best = self.ranking.best(ready, self.ready_score)
            if best is None:
                return None
            i = best
            score = float(self.ranking.value[i])
            reason = self._explain(i, score)
        return self._take(i, score, reason)

    def _rerank_if_due(self) -> None:
        """One selection's turn of the re-ranking cadence: every ``rerank_every`` selections, more rarely on large
        frontiers."""
        self.since_rerank += 1
        # A re-rank is O(frontier), about 0.4 us per URL: spaced out on large frontiers (every 500 steps at 1M
        # URLs, where it is about 0.9 ms of a step amortised; docs/results.md, section 5).
        if self.since_rerank >= max(self.rerank_every, self.graph.n_front // RERANK_URLS_PER_STEP):
            self._rerank()

    def _take(self, i: int, score: float | None, reason: str) -> Selection:
        """URL ``i`` leaves the frontier as the selection; a subclass that chooses otherwise (focuscrawl.gym) takes
        its choice here too, so that the model learns from it as from its own."""
        self.graph.take(i)
        # memo: the evidence at selection time, what the model learns from once the page is scored
        return Selection(self.graph.urls[i], score, reason, memo=np.append(self._evidence(np.array([i]))[0], 1.0))

    def _exploration_column(self) -> int:
        """Which evidence an exploring step follows alone: uniformly at random, or (``learn_exploration``) by
        Thompson sampling on how relevant the pages that each evidence found alone were (a Beta posterior per
        column, relevance counted as a fractional success), so that exploration stops spending steps on
        evidence that finds nothing on this web and still tries every piece now and then."""
        if not self.learn_exploration:
            return self.rng.randrange(len(EVIDENCE))
        draws = self.sample_rng.beta(1.0 + self.explored_relevance,
                                     1.0 + self.explored_pulls - self.explored_relevance)
        return int(np.argmax(draws))

    def _explain(self, i: int, score: float) -> str:
        """The prediction and the (at most two) pieces of evidence that raised it most, in words."""
        if self._is_seed(i):
            return f"a seed, predicted relevance {score:.2f}"
        x = self._evidence(np.array([i]))[0]
        contributions = self._active_weights()[:-1] * x
        top = [k for k in np.argsort(-contributions, kind="stable")[:2] if contributions[k] > 0]
        return f"predicted relevance {score:.2f}" + (": " if top else "") + "; ".join(
            self._describe(k, i, x[k]) for k in top)

    def _is_seed(self, i: int) -> bool:
        """No crawled page links to URL ``i``: a seed, whose evidence is made up (SEED_EVIDENCE), not worth quoting."""
        return self.graph.fl[i, 0] == 0

    def _describe(self, column: int, i: int, value: float) -> str:
        """Evidence ``column`` of URL ``i``, worth ``value``, in words with the numbers a user can check."""
        if column < len(GRAPH):
            return self.graph.describe(i, column)
        name = EVIDENCE[column]
        if name == "parent":
            return f"linked from a page of relevance {value:.2f}"
        if name == "anchor":
            return f"the text around a link to it matches the topic ({value:.2f})"
        if name == "words":
            return f"its URL and anchor words match the topic ({value:.2f})"
        if name == "links":
            return f"links like it led to relevant pages ({value:.2f})"
        if name == "path":
            if value >= 1.0:
                return "one link from a relevant page"
            if value <= 0.0:  # halved past the smallest float
                return "far below any relevant page"
            return f"{round(-math.log2(value)) + 1} links below a relevant page"
        if name == "local":
            return ("on the same site as a page linking to it" if value >= 1.0 else
                    "in the same domain as a page linking to it" if value > 0 else
                    "on another site than the pages linking to it")
        host = int(self.host[i])
        fetched = int(self.host_fetched[host])
        if name == "site":
            return (f"its site's pages so far: {int(self.host_relevant[host])} of {fetched} relevant" if fetched else
                    f"a site not fetched yet, rated at the crawl's share of relevant pages ({value:.2f})")
        if name == "known":
            return "its site has served pages to the crawl" if value > 0 else "a site that has served no page yet"
        return (f"its site has had {1.0 - value:.0%} of the crawl's pages" if fetched else
                "a site with none of the crawl's pages yet")

    def observe(self, observation: Observation) -> None:
        graph = self.graph
        page = observation.page
        relevance = float(observation.relevance)
        relevant = observation.reward > 0
        w = graph.ids.get(observation.url)
        if w is None:  # not ours (cannot happen with the engine); record it as a seed would be
            host = site_of(observation.url)
            w = int(graph.intern([observation.url], [host])[0][0])
            self._first_seen([w], [host], [hashed_words(observation.url, "")], *encode_own([SEED_EVIDENCE]))
        if observation.selection.memo is not None:
            self.link_model.learn(self._words(w), float(relevant))
        column = self.exploring.pop(observation.url, None) if self.learn_exploration else None
        if column is not None:
            self.explored_pulls[column] += 1
            self.explored_relevance[column] += relevance
        hid = int(self.host[w])
        self.host_fetched[hid] += 1
        self.host_relevant[hid] += relevant
        self.host_ok[hid] += page.ok
        self.fetched_total += 1
        self.relevant_total += int(relevant)
        # a relevant page's links are one link from it; each irrelevant page on the way halves that (stored as
        # the number of halvings, which stops at PATH_ZERO, where path is 0.0 as halving 0.0 leaves it)
        halvings = 0 if relevant else min(int(self.own_path[w]) + 1, PATH_ZERO)

        links = observation.links
        kids, new = graph.intern([link.url for link in links], [link.host for link in links])
        crawled_kids, crawled_anchors = self.graph.crawled_targets(observation.url, observation.page.outlinks, kids)
        alpha = self._context_relevance(page.text, [link.anchor for link in links] + crawled_anchors,
                                        np.concatenate([kids, crawled_kids]), np.concatenate([new, np.zeros(
                                            len(crawled_kids), dtype=bool)]))
        halves = self._local_halves(hid, [link.host for link in links])
        # URLs known already: their parent, path and local evidence become the best of old and new (their anchor
        # is already their first link's: _context_relevance gave them that). A URL linked twice by the page has
        # the same new values at each link (one host, one page), so assigning the maxima is maximum.at's result.
        known = np.flatnonzero(~new & (graph.state[kids] == FRONTIER))
        if len(known):
            rows = kids[known]
            self.own_scores[rows, 0] = np.maximum(self.own_scores[rows, 0], relevance)
            self.own_path[rows] = np.minimum(self.own_path[rows], halvings)
            self.own_local[rows] = np.maximum(self.own_local[rows], halves[known])
        fresh = np.flatnonzero(new)
        if len(fresh):  # new URLs: all their evidence, for all of them at once
            urls = [links[k].url for k in fresh.tolist()]
            anchors = [links[k].anchor for k in fresh.tolist()]
            # topic words of a link: its URL and the anchor it was first seen with (computed once per URL)
            words = self.similarity.links([f"{url_text(u)} {a}" for u, a in zip(urls, anchors)])[:, 0]
            hashed, lengths = hashed_words_many(urls, anchors)
            link_prob = (self.link_model.predict_many(hashed, lengths) if self.link_model.trained else
                         [0.5] * len(fresh))
            scores = list(zip(repeat(relevance), alpha[fresh].tolist(), words.tolist(), link_prob))
            ends = np.cumsum(lengths).tolist()
            self._first_seen(kids[fresh].tolist(), [links[k].host for k in fresh.tolist()],
                             [hashed[start:end] for start, end in zip([0, *ends], ends)], scores, halvings,
                             halves[fresh])
        changed = graph.crawl(w, relevance, kids, alpha[:len(kids)], crawled_kids, alpha[len(kids):])
        touched = np.union1d(changed, kids[graph.state[kids] == FRONTIER])
        self.ranking.update(touched)
        if observation.selection.memo is not None:
            # The target: the page's relevance, plus (gamma > 0) the discounted best prediction among the links
            # it opens, so that evidence of pages that lead somewhere (a hub, a live site) earns credit too.
            target = relevance
            if self.gamma and len(kids):
                target += self.gamma * max(0.0, float(self.ranking.value[kids].max()))
            x = observation.selection.memo
            if self.submodels:
                predicted = [self.model.w @ x] + [m.w @ x[c] for m, c in zip(self.submodels, self.submodel_columns)]
                self.model_error = self.forget * self.model_error + (np.array(predicted) - target) ** 2
                for model, columns in zip(self.submodels, self.submodel_columns):
                    model.learn(x[columns], target)
            self.model.learn(x, target)

    def _context_relevance(self, text: str, anchors: list[str], ids: np.ndarray, new: np.ndarray) -> np.ndarray:
        """The classifier's probability on the context of each link (Gouriten et al.'s alpha): ``window``
        characters of text around its anchor, or (``window=0``) the anchor alone, whose answers repeat and
        are kept. Only a URL's first link is read: a link to a URL seen before reuses that URL's context
        relevance, which keeps the classifier's work to the new links of a page (a tenth of them, late in a
        Wikispeedia crawl)."""
        alpha = np.zeros(len(anchors))
        old = np.flatnonzero(~new)
        alpha[old] = self.own_scores[ids[old], SCORES.index("anchor")]
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

    # -- learning across shards (distributed crawls) ----------------------------------------------------
    # Every 100 pages unless the settings say otherwise: chosen on the suite's WebKB tuning rows at N=4 (of 20
    # and 100), confirmed on the held-out ones (docs/results.md, section 9).
    combine_every = 100

    # Pooled, not averaged: what each shard learned since the last pooling is added up, so that every shard
    # continues from the model one learner would have after all shards' samples. The evidence model's
    # samples add up exactly in least squares' information form; the link model's SGD steps are added as
    # the sum of each shard's weight change (as if the shards' steps had been taken one after another).
    # Only the link weights a shard changed travel (a few thousand of 2^18 between rounds), with the reference's
    # value at each, and only the weights some shard changed come back: the same pooled model as sending the
    # whole vectors, at a fraction of the bytes. Rounds are numbered, so a shard that missed one (it died
    # while it was loaded) is brought up to date by the driver re-sending it, in order.
    def parameters(self) -> dict[str, np.ndarray]:
        """What this shard learned since the last ``load_parameters``, and what it started from: the evidence
        model's statistics whole (a few numbers), the link weights it changed as indices and values."""
        information, moment = self.model.statistics()
        ref = self._pooled if self._pooled is not None else self._unpooled()
        since = self.model.samples - ref["samples"][0]
        decay = self.forget ** since  # what forgetting did to the reference while this shard learned
        ref_w = ref["link_w"]
        changed = np.flatnonzero(self.link_model.w != ref_w)  # the weights its SGD steps touched
        return {"information": information - decay * ref["information"], "moment": moment - decay * ref["moment"],
                "since": np.array([since]), "round": np.array([int(ref.get("round", np.zeros(1))[0])]),
                "link_index": changed.astype(np.int32), "link_change": self.link_model.w[changed] - ref_w[changed],
                "link_bias": np.array([self.link_model.bias - ref["link_bias"][0]]),
                "link_trained": np.array([self.link_model.trained - ref["link_trained"][0]]),
                "fetched": np.array([self.fetched_total]),
                "ref_link_value": ref_w[changed],
                **{f"ref_{name}": ref[name] for name in ("information", "moment", "link_bias", "link_trained",
                                                          "forget")}}

    @classmethod
    def combine_parameters(cls, shared: list[tuple[int, dict[str, np.ndarray]]]) -> dict[str, np.ndarray]:
        """The shards' changes added to their common reference (the last pooling's result): the evidence
        model whole, the link weights at the indices some shard changed (``link_index``, ``link_value``)."""
        changes = [p for _, p in shared]
        latest = max(int(p["round"][0]) for p in changes)
        # the reference of the latest round (a shard that missed a round reports an older one)
        base = next(p for p in changes if int(p["round"][0]) == latest)
        ref = {name[4:]: value for name, value in base.items() if name.startswith("ref_")}
        total = sum(int(p["since"][0]) for p in changes)
        forget = float(ref["forget"][0])
        index = np.unique(np.concatenate([p["link_index"] for p in changes]))
        value = np.zeros(len(index))
        for p in sorted(changes, key=lambda p: int(p["round"][0])):  # the latest round's reference values last
            value[np.searchsorted(index, p["link_index"])] = p["ref_link_value"]
        change = np.zeros(len(index))
        for p in changes:  # in the shards' order, as the dense sum adds them
            change[np.searchsorted(index, p["link_index"])] += p["link_change"]
        return {"information": forget ** total * ref["information"] + sum(p["information"] for p in changes),
                "moment": forget ** total * ref["moment"] + sum(p["moment"] for p in changes),
                "link_index": index.astype(np.int32), "link_value": value + change,
                "link_bias": ref["link_bias"] + sum(p["link_bias"] for p in changes),
                "link_trained": ref["link_trained"] + sum(p["link_trained"] for p in changes),
                "fetched": sum(p["fetched"] for p in changes),
                "forget": ref["forget"], "round": np.array([latest + 1])}

    def load_parameters(self, parameters: dict[str, np.ndarray]) -> None:
        self.model.set_statistics(parameters["information"], parameters["moment"])
        ref = self._pooled if self._pooled is not None else self._unpooled()
        if "link_w" in parameters:  # a whole vector: a round stored by a version that sent them whole
            ref_w = np.array(parameters["link_w"], dtype=np.float64)
        else:
            ref_w = ref["link_w"]  # updated in place: the reference is this policy's own copy
            index = parameters["link_index"]
            ref_w[index] = parameters["link_value"]
        # what this shard learned since reporting is overwritten, as a whole vector would: every weight the
        # reference's, which differ from the last reference only where some shard changed them
        self.link_model.w = ref_w.copy()
        self.link_model.bias = float(parameters["link_bias"][0])
        self.link_model.trained = int(parameters["link_trained"][0])
        self.others_fetched = max(0, int(parameters["fetched"][0]) - self.fetched_total)
        # the new reference; this shard's sample count restarts from it
        small = {k: np.array(v, copy=True) for k, v in parameters.items()
                 if k not in ("link_w", "link_index", "link_value")}
        self._pooled = {**small, "link_w": ref_w, "round": np.array([int(parameters.get("round", [0])[0])]),
                        "samples": np.array([self.model.samples])}

    def _unpooled(self) -> dict[str, np.ndarray]:
        """The reference before any pooling: the prior, and an untrained link model."""
        strength = np.eye(len(self.prior)) * self.prior_strength
        return {"information": strength, "moment": strength @ self.prior, "link_w": np.zeros_like(self.link_model.w),
                "link_bias": np.zeros(1), "link_trained": np.zeros(1), "forget": np.array([self.forget]),
                "samples": np.zeros(1), "round": np.zeros(1, dtype=np.int64)}


register(StrategySpec("adaptive", "learns online which evidence to trust (Gouriten's neighbourhood sums, parent and "
                                  "anchor relevance, Han's topic words, a link model, path, site): the default",
                      AdaptivePolicy))
