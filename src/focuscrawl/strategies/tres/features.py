"""TRES state-action features x(s, a) (journal 2.4.1, bucketing as arXiv 3.5.1).

One row per frontier sample, columns (``FEATURES``):

state, from path(tau), the web path of the page that extracted the link:
  0 ``parent_reward``      reward of that page (binary; its classifier probability with the agent's
                           ``parent_feature="probability"`` option)
  1 ``inv_distance``       1 / (edges from the link to the closest relevant page on the path); 0 if none.
                           A link whose parent is relevant has distance 1 (the paper's Figure 1: D, two
                           steps below the relevant A, has distance 2)
  2 ``path_ratio``         relevant pages / pages on the path (Figure 1: 2/3)
action, from the link itself:
  3 ``kw_url``             a keyword occurs in the URL's words (binary)
  4 ``kw_anchor``          a keyword occurs in the anchor text (binary)
  5 ``anchor_prob``        a classifier's probability on the anchor text (continuous, never bucketed:
                           arXiv 3.5.1 found the raw probability gives better Tree-Frontier splits); by
                           default the mean of the reward classifier and a TF-IDF model (see
                           ``parse_anchor_model``; with several ``,`` groups there is one column each and
                           the hub columns follow them). One ``predict_proba`` call per model and fetched
                           page for all its links. An empty anchor is replaced by the URL's words, so the
                           classifier always sees some text
web-domain ("hub") features, dropped by ``tres-nh`` (``FeatureBuilder.hub_columns``):
  6 ``domain_ratio``       relevant / fetched pages of the link's host so far (0 for an unknown host)
  7 ``domain_known``       0.5 if the host was never fetched, else 1 (the paper's convention)

Bucketing (arXiv 3.5.1, values as in the authors' code): every continuous feature but ``anchor_prob`` is
mapped to 11 buckets: exactly 0, (0, 0.1) (kept apart from 0 so "some" never equals "none"), then
[0.1, 0.2), ..., [0.9, 1.0) by their lower bound, and exactly 1. Buckets keep the tree's thresholds few
and make a host's features change only when its ratio crosses a bucket boundary (see tree_frontier.py
for how such a change moves the host's frontier samples).

Keywords: ``get_keywords`` is the single place that decides the keyword set: the topic's keywords
expanded by ``focuscrawl.topic.keywords.expand_keywords`` (journal 2.3, Algorithm 1). Matching is on word
boundaries, multi-word keywords as phrases, both on ``focuscrawl.topic.text.phrase_text`` (lower-cased text
where every non-alphanumeric run is one space, so ``/wiki/Bird_migration`` contains "bird migration").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

from focuscrawl.policy import CrawlContext
from focuscrawl.topic.text import phrase_text, url_text
from focuscrawl.types import RelevanceModel, TopicInputs

FEATURES = ("parent_reward", "inv_distance", "path_ratio", "kw_url", "kw_anchor", "anchor_prob",
            "domain_ratio", "domain_known")
N_STATE = 3
UNKNOWN_DOMAIN = 0.5
KNOWN_DOMAIN = 1.0

# phrase_text's normalisation for a batch of texts joined by newlines (see KeywordMatcher)
_NOT_ALNUM_OR_NEWLINE = re.compile(r"[^a-z0-9\n]+")


_KEYWORD_CACHE: dict[tuple, list[str]] = {}


def _examples_key(topic: TopicInputs) -> tuple:
    """What the per-process caches below depend on: the topic's name and its labelled example texts."""
    return topic.name, len(topic.example_texts), hash(tuple(topic.example_texts)), hash(tuple(topic.example_labels))


def get_keywords(context: CrawlContext) -> list[str]:
    """The keyword set K of the topic, expanded by Algorithm 1 (``focuscrawl.topic.keywords``).

    Expansion scans every word of the relevant example texts; it depends only on the topic inputs, so it is
    computed once per topic and process, not once per crawl.
    """
    from focuscrawl.topic.keywords import expand_keywords

    topic = context.topic
    key = (tuple(topic.keywords), *_examples_key(topic))
    if key not in _KEYWORD_CACHE:
        _KEYWORD_CACHE[key] = list(expand_keywords(topic).all)
    return _KEYWORD_CACHE[key]


_ANCHOR_MODEL_CACHE: dict[tuple, RelevanceModel] = {}


def parse_anchor_model(spec: str) -> list[list[str]]:
    """``"reward+tfidf"`` -> [["reward", "tfidf"]]: one ``anchor_prob`` column per ``,``-separated group, the
    mean of the group's models in it. ``reward`` is the reward classifier; other names are models of
    ``focuscrawl.topic.models`` trained on the topic's example texts."""
    from focuscrawl.topic.models import RELEVANCE_MODELS

    groups = [group.split("+") for group in spec.split(",")]
    names = [name for group in groups for name in group]
    if not all(names) or any(n != "reward" and n not in RELEVANCE_MODELS for n in names):
        raise ValueError(f"anchor_model must be 'reward' or one of {', '.join(sorted(RELEVANCE_MODELS))} "
                         f"('+' averages models into one feature, ',' gives one feature each), got {spec!r}")
    return groups


def anchor_classifiers(context: CrawlContext, groups: list[list[str]]) -> list[RelevanceModel]:
    """One classifier per anchor column (see ``parse_anchor_model``)."""
    columns = []
    for group in groups:
        models = [context.classifier if name == "reward" else anchor_classifier_for(context, name) for name in group]
        columns.append(models[0] if len(models) == 1 else MeanRelevance(models))
    return columns


def anchor_classifier_for(context: CrawlContext, name: str) -> RelevanceModel:
    """The named relevance model (``focuscrawl.topic.models``) trained on the topic's example texts, for the
    ``anchor_prob`` feature when it is not the reward classifier. Trained once per topic, seed and process."""
    from focuscrawl.topic.models import train_relevance_model

    topic = context.topic
    key = (name, context.seed, *_examples_key(topic))
    if key not in _ANCHOR_MODEL_CACHE:
        _ANCHOR_MODEL_CACHE[key] = train_relevance_model(name, topic, context.seed)
    return _ANCHOR_MODEL_CACHE[key]


class MeanRelevance:
    """The mean probability of several fitted relevance models (an anchor feature that none of them owns)."""

    def __init__(self, models: Sequence[RelevanceModel]):
        self.models = list(models)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.mean([np.asarray(m.predict_proba(texts), dtype=np.float64) for m in self.models], axis=0)


def bucket(values: np.ndarray | float) -> np.ndarray:
    """Map values in [0, 1] to the 11 buckets of arXiv 3.5.1 (vectorised)."""
    v = np.clip(np.asarray(values, dtype=np.float32), 0.0, 1.0)
    out = np.floor(v * 10.0 + 1e-6) / 10.0
    out = np.where((v > 0) & (out == 0), 0.01, out)
    return np.where(v >= 1.0, 1.0, out).astype(np.float32)


@functools.lru_cache(maxsize=1 << 16)
def _bucketed_ratio(relevant: int, fetched: int) -> float:
    """bucket(relevant / fetched) for one host. Called for every outlink's host; the count pairs repeat, and
    a numpy call on a scalar costs 20 us, which was a sixth of a TRES decision."""
    return float(bucket(relevant / fetched))


class KeywordMatcher:
    """Does a text contain any keyword? One compiled alternation, so each text is one C-level scan."""

    def __init__(self, keywords: Sequence[str]):
        phrases = sorted({phrase_text(k).strip() for k in keywords if phrase_text(k).strip()}, key=len, reverse=True)
        self.pattern = re.compile(" (?:" + "|".join(re.escape(p) for p in phrases) + ") ") if phrases else None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        found = np.zeros(len(texts), dtype=np.float32)
        if self.pattern is None or not texts:
            return found
        # One normalisation and one scan over all texts joined by newlines (a keyword never contains one, so
        # no match spans two texts): two C calls per batch instead of two per link. What is left is ASCII, so
        # byte offsets are character offsets, and " \n " pads each text with the spaces phrase matching needs.
        lines = "\n".join(t.replace("\n", " ") for t in texts).lower()
        joined = " " + _NOT_ALNUM_OR_NEWLINE.sub(" ", lines).replace("\n", " \n ") + " "
        starts = [match.start() for match in self.pattern.finditer(joined)]
        if starts:
            line_starts = np.flatnonzero(np.frombuffer(joined.encode("ascii"), dtype=np.uint8) == 10)
            found[np.searchsorted(line_starts, starts)] = 1.0
        return found


def url_words(url: str) -> str:
    """The URL without its scheme, as words: what an empty anchor is replaced by for the classifier."""
    return phrase_text(url_text(url)).strip()


class FeatureBuilder:
    """Computes x(s, a) for batches of outlinks and keeps the statistics the state features need.

    Path statistics are kept per fetched page (by an integer page id): path length, relevant pages on the
    path, and edges to the closest relevant page on it (``inf`` when none). Domain statistics are kept per
    host: fetched and relevant page counts.
    """

    def __init__(self, context: CrawlContext, hub_features: bool = True,
                 classifiers: Sequence[RelevanceModel] | None = None):
        # one anchor-probability column per classifier (default: the context's, the reward classifier)
        self.classifiers = [context.classifier] if not classifiers else list(classifiers)
        self.matcher = KeywordMatcher(get_keywords(context))
        self.hub_features = hub_features
        n_anchor = len(self.classifiers)
        self.anchor_columns = slice(5, 5 + n_anchor)
        self.hub_columns = slice(5 + n_anchor, 7 + n_anchor)
        self.n_features = 5 + n_anchor + (2 if hub_features else 0)
        self.path_len: list[int] = []
        self.path_rel: list[int] = []
        self.rel_dist: list[float] = []
        self.page_reward: list[float] = []
        self.host_fetched: dict[str, int] = {}
        self.host_relevant: dict[str, int] = {}
        self.anchor_cache: dict[str, tuple[float, ...]] = {}

    # -- pages and hosts ------------------------------------------------------------------------
    def add_page(self, parent: int, reward: float, parent_value: float | None = None) -> int:
        """Record a fetched page whose frontier sample came from page ``parent`` (-1 for a seed).

        ``parent_value`` is what its outlinks see as the ``parent_reward`` feature: the binary reward by
        default (the paper), or e.g. the classifier's probability (``TresPolicy(parent_feature=...)``)."""
        relevant = reward > 0
        if parent < 0:
            length, rel, dist = 1, int(relevant), 0.0 if relevant else np.inf
        else:
            length = self.path_len[parent] + 1
            rel = self.path_rel[parent] + int(relevant)
            dist = 0.0 if relevant else self.rel_dist[parent] + 1.0
        self.path_len.append(length)
        self.path_rel.append(rel)
        self.rel_dist.append(dist)
        self.page_reward.append(float(relevant) if parent_value is None else float(parent_value))
        return len(self.path_len) - 1

    def add_host_fetch(self, host: str, reward: float) -> None:
        self.host_fetched[host] = self.host_fetched.get(host, 0) + 1
        self.host_relevant[host] = self.host_relevant.get(host, 0) + int(reward > 0)

    def hub_values(self, host: str) -> tuple[float, float]:
        """(bucketed domain relevance ratio, known-domain flag) of a host, as of now."""
        fetched = self.host_fetched.get(host, 0)
        if fetched == 0:
            return 0.0, UNKNOWN_DOMAIN
        return _bucketed_ratio(self.host_relevant[host], fetched), KNOWN_DOMAIN

    def state_features(self, page: int) -> np.ndarray:
        """The three state features shared by every outlink of fetched page ``page`` (-1: the empty s_-1)."""
        if page < 0:
            return np.zeros(N_STATE, dtype=np.float32)
        dist = self.rel_dist[page]
        # both are ratios of small integers: the cached per-pair bucket, not three numpy calls per page
        inv = 0.0 if dist == np.inf else _bucketed_ratio(1, int(dist) + 1)
        return np.array([self.page_reward[page], inv, _bucketed_ratio(self.path_rel[page], self.path_len[page])],
                        dtype=np.float32)

    # -- the batch computation ------------------------------------------------------------------
    def anchor_probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """Each classifier's probability per anchor text (n x classifiers): one batched call per classifier for
        the texts not seen before.

        Anchors repeat a lot (navigation links, article titles), so the crawl keeps each answer; the model is
        a fixed function of the text during a crawl, so this changes no feature value.
        """
        cache = self.anchor_cache
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            columns = [np.asarray(c.predict_proba(missing), dtype=np.float32).tolist() for c in self.classifiers]
            cache.update(zip(missing, zip(*columns)))
        return np.array([cache[t] for t in texts], dtype=np.float32).reshape(len(texts), len(self.classifiers))

    def outlink_features(self, page: int, urls: Sequence[str], anchors: Sequence[str],
                         hosts: Sequence[str]) -> np.ndarray:
        """x(s, a) for every outlink of fetched page ``page``: one classifier call for the whole batch."""
        n = len(urls)
        x = np.empty((n, self.n_features), dtype=np.float32)
        if n == 0:
            return x
        x[:, :N_STATE] = self.state_features(page)
        x[:, 3] = self.matcher(urls)
        x[:, 4] = self.matcher(anchors)
        texts = [a if a.strip() else url_words(u) for u, a in zip(urls, anchors)]
        x[:, self.anchor_columns] = self.anchor_probabilities(texts)
        if self.hub_features:
            cache: dict[str, tuple[float, float]] = {}
            ratio, known = self.hub_columns.start, self.hub_columns.start + 1
            for i, host in enumerate(hosts):
                values = cache.get(host)
                if values is None:
                    values = cache[host] = self.hub_values(host)
                x[i, ratio], x[i, known] = values
        return x
