"""Reading benchmark and suite folders: the summary tables and every strategy's harvest curves.

A bench folder (``focuscrawl bench --out``) holds summary.json (one entry per strategy) and runs.jsonl (one
line per run of a strategy, with its curve: relevant pages after each step, padded to the budget). A suite
folder holds suite.json and suite.md and one bench folder per row under rows/; a suite still running has
rows but no suite.json yet. Files are re-read when they change, never written.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

from focuscrawl.dashboard.charts import thin

SUMMARY = "summary.json"
RUNS = "runs.jsonl"
SUITE = "suite.json"
ROWS = "rows"


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities (a ratio to an oracle that found nothing) become None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def curve_stats(curves: list[list[float]], limit: int = 200) -> dict[str, list]:
    """Mean, min, max and standard deviation over runs at each step, thinned to ``limit`` points."""
    if not curves:
        return {"fetched": [], "mean": [], "min": [], "max": [], "std": []}
    length = max(len(c) for c in curves)
    # a run that stopped early (frontier spent) keeps its last value, as the runner pads it
    padded = [c + [c[-1] if c else 0] * (length - len(c)) for c in curves]
    idx = thin(length, limit)
    out: dict[str, list] = {"fetched": [i + 1 for i in idx], "mean": [], "min": [], "max": [], "std": []}
    for i in idx:
        values = [c[i] for c in padded]
        mean = sum(values) / len(values)
        out["mean"].append(round(mean, 3))
        out["min"].append(min(values))
        out["max"].append(max(values))
        out["std"].append(round(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), 3))
    return out


def is_bench(folder: Path) -> bool:
    try:
        data = json.loads((folder / SUMMARY).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("strategies"), list)


def is_suite(folder: Path) -> bool:
    return (folder / SUITE).is_file() or any(is_bench(row) for row in _row_dirs(folder))


def _row_dirs(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in (folder / ROWS).iterdir() if p.is_dir())
    except OSError:
        return []


class BenchReader:
    """One bench folder: summary and curves, cached until its files change."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._data: dict | None = None

    def load(self) -> dict | None:
        """{summary, curves: {strategy: curve_stats}, order} or None when the folder holds no summary yet."""
        key = (_mtime(self.folder / SUMMARY), _mtime(self.folder / RUNS))
        with self._lock:
            if key == self._key:
                return self._data
            try:
                summary = json.loads((self.folder / SUMMARY).read_text())
            except (OSError, ValueError):
                summary = None
            if not isinstance(summary, dict) or not isinstance(summary.get("strategies"), list):
                self._key, self._data = key, None
                return None
            runs: dict[str, list[list[float]]] = {}
            try:
                with open(self.folder / RUNS) as fh:
                    for line in fh:
                        try:
                            record = json.loads(line)
                            runs.setdefault(record["strategy"], []).append(list(record["curve"]))
                        except (ValueError, KeyError, TypeError):
                            continue
            except OSError:
                pass
            order = [entry.get("strategy") for entry in summary["strategies"] if isinstance(entry, dict)]
            order += [name for name in runs if name not in order]
            self._data = {"summary": clean(summary), "order": order,
                          "curves": {name: curve_stats(runs[name]) for name in order if name in runs},
                          "runs": {name: len(runs.get(name, [])) for name in order}}
            self._key = key
            return self._data


class SuiteReader:
    """A suite folder: suite.json when the suite is done, and its rows (bench folders) in any case."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._rows: dict[str, BenchReader] = {}
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._suite: dict | None = None

    def suite(self) -> dict | None:
        key = (_mtime(self.folder / SUITE),)
        with self._lock:
            if key != self._key:
                try:
                    data = json.loads((self.folder / SUITE).read_text())
                except (OSError, ValueError):
                    data = None
                self._suite = clean(data) if isinstance(data, dict) else None
                self._key = key
            return self._suite

    def row_slugs(self) -> list[str]:
        """The rows in suite order (suite.json), then any other row folder that holds a summary."""
        suite = self.suite()
        slugs = [row["slug"] for row in (suite or {}).get("rows", []) if isinstance(row, dict) and "slug" in row]
        slugs += [p.name for p in _row_dirs(self.folder) if p.name not in slugs and is_bench(p)]
        return slugs

    def row(self, slug: str) -> BenchReader | None:
        """A row's bench folder, only by a name the suite lists (never a path built from a request)."""
        if slug not in self.row_slugs():
            return None
        with self._lock:
            if slug not in self._rows:
                self._rows[slug] = BenchReader(self.folder / ROWS / slug)
            return self._rows[slug]

    def rows(self) -> list[dict]:
        """Per row: label, half, and each strategy's mean AUC/oracle and pages/oracle (from suite.json when
        there, else from the row's own summary)."""
        suite = self.suite()
        listed = {row["slug"]: row for row in (suite or {}).get("rows", []) if isinstance(row, dict)}
        out = []
        for slug in self.row_slugs():
            row = listed.get(slug)
            if row is None:
                reader = self.row(slug)
                data = reader.load() if reader else None
                if data is None:
                    continue
                summary = data["summary"]
                row = {"label": f"{summary.get('web')}/{summary.get('topic')}", "slug": slug, "half": None,
                       "budget": summary.get("budget"), "runs": summary.get("runs"),
                       "strategies": summary.get("strategies", []), "vs_baseline": {}}
            out.append({
                "label": row.get("label", slug), "slug": slug, "half": row.get("half"), "budget": row.get("budget"),
                "runs": row.get("runs"), "relevant_total": row.get("relevant_total"),
                "auc": {e["strategy"]: e.get("auc_ratio_mean") for e in row.get("strategies", []) if "strategy" in e},
                "pages": {e["strategy"]: e.get("oracle_ratio_mean") for e in row.get("strategies", [])
                          if "strategy" in e},
                "outcome": {name: diff.get("outcome") for name, diff in (row.get("vs_baseline") or {}).items()
                            if isinstance(diff, dict)},
            })
        return out
