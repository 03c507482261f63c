"""``focuscrawl bench-policy``: decision speed, memory per frontier URL and tree size of a policy at scale.

A speed benchmark, not a quality one. The policy is driven directly, without an engine or a web: each step
calls ``select`` and answers with a synthetic ``Observation`` of the selected URL, a page with many fresh
outlinks on many hosts. Per strategy the frontier is grown once, through the policy's own select/observe
loop, up to each requested size in turn; at each size ``--steps`` more steps are timed (select + observe:
the decision *and* the learning, as the engine's ``decision_ms`` counts them) with ``--timed-outlinks``
links per page, so the frontier stays near the size being measured.

Synthetic load (documented choice: generated observations, no offline web needed). URLs are unique,
``http://h{k}.example/p{n}``, on ``max(100, size/50)`` hosts; anchors are three words from a 2,000-word
vocabulary in which 20 words are "topic" words, more frequent on relevant pages (reward 1 with probability
0.3). The reward classifier is trained on 2,000 such anchors, the keywords are five topic words. It is the
strategy's own reward model (KwBiLSTM for ``tres``), as in a real crawl: TRES scores every new anchor with
it, so it is part of a decision's cost; ``--reward-model tfidf`` swaps in a cheap TF-IDF model to time the
policy alone. With ``--web DIR`` the anchors are instead drawn from that offline web's link anchors
(keywords: its five most frequent anchor words of 4+ letters), which gives realistic anchor lengths and
vocabulary, and anchors that repeat as on a real web (so the anchor cache answers most of them).

Growth uses ``--growth-outlinks`` links per page; a strategy whose ``select`` scans the whole frontier
(``tres-sync``) grows with bigger pages (at most ``--sync-growth-steps`` steps per size) and is timed on
``--sync-steps`` steps, so that it finishes. Memory is the resident-set growth since ``reset`` divided by
the frontier size (meaningless at small sizes, where allocator noise dominates).
"""

from __future__ import annotations

import gc
import json
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from focuscrawl.strategies import STRATEGIES, CrawlContext, make_policy
from focuscrawl.strategies.base import Policy
from focuscrawl.topic.inputs import TopicInputs
from focuscrawl.topic.models import RELEVANCE_MODELS, train_relevance_model
from focuscrawl.types import Observation, Outlink, Page

console = Console(stderr=True)
out = Console(width=160)


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


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


class SyntheticWeb:
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

    def observation(self, step: int, url: str, n_links: int) -> Observation:
        relevant = bool(self.rng.random() < 0.3)
        page = Page(url=url, final_url=url, status=200, title="", text="")
        return Observation(step, url, page, 1.0 if relevant else 0.0, 1.0 if relevant else 0.0,
                           self.links(n_links, relevant))

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
        seeds = [f"http://seed{i}.example/" for i in range(10)]
        return CrawlContext(topic=topic, classifier=classifier, seeds=seeds, budget=10**9, seed=seed)


def _web_anchors(web: Path, limit: int = 50_000) -> list[str]:
    db = sqlite3.connect(f"file:{web / 'web.sqlite'}?mode=ro", uri=True)
    total = db.execute("SELECT count(*) FROM links").fetchone()[0]
    stride = max(1, total // limit)
    rows = db.execute("SELECT anchor FROM links WHERE rowid % ? = 0 AND anchor != '' LIMIT ?", (stride, limit))
    anchors = [r[0] for r in rows]
    db.close()
    return anchors


def _frontier_size(policy: Policy) -> int:
    frontier = getattr(policy, "frontier", None)
    return len(frontier) if frontier is not None else 0


def _leaves(policy: Policy) -> int:
    frontier = getattr(policy, "frontier", None)
    return frontier.n_leaves if frontier is not None and hasattr(frontier, "n_leaves") else 0


def run_policy_bench(strategy: str, sizes: list[int], steps: int, growth_outlinks: int, timed_outlinks: int,
                     seed: int, anchors: list[str] | None, sync_steps: int, sync_growth_steps: int,
                     options: dict | None = None, reward_model: str | None = None) -> list[dict]:
    scans_frontier = strategy.endswith("sync")
    reward_model = reward_model or STRATEGIES[strategy].reward_model
    web = SyntheticWeb(seed, hosts=max(100, max(sizes) // 50), anchors=anchors)
    context = web.context(seed, reward_model)
    classifier = Clock()
    context.classifier = TimedClassifier(context.classifier, classifier)
    policy = make_policy(strategy, **(options or {}))
    gc.collect()
    rss0 = _rss_bytes()
    policy.reset(context)
    features = getattr(policy, "features", None)
    if features is not None and hasattr(features, "classifiers"):
        # TRES's anchor features may use models of their own besides the reward model: time all of them
        features.classifiers = [TimedClassifier(c, classifier) for c in features.classifiers]
    step = 0
    rows = []
    timed_steps = sync_steps if scans_frontier else steps

    def one_step(n_links: int) -> bool:
        nonlocal step
        url = policy.select()
        if url is None:
            return False
        policy.observe(web.observation(step, url, n_links))
        step += 1
        return True

    for size in sizes:
        grow_started = time.perf_counter()
        while _frontier_size(policy) < size:
            missing = size - _frontier_size(policy)
            n_links = growth_outlinks
            if scans_frontier:
                n_links = max(growth_outlinks, -(-size // sync_growth_steps))
            one_step(min(n_links, missing + 1))
        grow_s = time.perf_counter() - grow_started
        memory = (_rss_bytes() - rss0) / max(1, _frontier_size(policy))
        leaves_before = _leaves(policy)
        # Pre-generate the timed observations so only the policy's time is measured.
        pending = []
        for _ in range(timed_steps):
            relevant = bool(web.rng.random() < 0.3)
            pending.append((float(relevant), web.links(timed_outlinks, relevant)))
        elapsed = 0.0
        done = 0
        classifier_before = classifier.seconds
        for reward, links in pending:
            started = time.perf_counter()
            url = policy.select()
            if url is None:
                break
            observation = Observation(step, url, Page(url, url, 200), reward, reward, links)
            policy.observe(observation)
            elapsed += time.perf_counter() - started
            step += 1
            done += 1
        rows.append({
            "strategy": strategy, "reward_model": reward_model, "size": size, "frontier": _frontier_size(policy),
            "steps": done,
            "ms_per_decision": 1000.0 * elapsed / max(done, 1),
            "decisions_per_s": done / elapsed if elapsed else float("nan"),
            "classifier_ms": 1000.0 * (classifier.seconds - classifier_before) / max(done, 1),
            "bytes_per_url": memory, "leaves": leaves_before, "crawl_steps": step, "grow_s": grow_s,
        })
        console.print(f"{strategy:>11} @ {size:>9,}: {rows[-1]['ms_per_decision']:.3f} ms/decision, "
                      f"{leaves_before} leaves after {step} steps, grown in {grow_s:.1f}s")
    return rows


def bench_policy(
    web: Annotated[Path | None, typer.Option(help="optional offline web: anchors are drawn from its links")] = None,
    frontier_sizes: Annotated[str, typer.Option(help="comma-separated frontier sizes")] = "1000,10000,100000,1000000",
    strategies: Annotated[str, typer.Option(help="comma-separated strategies")] = "tres,tres-sync",
    steps: Annotated[int, typer.Option(help="timed steps per size")] = 300,
    sync_steps: Annotated[int, typer.Option(help="timed steps per size for *-sync strategies")] = 20,
    growth_outlinks: Annotated[int, typer.Option(help="outlinks per page while growing")] = 100,
    timed_outlinks: Annotated[int, typer.Option(help="outlinks per page while timing")] = 20,
    sync_growth_steps: Annotated[int, typer.Option(help="max growth steps per size for *-sync")] = 200,
    seed: int = 0,
    json_output: Annotated[bool, typer.Option("--json", help="print the rows as JSON instead of a table")] = False,
    options: Annotated[list[str] | None, typer.Option("--set", "-s", help="strategy hyper-parameter: "
                                                      "STRATEGY.KEY=VALUE, e.g. tres.anchor_model=reward")] = None,
    reward_model: Annotated[str | None, typer.Option(help="reward classifier for every strategy (default: "
                                                     "each strategy's own, KwBiLSTM for tres); tfidf times "
                                                     "the policy with a cheap one")] = None,
) -> None:
    """Decisions per second (learning included), memory per frontier URL and leaves vs frontier size."""
    sizes = sorted(int(s) for s in frontier_sizes.split(",") if s.strip())
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    from focuscrawl.cli.main import _run, fail, parse_strategy_options

    strategy_options = _run(lambda: parse_strategy_options(options or []))
    if reward_model is not None and reward_model not in RELEVANCE_MODELS:
        fail(f"--reward-model must be one of {', '.join(sorted(RELEVANCE_MODELS))}, got {reward_model!r}")
    for name in names:  # bad names or options fail here, before minutes of frontier growth

        def check(name: str = name) -> None:
            try:
                make_policy(name, **strategy_options.get(name, {}))
            except TypeError as exc:
                raise ValueError(f"strategy {name!r} does not accept these options: {exc}") from None

        _run(check)
    anchors = _web_anchors(web) if web is not None else None
    rows = []
    for name in names:
        rows += run_policy_bench(name, sizes, steps, growth_outlinks, timed_outlinks, seed, anchors, sync_steps,
                                 sync_growth_steps, strategy_options.get(name), reward_model)
    if json_output:
        out.print_json(json.dumps(rows))
        return
    table = Table(title="policy decision benchmark (select + observe, learning included)")
    for title in ("strategy", "reward model", "frontier", "timed steps", "ms/decision", "of which classifier",
                  "decisions/s", "bytes/URL", "leaves", "crawl steps"):
        table.add_column(title, justify="left" if title == "strategy" else "right")
    for r in rows:
        table.add_row(r["strategy"], r["reward_model"], f"{r['frontier']:,}", str(r["steps"]),
                      f"{r['ms_per_decision']:.3f}", f"{r['classifier_ms']:.3f}",
                      f"{r['decisions_per_s']:,.0f}", f"{r['bytes_per_url']:,.0f}", f"{r['leaves']:,}",
                      f"{r['crawl_steps']:,}")
    out.print(table)
    by_size: dict[int, dict[str, float]] = {}
    for r in rows:
        by_size.setdefault(r["size"], {})[r["strategy"]] = r["ms_per_decision"]
    for size, times in by_size.items():
        for name, ms in times.items():
            if name.endswith("sync") and "tres" in times:
                out.print(f"  {size:>9,}: {name} / tres decision time = {ms / times['tres']:.1f}x")


def register(app: typer.Typer) -> None:
    app.command("bench-policy")(bench_policy)
