"""``focuscrawl bench``: every strategy, K runs each, on one topic of one labelled offline web.

Run i gives every strategy the same seeds, the same classifier and the same engine settings; the oracle
always runs too, because the headline metrics are ratios to it on the same seeds.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from focuscrawl.bench.protocol import EXAMPLES_IRRELEVANT, BenchTopic, load_topic
from focuscrawl.engine import CrawlEngine, DomainCap
from focuscrawl.strategies import STRATEGIES, CrawlContext, make_policy
from focuscrawl.topic.embeddings import loaded_vectors_fingerprints
from focuscrawl.topic.models import train_relevance_model
from focuscrawl.topic.relevance import MemoizedRelevance
from focuscrawl.types import StepEvent
from focuscrawl.web.store import OfflineWeb

ORACLE = "oracle"


@dataclass
class RunResult:
    strategy: str
    run: int
    seeds: list[str]
    steps: int
    relevant_pages: int
    relevant_domains: int
    decision_s: float
    wall_s: float
    curve: list[int] = field(repr=False)  # relevant pages after each step, padded to the budget

    @property
    def harvest_rate(self) -> float:
        return self.relevant_pages / self.steps if self.steps else 0.0

    @property
    def auc(self) -> float:
        return float(sum(self.curve))


def crawl_once(
    web: OfflineWeb,
    topic: BenchTopic,
    classifier,
    strategy: str,
    run: int,
    seeds: list[str],
    budget: int,
    cap: DomainCap,
    seed: int,
    options: dict | None = None,
    on_event: Callable[[StepEvent], None] | None = None,
) -> RunResult:
    policy = make_policy(strategy, judge=topic.truth, **(options or {}))
    curve: list[int] = []

    def track(event: StepEvent) -> None:
        curve.append((curve[-1] if curve else 0) + int(bool(event.relevant)))

    sinks = [track] + ([on_event] if on_event else [])
    # The engine scores pages through the memo (pure function, saves wall time); the policy gets the raw
    # model so that its own classifier calls are timed honestly in decision_ms.
    raw_model = classifier.model if isinstance(classifier, MemoizedRelevance) else classifier
    engine = CrawlEngine(policy, classifier, budget=budget, max_per_domain=cap, judge=topic.truth, sinks=sinks)
    started = time.perf_counter()
    engine.start(CrawlContext(topic=topic.inputs, classifier=raw_model, seeds=list(seeds), budget=budget,
                              seed=seed * 1000 + run))
    stats = engine.run(web)
    wall = time.perf_counter() - started
    steps = len(curve)
    curve += [curve[-1] if curve else 0] * (budget - steps)
    return RunResult(strategy, run, list(seeds), steps, stats.relevant, len(stats.relevant_hosts),
                     stats.decision_s, wall, curve)


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def _ratio(value: float, reference: float) -> float:
    if reference == 0:
        return 1.0 if value == 0 else math.inf
    return value / reference


def summarize(results: list[RunResult], strategies: list[str]) -> list[dict]:
    oracle = {r.run: r for r in results if r.strategy == ORACLE}
    rows = []
    for name in strategies:
        mine = [r for r in results if r.strategy == name]
        rows.append({
            "strategy": name,
            "runs": len(mine),
            "harvest_rate_mean": _mean([r.harvest_rate for r in mine]),
            "harvest_rate_std": float(np.std([r.harvest_rate for r in mine])) if mine else math.nan,
            "relevant_pages_mean": _mean([r.relevant_pages for r in mine]),
            "relevant_domains_mean": _mean([r.relevant_domains for r in mine]),
            "oracle_ratio_mean": _mean([_ratio(r.relevant_pages, oracle[r.run].relevant_pages) for r in mine]),
            "auc_ratio_mean": _mean([_ratio(r.auc, oracle[r.run].auc) for r in mine]),
            "decision_ms_mean": _mean([1000.0 * r.decision_s / max(r.steps, 1) for r in mine]),
            "steps_mean": _mean([r.steps for r in mine]),
            "wall_s": float(sum(r.wall_s for r in mine)),
        })
    return rows


def run_benchmark(
    web_dir: str | Path,
    topic_label: str,
    strategies: Sequence[str],
    *,
    budget: int,
    runs: int,
    out: str | Path,
    seeds_per_run: int = 1,
    max_per_domain: str | int | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    strategy_options: dict[str, dict] | None = None,
    examples_irrelevant: int = EXAMPLES_IRRELEVANT,
) -> dict:
    """Run every strategy ``runs`` times on ``topic_label`` and write the summary files into ``out``.

    ``strategy_options`` maps a strategy name to keyword arguments for its constructor (hyper-parameters).
    ``examples_irrelevant`` is how many irrelevant example texts the topic gets (all strategies alike).
    """
    strategy_options = strategy_options or {}
    unknown = [s for s in [*strategies, *strategy_options] if s not in STRATEGIES]
    if unknown:
        raise KeyError(f"unknown strategy {', '.join(unknown)}; known: {', '.join(sorted(STRATEGIES))}")
    if budget <= 0 or runs <= 0 or seeds_per_run <= 0 or examples_irrelevant <= 0:
        raise ValueError("budget, runs, seeds-per-run and examples-irrelevant must be positive")
    cap = DomainCap.parse(max_per_domain)
    web = OfflineWeb(web_dir)
    topic = load_topic(web, topic_label, seed=seed, examples_irrelevant=examples_irrelevant)
    for name, options in strategy_options.items():  # fail before hours of crawling, not in the middle
        try:
            make_policy(name, judge=topic.truth, **options)
        except TypeError as exc:
            raise ValueError(f"strategy {name!r} does not accept option(s) {', '.join(sorted(options))}: {exc}") from None
    order = [ORACLE] + [s for s in dict.fromkeys(strategies) if s != ORACLE]
    # One model per reward type, trained once on the topic's examples and shared by its strategies.
    classifiers = {}
    for name in order:
        model = STRATEGIES[name].reward_model
        if model not in classifiers:
            classifiers[model] = MemoizedRelevance(train_relevance_model(model, topic.inputs, seed))
    results: list[RunResult] = []
    for run in range(runs):
        seeds = topic.seeds_for_run(run, seeds_per_run)
        for name in order:
            classifier = classifiers[STRATEGIES[name].reward_model]
            result = crawl_once(web, topic, classifier, name, run, seeds, budget, cap, seed,
                                options=strategy_options.get(name))
            results.append(result)
            if progress:
                progress(f"run {run + 1}/{runs} {name:>12}: {result.relevant_pages} relevant in {result.steps} "
                         f"steps, {result.relevant_domains} domains, {result.wall_s:.1f}s")
    summary = {
        "web": web.name,
        "web_dir": str(web_dir),
        "topic": topic_label,
        "relevant_total": topic.truth.total,
        "budget": budget,
        "runs": runs,
        "seeds_per_run": seeds_per_run,
        "max_per_domain": str(cap),
        "seed": seed,
        "keywords": topic.inputs.keywords,
        "examples": {"relevant": sum(topic.inputs.example_labels),
                     "irrelevant": len(topic.inputs.example_labels) - sum(topic.inputs.example_labels)},
        "strategy_options": strategy_options,
        "word_vectors": loaded_vectors_fingerprints(),
        "strategies": summarize(results, order),
    }
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    from focuscrawl.bench.report import plot_harvest, summary_markdown

    (out / "summary.md").write_text(summary_markdown(summary))
    with open(out / "runs.jsonl", "w") as fh:
        for r in results:
            fh.write(json.dumps({"strategy": r.strategy, "run": r.run, "seeds": r.seeds, "steps": r.steps,
                                 "relevant_pages": r.relevant_pages, "relevant_domains": r.relevant_domains,
                                 "decision_s": r.decision_s, "curve": r.curve}) + "\n")
    plot_harvest(results, order, out / "harvest.png", title=f"{web.name} / {topic_label}")
    web.close()
    return summary
