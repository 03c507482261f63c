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
- seeds of run i: ``seeds_per_run`` relevant, not held-out pages with outlinks, drawn by a generator
  seeded with (seed, topic, i), so run i is the same for every strategy and every rerun.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from focuscrawl.config import EXAMPLES_IRRELEVANT, EXAMPLES_RELEVANT
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.web.graph import UNREACHABLE, LinkGraph
from focuscrawl.web.store import OfflineWeb, label_matches, split_labels


class TopicError(ValueError):
    """The topic cannot be benchmarked on this web (unknown label, too few pages, ...)."""


@dataclass
class GroundTruth:
    """The relevant URLs of a topic on a labelled web (held-out example pages excluded), and the web, whose
    link graph gives the oracle its distances. For scoring and the oracles only."""

    topic: str
    relevant: frozenset[str]
    web: OfflineWeb | None = field(default=None, repr=False)

    @cached_property
    def graph(self) -> LinkGraph | None:
        return self.web.link_graph() if self.web is not None else None

    def __call__(self, url: str) -> bool:
        return url in self.relevant

    @property
    def total(self) -> int:
        return len(self.relevant)

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


@dataclass
class BenchTopic:
    """Everything the benchmark needs for one topic on one web."""

    inputs: TopicInputs
    truth: GroundTruth
    seed_pool: list[str]
    seed: int
    held_out: int = 0  # pages excluded from scoring because examples come from them
    held_out_relevant: int = 0

    def seeds_for_run(self, run: int, count: int) -> list[str]:
        if count > len(self.seed_pool):
            raise TopicError(f"topic {self.truth.topic!r} has only {len(self.seed_pool)} candidate seed pages")
        rng = random.Random(f"{self.seed}:{self.truth.topic}:seeds:{run}")
        return rng.sample(self.seed_pool, count)


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
    examples_relevant: int = EXAMPLES_RELEVANT,
    examples_irrelevant: int = EXAMPLES_IRRELEVANT,
) -> BenchTopic:
    labels = web.labels()
    all_labels = {label for text in labels.values() for label in split_labels(text)}
    relevant = frozenset(url for url, text in labels.items() if label_matches(text, topic))
    if not relevant:
        close = sorted(label for label in all_labels if topic.lower() in label.lower())[:10]
        hint = f" Labels containing it: {', '.join(close)}" if close else ""
        raise TopicError(f"no page of {web.name!r} is labelled {topic!r}.{hint}")

    pattern = (web.meta.get("topic_defaults") or {}).get("train_host_pattern")
    train_host = re.compile(pattern).search if pattern else None
    pool_pos, pool_neg, candidates = [], [], []
    held_out: set[str] = set()
    for record in web.records():
        in_train = train_host is not None and bool(train_host(record.host))
        if in_train:
            held_out.add(record.url)
        if not 200 <= record.status < 300:
            continue
        is_relevant = record.url in relevant
        if train_host is None or in_train:
            (pool_pos if is_relevant else pool_neg).append(record.url)
        if not in_train and is_relevant and record.outdegree > 0:
            candidates.append(record.url)

    rng = random.Random(f"{seed}:{topic}:examples")
    if train_host is None:  # examples are taken from the topic itself: at most half of it, on a small web
        examples_relevant = min(examples_relevant, max(1, len(pool_pos) // 2))
    positives = rng.sample(pool_pos, min(examples_relevant, len(pool_pos)))
    negatives = rng.sample(pool_neg, min(examples_irrelevant, len(pool_neg)))
    if train_host is None:
        held_out = set(positives) | set(negatives)
    seed_pool = sorted(url for url in candidates if url not in held_out)
    if not seed_pool:
        raise TopicError(f"topic {topic!r} has no relevant page with outlinks to start a crawl from")
    texts, example_labels = [], []
    for urls, label in ((positives, 1), (negatives, 0)):
        for text in web.texts(urls):
            if text.strip():
                texts.append(text)
                example_labels.append(label)
    if len(set(example_labels)) < 2:
        raise TopicError(f"topic {topic!r} needs relevant and irrelevant example pages with text")
    inputs = TopicInputs(
        name=topic,
        keywords=topic_keywords(topic, all_labels),
        example_texts=texts,
        example_labels=example_labels,
    )
    scored = relevant - held_out
    return BenchTopic(inputs=inputs, truth=GroundTruth(topic, scored, web), seed_pool=seed_pool,
                      seed=seed, held_out=len(held_out), held_out_relevant=len(relevant) - len(scored))


def init_from_web(
    directory: str | Path,
    web_dir: str | Path,
    label: str,
    *,
    seed: int = 0,
    seeds: int = 1,
    run: int = 0,
    overwrite: bool = False,
) -> TopicInputs:
    """A topic directory from a labelled offline web: the benchmark's examples, keywords and run ``run``'s
    seeds, so that a crawl of the served web gets exactly the inputs ``focuscrawl bench`` gives an agent."""
    web = OfflineWeb(web_dir)
    try:
        bench = load_topic(web, label, seed=seed)
        topic = bench.inputs
        topic.seeds = bench.seeds_for_run(run, seeds) if seeds > 0 else []
    finally:
        web.close()
    write_topic_dir(directory, topic, overwrite=overwrite)
    return topic
