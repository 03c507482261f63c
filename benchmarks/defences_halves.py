"""Issue 44, item 1: the defences judged by half on both test beds, the real web software and the messy suite.

    python -m benchmarks.defences_halves --half tuning --bed /tmp/testbed-s2/bed --webs webs \
        --clean runs/suite-dev --repeats 10 --strategies adaptive,best-first [--messy DIR] [--out DIR] \
        [--rows REGEX] [--runs K] [--jobs N] [--budget 1000] [--in-flight 16] [-s KEY=VALUE ...]

The halves (docs/benchmark.md, "The defences' halves"): on the test bed of real web software (``focuscrawl web
testbed build``) the tuning half is the topic with the benchmark protocol's run 0's seeds, the held-out half with
run 1's (``HALF_RUNS``); on the messy suite (the dev suite's rows on their ``web mess --profile default`` webs) the
dev suite's own halves. A defence's rule is chosen on ``--half tuning`` and then reported on ``--half held-out``.

The test bed is served once and crawled ``--repeats`` times per strategy (``benchmarks.testbed``); the messy rows
of the half are run with ``focuscrawl bench --suite dev --mess default --half HALF`` (into ``OUT/messy``), or read
from a finished folder (``--messy``). ``-s KEY=VALUE`` goes to every crawl this command runs (the bed's crawls and
the messy rows), so that a trial compares a defence's setting on one half.

Printed per strategy: on the bed, per run, relevant pages and the share of requests on *generated variants and
thin rows* (``focuscrawl.webs.testbed.labels.GENERATED_KINDS``), on site pages (listings, help, assets) and on
every kind but content (the share docs/results.md reported before this split); on the messy suite, per row,
messy/clean AUC/oracle (paired runs) and each run's share of the budget on injected URLs, without dead links (links
of the clean web to pages it does not have: no crawler can tell them before fetching) and in all. Then the issue's
targets beside the figures, met or not: on the bed at most 5% on generated kinds in every run, and the worst run's
relevant pages at least 0.9 of the median; on the messy suite at most 5% on injected URLs (without dead links) in
every run, and a median messy/clean AUC/oracle ratio of at least .95. Everything goes to ``OUT/halves-HALF.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from benchmarks.mess_table import paired_auc_ratio, rows_of, run_shares
from benchmarks.testbed import CrawlSetting, crawl_bed, prepare_bed
from focuscrawl.bench.runner import ORACLE
from focuscrawl.bench.suite import HALVES, PlannedRow, Suite, find_suite, load_suite, plan_rows, run_suite
from focuscrawl.config import CrawlConfig, load_config
from focuscrawl.webs.testbed import read_manifest

HALF_RUNS = {"tuning": 0, "held-out": 1}  # the test bed's halves: the protocol run whose seeds the topic gets
MESSY_ROWS = r"^(wikispeedia|webkb)/"  # the rows whose webs `web mess` is run on (no messy Debian web is built)
MAX_SHARE = 0.05  # of a run's budget, on generated kinds (bed) or injected URLs without dead links (messy)
MIN_STEADY = 0.9  # the bed's worst run's relevant pages over the median
MIN_RATIO = 0.95  # median over the messy rows of messy/clean AUC/oracle


class HalvesError(ValueError):
    """A mistake in this command's input: one line, before anything is crawled."""


def bed_run_of(half: str) -> int:
    if half not in HALF_RUNS:
        raise HalvesError(f"--half {half!r} is not a half: give {' or '.join(HALF_RUNS)}")
    return HALF_RUNS[half]


def bed_summary(runs: list[dict]) -> dict[str, dict]:
    """Per strategy, over its runs of the bed: relevant pages (median, worst, worst / median) and the shares."""
    out = {}
    for strategy in dict.fromkeys(run["strategy"] for run in runs):
        mine = [run for run in runs if run["strategy"] == strategy]
        relevant = [run["relevant"] for run in mine]
        median = statistics.median(relevant)
        generated = [run["groups"]["generated"] for run in mine]
        out[strategy] = {"runs": len(mine), "relevant": relevant, "median": median, "worst": min(relevant),
                         "steady": min(relevant) / median if median else 0.0, "generated": generated,
                         "site": [run["groups"]["site"] for run in mine],
                         "not_content": [1 - run["groups"]["content"] - run["by_kind"].get("web", 0) / run["requests"]
                                         if run["requests"] else 0.0 for run in mine],
                         "max_generated": max(generated)}
    return out


def messy_rows_of_half(messy: Path, half: str) -> list[str]:
    """The row folders of a finished messy suite folder that are in ``half``; a folder that is not a messy
    suite's, or holds no row of that half, is an error."""
    suite_file = messy / "suite.json"
    if not suite_file.exists():
        raise HalvesError(f"--messy {messy} is not a finished suite folder (no suite.json)")
    rows = json.loads(suite_file.read_text())["rows"]
    mine = [Path(row["folder"]).name for row in rows if row.get("half") == half]
    if not mine:
        raise HalvesError(f"--messy {messy} holds no row of the {half} half (its rows: "
                          f"{', '.join(row['label'] + ' ' + str(row.get('half')) for row in rows)})")
    for name in mine:
        web_dir = json.loads((messy / "rows" / name / "summary.json").read_text()).get("web_dir", "")
        if "-mess-" not in Path(web_dir).name:
            raise HalvesError(f"--messy {messy}: row {name} crawled {web_dir}, not a messy web (`--mess default`)")
    return mine


def messy_summary(clean: Path, messy: Path, rows: list[str], strategy: str) -> dict:
    """Per row of ``rows`` (both folders have it): AUC/oracle messy and clean, their paired ratio and each run's
    injected share (without dead links, in all); then the median ratio, the worst row and the largest run share."""
    clean_rows, messy_rows = rows_of(clean), rows_of(messy)
    per_row = []
    for row in rows:
        if strategy not in messy_rows.get(row, {}) or strategy not in clean_rows.get(row, {}):
            continue
        c, m = clean_rows[row][strategy], messy_rows[row][strategy]
        shares = run_shares(messy, row, strategy)
        per_row.append({"row": row, "runs": len(shares), "auc_messy": m["auc_ratio_mean"],
                        "auc_clean": c["auc_ratio_mean"], "ratio": paired_auc_ratio(c, m),
                        "live_shares": [live for _, live in shares], "shares": [share for share, _ in shares]})
    ratios = [row["ratio"] for row in per_row]
    return {"rows": per_row, "missing": [row for row in rows if row not in {r["row"] for r in per_row}],
            "median_ratio": statistics.median(ratios) if ratios else None,
            "worst_ratio": min(ratios) if ratios else None,
            "max_live_share": max((s for row in per_row for s in row["live_shares"]), default=None)}


def targets(bed: dict | None, messy: dict | None) -> list[tuple[str, str, bool | None]]:
    """The issue's targets for one strategy: (target, figure, met); met is None when there is no figure."""
    out = []
    if bed is not None:
        out.append((f"bed: <= {MAX_SHARE:.0%} on generated kinds, every run", f"worst run {bed['max_generated']:.1%}",
                    bed["max_generated"] <= MAX_SHARE))
        out.append((f"bed: worst run >= {MIN_STEADY:g} of the median", f"{bed['worst']} / {bed['median']:g} = "
                    f"{bed['steady']:.2f}", bed["steady"] >= MIN_STEADY))
    if messy is not None:
        share, ratio = messy["max_live_share"], messy["median_ratio"]
        out.append((f"messy: <= {MAX_SHARE:.0%} on injected URLs (no dead links), every run",
                    "-" if share is None else f"worst run {share:.1%}", None if share is None else share <= MAX_SHARE))
        figure = "-" if ratio is None else f"{ratio:.3f} (worst row {messy['worst_ratio']:.3f})"
        out.append((f"messy: median messy/clean AUC/oracle >= {MIN_RATIO:g}", figure,
                    None if ratio is None else ratio >= MIN_RATIO))
    return out


def _percents(shares: list[float]) -> str:
    return ", ".join(f"{100 * share:.1f}" for share in shares)


def print_bed(summary: dict[str, dict]) -> None:
    print("\n| strategy | runs | relevant per run | median, worst / median | generated variants and thin rows, % per "
          "run | site pages, % per run | every kind but content, % per run |")
    print("|---|---|---|---|---|---|---|")
    for strategy, s in summary.items():
        print(f"| {strategy} | {s['runs']} | {', '.join(map(str, s['relevant']))} | {s['median']:g}, {s['steady']:.2f} "
              f"| {_percents(s['generated'])} | {_percents(s['site'])} | {_percents(s['not_content'])} |")


def print_messy(strategy: str, summary: dict) -> None:
    print(f"\n`{strategy}` on the messy rows: AUC/oracle messy (clean), paired ratio, injected share per run "
          "without dead links (in all)")
    print("| row | runs | AUC/oracle messy (clean) | messy/clean | injected %, per run (with dead links) |")
    print("|---|---|---|---|---|")
    for row in summary["rows"]:
        print(f"| {row['row']} | {row['runs']} | {row['auc_messy']:.3f} ({row['auc_clean']:.3f}) | {row['ratio']:.3f} "
              f"| {_percents(row['live_shares'])} ({_percents(row['shares'])}) |")
    if summary["missing"]:
        print(f"(not counted: {len(summary['missing'])} of the half's {len(summary['missing']) + len(summary['rows'])} "
              f"rows, which the messy or the clean folder lacks, or has no `{strategy}` in: "
              f"{', '.join(summary['missing'])})")


def print_targets(strategy: str, rows: list[tuple[str, str, bool | None]]) -> None:
    print(f"\nTargets, `{strategy}`:")
    print("| target | figure | met |")
    print("|---|---|---|")
    for target, figure, met in rows:
        print(f"| {target} | {figure} | {'-' if met is None else 'yes' if met else '**no**'} |")


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's usage and error lines, as one line
        print(f"defences_halves: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default=None, help="tuning or held-out")
    parser.add_argument("--bed", type=Path, default=None, help="a test bed (focuscrawl web testbed build)")
    parser.add_argument("--webs", type=Path, default=Path("webs"), help="the folder of the dev suite's webs")
    parser.add_argument("--clean", type=Path, default=None, help="a clean `bench --suite dev` folder, same rows")
    parser.add_argument("--messy", type=Path, default=None, help="a finished `bench --suite dev --mess` folder to "
                                                                 "read instead of running the messy rows")
    parser.add_argument("--out", type=Path, default=None, help="default runs/defences-halves-HALF")
    parser.add_argument("--strategies", default="adaptive,best-first")
    parser.add_argument("--repeats", type=int, default=10, help="served crawls of the bed per strategy")
    parser.add_argument("--rows", default=MESSY_ROWS, help="the messy rows of the half to run (a regex)")
    parser.add_argument("--runs", type=int, default=None, help="runs of each messy row (default: the suite's)")
    parser.add_argument("--jobs", type=int, default=1, help="messy rows run at once")
    parser.add_argument("--budget", type=int, default=1000, help="requests of a crawl of the bed")
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--per-host", type=int, default=4)
    parser.add_argument("--min-delay", type=float, default=0.05)
    parser.add_argument("--seeds", type=int, default=5, help="seeds of the bed's topic")
    parser.add_argument("-s", "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    return parser.parse_args(argv)


def check_inputs(args: argparse.Namespace) -> list[str]:
    """Everything that can be checked before a crawl; the strategies."""
    for name in ("half", "bed", "clean"):
        if getattr(args, name) is None:
            raise HalvesError(f"--{name} is required (see --help)")
    bed_run_of(args.half)
    args.out = args.out or Path("runs") / f"defences-halves-{args.half}"
    strategies = [name for name in args.strategies.split(",") if name]
    if not strategies or args.repeats < 1 or args.jobs < 1 or (args.runs is not None and args.runs < 1):
        raise HalvesError("--strategies needs a name, and --repeats, --runs and --jobs at least 1")
    read_manifest(args.bed)
    if not (args.clean / "suite.json").exists():
        raise HalvesError(f"--clean {args.clean} is not a finished suite folder (no suite.json)")
    if args.messy is not None:
        messy_rows_of_half(args.messy, args.half)
    if (args.out / "bed" / "runs").exists():
        raise HalvesError(f"{args.out / 'bed'} holds crawls already; give another --out")
    load_config(CrawlConfig, None, args.overrides, out=args.out)  # a setting a crawl does not know, here
    return strategies


def plan_messy(args: argparse.Namespace, strategies: list[str]) -> tuple[Suite, list[PlannedRow]]:
    """``focuscrawl bench --suite dev --mess default --half HALF --rows ROWS``'s rows (into OUT/messy), planned
    (and so checked, settings included) before anything is crawled."""
    suite = load_suite(find_suite("dev"))
    return suite, plan_rows(suite, webs=args.webs, out=args.out / "messy", half=args.half, pattern=args.rows,
                            given={"strategies": strategies, "runs": args.runs}, overrides=args.overrides,
                            mess="default", say=print)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        strategies = check_inputs(args)
        planned = plan_messy(args, strategies) if args.messy is None else None
        print(f"half {args.half}: test bed {args.bed} with run {bed_run_of(args.half)}'s seeds; messy suite: the dev "
              f"suite's {args.half} rows matching {args.rows!r}" + (f" read from {args.messy}" if args.messy else "")
              + f"; settings {args.overrides or 'default'}", flush=True)
        bed = prepare_bed(args.bed, args.out / "bed", run=bed_run_of(args.half), seeds=args.seeds, budget=args.budget)
        setting = CrawlSetting(args.budget, args.in_flight, args.per_host, args.min_delay, args.overrides)
        runs = []
        for run in crawl_bed(bed, args.out / "bed", strategies, args.repeats, setting):
            runs.append(run)
            print(f"bed {run['strategy']} {run['repeat']}: {run['relevant']} relevant, generated "
                  f"{run['groups']['generated']:.1%}, {run['wall_s']:.0f} s", flush=True)
        messy = args.messy
        if planned is not None:
            messy = args.out / "messy"
            run_suite(planned[0], planned[1], messy, jobs=args.jobs, progress=lambda line: print(line, flush=True))
        report(args, strategies, runs, messy)
    except (HalvesError, ValueError, OSError) as exc:
        print(f"defences_halves: {' '.join(str(exc).split())[:400]}", file=sys.stderr)
        sys.exit(2)


def half_rows(half: str, pattern: str) -> list[str]:
    """The row folders of the dev suite's ``half`` whose name matches ``pattern``: the messy half."""
    regex = re.compile(pattern)
    return [row.slug for row in load_suite(find_suite("dev")).rows if row.half == half and regex.search(row.label)]


def report(args: argparse.Namespace, strategies: list[str], runs: list[dict], messy: Path) -> None:
    messy_rows_of_half(messy, args.half)
    rows = half_rows(args.half, args.rows)
    bed = bed_summary(runs)
    messy_by_strategy = {s: messy_summary(args.clean, messy, rows, s) for s in strategies if s != ORACLE}
    print_bed(bed)
    for strategy, summary in messy_by_strategy.items():
        print_messy(strategy, summary)
    verdicts = {s: targets(bed.get(s), messy_by_strategy.get(s)) for s in strategies if s != ORACLE}
    for strategy, rows_ in verdicts.items():
        print_targets(strategy, rows_)
    path = args.out / f"halves-{args.half}.json"
    path.write_text(json.dumps({"half": args.half, "args": {k: str(v) for k, v in vars(args).items()},
                                "bed_runs": runs, "bed": bed, "messy_folder": str(messy), "messy": messy_by_strategy,
                                "targets": verdicts}, indent=1))
    print(f"\nfigures in {path}; the bed's crawls in {args.out / 'bed' / 'runs'}, the messy rows in {messy}")


assert set(HALF_RUNS) == set(HALVES)  # the two beds have the same halves

if __name__ == "__main__":
    main()
