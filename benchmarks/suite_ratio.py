"""Two runs of a suite, row by row: strategy X's mean AUC/oracle in B over its mean in A (and B minus A).

What issue 14 asks of topics from a few words: the dev suite run with keywords only (B) against the same
suite with example texts (A), each strategy against itself, median over rows (and per half).

    python -m benchmarks.suite_ratio runs/suite-dev runs/suite-dev-keywords [--strategy adaptive,best-first]

B may be several folders (say a suite's tuning and held-out halves run apart, or strategies run apart): their
rows are read together. The last line per strategy gives the largest difference B - A over the rows (what
issue 31 asks of the engine's defences on a clean suite: every figure within 0.01).
"""

from __future__ import annotations

import argparse
import json
import statistics
import zlib
from pathlib import Path

import numpy as np

from focuscrawl.bench.suite import paired_bootstrap


def row_means(folder: Path) -> dict[str, dict[str, float]]:
    """row folder name -> strategy -> mean AUC/oracle, from each row's summary.json."""
    means = {}
    for summary in sorted(folder.glob("rows/*/summary.json")):
        data = json.loads(summary.read_text())
        means[summary.parent.name] = {s["strategy"]: s["auc_ratio_mean"] for s in data["strategies"]}
    return means


def row_runs(folder: Path) -> dict[str, tuple[int, dict[str, list[float]]]]:
    """row folder name -> (the row's seed, strategy -> AUC/oracle per run), from each row's summary.json."""
    runs = {}
    for summary in sorted(folder.glob("rows/*/summary.json")):
        data = json.loads(summary.read_text())
        runs[summary.parent.name] = (data["seed"], {s["strategy"]: s["auc_ratios"] for s in data["strategies"]})
    return runs


def paired(a: Path, b: list[Path], strategy: str, half: dict[str, str]) -> None:
    """B against A, one strategy, per row and per half, by the suite's paired bootstrap (seeded as the suite's
    ``compare``: the row's seed and its name)."""
    runs_a = row_runs(a)
    runs_b: dict[str, list[float]] = {}
    for folder in b:
        for row, (_, ratios) in row_runs(folder).items():
            if strategy in ratios:
                runs_b[row] = ratios[strategy]
    rows = [r for r in runs_a if r in runs_b and strategy in runs_a[r][1]]
    print(f"| row | half | {strategy} A | B | B - A [95% interval] | outcome |")
    print("|---|---|---|---|---|---|")
    results = []
    for r in rows:
        seed, ratios = runs_a[r]
        rng = np.random.default_rng([seed % 2**32, zlib.crc32(r.encode())])
        difference = paired_bootstrap(runs_b[r], ratios[strategy], rng)
        mean_a, mean_b = statistics.mean(ratios[strategy]), statistics.mean(runs_b[r])
        results.append((half.get(r, ""), mean_a, mean_b, difference.outcome))
        print(f"| {r} | {half.get(r, '')} | {mean_a:.3f} | {mean_b:.3f} | {difference.mean:+.3f} "
              f"[{difference.low:+.3f}, {difference.high:+.3f}] | {difference.outcome} |")
    print()
    for name in ("tuning", "held-out", ""):
        part = [x for x in results if not name or x[0] == name]
        if part:
            outcomes = [x[3] for x in part]
            print(f"{name or 'all'} ({len(part)} rows): median A {statistics.median(x[1] for x in part):.3f}, "
                  f"B {statistics.median(x[2] for x in part):.3f}; B against A {outcomes.count('win')}/"
                  f"{outcomes.count('tie')}/{outcomes.count('loss')} (W/T/L)")


def halves(folder: Path) -> dict[str, str]:
    """row folder name -> tuning or held-out, from the suite's suite.json when it is there."""
    path = folder / "suite.json"
    if not path.exists():
        return {}
    return {row["slug"]: row.get("half", "") for row in json.loads(path.read_text()).get("rows", [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the reference suite folder (e.g. with example texts)")
    parser.add_argument("b", type=Path, nargs="+", help="the compared suite folder(s) (e.g. keywords only)")
    parser.add_argument("--strategy", default="", help="comma-separated (default: every strategy in both)")
    parser.add_argument("--paired", action="store_true", help="B against A by paired bootstrap, one strategy")
    args = parser.parse_args()
    if args.paired:
        half = halves(args.a) or {row: h for folder in args.b for row, h in halves(folder).items()}
        paired(args.a, args.b, args.strategy or "adaptive", half)
        return
    a = row_means(args.a)
    b: dict[str, dict[str, float]] = {}
    for folder in args.b:  # a row's strategies may come from several folders (a later one wins a strategy)
        for row, means in row_means(folder).items():
            b.setdefault(row, {}).update(means)
    half = halves(args.a) or {row: h for folder in args.b for row, h in halves(folder).items()}
    rows = [r for r in a if r in b]
    strategies = [s for s in args.strategy.split(",") if s] or sorted(
        {s for r in rows for s in a[r] if s in b[r] and "oracle" not in s})
    print("| row | half | " + " | ".join(f"{s} A | {s} B | ratio" for s in strategies) + " |")
    print("|---|---|" + "---|---|---|" * len(strategies))
    ratios: dict[str, list[tuple[str, float]]] = {s: [] for s in strategies}
    for r in rows:
        cells = []
        for s in strategies:
            if s in a[r] and s in b[r] and a[r][s] > 0:
                ratio = b[r][s] / a[r][s]
                ratios[s].append((half.get(r, ""), ratio))
                cells.append(f"{a[r][s]:.3f} | {b[r][s]:.3f} | {ratio:.3f}")
            else:
                cells.append("- | - | -")
        print(f"| {r} | {half.get(r, '')} | " + " | ".join(cells) + " |")
    print()
    for s in strategies:
        values = [v for _, v in ratios[s]]
        parts = [f"all {len(values)} rows {statistics.median(values):.3f}"] if values else []
        for name in ("tuning", "held-out"):
            part = [v for h, v in ratios[s] if h == name]
            if part:
                parts.append(f"{name} {len(part)} rows {statistics.median(part):.3f}")
        print(f"{s}: median ratio B/A " + ", ".join(parts))
    for s in strategies:
        moves = [(b[r][s] - a[r][s], r) for r in rows if s in a[r] and s in b[r]]
        if moves:
            move, row = max(moves, key=lambda m: abs(m[0]))
            print(f"{s}: largest B - A {move:+.4f} ({row}); {sum(abs(m) >= 0.01 for m, _ in moves)} of "
                  f"{len(moves)} rows move by 0.01 or more")


if __name__ == "__main__":
    main()
