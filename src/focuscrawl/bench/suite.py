"""``focuscrawl bench --suite``: many topics in one command, to tell which strategy wins on topics it was not
developed on.

A suite file (YAML; ``suites/dev.yml`` is the development suite, docs/benchmark.md describes the format)
names webs, strategies, default settings and rows: a topic on a web, a few settings of its own, and a half,
``tuning`` or ``held-out``, because defaults are chosen on one half and confirmed on the other. Each row is
an ordinary benchmark (``run_benchmark``) in its own folder, run in parallel processes and reused when the
folder already holds results made with the same settings, so that an interrupted suite resumes. The suite
tables summarise over rows, by medians and minima rather than means so that one easy topic cannot carry a
strategy, and count wins, ties and losses with a paired bootstrap over runs, so that a difference inside
the runs' noise is a tie rather than a win.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import re
import time
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from focuscrawl.bench.report import cell
from focuscrawl.bench.runner import ORACLE, check_seeds, run_benchmark
from focuscrawl.builder import check_strategies
from focuscrawl.config import BenchConfig, load_config
from focuscrawl.strategies import resolve
from focuscrawl.user_files import read_yaml_mapping
from focuscrawl.webs import embedded_web_dir
from focuscrawl.webs.mess import MESS_VERSION, make_profile, mess_web
from focuscrawl.webs.store import WEB_FILE, OfflineWeb

SUITES_DIR = Path(__file__).parent / "suites"
HALVES = ("tuning", "held-out")
BASELINE = "best-first"
QUICK_SETTINGS = {"runs": 2, "budget": 300}
QUICK_LABEL = "QUICK smoke run (cut-down runs and budget): not the real figures"
BOOTSTRAP_SAMPLES = 2000
ROW_FILE = "row.json"  # beside a row's summary.json: the settings it was made with
# A row's web and topic come from the row, its strategies from the suite and its folder from --out.
NOT_DEFAULTS = ("web", "topic", "strategies", "out")
# How a missing web is built, when its builder takes more than SRC and OUT: the Debian web downloads its index into
# SRC, from the Debian release the suite's figures were made on (docs/web-format.md, "The Debian web"); the
# Debian docs web also downloads its documentation packages there ("The Debian docs web").
BUILD_OPTIONS = {"debian": "--download bookworm ", "debian-docs": "--download bookworm "}
DATASET_SRC = "SRC: the published dataset's folder"
SRC_HINTS = {"debian": "SRC: a folder for the downloaded index",
             "debian-docs": "SRC: a folder for the downloaded index and documentation packages, about 270 MB"}


class SuiteError(ValueError):
    """The suite cannot run as asked: unknown suite, missing web, no row selected, ..."""


class SuiteWorkerLost(RuntimeError):
    """A row's worker process died under the suite (killed, or out of memory): the rows finished are kept."""

    def __init__(self, row: str, finished: int):
        super().__init__(f"the process running row {row} died (killed, or out of memory); {finished} row(s) "
                         "finished and are kept: run the same command again to go on")


class SuiteRow(BaseModel):
    """One benchmark of a suite: a topic on a web, with the settings in which it differs from the defaults."""

    model_config = ConfigDict(extra="forbid")

    web: str
    topic: str
    seeds_per_run: int | None = Field(None, gt=0)
    budget: int | None = Field(None, gt=0)
    max_per_domain: str | None = None
    half: Literal["tuning", "held-out"] | None = None

    @field_validator("max_per_domain", mode="before")
    @classmethod
    def _cap_to_str(cls, value: Any) -> str | None:
        return None if value is None else str(value)

    @property
    def settings(self) -> dict[str, Any]:
        """The bench settings the row sets itself."""
        return self.model_dump(include={"seeds_per_run", "budget", "max_per_domain"}, exclude_none=True)

    @property
    def label(self) -> str:
        """How tables and ``--rows`` name the row: web/topic, then its own settings (N seeds, T budget, MAX)."""
        tags = {"seeds_per_run": "N", "budget": "T", "max_per_domain": "MAX"}
        return " ".join([f"{self.web}/{self.topic}", *(f"{tags[key]}{value}" for key, value in self.settings.items())])

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.label)


class Suite(BaseModel):
    """A suite file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    webs: list[str] = Field(min_length=1)
    strategies: list[str] = Field(min_length=1)
    defaults: dict[str, Any] = Field(default_factory=dict)
    rows: list[SuiteRow] = Field(min_length=1)


@dataclass(frozen=True)
class PlannedRow:
    """A row of the suite with its effective settings, its folder included."""

    row: SuiteRow
    config: BenchConfig


def packaged_suites() -> list[str]:
    return sorted(path.stem for path in SUITES_DIR.glob("*.yml"))


def find_suite(name_or_file: str) -> Path:
    """A packaged suite by name (``dev``); anything else is the path of the user's own suite file."""
    packaged = SUITES_DIR / f"{name_or_file}.yml"
    if re.fullmatch(r"[\w-]+", name_or_file) and packaged.is_file():
        return packaged
    path = Path(name_or_file)
    if not path.is_file():
        raise SuiteError(f"no suite {name_or_file!r}: neither a packaged suite ({', '.join(packaged_suites())}) "
                         "nor a file")
    return path


def load_suite(path: Path) -> Suite:
    """Read and check a suite file; raises ``SuiteError`` or pydantic's ``ValidationError`` (a bad key)."""
    try:
        data = read_yaml_mapping(path, "a suite file is a YAML mapping (name, description, webs, strategies, "
                                       "defaults, rows)")
    except ValueError as exc:
        raise SuiteError(str(exc)) from None
    suite = Suite.model_validate(data)
    misplaced = [key for key in NOT_DEFAULTS if key in suite.defaults]
    if misplaced:
        raise SuiteError(f"{path}: defaults may not set {', '.join(misplaced)} (rows name their web and topic, "
                         "`strategies` is a key of its own, --out places the rows)")
    BenchConfig.model_validate(suite.defaults)  # an unknown or ill-typed default fails here, with its key
    for i, row in enumerate(suite.rows, 1):
        if row.web not in suite.webs:
            raise SuiteError(f"{path}: row {i} ({row.label}) names web {row.web!r}, which is not among the suite's "
                             f"webs ({', '.join(suite.webs)})")
    labels = [row.label for row in suite.rows]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise SuiteError(f"{path}: rows listed twice: {', '.join(twice)}")
    return suite


def web_dir(name: str, webs: Path, mess: str | None = None, say: Callable[[str], None] | None = None) -> Path:
    """``embedded`` is the web shipped in the package; any other name is a folder under ``webs``. With ``mess`` (a
    profile of ``focuscrawl web mess``), its messy version ``WEBS/NAME-mess-PROFILE``, made from it (seed 0) the
    first time a suite asks for it, so the messy suite crawls the clean suite's webs, topics and seeds."""
    directory = embedded_web_dir() if name == "embedded" else Path(webs) / name
    if not (directory / WEB_FILE).is_file():
        raise SuiteError(f"web {name!r} not found ({directory / WEB_FILE} does not exist): build it with "
                         f"`focuscrawl web build {name} {BUILD_OPTIONS.get(name, '')}SRC {directory}` "
                         f"({SRC_HINTS.get(name, DATASET_SRC)}), "
                         "or give --webs the folder that holds it")
    if mess is None:
        return directory
    messy = Path(webs) / f"{name}-mess-{mess}"
    profile = make_profile(mess)
    if _messy_web_made_as(messy) != (MESS_VERSION, profile.model_dump(mode="json")):  # none yet, or made otherwise
        if say is not None:
            say(f"making the messy web {messy} (focuscrawl web mess {directory} {messy} --profile {mess})")
        mess_web(directory, messy, profile, seed=0, profile_name=mess, overwrite=True)
    return messy


def _messy_web_made_as(directory: Path) -> tuple[int, dict] | None:
    """(mess version, profile options) a messy web was made with, or None when there is none."""
    if not (directory / WEB_FILE).is_file():
        return None
    web = OfflineWeb(directory)
    try:
        made = web.meta.get("mess") or {}
        return made.get("version"), made.get("options")
    finally:
        web.close()


def plan_rows(
    suite: Suite,
    *,
    webs: Path,
    out: Path,
    half: str | None = None,
    pattern: str | None = None,
    quick: bool = False,
    given: Mapping[str, Any] | None = None,
    overrides: Sequence[str] = (),
    mess: str | None = None,
    say: Callable[[str], None] | None = None,
) -> list[PlannedRow]:
    """The selected rows and their effective settings, checked before anything runs.

    Precedence is the usual one: the suite's defaults and the row, then ``--quick``'s settings, then the
    command line's values (``given``; None means not given), then ``-s`` overrides. ``mess`` crawls each row's
    web's messy version (``web_dir``).
    """
    if half is not None and half not in HALVES:
        raise SuiteError(f"--half {half!r} is not a half: give {' or '.join(HALVES)}")
    try:
        regex = re.compile(pattern) if pattern else None
    except re.error as exc:
        raise SuiteError(f"--rows {pattern!r} is not a regular expression: {exc}") from None
    rows = [row for row in suite.rows
            if (half is None or row.half == half) and (regex is None or regex.search(row.label))]
    if not rows:
        raise SuiteError(f"no row of suite {suite.name!r} is in half {half or 'any'} and matches --rows "
                         f"{pattern or '.*'!r}; its rows: {'; '.join(row.label for row in suite.rows)}")
    options = {**(QUICK_SETTINGS if quick else {}), **{k: v for k, v in (given or {}).items() if v is not None}}
    planned = []
    for row in rows:
        base = BenchConfig.model_validate({**suite.defaults, **row.settings, "strategies": suite.strategies,
                                           "web": str(web_dir(row.web, webs, mess, say)), "topic": row.topic})
        config = load_config(BenchConfig, None, overrides, base=base, **options)
        planned.append(PlannedRow(row, config.model_copy(update={"out": Path(out) / "rows" / row.slug})))
    check_strategies(planned[0].config, planned[0].config.strategies)  # rows share strategies and options
    return planned


@dataclass(frozen=True)
class Difference:
    """Mean over runs of A's AUC/oracle minus B's, and the 95% interval of that mean by paired bootstrap."""

    mean: float
    low: float
    high: float

    @property
    def outcome(self) -> Literal["win", "tie", "loss"]:
        """A wins when the whole interval is above zero, loses when it is below: a difference the runs'
        noise could explain is a tie."""
        return "win" if self.low > 0 else "loss" if self.high < 0 else "tie"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "outcome": self.outcome}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], rng: np.random.Generator,
                     samples: int = BOOTSTRAP_SAMPLES) -> Difference:
    """A's per-run values minus B's, run by run (run i gave both the same seeds), resampled over runs.

    Each of ``samples`` resamples draws run indices with replacement and takes the mean difference; the
    interval is their 2.5th to 97.5th percentile. A single run says nothing of the noise: its interval is
    the whole line, so it can only tie.
    """
    if len(a) != len(b) or len(a) == 0:
        raise ValueError(f"paired values need the same, non-zero number of runs, got {len(a)} and {len(b)}")
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if diff.size == 1:
        return Difference(float(diff[0]), -math.inf, math.inf)
    means = diff[rng.integers(0, diff.size, size=(samples, diff.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Difference(float(diff.mean()), float(low), float(high))


def compare(row: dict, a: str, b: str) -> Difference:
    """A against B on one row of the suite's results, by AUC/oracle.

    The generator is seeded from the suite's seed and the row alone, so every pair on a row resamples the
    same runs: the numbers are reproducible, and B against A is exactly the mirror of A against B.
    """
    ratios = {entry["strategy"]: entry["auc_ratios"] for entry in row["strategies"]}
    rng = np.random.default_rng([row["seed"] % 2**32, zlib.crc32(row["slug"].encode())])
    return paired_bootstrap(ratios[a], ratios[b], rng)


def _row_identity(config: BenchConfig, quick: bool) -> dict[str, Any]:
    """What makes a row folder's results this row's: every setting but the folder, and quick or not."""
    # without a judge, as rows made before judges existed recorded it: their results are reused
    unset = {"judge"} if config.judge is None else set()
    return {"quick": quick, "config": config.model_dump(mode="json", exclude={"out", *unset})}


def _reusable(config: BenchConfig, quick: bool) -> dict | None:
    """The row's summary when its folder holds one made with the same settings."""
    folder = Path(config.out)
    try:
        stored = json.loads((folder / ROW_FILE).read_text())
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    return summary if stored == _row_identity(config, quick) else None


def _run_row(config: BenchConfig, quick: bool) -> dict:
    """One row, in a worker process: its benchmark, then the record that lets a later suite run reuse it."""
    record = Path(config.out) / ROW_FILE
    record.unlink(missing_ok=True)  # if this run is killed, an old record must not vouch for half-new results
    summary = run_benchmark(config)
    if quick:
        markdown = Path(config.out) / "summary.md"
        markdown.write_text(f"**{QUICK_LABEL}**\n\n{markdown.read_text()}")
    record.write_text(json.dumps(_row_identity(config, quick), indent=2) + "\n")
    return summary


def run_suite(suite: Suite, planned: Sequence[PlannedRow], out: Path, *, jobs: int, quick: bool = False,
              rerun: bool = False, progress: Callable[[str], None] | None = None) -> dict:
    """Run (or reuse) every planned row, ``jobs`` at a time in separate processes, and write suite.json,
    suite.md and suite.png into ``out``."""
    say = progress or (lambda message: None)
    started = time.perf_counter()
    summaries: dict[str, dict] = {}
    reused: set[str] = set()
    for item in planned:
        summary = None if rerun else _reusable(item.config, quick)
        if summary is not None:
            summaries[item.row.slug] = summary
            reused.add(item.row.slug)
    todo = [item for item in planned if item.row.slug not in summaries]
    say(f"suite {suite.name}{' [' + QUICK_LABEL + ']' if quick else ''}: {len(planned)} rows, {len(reused)} reused, "
        f"{len(todo)} to run" + (f", {min(jobs, len(todo))} at a time" if todo else ""))
    for item in todo:  # a row whose topic cannot seed its runs stops the suite here, before any crawl
        try:
            check_seeds(item.config)
        except ValueError as exc:
            raise SuiteError(f"row {item.row.label}: {exc}") from None
    if todo:
        # spawn: a fresh interpreter per worker, never a fork of a process holding open webs and threads; and
        # one row per interpreter: a row run after others in the same process once gave other figures (WebKB
        # course, run 1: .8884 after other rows, .8957 alone; TRES left BLAS on one thread, since fixed:
        # tests/test_process_state.py). Rows now give the same figures in either order in one process
        # (tests/test_suite.py), but what a row leaves in the process (caches, loaded models) is still not
        # the next row's business: alone in its process, a row gives what it gives run by itself.
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=multiprocessing.get_context("spawn"),
                                 max_tasks_per_child=1) as pool:
            futures = {pool.submit(_run_row, item.config, quick): item for item in todo}
            for future in as_completed(futures):
                item = futures[future]
                try:
                    summaries[item.row.slug] = future.result()
                except ValueError as exc:  # a user's mistake found by the row (an unknown topic, ...)
                    pool.shutdown(cancel_futures=True)
                    raise SuiteError(f"row {item.row.label}: {exc}") from None
                except BrokenProcessPool:  # the machine killed a worker (out of memory, a kill): not the user's
                    pool.shutdown(cancel_futures=True)
                    raise SuiteWorkerLost(item.row.label, len(summaries)) from None
                aucs = ", ".join(f"{entry['strategy']} {entry['auc_ratio_mean']:.3f}"
                                 for entry in summaries[item.row.slug]["strategies"] if entry["strategy"] != ORACLE)
                say(f"[{len(summaries)}/{len(planned)}] {item.row.label} done after "
                    f"{time.perf_counter() - started:.0f}s; AUC/oracle {aucs}")
    result = summarize_suite(suite, planned, summaries, reused=reused, quick=quick)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "suite.md").write_text(suite_markdown(result))
    plot_suite(result, out / "suite.png")
    return result


def _entry(row: dict, name: str) -> dict:
    return next(entry for entry in row["strategies"] if entry["strategy"] == name)


def _median(values: Sequence[float]) -> float:
    return float(np.median(values)) if values else math.nan


def _count(rows: Sequence[dict], a: str, b: str) -> dict[str, int]:
    outcomes = [compare(row, a, b).outcome for row in rows]
    return {outcome: outcomes.count(outcome) for outcome in ("win", "tie", "loss")}


def suite_table(rows: Sequence[dict], strategies: Sequence[str], oracles: set[str]) -> dict:
    """Per strategy over ``rows``: median and minimum of the mean AUC/oracle and pages/oracle, median relevant
    domains, domains AUC/oracle and decision ms, and wins/ties/losses against best-first and against the best
    single strategy (of the others, the one with the highest median AUC/oracle). Oracles are reported, never
    compared.

    A row reused from a folder written before domains-AUC was recorded has no ``domains_auc_ratio_mean``: the
    domains-AUC median is over the rows that have it (``domains_auc_rows`` of them), NaN when none has."""
    def values(name: str, key: str) -> list[float]:
        return [_entry(row, name)[key] for row in rows]

    def recorded(name: str, key: str) -> list[float]:
        return [_entry(row, name)[key] for row in rows if key in _entry(row, name)]

    auc_median = {name: _median(values(name, "auc_ratio_mean")) for name in strategies}
    crawlers = sorted((name for name in strategies if name not in oracles), key=lambda name: -auc_median[name])
    entries = []
    for name in strategies:
        entry: dict[str, Any] = {
            "strategy": name,
            "oracle": name in oracles,
            "auc_median": auc_median[name],
            "auc_min": min(values(name, "auc_ratio_mean")),
            "pages_median": _median(values(name, "oracle_ratio_mean")),
            "pages_min": min(values(name, "oracle_ratio_mean")),
            "domains_median": _median(values(name, "relevant_domains_mean")),
            "domains_auc_median": _median(recorded(name, "domains_auc_ratio_mean")),
            "domains_auc_rows": len(recorded(name, "domains_auc_ratio_mean")),
            "decision_ms_median": _median(values(name, "decision_ms_mean")),
            "vs_baseline": None,
            "vs_best": None,
        }
        if name not in oracles:
            if BASELINE in crawlers and name != BASELINE:
                entry["vs_baseline"] = _count(rows, name, BASELINE)
            best = next((other for other in crawlers if other != name), None)
            if best is not None:
                entry["vs_best"] = {"reference": best, **_count(rows, name, best)}
        entries.append(entry)
    return {"rows": len(rows), "best": crawlers[0] if crawlers else None, "strategies": entries}


def summarize_suite(suite: Suite, planned: Sequence[PlannedRow], summaries: Mapping[str, dict], *,
                    reused: Collection[str] = (), quick: bool = False) -> dict:
    """Everything of a suite run: each row's summary (per-run ratios included) and its intervals against
    best-first, the suite table over all rows and over each half, and the rows where a strategy beat the
    oracle."""
    order = [entry["strategy"] for entry in summaries[planned[0].row.slug]["strategies"]]
    oracles = {name for name in order if resolve(name).spec.needs_ground_truth}
    rows = []
    for item in planned:
        summary, config = summaries[item.row.slug], item.config
        row = {"label": item.row.label, "slug": item.row.slug, "web": item.row.web, "topic": item.row.topic,
               "half": item.row.half, "folder": f"rows/{item.row.slug}", "reused": item.row.slug in reused,
               "seed": config.seed, "budget": config.budget, "runs": config.runs,
               "seeds_per_run": config.seeds_per_run, "max_per_domain": config.max_per_domain,
               "options": config.options,
               "relevant_total": summary["relevant_total"], "strategies": summary["strategies"]}
        row["vs_baseline"] = ({name: compare(row, name, BASELINE).to_json() for name in order
                               if name not in oracles and name != BASELINE} if BASELINE in order else {})
        rows.append(row)
    tables = {"all": suite_table(rows, order, oracles)}
    if all(any(row["half"] == half for row in rows) for half in HALVES):
        for half in HALVES:
            tables[half] = suite_table([row for row in rows if row["half"] == half], order, oracles)
    above = [{"row": row["label"], "strategy": entry["strategy"], "metric": metric, "value": entry[key]}
             for row in rows for entry in row["strategies"]
             for key, metric in (("auc_ratio_mean", "AUC/oracle"), ("oracle_ratio_mean", "pages/oracle"))
             if entry[key] > 1.0]
    return {"suite": suite.name, "description": suite.description, "quick": quick,
            "note": QUICK_LABEL if quick else "", "strategies": order, "oracles": sorted(oracles),
            "baseline": BASELINE,
            "bootstrap": {"samples": BOOTSTRAP_SAMPLES, "percentiles": [2.5, 97.5], "metric": "auc_ratio"},
            "rows": rows, "tables": tables, "above_oracle": above}


TABLE_TITLES = {"all": "All rows", "tuning": "Tuning half", "held-out": "Held-out half"}


def table_title(result: dict, scope: str) -> str:
    table = result["tables"][scope]
    return (f"{TABLE_TITLES[scope]}: {table['rows']} row{'' if table['rows'] == 1 else 's'}, best single strategy "
            f"{table['best']}")
TABLE_HEADERS = ("strategy", "AUC/oracle median", "AUC/oracle min", "pages/oracle median", "pages/oracle min",
                 "rel. domains median", "domains AUC/oracle median", "ms median", f"vs {BASELINE} W/T/L",
                 "vs best other W/T/L")


def table_cells(table: dict) -> list[list[str]]:
    """The suite table as text cells, one list per strategy (``TABLE_HEADERS``): for suite.md and the console."""
    def counts(record: dict | None) -> str:
        return f"{record['win']}/{record['tie']}/{record['loss']}" if record else "-"

    def domains_auc(entry: dict) -> str:
        """The median, and over how many rows when older rows without the figure were reused."""
        text = cell(entry.get("domains_auc_median", math.nan))
        have = entry.get("domains_auc_rows", table["rows"])
        return text if have == table["rows"] or have == 0 else f"{text} ({have} of {table['rows']} rows)"

    cells = []
    for entry in table["strategies"]:
        best = entry["vs_best"]
        cells.append([entry["strategy"],
                      *(f"{entry[key]:.3f}" for key in ("auc_median", "auc_min", "pages_median", "pages_min")),
                      f"{entry['domains_median']:.1f}", domains_auc(entry), f"{entry['decision_ms_median']:.3f}",
                      counts(entry["vs_baseline"]),
                      f"{counts(best)} vs {best['reference']}" if best else "-"])
    return cells


def _markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers),
            *("| " + " | ".join(row) + " |" for row in rows)]


def suite_markdown(result: dict) -> str:
    names = result["strategies"]
    title = f"# Suite {result['suite']}" + (f": {result['note']}" if result["quick"] else "")
    lines = [title, "", result["description"], "",
             "Per strategy over rows: the median and minimum of the mean AUC/oracle and pages/oracle, the median "
             "relevant domains, domains AUC/oracle (relevant hosts against steps, over the oracle's: the oracle "
             "plans for pages, not hosts, so it can exceed 1.0; '-' or 'n of m rows' where rows from before it "
             "was recorded were reused) and decision ms. W/T/L: rows won, tied and lost on AUC/oracle, a win "
             "needing the 95% paired-bootstrap interval of the mean difference over runs to lie above zero (a loss: "
             "below). "
             "Best other: of the other non-oracle strategies, the one with the highest median AUC/oracle. "
             f"Oracles ({', '.join(result['oracles'])}) read ground truth: reported, never compared.", ""]
    for scope, table in result["tables"].items():
        lines += [f"## {table_title(result, scope)}", "",
                  *_markdown_table(TABLE_HEADERS, table_cells(table)), ""]
    lines += ["## Above the oracle", ""]
    lines += [f"- {item['row']}: {item['strategy']} {item['metric']} {item['value']:.3f}"
              for item in result["above_oracle"]] or ["none"]
    compared = list(result["rows"][0]["vs_baseline"])
    lines += ["", "## Rows: mean AUC/oracle", "",
              (f"▲ / ▼: a win / loss against {result['baseline']} by the bootstrap rule. " if compared else "")
              + "Each row's folder holds its summary.md (every metric), summary.json, runs.jsonl and harvest.png.",
              ""]
    cells = []
    for row in result["rows"]:
        marks = {name: {"win": " ▲", "loss": " ▼"}.get(diff["outcome"], "")
                 for name, diff in row["vs_baseline"].items()}
        cells.append([row["label"], row["half"] or "-", str(row["budget"]), str(row["runs"]),
                      str(row["seeds_per_run"]), row["max_per_domain"], str(row["relevant_total"]),
                      *(f"{_entry(row, name)['auc_ratio_mean']:.3f}{marks.get(name, '')}" for name in names),
                      f"[summary]({row['folder']}/summary.md)"])
    lines += _markdown_table(["row", "half", "T", "runs", "N", "MAX", "relevant in web", *names, "details"], cells)
    if compared:
        lines += ["", f"## Against {result['baseline']}, per row", "",
                  "Mean over runs of the AUC/oracle difference, and its 95% paired-bootstrap interval.", ""]
        cells = [[row["label"], *(_interval(row["vs_baseline"][name]) for name in compared)]
                 for row in result["rows"]]
        lines += _markdown_table(["row", *compared], cells)
    return "\n".join(lines) + "\n"


def _interval(diff: dict) -> str:
    return f"{diff['mean']:+.3f} [{diff['low']:+.3f}, {diff['high']:+.3f}] {diff['outcome']}"


def plot_suite(result: dict, path: Path) -> None:
    """One column per strategy, each row's mean AUC/oracle a point (the halves marked apart), the median a
    bar: the spread over topics, which a mean over rows would hide, is what a suite is for."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names, rows = result["strategies"], result["rows"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(names) + 2), 4.5), dpi=110)
    # Spread a column's points sideways by row, the same way in every column, so one row can be followed.
    offsets = np.linspace(-0.25, 0.25, len(rows)) if len(rows) > 1 else np.zeros(1)
    styles = {"tuning": ("o", "tab:blue"), "held-out": ("^", "tab:orange"), None: ("s", "tab:gray")}
    for half, (marker, colour) in styles.items():
        points = [(i + offsets[k], _entry(row, name)["auc_ratio_mean"])
                  for i, name in enumerate(names) for k, row in enumerate(rows) if row["half"] == half]
        if points:
            xs, ys = zip(*points)
            ax.scatter(xs, ys, marker=marker, color=colour, alpha=0.7, s=22, label=half or "rows")
    for i, name in enumerate(names):
        median = _median([_entry(row, name)["auc_ratio_mean"] for row in rows])
        ax.hlines(median, i - 0.35, i + 0.35, color="black", linewidth=2, label="median" if i == 0 else None)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("mean AUC / oracle's, per row")
    ax.set_title(f"suite {result['suite']}: {len(rows)} rows" + (f"\n{result['note']}" if result["quick"] else ""),
                 color="red" if result["quick"] else "black")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
