"""The benchmark protocol: how a labelled offline web becomes a topic's agent inputs, seeds and judge.

Labels are read here and only here (and by the oracles through ``GroundTruth``). What leaves this module
for an agent is a ``TopicInputs``: keywords derived from the topic's name and sub-category names, and a
fixed, seeded sample of labelled example *texts*, as a user would provide. Defaults:

- example texts: ``EXAMPLES_RELEVANT`` (20; at most half of the topic's pages when the examples come from
  the topic itself) relevant and ``EXAMPLES_IRRELEVANT`` (80) irrelevant pages with text, sampled with the
  configured seed. Tens, as a user has them: a user can collect twenty pages they
  want, and pages they do not want are cheap to find (any generic crawl), so four times as many. (Until
  0.1 the protocol took 50 + 200, half of a small topic such as Food and agriculture.)
- examples are never scored: the pages they come from are *held out*, counted neither as relevant pages
  found nor in ``relevant_total``, for every strategy and the oracle alike. On webs whose
  ``topic_defaults.train_host_pattern`` is set (WebKB: ``cornell\\.edu$``) the examples come only from
  matching hosts and every page of those hosts is held out (train on one university, crawl the rest);
  elsewhere the held-out pages are the sampled examples themselves;
- seeds of run i: ``seeds_per_run`` pages drawn by a generator seeded with (seed, topic, i), so run i is
  the same for every strategy and every rerun, from the topic's *seed pool*: relevant, not held-out pages
  with outlinks from each of which a crawl can fetch at least ``min(budget, ceil(seed_reach_share * P))``
  pages, P being the web's 2xx pages (``seed_reach_share``: ``SEED_REACH_SHARE``, 0.1, a bench setting).
  A user's seeds are hubs; a page whose links lead only back to itself or into a handful of pages ends every
  crawl at once, the oracle's included, and the row reports AUC/oracle 1.000 for every strategy. Reach
  (``focuscrawl.webs.graph``) counts
  2xx pages, following links out of 2xx pages and redirects to their targets, through any page, held-out
  ones included (a crawl fetches them; they are only unscored); dead ends cost a fetch but give nothing, so
  they do not count. It ignores the per-domain cap and ``max_outlinks``, which limit every strategy alike. The share
  keeps the rule satisfiable on webs smaller than ten budgets (Wikispeedia's 4,598 pages: 460; WebKB's
  5,766: 577; the embedded web's 345: 35). The rule is per seed, not per run's seeds together, so the pool
  does not depend on how many seeds a run takes and each seed can start a crawl of its own. Where every
  candidate qualifies (every Wikispeedia topic) the draws are those of the rule before it; when fewer pages
  qualify than a run takes, ``seeds_for_run`` raises ``TopicError`` saying so in one line.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from focuscrawl.config import EXAMPLES_IRRELEVANT, EXAMPLES_RELEVANT, SEED_REACH_SHARE, RunSettings
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.webs.graph import UNREACHABLE, LinkGraph
from focuscrawl.webs.store import OfflineWeb, label_matches, split_labels


class TopicError(ValueError):
    """The topic cannot be benchmarked on this web (unknown label, too few pages, ...)."""


@dataclass
class GroundTruth:
    """The relevant URLs of a topic on a labelled web (held-out example pages excluded), and the web, whose
    link graph gives the oracle its distances. For scoring and the oracles only.

    On a messy web (``focuscrawl web mess``) ``originals`` maps each copy of a page (a session id, tracking
    parameters, a mirror, a twin, a near-duplicate, a redirect) to the page: a crawl that fetches a copy of a
    relevant page has found that page, once (``credit_once``). Calling the truth itself answers for the URL
    alone, so an oracle goes for the pages, not their copies."""

    topic: str
    relevant: frozenset[str]
    web: OfflineWeb | None = field(default=None, repr=False)
    originals: Mapping[str, str] = field(default_factory=dict, repr=False)

    @cached_property
    def graph(self) -> LinkGraph | None:
        return self.web.link_graph() if self.web is not None else None

    def __call__(self, url: str) -> bool:
        return url in self.relevant

    @property
    def total(self) -> int:
        return len(self.relevant)

    def credit_once(self) -> CreditOnce:
        """The judge of one crawl's events (a new one per crawl)."""
        return CreditOnce(self)

    def steps_to_relevant(self, found: Collection[str]) -> dict[str, int]:
        """Links from each page to the nearest relevant page not in ``found``; pages that reach none are left
        out (so are all pages when the web's graph is unknown)."""
        if self.graph is None:
            return {}
        index = self.graph.index
        dist = self.graph.distances_to(index[u] for u in self.relevant if u not in found and u in index)
        reached = (dist != UNREACHABLE).nonzero()[0]
        urls = self.graph.urls
        return {urls[i]: int(dist[i]) for i in reached.tolist()}


class CreditOnce:
    """One crawl's scoring: a fetched URL is a relevant page found when the page it shows (itself, or the
    original of a copy) is relevant and was not found before in this crawl, so a page counts once however
    many of its URLs the crawl fetched. On a web without copies it answers as ``GroundTruth`` does (the
    engine judges each fetched URL once)."""

    def __init__(self, truth: GroundTruth):
        self.truth = truth
        self.found: set[str] = set()

    def __call__(self, url: str) -> bool:
        page = self.truth.originals.get(url, url)
        if page in self.found or page not in self.truth.relevant:
            return False
        self.found.add(page)
        return True


DEFAULT_BUDGET: int = RunSettings.model_fields["budget"].default


@dataclass
class BenchTopic:
    """Everything the benchmark needs for one topic on one web."""

    inputs: TopicInputs
    truth: GroundTruth
    candidates: list[str]  # relevant, not held-out 2xx pages with outlinks, sorted
    seed: int
    budget: int = DEFAULT_BUDGET
    reach_share: float = SEED_REACH_SHARE
    held_out: int = 0  # pages excluded from scoring because examples come from them
    held_out_relevant: int = 0
    held_out_pages: frozenset[str] = frozenset()  # those pages' URLs

    @property
    def graph(self) -> LinkGraph:
        graph = self.truth.graph
        if graph is None:
            raise TopicError(f"topic {self.truth.topic!r} has no web to draw seeds from")
        return graph

    @cached_property
    def reach_threshold(self) -> int:
        """Pages each seed must be able to reach: the budget, or the share of the web's 2xx pages if fewer."""
        return max(1, min(self.budget, math.ceil(self.reach_share * int(self.graph.counted.sum()))))

    @cached_property
    def seed_pool(self) -> list[str]:
        """The candidates from which a crawl can fetch at least ``reach_threshold`` pages."""
        index = self.graph.index
        able = self.graph.can_reach((index[url] for url in self.candidates), self.reach_threshold)
        return [url for url, ok in zip(self.candidates, able.tolist()) if ok]

    def reach(self, seeds: Collection[str]) -> int:
        """2xx pages a crawl from ``seeds`` can fetch, with no budget (what ``summary.json`` records per run)."""
        index = self.graph.index
        return self.graph.reach(index[url] for url in seeds if url in index)

    def seeds_for_run(self, run: int, count: int) -> list[str]:
        """Run ``run``'s ``count`` seeds from the seed pool; ``TopicError`` when the pool holds fewer."""
        pool = self.seed_pool
        if count > len(pool):
            pages = int(self.graph.counted.sum())
            raise TopicError(
                f"topic {self.truth.topic!r} on {self.truth.web.name!r} cannot be seeded: "
                f"{'only ' + str(len(pool)) if pool else 'none'} of its {len(self.candidates)} candidate seed pages "
                f"(relevant, with outlinks) can reach {self.reach_threshold:,} pages (the budget, {self.budget:,}, "
                f"or {self.reach_share:g} of the web's {pages:,} pages if fewer) and a run takes {count}")
        rng = random.Random(f"{self.seed}:{self.truth.topic}:seeds:{run}")
        return rng.sample(pool, count)


def topic_keywords(topic: str, all_labels: set[str]) -> list[str]:
    """The topic's own name and its sub-categories' names, as a user browsing the taxonomy would type them."""
    names = [topic.split(".")[-1]]
    prefix = topic + "."
    for label in sorted(all_labels):
        if label.startswith(prefix):
            names.extend(label[len(prefix):].split("."))
    keywords: list[str] = []
    for name in names:
        keyword = re.sub(r"[_\s]+", " ", name).strip().lower()
        if keyword and keyword not in keywords:
            keywords.append(keyword)
    return keywords


def load_topic(
    web: OfflineWeb,
    topic: str,
    seed: int = 0,
    *,
    budget: int = DEFAULT_BUDGET,
    reach_share: float = SEED_REACH_SHARE,
    examples_relevant: int = EXAMPLES_RELEVANT,
    examples_irrelevant: int = EXAMPLES_IRRELEVANT,
) -> BenchTopic:
    """The topic's agent inputs, ground truth and seed candidates; ``budget`` and ``reach_share`` set how many
    pages a seed must reach. The seed pool is computed here, while ``web`` is open (a caller may close it before
    drawing seeds); a topic with too few seeds fails only when seeds are drawn."""
    labels = web.labels()
    all_labels = {label for text in labels.values() for label in split_labels(text)}
    relevant = frozenset(url for url, text in labels.items() if label_matches(text, topic))
    if not relevant:
        close = sorted(label for label in all_labels if topic.lower() in label.lower())[:10]
        hint = f" Labels containing it: {', '.join(close)}" if close else ""
        raise TopicError(f"no page of {web.name!r} is labelled {topic!r}.{hint}")
    injected = web.injected()  # a messy web's traps and copies: never examples or seeds, as a user's are not
    pools = _example_pools(web, relevant, injected)
    rng = random.Random(f"{seed}:{topic}:examples")
    if pools.train_host is None:  # examples are taken from the topic itself: at most half of it, on a small web
        examples_relevant = min(examples_relevant, max(1, len(pools.positive) // 2))
    positives = rng.sample(pools.positive, min(examples_relevant, len(pools.positive)))
    negatives = rng.sample(pools.negative, min(examples_irrelevant, len(pools.negative)))
    held_out = pools.held_out if pools.train_host is not None else set(positives) | set(negatives)
    seed_candidates = sorted(url for url in pools.candidates if url not in held_out)
    if not seed_candidates:
        raise TopicError(f"topic {topic!r} has no relevant page with outlinks to start a crawl from")
    inputs = TopicInputs(name=topic, keywords=topic_keywords(topic, all_labels),
                         **_example_texts(web, topic, positives, negatives))
    scored = relevant - held_out
    originals = {url: row.original for url, row in injected.items() if row.original is not None}
    bench = BenchTopic(inputs=inputs, truth=GroundTruth(topic, scored, web, originals), candidates=seed_candidates,
                       seed=seed, budget=budget, reach_share=reach_share, held_out=len(held_out),
                       held_out_pages=frozenset(held_out), held_out_relevant=len(relevant) - len(scored))
    bench.seed_pool  # computed (with the link graph) while the web is open: a caller may close it next
    return bench


@dataclass
class _ExamplePools:
    """Where a topic's example pages and seeds may come from. ``train_host``: the web's training hosts (WebKB's
    train university), whose pages are held out from the crawl; without it, examples come from the topic itself."""

    train_host: Callable[[str], object] | None
    positive: list[str]
    negative: list[str]
    candidates: list[str]  # relevant pages with outlinks, outside the training hosts: seed candidates
    held_out: set[str]


def _example_pools(web: OfflineWeb, relevant: frozenset[str], injected: Collection[str]) -> _ExamplePools:
    pattern = (web.meta.get("topic_defaults") or {}).get("train_host_pattern")
    train_host = re.compile(pattern).search if pattern else None
    pools = _ExamplePools(train_host, [], [], [], set())
    for record in web.records():
        if record.url in injected:
            continue
        in_train = train_host is not None and bool(train_host(record.host))
        if in_train:
            pools.held_out.add(record.url)
        if not 200 <= record.status < 300:
            continue
        is_relevant = record.url in relevant
        if train_host is None or in_train:
            (pools.positive if is_relevant else pools.negative).append(record.url)
        if not in_train and is_relevant and record.outdegree > 0:
            pools.candidates.append(record.url)
    return pools


def _example_texts(web: OfflineWeb, topic: str, positives: list[str], negatives: list[str]) -> dict[str, list]:
    """The example pages' texts (empty ones left out) and their labels, as ``TopicInputs`` takes them."""
    texts, example_labels = [], []
    for urls, label in ((positives, 1), (negatives, 0)):
        for text in web.texts(urls):
            if text.strip():
                texts.append(text)
                example_labels.append(label)
    if len(set(example_labels)) < 2:
        raise TopicError(f"topic {topic!r} needs relevant and irrelevant example pages with text")
    return {"example_texts": texts, "example_labels": example_labels}


def init_from_web(
    directory: str | Path,
    web_dir: str | Path,
    label: str,
    *,
    seed: int = 0,
    seeds: int = 1,
    run: int = 0,
    budget: int = DEFAULT_BUDGET,
    reach_share: float = SEED_REACH_SHARE,
    overwrite: bool = False,
) -> TopicInputs:
    """A topic directory from a labelled offline web: the benchmark's examples, keywords and run ``run``'s
    seeds (drawn for ``budget`` as ``focuscrawl bench --budget`` draws them), so that a crawl of the served web
    gets exactly the inputs ``focuscrawl bench`` gives an agent."""
    web = OfflineWeb(web_dir)
    try:
        bench = load_topic(web, label, seed=seed, budget=budget, reach_share=reach_share)
        topic = bench.inputs
        topic.seeds = bench.seeds_for_run(run, seeds) if seeds > 0 else []
    finally:
        web.close()
    write_topic_dir(directory, topic, overwrite=overwrite)
    return topic
