"""The dev suite on its messy version against the clean one, with and without the engine's defences (issue 31).

    focuscrawl bench --suite dev --webs webs --mess default --strategy adaptive,best-first,bfs,tres \
        --out runs/suite-dev-mess --jobs 2
    focuscrawl bench --suite dev --webs webs --mess default --strategy adaptive,best-first,bfs,tres \
        -s defences.enabled=false --out runs/suite-dev-mess-off --jobs 2
    python -m benchmarks.mess_table runs/suite-dev runs/suite-dev-mess runs/suite-dev-mess-off

Per strategy: the median over rows of its mean AUC/oracle on the clean suite and on the messy one (each against
its own web's oracle), their ratio per row (median and worst row), the same for relevant pages found at the
budget (which does not depend on how well the oracle copes with the mess), and the share of the budget spent on
what the mess injected (``focuscrawl.bench.runner.SPENT_KINDS``), in all, without dead links (soft 404s at URLs the
clean web links to and answers 404: the same fetch there; folders from before messy webs version 3 count them as
soft 404s) and by kind (pages per 1,000). Then the rows, for the strategy named by ``--rows-of``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from focuscrawl.bench.runner import DEAD_LINK, SPENT_KINDS, injected_share

LIVE_KINDS = tuple(kind for kind in SPENT_KINDS if kind != DEAD_LINK)  # what a crawler could have told apart


def rows_of(folder: Path) -> dict[str, dict[str, dict]]:
    """row folder name -> strategy -> its summary entry."""
    out = {}
    for summary in sorted(folder.glob("rows/*/summary.json")):
        out[summary.parent.name] = {s["strategy"]: s for s in json.loads(summary.read_text())["strategies"]}
    return out


def paired_auc_ratio(clean: dict, messy: dict) -> float:
    """A row's messy/clean AUC/oracle: the messy mean over the clean mean of the same runs (run i has the same
    seeds in both; a messy folder of 2 runs is compared with the clean folder's first 2 of 5)."""
    messy_runs, clean_runs = messy.get("auc_ratios") or [], clean.get("auc_ratios") or []
    if not messy_runs or len(clean_runs) < len(messy_runs):
        return messy["auc_ratio_mean"] / clean["auc_ratio_mean"]
    return statistics.fmean(messy_runs) / statistics.fmean(clean_runs[:len(messy_runs)])


def run_shares(folder: Path, row: str, strategy: str) -> list[tuple[float, float]]:
    """Each run's share of the budget on injected URLs, in all and without dead links, in run order."""
    lines = (folder / "rows" / row / "runs.jsonl").read_text().splitlines()
    runs = sorted((json.loads(line) for line in lines if line.strip()), key=lambda run: run["run"])
    return [(injected_share(run.get("spent", {}), run["steps"]),
             injected_share(run.get("spent", {}), run["steps"], LIVE_KINDS))
            for run in runs if run["strategy"] == strategy]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clean", type=Path)
    parser.add_argument("messy", type=Path, nargs="+", help="messy suite folders (say with and without defences)")
    parser.add_argument("--strategy", default="adaptive,best-first,bfs,tres")
    parser.add_argument("--rows-of", default="adaptive")
    args = parser.parse_args()
    clean = rows_of(args.clean)
    strategies = args.strategy.split(",")
    print("| suite | strategy | AUC/oracle median (clean) | messy/clean AUC/oracle: median, worst row | "
          "messy/clean relevant pages: median, worst row | injected share (without dead links) | per 1,000 pages: "
          + ", ".join(SPENT_KINDS) + " |")
    print("|---|---|---|---|---|---|---|")
    for folder in args.messy:
        messy = rows_of(folder)
        rows = [r for r in messy if r in clean]
        for s in strategies:
            pairs = [(clean[r][s], messy[r][s]) for r in rows if s in clean[r] and s in messy[r]]
            if not pairs:
                continue
            auc = [paired_auc_ratio(c, m) for c, m in pairs if c["auc_ratio_mean"] > 0]
            pages = [m["relevant_pages_mean"] / c["relevant_pages_mean"] for c, m in pairs
                     if c["relevant_pages_mean"] > 0]
            spent = {k: statistics.fmean(m.get("spent_mean", {}).get(k, 0.0) * 1000 / m["steps_mean"]
                                         for _, m in pairs) for k in SPENT_KINDS}
            share = statistics.fmean(m.get("injected_share_mean", 0.0) for _, m in pairs)
            live = share - spent[DEAD_LINK] / 1000
            print(f"| {folder.name} | {s} | {statistics.median(m['auc_ratio_mean'] for _, m in pairs):.3f} "
                  f"({statistics.median(c['auc_ratio_mean'] for c, _ in pairs):.3f}) | "
                  f"{statistics.median(auc):.3f}, {min(auc):.3f} | {statistics.median(pages):.3f}, {min(pages):.3f} | "
                  f"{share:.1%} ({live:.1%}) | " + ", ".join(f"{spent[k]:.0f}" for k in SPENT_KINDS) + " |")
    print()
    s = args.rows_of
    print(f"`{s}` per row: AUC/oracle clean, then per messy folder AUC/oracle, relevant pages messy/clean, "
          "injected share")
    print("| row | clean | " + " | ".join(f"{f.name}: AUC/oracle, pages ratio, injected" for f in args.messy) + " |")
    print("|---|---|" + "---|" * len(args.messy))
    messy_all = [rows_of(f) for f in args.messy]
    for r in clean:
        if s not in clean[r] or not all(r in m and s in m[r] for m in messy_all):
            continue
        c = clean[r][s]
        cells = []
        for m in messy_all:
            e = m[r][s]
            ratio = e["relevant_pages_mean"] / c["relevant_pages_mean"] if c["relevant_pages_mean"] else float("nan")
            cells.append(f"{e['auc_ratio_mean']:.3f}, {ratio:.2f}, {e.get('injected_share_mean', 0):.1%}")
        print(f"| {r} | {c['auc_ratio_mean']:.3f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
