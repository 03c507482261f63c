"""The command line of a benchmark of one suite row: its web, topic, seeds per run and budget, and a strategy."""

from __future__ import annotations

import argparse

from focuscrawl.builder import Classifiers, StrategyPlan, build_crawl
from focuscrawl.config import BenchConfig, load_config
from focuscrawl.types import StepEvent


def row_parser(doc: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("web")
    parser.add_argument("topic")
    parser.add_argument("--seeds-per-run", type=int, default=1)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("-s", "--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting, as focuscrawl bench -s (e.g. options.adaptive.leave_share=0.1)")
    return parser


def row_config(args: argparse.Namespace, runs: int, max_per_domain: int | None = None) -> BenchConfig:
    """The benchmark configuration of the row, as ``focuscrawl bench`` would build it."""
    row = BenchConfig(web=args.web, topic=args.topic, seeds_per_run=args.seeds_per_run, budget=args.budget,
                      runs=runs, max_per_domain=max_per_domain)
    return load_config(BenchConfig, overrides=getattr(args, "set", ()), base=row)


def crawl_run(web, topic, config: BenchConfig, strategy: str, run: int, seeds, classifiers: Classifiers):
    """One protocol run of a row crawled as ``focuscrawl bench`` crawls it: (the engine's stats, its step events)."""
    events: list[StepEvent] = []
    settings = config.run_settings(run)
    crawl = build_crawl(settings, StrategyPlan(settings, strategy, judge=topic.truth), topic.inputs, seeds,
                        classifiers=classifiers, judge=topic.truth.credit_once(), sinks=[events.append])
    return crawl.engine.run(web), events
