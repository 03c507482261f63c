"""A suite's table with one strategy's rows taken from other runs of it: what the whole suite would give on code
where only that strategy changed, without crawling every other strategy again.

    python -m benchmarks.suite_merge runs/suite-dev-s4 --strategy adaptive --from runs/tjvs-tuning runs/tjvs-heldout \
        [--suite dev] [--json FILE]

Each row's summary is read from the first folder; the named strategy's entry is replaced by its entry in the row of
the same name in a ``--from`` folder (all rows must be there), or added to the row if the first folder did not run
it (``--rows``: only the rows whose names match, as ``focuscrawl bench --rows``). The suite's own summary
(``summarize_suite``: medians over all rows and each half, W/T/L against best-first by the suite's paired
bootstrap) is then printed as ``focuscrawl bench --suite`` prints it. Honest only when the other strategies' crawls
do not depend on the change: say why beside the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from focuscrawl.bench.suite import SuiteError, find_suite, load_suite, plan_rows, suite_markdown, summarize_suite


def strategy_rows(folders: list[Path], strategy: str) -> dict[str, dict]:
    """row slug -> the strategy's entry, from the row summaries of ``folders``."""
    found = {}
    for folder in folders:
        for summary in sorted(folder.glob("rows/*/summary.json")):
            for entry in json.loads(summary.read_text())["strategies"]:
                if entry["strategy"] == strategy:
                    found[summary.parent.name] = entry
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="a finished suite folder")
    parser.add_argument("--strategy", required=True)
    parser.add_argument("--from", dest="sources", type=Path, nargs="+", required=True)
    parser.add_argument("--suite", default="dev")
    parser.add_argument("--webs", type=Path, default=Path("webs"), help="the suite's webs (as focuscrawl bench --webs)")
    parser.add_argument("--rows", default=None, help="only the rows matching this regular expression")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    try:
        suite = load_suite(find_suite(args.suite))
        planned = plan_rows(suite, webs=args.webs, out=args.base, pattern=args.rows)
    except SuiteError as exc:  # an unknown suite, a --rows that is no pattern or matches nothing: one line
        sys.exit(f"error: {exc}")
    replacement = strategy_rows(args.sources, args.strategy)
    summaries = {}
    for item in planned:
        path = args.base / "rows" / item.row.slug / "summary.json"
        if not path.exists() or item.row.slug not in replacement:
            where = args.base if not path.exists() else "the --from folders"
            sys.exit(f"error: row {item.row.slug} is missing from {where}")
        summary = json.loads(path.read_text())
        entries = summary["strategies"]
        if all(entry["strategy"] != args.strategy for entry in entries):
            entries.append(replacement[item.row.slug])
        summary["strategies"] = [replacement[item.row.slug] if entry["strategy"] == args.strategy else entry
                                 for entry in entries]
        summaries[item.row.slug] = summary
    result = summarize_suite(suite, planned, summaries)
    print(suite_markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
