"""``focuscrawl bench-policy``: decision speed, memory per frontier URL and tree size of a policy at scale.

A speed benchmark, not a quality one. The policy is driven directly, without an engine or a web: each step
calls ``select`` and answers with a synthetic ``Observation`` of the selection, a page with many fresh
outlinks on many hosts. Per strategy the frontier is grown once, through the policy's own select/observe
loop, up to each requested size in turn; at each size ``steps`` more steps are timed (select + observe:
the decision *and* the learning, as the engine's ``decision_ms`` counts them) with ``timed_outlinks``
links per page, so the frontier stays near the size being measured. Every outlink is a new URL, so the
frontier size is counted here (seeds + links handed over - selections), whatever a policy keeps inside.

Synthetic load (documented choice: generated observations, no offline web needed). URLs are unique,
``http://h{k}.example/p{n}``, on ``max(100, size/50)`` hosts; anchors are three words from a 2,000-word
vocabulary in which 20 words are "topic" words, more frequent on relevant pages (reward 1 with probability
0.3). The reward classifier is trained on 2,000 such anchors, the keywords are five topic words. It is the
strategy's own reward model (KwBiLSTM for ``tres``), as in a real crawl: TRES scores every new anchor with
it, so it is part of a decision's cost; ``reward_model="tfidf"`` swaps in a cheap TF-IDF model to time the
policy alone. With ``anchors`` from an offline web (``web_anchors``) the anchors are instead drawn from
its link anchors (keywords: its five most frequent anchor words of 4+ letters), which gives realistic
anchor lengths and vocabulary, and anchors that repeat as on a real web (so caches answer most of them).

Growth uses ``growth_outlinks`` links per page; a strategy whose ``select`` scans the whole frontier
(``tres-sync``, ``han-sync``) grows with bigger pages (at most ``sync_growth_steps`` steps per size) and is
timed on ``sync_steps`` steps, so that it finishes. Memory is the resident-set growth since ``reset``
divided by the frontier size (meaningless at small sizes, where allocator noise dominates).
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from focuscrawl.builder import make_strategy_policy
from focuscrawl.config import RunSettings, strategy_options
from focuscrawl.policy import CrawlContext, Policy
from focuscrawl.strategies import resolve
from focuscrawl.topic.models import train_relevance_model
from focuscrawl.types import Observation, Outlink, Page, TopicInputs

SEEDS = 10


class Clock:
    """Seconds spent in classifiers; nested timed calls (a mean of models that includes a timed one) count once."""

    def __init__(self):
        self.seconds = 0.0
        self.depth = 0


class TimedClassifier:
    """Passes calls through and accumulates their time on a shared clock: the classifiers' share of a decision."""

    def __init__(self, model, clock: Clock):
        self.model = model
        self.clock = clock

    def fit(self, texts, labels):
        self.model.fit(texts, labels)
        return self

    def predict_proba(self, texts):
        clock = self.clock
        started = time.perf_counter()
        clock.depth += 1
        try:
            return self.model.predict_proba(texts)
        finally:
            clock.depth -= 1
            if clock.depth == 0:
                clock.seconds += time.perf_counter() - started


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


class SyntheticLoad:
    """Generates pages with fresh outlinks, seeded; ``anchors`` may come from a real web."""

    def __init__(self, seed: int, hosts: int, anchors: list[str] | None = None):
        self.rng = np.random.default_rng(seed)
        self.hosts = hosts
        self.counter = 0
        if anchors:
            self.anchors = anchors
            words = Counter(w for a in anchors for w in a.lower().split() if len(w) >= 4 and w.isalpha())
            self.topic_words = [w for w, _ in words.most_common(20)]
        else:
            self.anchors = None
            self.vocab = [f"w{i}" for i in range(2000)]
            self.topic_words = self.vocab[:20]

    def anchor(self, relevant: bool) -> str:
        if self.anchors is not None:
            return self.anchors[int(self.rng.integers(len(self.anchors)))]
        words = [self.vocab[int(i)] for i in self.rng.integers(20 if relevant and self.rng.random() < 0.5 else 0,
                                                              2000, size=3)]
        return " ".join(words)

    def links(self, n: int, relevant: bool) -> list[Outlink]:
        hosts = self.rng.integers(self.hosts, size=n)
        links = []
        for h in hosts.tolist():
            self.counter += 1
            links.append(Outlink(f"http://h{h}.example/p{self.counter}", self.anchor(relevant), f"h{h}.example", True))
        return links

    def page(self, n_links: int) -> tuple[float, list[Outlink]]:
        """A fetched page's reward and outlinks."""
        relevant = bool(self.rng.random() < 0.3)
        return float(relevant), self.links(n_links, relevant)

    def context(self, seed: int, reward_model: str = "tfidf") -> CrawlContext:
        gen = np.random.default_rng(seed + 1)
        if self.anchors is not None:
            sample = [self.anchors[int(i)] for i in gen.integers(len(self.anchors), size=2000)]
            keywords = self.topic_words[:5]
            labels = [int(any(k in a.lower() for k in keywords)) for a in sample]
            if len(set(labels)) < 2:
                labels[0], labels[1] = 0, 1
        else:
            sample = [self.anchor(i % 3 == 0) for i in range(2000)]
            labels = [int(any(w in a.split() for w in self.topic_words)) for a in sample]
            keywords = self.topic_words[:5]
        topic = TopicInputs("synthetic", keywords, sample, labels)
        classifier = train_relevance_model(reward_model, topic, seed)
        seeds = [f"http://seed{i}.example/" for i in range(SEEDS)]
        return CrawlContext(topic=topic, classifier=classifier, seeds=seeds, budget=10**9, seed=seed)


def web_anchors(web: Path, limit: int = 50_000) -> list[str]:
    """Up to ``limit`` non-empty link anchors of an offline web, spread evenly over its links table."""
    db = sqlite3.connect(f"file:{web / 'web.sqlite'}?mode=ro", uri=True)
    try:
        total = db.execute("SELECT count(*) FROM links").fetchone()[0]
        stride = max(1, total // limit)
        rows = db.execute("SELECT anchor FROM links WHERE rowid % ? = 0 AND anchor != '' LIMIT ?", (stride, limit))
        return [r[0] for r in rows]
    finally:
        db.close()


class PolicyRunner:
    """Drives a policy on a synthetic load, step by step, counting its frontier from the outside."""

    def __init__(self, policy: Policy, load: SyntheticLoad, context: CrawlContext):
        self.policy, self.load = policy, load
        policy.reset(context)
        self.frontier = len(context.seeds)
        self.step_count = 0

    def step(self, reward: float, links: list[Outlink]) -> bool:
        """One select + observe with this page; False when the policy has nothing left to select."""
        selection = self.policy.select()
        if selection is None:
            return False
        page = Page(selection.url, selection.url, 200)
        self.policy.observe(Observation(self.step_count, selection, page, reward, reward, links))
        self.step_count += 1
        self.frontier += len(links) - 1
        return True

    def grow(self, size: int, outlinks: int) -> None:
        """Steps with ``outlinks`` links per page until the frontier holds ``size`` URLs."""
        while self.frontier < size:
            if not self.step(*self.load.page(min(outlinks, size - self.frontier + 1))):
                break


def scans_frontier(settings: RunSettings, strategy: str) -> bool:
    """Strategies whose every ``select`` re-scores the whole frontier (grown and timed on fewer steps)."""
    resolved = resolve(strategy)
    options = {**resolved.options, **strategy_options(settings, strategy, resolved.spec.name)}
    return options.get("selector") == "sync" or bool(options.get("sync"))


def run_policy_bench(
    strategy: str,
    sizes: Sequence[int],
    *,
    settings: RunSettings,
    steps: int = 300,
    growth_outlinks: int = 100,
    timed_outlinks: int = 20,
    seed: int = 0,
    anchors: list[str] | None = None,
    sync_steps: int = 20,
    sync_growth_steps: int = 200,
    progress: Callable[[str], None] | None = None,
) -> list[dict]:
    """One row per size: ms per decision (and the classifiers' share), decisions/s, bytes per URL, leaves."""
    scans = scans_frontier(settings, strategy)
    reward_model = settings.judge or settings.reward_model or resolve(strategy).reward_model  # a user's judge too
    load = SyntheticLoad(seed, hosts=max(100, max(sizes) // 50), anchors=anchors)
    context = load.context(seed, reward_model)
    classifier = Clock()
    context.classifier = TimedClassifier(context.classifier, classifier)
    policy = make_strategy_policy(settings, strategy)
    gc.collect()
    rss0 = rss_bytes()
    runner = PolicyRunner(policy, load, context)
    features = getattr(policy, "features", None)
    if features is not None and hasattr(features, "classifiers"):
        # TRES's anchor features may use models of their own besides the reward model: time all of them
        features.classifiers = [TimedClassifier(c, classifier) for c in features.classifiers]
    timed_steps = sync_steps if scans else steps
    rows = []
    for size in sizes:
        grow_started = time.perf_counter()
        runner.grow(size, max(growth_outlinks, -(-size // sync_growth_steps)) if scans else growth_outlinks)
        grow_s = time.perf_counter() - grow_started
        memory = (rss_bytes() - rss0) / max(1, runner.frontier)
        leaves_before = int(policy.diagnostics().get("leaves", 0))
        steps_before = runner.step_count
        # Pre-generate the timed pages so only the policy's time is measured.
        pages = [load.page(timed_outlinks) for _ in range(timed_steps)]
        classifier_before = classifier.seconds
        elapsed, cpu = _timed_steps(runner, pages)
        done = runner.step_count - steps_before
        rows.append({
            "strategy": strategy, "reward_model": reward_model, "size": size, "frontier": runner.frontier,
            "steps": done,
            "ms_per_decision": 1000.0 * elapsed / max(done, 1),
            "decisions_per_s": done / elapsed if elapsed else float("nan"),
            # CPU time of the process: what the policy costs even when other processes share the cores (wall
            # clock then includes waiting for a core); it counts every thread, so BLAS threads add to it
            "cpu_ms_per_decision": 1000.0 * cpu / max(done, 1),
            "classifier_ms": 1000.0 * (classifier.seconds - classifier_before) / max(done, 1),
            "bytes_per_url": memory, "leaves": leaves_before, "crawl_steps": runner.step_count, "grow_s": grow_s,
        })
        if progress:
            progress(f"{strategy:>11} @ {size:>9,}: {rows[-1]['ms_per_decision']:.3f} ms/decision, "
                     f"{leaves_before} leaves after {runner.step_count} steps, grown in {grow_s:.1f}s")
    return rows


def _timed_steps(runner: PolicyRunner, pages: list) -> tuple[float, float]:
    """Step ``runner`` through ``pages`` (until its frontier runs out): the wall and CPU seconds the steps took."""
    elapsed = cpu = 0.0
    for reward, links in pages:
        started, cpu_started = time.perf_counter(), time.process_time()
        stepped = runner.step(reward, links)
        elapsed += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        if not stepped:
            break
    return elapsed, cpu
