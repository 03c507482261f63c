"""``focuscrawl bench``, ``demo``, ``bench-policy`` and ``strategies``: compare strategies on offline webs."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Optional

import typer
from pydantic import ValidationError
from rich.table import Table

from focuscrawl.bench.global_score import parse_targets, run_global, sortable_score
from focuscrawl.bench.policy_speed import run_policy_bench, web_anchors
from focuscrawl.bench.report import cell
from focuscrawl.bench.runner import run_benchmark
from focuscrawl.bench.suite import (
    QUICK_LABEL,
    QUICK_SETTINGS,
    TABLE_HEADERS,
    SuiteError,
    SuiteWorkerLost,
    find_suite,
    load_suite,
    plan_rows,
    run_suite,
    table_cells,
    table_title,
)
from focuscrawl.builder import check_strategies
from focuscrawl.cli.common import MACHINE_FAILURE, console, describe_validation_error, fail, out, run
from focuscrawl.config import BenchConfig, RunSettings, load_config
from focuscrawl.strategies import PRESETS, STRATEGIES
from focuscrawl.strategies.registry import installed
from focuscrawl.topic.models import RELEVANCE_MODELS
from focuscrawl.webs.mess import make_profile

SetOption = Annotated[Optional[list[str]], typer.Option(
    "-s", "--set", help="override a setting: KEY=VALUE, e.g. budget=500 or options.tres.gamma=0 (repeatable)")]


def strategies_cmd() -> None:
    """List the strategies and the presets built on them."""
    for spec in STRATEGIES.values():
        out.print(f"  [bold]{spec.name:<22}[/] {spec.description}", highlight=False)
    out.print("\npresets (a strategy with options; any option can also be set with -s options.NAME.KEY=VALUE):")
    for preset in PRESETS.values():
        options = ", ".join(f"{k}={v}" for k, v in preset.options.items())
        if preset.reward_model:
            options = ", ".join(filter(None, [options, f"reward model {preset.reward_model}"]))
        out.print(f"  [bold]{preset.name:<22}[/] {preset.strategy}({options}): {preset.description}", highlight=False)
    plugins = installed()
    if plugins:
        out.print("\nfrom installed packages (loaded when named; their options may be required):")
        for name, target in plugins.items():
            out.print(f"  [bold]{name:<22}[/] {target}", highlight=False)


def _print_summary(summary: dict) -> None:
    table = Table(title=f"{summary['web']} / {summary['topic']}  (budget {summary['budget']}, "
                        f"{summary['runs']} runs, MAX {summary['max_per_domain']}, "
                        f"{summary['relevant_total']} relevant in web)")
    for title in ("strategy", "AUC/oracle", "pages/oracle", "harvest", "rel. pages", "rel. domains",
                  "domains AUC/oracle", "ms/step"):
        table.add_column(title, justify="left" if title == "strategy" else "right")
    for row in summary["strategies"]:
        table.add_row(row["strategy"], f"{row['auc_ratio_mean']:.3f}", f"{row['oracle_ratio_mean']:.3f}",
                      f"{row['harvest_rate_mean']:.3f}", f"{row['relevant_pages_mean']:.1f}",
                      f"{row['relevant_domains_mean']:.1f}", cell(row.get("domains_auc_ratio_mean")),
                      f"{row['decision_ms_mean']:.3f}")
    out.print(table)


def _print_global(result: dict) -> None:
    webs = [f"{w['web']}/{w['topic'].split('.')[-1]}" for w in result["webs"]]
    table = Table(title=f"global score over {len(webs)} webs (budget {result['budget']}, {result['runs']} runs)")
    for title in ("strategy", "global score", "global AUC", "global domains AUC", *webs, "harvest", "rel. domains",
                  "ms/step"):
        table.add_column(title, justify="left" if title == "strategy" else "right")
    for row in sorted(result["strategies"], key=lambda r: -sortable_score(r["global_score"])):
        table.add_row(row["strategy"], f"{row['global_score']:.3f}", f"{row['global_auc']:.3f}",
                      cell(row.get("global_domains_auc")), *(f"{v:.3f}" for v in row["per_web_score"]),
                      f"{row['harvest_rate_mean']:.3f}", f"{row['relevant_domains_mean']:.1f}",
                      f"{row['decision_ms_mean']:.3f}")
    out.print(table)


def _print_suite(result: dict) -> None:
    quick = f"  [{QUICK_LABEL}]" if result["quick"] else ""
    for scope, table_data in result["tables"].items():
        table = Table(title=f"suite {result['suite']}: {table_title(result, scope)}{quick}",
                      caption=f"oracles, reported and never compared: {', '.join(result['oracles'])}")
        for title in TABLE_HEADERS:
            table.add_column(title, justify="left" if title == "strategy" else "right")
        for cells in table_cells(table_data):
            table.add_row(*cells)
        out.print(table)
    for item in result["above_oracle"]:
        out.print(f"above the oracle: {item['row']}: {item['strategy']} {item['metric']} {item['value']:.3f}",
                  highlight=False)


def _bench_suite(name: str, given: dict, overrides: list[str], *, webs: Path, jobs: int | None, quick: bool,
                 half: str | None, rows: str | None, rerun: bool, mess: str | None,
                 progress: Callable[[str], None] | None) -> None:
    """``bench --suite``: every row of a suite (rows in parallel processes), then the suite tables."""
    if jobs is not None and jobs < 1:
        fail(f"--jobs must be at least 1, got {jobs}")
    if mess is not None:
        run(lambda: make_profile(mess))  # an unknown profile is one line, before anything is built
    path = run(lambda: find_suite(name))
    try:
        suite = load_suite(path)
    except ValidationError as exc:
        fail(f"{path}: {describe_validation_error(exc)}")
    except SuiteError as exc:
        fail(str(exc))
    out_dir = given.pop("out") or Path("bench-results") / (f"suite-{suite.name}{'-mess-' + mess if mess else ''}"
                                                           f"{'-quick' if quick else ''}")
    planned = run(lambda: plan_rows(suite, webs=webs, out=out_dir, half=half, pattern=rows, quick=quick, given=given,
                                    overrides=overrides, mess=mess, say=progress))
    try:
        result = run(lambda: run_suite(suite, planned, out_dir, jobs=jobs or os.cpu_count() or 1, quick=quick,
                                       rerun=rerun, progress=progress))
    except SuiteWorkerLost as exc:
        fail(str(exc), MACHINE_FAILURE)
    _print_suite(result)
    out.print(f"results in {out_dir}/ (suite.json, suite.md, suite.png, one folder per row in rows/)"
              + (f"  [{QUICK_LABEL}]" if quick else ""))


def bench_cmd(
    web: Annotated[Optional[str], typer.Option(help="offline web directory, or 'embedded' (with --global: "
                                                    "comma-separated)")] = None,
    topic: Annotated[Optional[str], typer.Option(help="label of the topic, e.g. subject.Science.Biology "
                                                      "(with --global: comma-separated, paired with --web)")] = None,
    strategy: Annotated[Optional[str], typer.Option(help="comma-separated strategies or presets (the oracle "
                                                         "always runs)")] = None,
    budget: Annotated[Optional[int], typer.Option(help="pages fetched per crawl (T)")] = None,
    runs: Annotated[Optional[int], typer.Option(help="crawls per strategy (K); run i uses seeds chosen by i")] = None,
    seeds_per_run: Annotated[Optional[str], typer.Option(help="relevant seed pages per run (N); with --global, "
                                                              "one per web")] = None,
    max_per_domain: Annotated[Optional[str], typer.Option(help="per-domain cap MAX: inf, an integer, or 5-2")] = None,
    seed: Annotated[Optional[int], typer.Option(help="seed of every random choice")] = None,
    judge: Annotated[Optional[str], typer.Option(help="your own relevance judge for every strategy, in place of "
                                             "the topic's classifier: module:callable or a scikit-learn model "
                                             "file (.joblib; trusted code)")] = None,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="output folder")] = None,
    global_score: Annotated[bool, typer.Option(
        "--global", help="benchmark several webs (comma-separated --web and --topic, paired) and print Gouriten et "
                         "al.'s global score: geometric mean of per-web oracle ratios")] = False,
    examples_irrelevant: Annotated[Optional[int], typer.Option(help="irrelevant example texts the topic's "
                                                                    "classifiers train on")] = None,
    config: Annotated[Optional[Path], typer.Option("-c", "--config", help="YAML bench config")] = None,
    set_: SetOption = None,
    suite: Annotated[Optional[str], typer.Option(
        help="run a suite of topics: a packaged suite's name (dev) or a suite file; the other options and -s "
             "apply to every row")] = None,
    webs: Annotated[Path, typer.Option(help="with --suite: the folder holding the webs the suite names (a web "
                                            "NAME is WEBS/NAME)")] = Path("webs"),
    jobs: Annotated[Optional[int], typer.Option(help="with --suite: rows run at once, each in its own process "
                                                     "(default: the number of CPUs)")] = None,
    quick: Annotated[bool, typer.Option(help=f"with --suite: a cheap smoke run ({QUICK_SETTINGS['runs']} runs, budget "
                                             f"{QUICK_SETTINGS['budget']}), labelled QUICK in every output")] = False,
    half: Annotated[Optional[str], typer.Option(help="with --suite: only the rows of one half, tuning or "
                                                     "held-out")] = None,
    rows: Annotated[Optional[str], typer.Option(help="with --suite: only the rows whose name (web/topic ...) "
                                                     "matches this regular expression")] = None,
    rerun: Annotated[bool, typer.Option(help="with --suite: recompute rows whose folder already holds results "
                                              "made with the same settings")] = False,
    mess: Annotated[Optional[str], typer.Option(help="with --suite: crawl each row's web's messy version (a profile "
                                                     "of `focuscrawl web mess`, e.g. default), WEBS/NAME-mess-PROFILE, "
                                                     "made on first use")] = None,
    quiet: bool = False,
) -> None:
    """Run strategies K times on one topic and write summary.json, summary.md and harvest.png; or, with
    --suite, every row of a suite and suite.json, suite.md and suite.png."""
    progress = None if quiet else console.print
    given = dict(web=web, topic=topic, strategies=strategy, budget=budget, runs=runs, max_per_domain=max_per_domain,
                 seed=seed, judge=judge, out=out_dir, examples_irrelevant=examples_irrelevant)
    if mess is not None and suite is None:
        fail("--mess goes with --suite; for one benchmark, make the messy web (`focuscrawl web mess WEB OUT`) and "
             "give it as --web")
    if suite is not None and (web or topic or config or global_score):
        fail("--suite runs the suite's own webs and topics: drop --web, --topic, -c and --global (settings for "
             "every row go in the suite's defaults, on the command line or in -s)")
    if global_score:
        settings = run(lambda: load_config(BenchConfig, config, set_ or (), **given))
        targets = run(lambda: parse_targets(settings.web, settings.topic, seeds_per_run or str(settings.seeds_per_run)))
        result = run(lambda: run_global(settings, targets, progress))
        _print_global(result)
        out.print(f"results in {settings.out}/ (global.json, global.md, one folder per web)")
        return
    if seeds_per_run is not None and not seeds_per_run.strip().isdigit():
        fail(f"--seeds-per-run must be a positive integer, got {seeds_per_run!r}")
    if suite is not None:
        _bench_suite(suite, {**given, "seeds_per_run": seeds_per_run}, set_ or [], webs=webs, jobs=jobs, quick=quick,
                     half=half, rows=rows, rerun=rerun, mess=mess, progress=progress)
        return
    settings = run(lambda: load_config(BenchConfig, config, set_ or (), seeds_per_run=seeds_per_run, **given))
    summary = run(lambda: run_benchmark(settings, progress))
    _print_summary(summary)
    out.print(f"results in {settings.out}/ (summary.json, summary.md, harvest.png)")


def demo_cmd(out_dir: Annotated[Path, typer.Option("--out")] = Path("demo-results"),
             budget: int = 200, runs: int = 3) -> None:
    """A short benchmark on the embedded web: random, bfs, best-first, TRES and the default, adaptive, against
    the oracle."""
    settings = BenchConfig(web="embedded", topic="subject.Science.Biology",
                           strategies=["random", "bfs", "best-first", "tres", "adaptive"], budget=budget, runs=runs,
                           out=out_dir)
    summary = run(lambda: run_benchmark(settings, console.print))
    _print_summary(summary)
    out.print(f"results in {out_dir}/ (summary.json, summary.md, harvest.png)")


def bench_policy_cmd(
    web: Annotated[Optional[Path], typer.Option(help="optional offline web: anchors are drawn from its links")] = None,
    frontier_sizes: Annotated[str, typer.Option(help="comma-separated frontier sizes")] = "1000,10000,100000,1000000",
    strategies: Annotated[str, typer.Option(help="comma-separated strategies")] = "tres,tres-sync",
    steps: Annotated[int, typer.Option(help="timed steps per size")] = 300,
    sync_steps: Annotated[int, typer.Option(help="timed steps per size for whole-frontier (sync) strategies")] = 20,
    growth_outlinks: Annotated[int, typer.Option(help="outlinks per page while growing")] = 100,
    timed_outlinks: Annotated[int, typer.Option(help="outlinks per page while timing")] = 20,
    sync_growth_steps: Annotated[int, typer.Option(help="max growth steps per size for sync strategies")] = 200,
    seed: int = 0,
    json_output: Annotated[bool, typer.Option("--json", help="print the rows as JSON instead of a table")] = False,
    set_: SetOption = None,
    reward_model: Annotated[Optional[str], typer.Option(help="reward classifier for every strategy (default: "
                                                        "each strategy's own, KwBiLSTM for tres); tfidf times "
                                                        "the policy with a cheap one")] = None,
) -> None:
    """Decisions per second (learning included), memory per frontier URL and leaves vs frontier size."""
    try:
        sizes = sorted(int(s) for s in frontier_sizes.split(",") if s.strip())
    except ValueError:
        fail(f"--frontier-sizes takes comma-separated whole numbers, got {frontier_sizes!r}")
    if not sizes or min(sizes) < 1:
        fail(f"--frontier-sizes takes positive sizes, got {frontier_sizes!r}")
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    settings = run(lambda: load_config(RunSettings, None, set_ or (), reward_model=reward_model))
    if settings.reward_model is not None and settings.reward_model not in RELEVANCE_MODELS:
        fail(f"--reward-model must be one of {', '.join(sorted(RELEVANCE_MODELS))}, got {settings.reward_model!r}")
    run(lambda: check_strategies(settings, names))  # before minutes of frontier growth
    anchors = web_anchors(web) if web is not None else None
    rows = []
    for name in names:
        rows += run_policy_bench(name, sizes, settings=settings, steps=steps, growth_outlinks=growth_outlinks,
                                 timed_outlinks=timed_outlinks, seed=seed, anchors=anchors, sync_steps=sync_steps,
                                 sync_growth_steps=sync_growth_steps, progress=console.print)
    if json_output:
        out.print_json(json.dumps(rows))
        return
    table = Table(title="policy decision benchmark (select + observe, learning included)")
    for title in ("strategy", "reward model", "frontier", "timed steps", "ms/decision", "CPU ms/decision",
                  "of which classifier", "decisions/s", "bytes/URL", "leaves", "crawl steps"):
        table.add_column(title, justify="left" if title == "strategy" else "right")
    for r in rows:
        table.add_row(r["strategy"], r["reward_model"], f"{r['frontier']:,}", str(r["steps"]),
                      f"{r['ms_per_decision']:.3f}", f"{r['cpu_ms_per_decision']:.3f}", f"{r['classifier_ms']:.3f}",
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
