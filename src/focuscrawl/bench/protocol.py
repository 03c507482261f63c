"""The benchmark protocol: how a labelled offline web becomes a topic's agent inputs, seeds and judge.

Labels are read here and only here (and by the oracle through ``GroundTruth``). What leaves this module
for an agent is a ``TopicInputs``: keywords derived from the topic's name and sub-category names, and a
fixed, seeded sample of labelled example *texts*, as a user would provide. Defaults:

- example texts: up to 50 relevant and 200 irrelevant pages with text, sampled with the configured seed;
  on webs whose ``topic_defaults.train_host_pattern`` is set (WebKB: ``cornell\\.edu$``) they come only
  from matching hosts and seeds only from the others (train on one university, crawl the rest);
- seeds of run i: ``seeds_per_run`` relevant pages with outlinks, drawn from the crawl pool by a generator
  seeded with (seed, topic, i), so run i is the same for every strategy and every rerun.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.web.store import OfflineWeb, label_matches, split_labels

EXAMPLES_RELEVANT = 50
EXAMPLES_IRRELEVANT = 200


class TopicError(ValueError):
    """The topic cannot be benchmarked on this web (unknown label, too few pages, ...)."""


@dataclass
class GroundTruth:
    """The set of relevant URLs of a topic on a labelled web. For scoring and the oracle only."""

    topic: str
    relevant: frozenset[str]

    def __call__(self, url: str) -> bool:
        return url in self.relevant

    @property
    def total(self) -> int:
        return len(self.relevant)


@dataclass
class BenchTopic:
    """Everything the benchmark needs for one topic on one web."""

    inputs: TopicInputs
    truth: GroundTruth
    seed_pool: list[str]
    seed: int

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
    train_pos, train_neg, seed_pool = [], [], []
    for record in web.records():
        if not 200 <= record.status < 300:
            continue
        is_relevant = record.url in relevant
        in_train = train_host is None or bool(train_host(record.host))
        in_crawl = train_host is None or not in_train
        if in_train:
            (train_pos if is_relevant else train_neg).append(record.url)
        if in_crawl and is_relevant and record.outdegree > 0:
            seed_pool.append(record.url)
    if not seed_pool:
        raise TopicError(f"topic {topic!r} has no relevant page with outlinks to start a crawl from")

    rng = random.Random(f"{seed}:{topic}:examples")
    positives = rng.sample(train_pos, min(examples_relevant, len(train_pos)))
    negatives = rng.sample(train_neg, min(examples_irrelevant, len(train_neg)))
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
    return BenchTopic(inputs=inputs, truth=GroundTruth(topic, relevant), seed_pool=sorted(seed_pool), seed=seed)


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
