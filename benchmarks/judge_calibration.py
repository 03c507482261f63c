"""How far the crawl's judge deserves trust: its calibration against the labels on the pages a crawl fetched.

For each chosen suite row, crawls the row's protocol runs with one strategy and compares the relevance the crawl
gave each fetched page (the judge's probability, as the policy saw it) with the page's label: a reliability table
(fetched pages in ten probability bins: how many, mean probability, share relevant), the expected calibration error
(ECE: the bins' |mean probability - share relevant|, weighted by their pages) and precision and recall at 0.5, the
reward's threshold. Labels only score here, as everywhere. Compare two settings with ``-s``, e.g. the judge with and
without the thin-page factor:

    python -m benchmarks.judge_calibration webs --rows 'Biology|course|student|debian/biology' --runs 0,1
    python -m benchmarks.judge_calibration webs --rows 'debian/' -s thin_page_ratio=0
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.row_args import crawl_run
from focuscrawl.bench.runner import bench_topic, draw_seeds
from focuscrawl.bench.suite import find_suite, load_suite, plan_rows
from focuscrawl.builder import Classifiers
from focuscrawl.webs.store import OfflineWeb

BINS = 10


def calibration(relevance: np.ndarray, relevant: np.ndarray) -> dict:
    """Reliability bins, ECE, and precision/recall at 0.5 of probabilities against labels."""
    edges = np.linspace(0.0, 1.0, BINS + 1)
    which = np.clip(np.digitize(relevance, edges[1:-1]), 0, BINS - 1)
    bins, ece = [], 0.0
    for b in range(BINS):
        inside = which == b
        n = int(inside.sum())
        if n == 0:
            continue
        mean_p, share = float(relevance[inside].mean()), float(relevant[inside].mean())
        ece += n * abs(mean_p - share)
        bins.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "pages": n, "mean_p": mean_p, "relevant": share})
    decided = relevance >= 0.5
    true_positives = int((decided & relevant).sum())
    return {"pages": len(relevance), "relevant": int(relevant.sum()), "ece": ece / max(len(relevance), 1),
            "precision": true_positives / max(int(decided.sum()), 1),
            "recall": true_positives / max(int(relevant.sum()), 1), "bins": bins}


def crawl_pages(config, strategy: str, runs: list[int]) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    """The URL, relevance and label of every page the row's runs fetched, in crawl order (ok pages the judge
    scored, held-out example pages left out), and the relevant pages the crawls found."""
    web = OfflineWeb(config.web)
    topic = bench_topic(web, config)
    run_seeds = draw_seeds(topic, config)
    classifiers = Classifiers(topic.inputs, config.seed, page_encoder=config.page_encoder)
    urls, relevance, relevant, found = [], [], [], 0
    for run in runs:
        stats, events = crawl_run(web, topic, config, strategy, run, run_seeds[run], classifiers)
        found += stats.relevant
        for event in events:
            # held-out example pages are neither relevant nor not: never scored
            if event.status == 200 and not event.verdict and event.url not in topic.held_out_pages:
                urls.append(event.url)
                relevance.append(event.relevance)
                relevant.append(event.url in topic.truth.relevant)
    web.close()
    return urls, np.array(relevance, dtype=float), np.array(relevant, dtype=bool), found


def crawl_row(config, strategy: str, runs: list[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """The relevance and label of every page the row's runs fetched, and the relevant pages the crawls found."""
    _, relevance, relevant, found = crawl_pages(config, strategy, runs)
    return relevance, relevant, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs", type=Path, help="the folder of the suite's webs (as focuscrawl bench --webs)")
    parser.add_argument("--suite", default="dev")
    parser.add_argument("--rows", default=None, help="a regular expression over the rows' labels")
    parser.add_argument("--runs", default="0", help="protocol runs to crawl, comma-separated")
    parser.add_argument("--strategy", default="adaptive", help="comma-separated: each strategy crawls the row")
    parser.add_argument("-s", "--set", action="append", default=[], help="KEY=VALUE, as for focuscrawl bench")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    runs = [int(r) for r in args.runs.split(",")]
    suite = load_suite(find_suite(args.suite))
    planned = plan_rows(suite, webs=args.webs, out=Path("/tmp/judge-calibration"), pattern=args.rows,
                        overrides=args.set, given={"runs": max(runs) + 1})
    results = {}
    # found: relevant pages by the labels; rewarded and relevance: what the judge says the crawl found (its pages at
    # or over 0.5, and the sum of its probabilities), the only harvest a crawl can see
    print("row                                        strategy    pages relevant found rewarded relevance   ECE  "
          "precision recall (bins: pages, mean p, share relevant)")
    for row in planned:
        for strategy in args.strategy.split(","):
            relevance, relevant, found = crawl_row(row.config, strategy, runs)
            figures = calibration(relevance, relevant)
            figures.update(found=found, rewarded=int((relevance >= 0.5).sum()), relevance=float(relevance.sum()))
            results[f"{row.row.label} {strategy}"] = figures
            bins = "; ".join(f"{b['bin']} {b['pages']} {b['mean_p']:.2f} {b['relevant']:.2f}" for b in figures["bins"])
            print(f"{row.row.label:42s} {strategy:10s} {figures['pages']:6d} {figures['relevant']:8d} {found:5d} "
                  f"{figures['rewarded']:8d} {figures['relevance']:9.0f} {figures['ece']:6.3f} "
                  f"{figures['precision']:9.3f} {figures['recall']:6.3f} ({bins})", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
