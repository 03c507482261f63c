"""``focuscrawl bench --suite``: a suite of topics through the command line, its reuse of finished rows, the
bootstrap rule that decides wins, the packaged development suite, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from focuscrawl.bench.suite import (
    SUITES_DIR,
    SuiteError,
    compare,
    find_suite,
    load_suite,
    paired_bootstrap,
    plan_rows,
)
from focuscrawl.cli.main import app

SUITE = """\
name: mini
description: two topics of the embedded web
webs: [embedded]
strategies: [bfs, random]
defaults: {budget: 40, runs: 2, examples_irrelevant: 20}
rows:
  - {web: embedded, topic: subject.Science.Biology, half: tuning}
  - {web: embedded, topic: subject.Everyday_life.Food_and_agriculture, half: held-out}
"""


def write_suite(tmp_path: Path, text: str = SUITE) -> Path:
    path = tmp_path / "suite.yml"
    path.write_text(text)
    return path


@pytest.mark.slow
def test_a_suite_runs_through_the_cli_and_a_second_run_reuses_its_rows(tmp_path):
    suite, out = write_suite(tmp_path), tmp_path / "out"
    command = ["bench", "--suite", str(suite), "--jobs", "2", "--out", str(out), "--quiet"]
    runner = CliRunner()
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "All rows" in result.output and "Held-out half" in result.output
    for name in ("suite.json", "suite.md", "suite.png"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "suite.json").read_text())
    assert data["strategies"] == ["oracle", "bfs", "random"] and data["oracles"] == ["oracle"]
    assert [row["half"] for row in data["rows"]] == ["tuning", "held-out"]
    assert set(data["tables"]) == {"all", "tuning", "held-out"}
    for row in data["rows"]:
        assert (out / row["folder"] / "summary.json").exists() and not row["reused"]
        assert row["vs_baseline"] == {}  # best-first did not run: nothing to compare against
        for entry in row["strategies"]:
            assert len(entry["auc_ratios"]) == len(entry["oracle_ratios"]) == len(entry["relevant_domains"]) == 2
    table = {entry["strategy"]: entry for entry in data["tables"]["all"]["strategies"]}
    assert table["oracle"]["auc_median"] == 1.0 and table["oracle"]["vs_best"] is None
    assert table["bfs"]["vs_best"]["reference"] == "random" and table["random"]["vs_best"]["reference"] == "bfs"
    assert sum(table["bfs"]["vs_best"][k] for k in ("win", "tie", "loss")) == 2
    assert table["bfs"]["auc_min"] == min(row["strategies"][1]["auc_ratio_mean"] for row in data["rows"])
    markdown = (out / "suite.md").read_text()
    assert "## Tuning half: 1 row" in markdown and "rows/embedded_subject.Science.Biology/summary.md" in markdown

    summary = out / data["rows"][0]["folder"] / "summary.json"
    written = summary.stat().st_mtime_ns
    again = runner.invoke(app, command)
    assert again.exit_code == 0, again.output
    reran = json.loads((out / "suite.json").read_text())
    assert all(row["reused"] for row in reran["rows"]) and summary.stat().st_mtime_ns == written
    assert reran["tables"] == data["tables"]
    for entry in data["tables"]["all"]["strategies"]:
        assert entry["domains_auc_rows"] == 2 and entry["domains_auc_median"] >= 0.0
    assert "domains AUC/oracle median" in markdown

    # A row folder written before domains-AUC was recorded (same settings, so reused): its summary has no
    # domains_auc_ratio_mean nor domains_auc_ratios. The suite reads it and says over how many rows it took that median.
    old = json.loads(summary.read_text())
    for entry in old["strategies"]:
        del entry["domains_auc_ratio_mean"], entry["domains_auc_ratios"]
    summary.write_text(json.dumps(old))
    mixed = runner.invoke(app, command)
    assert mixed.exit_code == 0, mixed.output
    result = json.loads((out / "suite.json").read_text())
    assert all(row["reused"] for row in result["rows"])
    table = {entry["strategy"]: entry for entry in result["tables"]["all"]["strategies"]}
    held_out = {entry["strategy"]: entry for entry in result["tables"]["held-out"]["strategies"]}
    assert table["bfs"]["domains_auc_rows"] == 1
    assert table["bfs"]["domains_auc_median"] == held_out["bfs"]["domains_auc_median"]
    tuning = {entry["strategy"]: entry for entry in result["tables"]["tuning"]["strategies"]}
    assert tuning["bfs"]["domains_auc_rows"] == 0 and np.isnan(tuning["bfs"]["domains_auc_median"])
    markdown = (out / "suite.md").read_text()
    assert "(1 of 2 rows)" in markdown and "## Tuning half" in markdown

    # Other settings are another row's results: recomputed, not reused.
    changed = runner.invoke(app, [*command, "--rows", "Biology", "-s", "budget=30"])
    assert changed.exit_code == 0, changed.output
    row = json.loads((out / "suite.json").read_text())["rows"]
    assert len(row) == 1 and not row[0]["reused"] and row[0]["budget"] == 30


def test_row_settings_follow_the_usual_precedence(tmp_path):
    suite = load_suite(write_suite(tmp_path, SUITE.replace("half: tuning}", "half: tuning, budget: 50}")))
    biology, food = plan_rows(suite, webs=tmp_path, out=tmp_path / "out")
    assert (biology.config.budget, food.config.budget, food.config.runs) == (50, 40, 2)
    assert biology.config.out == tmp_path / "out" / "rows" / biology.row.slug
    [quick] = plan_rows(suite, webs=tmp_path, out=tmp_path, half="held-out", quick=True)
    assert (quick.config.runs, quick.config.budget) == (2, 300)
    [row] = plan_rows(suite, webs=tmp_path, out=tmp_path, pattern="Biology", quick=True, given={"runs": 3},
                      overrides=["budget=70", "options.bfs={}"])
    assert (row.config.runs, row.config.budget, row.config.strategies) == (3, 70, ["bfs", "random"])


def test_paired_bootstrap_wins_loses_and_ties_on_noise():
    def outcome(a, b):
        return paired_bootstrap(a, b, np.random.default_rng(0)).outcome

    steady, lower = [0.80, 0.82, 0.79, 0.81, 0.80], [0.50, 0.52, 0.49, 0.51, 0.50]
    assert outcome(steady, lower) == "win" and outcome(lower, steady) == "loss"
    # A mean ahead by .06, but runs that disagree in sign: the noise could explain it.
    noisy = [0.9, 0.3, 0.8, 0.2, 0.6]
    assert outcome(noisy, [0.5] * 5) == "tie"
    assert outcome([0.9], [0.1]) == "tie"  # one run: no estimate of the noise
    diff = paired_bootstrap(noisy, [0.5] * 5, np.random.default_rng(0))
    assert diff.low < 0 < diff.high and diff.mean == pytest.approx(0.06)
    assert paired_bootstrap(noisy, [0.5] * 5, np.random.default_rng(0)) == diff, "same seed, same interval"

    row = {"seed": 0, "slug": "web-topic", "strategies": [{"strategy": "a", "auc_ratios": noisy},
                                                          {"strategy": "b", "auc_ratios": steady}]}
    ab, ba = compare(row, "a", "b"), compare(row, "b", "a")
    assert (ab.low, ab.high) == pytest.approx((-ba.high, -ba.low)), "B against A mirrors A against B"


def test_the_dev_suite_is_packaged_with_balanced_halves(tmp_path):
    path = find_suite("dev")
    assert path == SUITES_DIR / "dev.yml"
    suite = load_suite(path)
    assert len(suite.rows) == 22
    for half in ("tuning", "held-out"):
        rows = [row for row in suite.rows if row.half == half]
        assert sum(row.web == "wikispeedia" for row in rows) == 6
        assert any(row.web == "webkb" for row in rows)
    tuning = {row.topic for row in suite.rows if row.half == "tuning"}
    assert {"subject.Science.Biology", "subject.Science.Physics",
            "subject.Everyday_life.Food_and_agriculture"} <= tuning
    assert suite.strategies[0] == "oracle" and "best-first" in suite.strategies
    with pytest.raises(SuiteError, match="focuscrawl web build webkb SRC"):
        plan_rows(suite, webs=tmp_path, out=tmp_path, pattern="course")
    # the many-site web (issue 32): two topics tune, three are held out, at the 5 seeds and budget 2000
    assert "debian" in suite.webs
    debian = {row.topic: row for row in suite.rows if row.web == "debian"}
    assert {topic for topic, row in debian.items() if row.half == "tuning"} == {"topic.biology", "topic.geography"}
    assert {topic for topic, row in debian.items() if row.half == "held-out"} == {
        "topic.mathematics", "topic.astronomy", "topic.chemistry"}
    assert all(row.settings == {"seeds_per_run": 5, "budget": 2000} for row in debian.values())
    with pytest.raises(SuiteError, match=f"focuscrawl web build debian --download bookworm SRC {tmp_path}/debian"):
        plan_rows(suite, webs=tmp_path, out=tmp_path, pattern="debian")


@pytest.mark.parametrize(("args", "suite", "message"), [
    (["--suite", "nope"], None, "no suite 'nope'"),
    (["--suite", "dev", "--webs", "{tmp}"], None, "focuscrawl web build wikispeedia SRC"),
    ([], SUITE.replace("half: tuning}", "half: tuning, seed: 3}"), "rows.0.seed: unknown setting"),
    ([], SUITE.replace("webs: [embedded]", "webs: [other]"), "not among the suite's webs"),
    ([], SUITE.replace("budget: 40", "budgte: 40"), "setting budgte: unknown setting"),
    (["--half", "tune"], SUITE, "--half 'tune' is not a half: give tuning or held-out"),
    (["--rows", "("], SUITE, "is not a regular expression"),
    (["--rows", "Physics"], SUITE, "no row of suite 'mini'"),
    (["--web", "embedded"], SUITE, "--suite runs the suite's own webs"),
    (["--strategy", "nope"], SUITE, "unknown strategy 'nope'"),
    (["--jobs", "0"], SUITE, "--jobs must be at least 1"),
])
def test_mistakes_end_with_one_line_and_exit_2(tmp_path, args, suite, message):
    if suite is not None:
        args = ["--suite", str(write_suite(tmp_path, suite)), *args]
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    result = CliRunner().invoke(app, ["bench", *args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "out").exists()


FIGURES = ("auc_ratios", "oracle_ratios", "relevant_domains", "relevant_pages_mean", "harvest_rate_mean", "steps_mean")


def _rows_in_one_process(configs: list) -> list[dict]:
    """The suite's own row function, ``_run_row``, on ``configs`` one after the other in one fresh process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from focuscrawl.bench.suite import _run_row

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return [pool.submit(_run_row, config, False).result() for config in configs]


@pytest.mark.slow
def test_a_row_gives_the_same_figures_whichever_row_ran_before_it_in_the_process(tmp_path):
    """Process-wide state (the TF-IDF, keyword and anchor-model caches, the word vectors, BLAS threads) must
    not carry one row's crawls into the next: rows A then B and B then A in one process, same figures."""
    from focuscrawl.config import BenchConfig

    def config(topic: str, order: str) -> BenchConfig:
        return BenchConfig(web="embedded", topic=topic, budget=50, runs=1, examples_irrelevant=30,
                           strategies=["adaptive", "tres"],
                           out=tmp_path / order / topic.rsplit(".", 1)[-1])

    def figures(summary: dict) -> dict:
        return {entry["strategy"]: {key: entry[key] for key in FIGURES} for entry in summary["strategies"]}

    a, b = "subject.Science.Biology", "subject.Everyday_life.Food_and_agriculture"
    a_first, b_second = map(figures, _rows_in_one_process([config(a, "ab"), config(b, "ab")]))
    b_first, a_second = map(figures, _rows_in_one_process([config(b, "ba"), config(a, "ba")]))
    assert a_first == a_second and b_first == b_second
    # real crawls, not rows that stopped at once
    assert all(entry["steps_mean"] == 50 for entry in [*a_first.values(), *b_first.values()])
    assert a_first != b_first and any(entry["auc_ratios"] != [1.0] for entry in a_first.values())
