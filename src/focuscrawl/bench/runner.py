"""``focuscrawl bench``: every strategy, K runs each, on one topic of one labelled offline web.

Run i gives every strategy the same seeds, the same classifier and the same engine settings; the oracle
always runs too, because the headline metrics are ratios to it on the same seeds.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from focuscrawl.bench.protocol import BenchTopic, load_topic
from focuscrawl.bench.report import plot_harvest, summary_markdown
from focuscrawl.builder import Classifiers, StrategyPlan, build_crawl, check_strategies
from focuscrawl.config import BenchConfig, RunSettings
from focuscrawl.topic.embeddings import loaded_vectors_fingerprints
from focuscrawl.types import StepEvent, TopicInputs
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.store import OfflineWeb

ORACLE = "oracle"
# What a crawl of a messy web spends its budget on (``OfflineWeb.pathology``): traps, farms, copies of pages,
# soft 404s, failing hosts, redirect loops. A redirect chain is not among them: its fetch returns its target. A copy
# (a page under a session id, tracking parameters, a mirror host, a twin path, a near-duplicate) is spent only when
# its page had been fetched before under another URL: the first URL a crawl fetches a page by, copy or not, is that
# page found (counted as ``FIRST_COPY`` when it is a copy's), and a later fetch of the page is a copy's cost even when
# its URL is the original's.
COPY_KINDS = ("session", "tracking", "mirror", "twin", "near-duplicate")
FIRST_COPY = "first fetch of a page by a copy's URL"
SPENT_KINDS = ("calendar", "pagination", "facet", "farm", *COPY_KINDS, "redirect-loop", "soft-404", "dead-link",
               "failing", "timeout")
# A dead link is a soft 404 at a URL the clean web links to and has no page for: the same fetch there (a 404). It is
# spent as the issue counts soft 404s, and reported apart, since no crawler can tell a dead link before fetching it.
DEAD_LINK = "dead-link"


def injected_share(spent: Mapping[str, int], steps: int, kinds: Collection[str] = SPENT_KINDS) -> float:
    """Share of a crawl's ``steps`` spent on injected URLs of ``kinds`` (``spent``: steps by kind)."""
    return sum(n for kind, n in spent.items() if kind in kinds) / steps if steps else 0.0


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
    # relevant hosts (``stats.relevant_hosts``: distinct hosts, by ``site_of``, with a relevant page) after each
    # step, padded to the budget like ``curve``
    host_curve: list[int] = field(default_factory=list, repr=False)
    spent: dict[str, int] = field(default_factory=dict)  # a messy web's steps on injected URLs, by kind

    @property
    def injected_share(self) -> float:
        """Share of the steps spent on what a messy web injected (``SPENT_KINDS``)."""
        return injected_share(self.spent, self.steps)

    @property
    def harvest_rate(self) -> float:
        return self.relevant_pages / self.steps if self.steps else 0.0

    @property
    def auc(self) -> float:
        return float(sum(self.curve))

    @property
    def domains_auc(self) -> float:
        return float(sum(self.host_curve))


def crawl_once(
    web: OfflineWeb,
    topic: BenchTopic,
    classifiers: Classifiers,
    settings: RunSettings,
    strategy: str,
    run: int,
    seeds: list[str],
    on_event: Callable[[StepEvent], None] | None = None,
) -> RunResult:
    """One crawl of ``strategy`` on the benchmark topic, scored against its ground truth: an oracle plans with
    the truth, the events are judged by ``credit_once`` (a page counts once, whichever of its URLs was fetched),
    and on a messy web each step's URL is counted by the kind of trouble it met."""
    curve: list[int] = []
    host_curve: list[int] = []
    hosts: set[str] = set()  # the engine's stats.relevant_hosts, once it is built
    spent: Counter[str] = Counter()
    shown: dict[str, str | None] = {}  # page -> the kind of the URL that first fetched it (None: its own URL)
    originals = topic.truth.originals

    def track(event: StepEvent) -> None:
        curve.append((curve[-1] if curve else 0) + int(bool(event.relevant)))
        # the engine counts a relevant page's host (of its final URL) before it emits the step: the same count as
        # relevant_domains, step by step
        host_curve.append(len(hosts))
        kind = web.pathology(event.url)
        if kind is None or kind in COPY_KINDS:
            page = originals.get(event.url, event.url)
            if page in shown:  # the page again, by whichever URL: the cost of the copy
                kind = kind or shown[page]
            else:
                shown[page] = kind
                kind = FIRST_COPY if kind is not None else None
        if kind is not None:
            spent[kind] += 1

    sinks = [track] + ([on_event] if on_event else [])
    started = time.perf_counter()
    plan = StrategyPlan(settings, strategy, judge=topic.truth)
    crawl = build_crawl(settings, plan, topic.inputs, seeds, classifiers=classifiers,
                        judge=topic.truth.credit_once(), sinks=sinks)
    hosts = crawl.engine.stats.relevant_hosts
    stats = crawl.engine.run(web)
    wall = time.perf_counter() - started
    steps = len(curve)
    curve += [curve[-1] if curve else 0] * (settings.budget - steps)
    host_curve += [host_curve[-1] if host_curve else 0] * (settings.budget - steps)
    return RunResult(strategy, run, list(seeds), steps, stats.relevant, len(stats.relevant_hosts),
                     stats.decision_s, wall, curve, host_curve=host_curve, spent=dict(sorted(spent.items())))


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def _ratio(value: float, reference: float) -> float:
    if reference == 0:
        return 1.0 if value == 0 else math.inf
    return value / reference


def summarize(results: list[RunResult], strategies: list[str]) -> list[dict]:
    """One row per strategy: means over runs, and the per-run ratios to the oracle (run order) that paired
    comparisons between strategies need."""
    oracle = {r.run: r for r in results if r.strategy == ORACLE}
    rows = []
    for name in strategies:
        mine = sorted((r for r in results if r.strategy == name), key=lambda r: r.run)
        page_ratios = [_ratio(r.relevant_pages, oracle[r.run].relevant_pages) for r in mine]
        auc_ratios = [_ratio(r.auc, oracle[r.run].auc) for r in mine]
        domains_auc_ratios = [_ratio(r.domains_auc, oracle[r.run].domains_auc) for r in mine]
        rows.append({
            "strategy": name,
            "runs": len(mine),
            "harvest_rate_mean": _mean([r.harvest_rate for r in mine]),
            "harvest_rate_std": float(np.std([r.harvest_rate for r in mine])) if mine else math.nan,
            "relevant_pages_mean": _mean([r.relevant_pages for r in mine]),
            "relevant_domains_mean": _mean([r.relevant_domains for r in mine]),
            "oracle_ratio_mean": _mean(page_ratios),
            "auc_ratio_mean": _mean(auc_ratios),
            "domains_auc_ratio_mean": _mean(domains_auc_ratios),
            "decision_ms_mean": _mean([1000.0 * r.decision_s / max(r.steps, 1) for r in mine]),
            "steps_mean": _mean([r.steps for r in mine]),
            "wall_s": float(sum(r.wall_s for r in mine)),
            "oracle_ratios": page_ratios,
            "auc_ratios": auc_ratios,
            "domains_auc_ratios": domains_auc_ratios,
            "relevant_domains": [r.relevant_domains for r in mine],
            **({"injected_share_mean": _mean([r.injected_share for r in mine]),
                "spent_mean": {kind: _mean([r.spent.get(kind, 0) for r in mine])
                               for kind in sorted({k for r in mine for k in r.spent})}}
               if any(r.spent for r in mine) else {}),
        })
    return rows


def bench_topic(web: OfflineWeb, config: BenchConfig) -> BenchTopic:
    """The benchmark topic of ``config`` on ``web`` (its inputs, judge and seed pool for ``config.budget``)."""
    return load_topic(web, config.topic, seed=config.seed, budget=config.budget,
                      reach_share=config.seed_reach_share, examples_irrelevant=config.examples_irrelevant)


def draw_seeds(topic: BenchTopic, config: BenchConfig) -> list[list[str]]:
    """Every run's seeds; a ``TopicError`` when the topic cannot give them (see ``focuscrawl.bench.protocol``)."""
    return [topic.seeds_for_run(run, config.seeds_per_run) for run in range(config.runs)]


def check_seeds(config: BenchConfig) -> None:
    """Raise what ``run_benchmark`` would raise when the topic cannot seed every run: for callers that run
    many benchmarks (a suite, the global score), so that a bad one stops them before any crawl."""
    web = OfflineWeb(resolve_web_dir(config.web))
    try:
        draw_seeds(bench_topic(web, config), config)
    finally:
        web.close()


def run_benchmark(config: BenchConfig, progress: Callable[[str], None] | None = None) -> dict:
    """Run every strategy ``config.runs`` times on the topic and write the summary files into ``config.out``."""
    check_strategies(config, config.strategies)  # fail before hours of crawling, not in the middle
    web = OfflineWeb(resolve_web_dir(config.web))
    try:
        topic = bench_topic(web, config)
        run_seeds = draw_seeds(topic, config)  # a topic that cannot seed every run fails before any crawl
        if config.keyword_only:
            topic.inputs = TopicInputs(topic.inputs.name, topic.inputs.keywords, [], [])
        order = [ORACLE] + [s for s in dict.fromkeys(config.strategies) if s != ORACLE]
        # Each reward model trained once on the topic's examples and shared by the strategies that use it.
        classifiers = Classifiers(topic.inputs, config.seed, memoize=True, page_encoder=config.page_encoder)
        if config.judge is not None:
            classifiers.get(config.judge)  # the user's judge resolved once, before any crawl: a bad one fails now
        results: list[RunResult] = []
        for run, seeds in enumerate(run_seeds):
            for name in order:
                result = crawl_once(web, topic, classifiers, config.run_settings(run), name, run, seeds)
                results.append(result)
                if progress:
                    progress(f"run {run + 1}/{config.runs} {name:>12}: {result.relevant_pages} relevant in "
                             f"{result.steps} steps, {result.relevant_domains} domains, {result.wall_s:.1f}s")
        summary = {
            "web": web.name,
            "web_dir": str(config.web),
            "topic": config.topic,
            "relevant_total": topic.truth.total,
            "held_out_pages": topic.held_out,  # example pages (or train hosts): never scored
            "held_out_relevant": topic.held_out_relevant,
            "budget": config.budget,
            "runs": config.runs,
            "seeds_per_run": config.seeds_per_run,
            # each seed reaches at least `threshold` pages; `runs`: the pages all of a run's seeds reach
            "seed_reach": {"threshold": topic.reach_threshold, "share": config.seed_reach_share,
                           "web_pages": int(topic.graph.counted.sum()), "candidates": len(topic.candidates),
                           "seed_pool": len(topic.seed_pool), "runs": [topic.reach(seeds) for seeds in run_seeds]},
            "max_per_domain": config.max_per_domain,
            "seed": config.seed,
            "keywords": topic.inputs.keywords,
            "keyword_only": config.keyword_only,
            "page_encoder": config.page_encoder,
            "judge": config.judge,
            "examples": {"relevant": sum(topic.inputs.example_labels),
                         "irrelevant": len(topic.inputs.example_labels) - sum(topic.inputs.example_labels)},
            "options": config.options,
            "defences": config.defences.model_dump(mode="json"),  # the engine's, the same for every strategy
            "word_vectors": loaded_vectors_fingerprints(),
            "strategies": summarize(results, order),
        }
        out = Path(config.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (out / "summary.md").write_text(summary_markdown(summary))
        with open(out / "runs.jsonl", "w") as fh:
            for r in results:
                fh.write(json.dumps({"strategy": r.strategy, "run": r.run, "seeds": r.seeds, "steps": r.steps,
                                     "relevant_pages": r.relevant_pages, "relevant_domains": r.relevant_domains,
                                     "decision_s": r.decision_s, "spent": r.spent, "curve": r.curve,
                                     "host_curve": r.host_curve}) + "\n")
        plot_harvest(results, order, out / "harvest.png", title=f"{web.name} / {config.topic}")
    finally:
        web.close()
    return summary
