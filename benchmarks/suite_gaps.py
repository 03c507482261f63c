"""Where a strategy trails another on a suite's rows: every row where some strategy's mean AUC/oracle is
above the given one's, by how much, and the paired-bootstrap interval of the difference (the suite's own
``compare``, so the same resamples as its W/T/L), plus the strategy's decision ms per row.

Issue 13 asks that the default be "not worse than any single strategy by more than 0.03 AUC/oracle on any
topic" and at most 2 ms per decision in the suite's median, 5 ms on any topic.

    python -m benchmarks.suite_gaps runs/suite-dev [--strategy adaptive] [--margin 0.0]
    python -m benchmarks.suite_gaps runs/grid --versus        # every other strategy against --strategy

With ``--versus``: per other strategy, its median AUC/oracle, the median of its per-row difference to
``--strategy``, and its wins/ties/losses against it by the suite's bootstrap rule.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from focuscrawl.bench.suite import compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="a suite output folder (holding suite.json)")
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--margin", type=float, default=0.0, help="only gaps larger than this")
    parser.add_argument("--versus", action="store_true", help="each other strategy against --strategy")
    args = parser.parse_args()
    rows = json.loads((args.suite / "suite.json").read_text())["rows"]
    name = args.strategy
    if args.versus:
        versus(rows, name)
        return
    print(f"| row | half | {name} AUC/oracle | {name} decision ms | strategies above it: gap [95% interval] |")
    print("|---|---|---|---|---|")
    times = []
    for row in rows:
        entries = {e["strategy"]: e for e in row["strategies"]}
        mine = entries[name]
        times.append(mine["decision_ms_mean"])
        gaps = []
        for other, entry in entries.items():
            if other == name or "oracle" in other:
                continue
            gap = entry["auc_ratio_mean"] - mine["auc_ratio_mean"]
            if gap > args.margin:
                d = compare(row, other, name)
                gaps.append((gap, f"{other} +{gap:.3f} [{d.low:+.3f}, {d.high:+.3f}]"))
        text = "; ".join(g for _, g in sorted(gaps, reverse=True)) or "none"
        print(f"| {row['label']} | {row['half']} | {mine['auc_ratio_mean']:.3f} | "
              f"{mine['decision_ms_mean']:.2f} | {text} |")
    print(f"\n{name}: decision ms median {statistics.median(times):.2f}, max {max(times):.2f}")


def versus(rows: list[dict], name: str) -> None:
    others = [e["strategy"] for e in rows[0]["strategies"] if e["strategy"] != name and "oracle" not in e["strategy"]]
    print(f"| strategy | AUC/oracle median | difference to {name}, median | W/T/L against {name} |")
    print("|---|---|---|---|")
    for other in [name, *others]:
        means, diffs, counts = [], [], {"win": 0, "tie": 0, "loss": 0}
        for row in rows:
            entries = {e["strategy"]: e for e in row["strategies"]}
            means.append(entries[other]["auc_ratio_mean"])
            if other != name:
                d = compare(row, other, name)
                diffs.append(d.mean)
                counts[d.outcome] += 1
        wtl = f"{counts['win']}/{counts['tie']}/{counts['loss']}" if other != name else "-"
        diff = f"{statistics.median(diffs):+.3f}" if diffs else "-"
        print(f"| {other} | {statistics.median(means):.3f} | {diff} | {wtl} |")


if __name__ == "__main__":
    main()
