"""``focuscrawl bench-policy``: the policy cost benchmark runs, grows the frontier and times its parts."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from focuscrawl.bench.policy_speed import Clock, TimedClassifier
from focuscrawl.cli.main import app


def _rows(*args: str, reward_model: str = "tfidf") -> list[dict]:
    result = CliRunner().invoke(app, ["bench-policy", "--frontier-sizes", "300,1500", "--steps", "15",
                                      "--sync-steps", "5", "--json", "--reward-model", reward_model, *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("["):])


def test_bench_policy_grows_the_frontier_and_reports_each_size():
    rows = _rows("--strategies", "tres,tres-sync")
    assert [(r["strategy"], r["size"]) for r in rows] == [("tres", 300), ("tres", 1500), ("tres-sync", 300),
                                                         ("tres-sync", 1500)]
    for r in rows:
        assert r["frontier"] >= r["size"] * 0.9, "timed near the requested frontier size"
        assert r["ms_per_decision"] > 0 and r["decisions_per_s"] > 0
        assert 0 < r["classifier_ms"] < r["ms_per_decision"], "the anchor classifier is part of a decision"
    tres = [r for r in rows if r["strategy"] == "tres"]
    assert tres[1]["leaves"] >= tres[0]["leaves"] >= 1, "the Tree-Frontier grows with its experience"


def test_bench_policy_passes_strategy_options_and_rejects_bad_ones():
    rows = _rows("--strategies", "tres", "--set", "options.tres.anchor_model=reward")
    assert len(rows) == 2
    result = CliRunner().invoke(app, ["bench-policy", "--frontier-sizes", "100", "--strategies", "tres",
                                      "--set", "options.tres.anchor_model=nonsense"])
    assert result.exit_code == 2 and "anchor_model must be" in result.output
    result = CliRunner().invoke(app, ["bench-policy", "--frontier-sizes", "100", "--reward-model", "nonsense"])
    assert result.exit_code == 2 and "--reward-model must be one of" in result.output


@pytest.mark.slow
def test_bench_policy_times_each_strategy_with_its_own_reward_model_by_default():
    result = CliRunner().invoke(app, ["bench-policy", "--frontier-sizes", "300", "--steps", "15", "--json",
                                      "--strategies", "tres,tree-random"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout[result.stdout.index("["):])
    assert [(r["strategy"], r["reward_model"]) for r in rows] == [("tres", "kwbilstm"), ("tree-random", "kwbilstm")]
    assert all(0 < r["classifier_ms"] < r["ms_per_decision"] for r in rows)


def test_nested_timed_classifiers_count_once():
    class Slow:
        def predict_proba(self, texts):
            return [0.5] * len(texts)

    clock = Clock()
    inner = TimedClassifier(Slow(), clock)
    outer = TimedClassifier(inner, clock)
    outer.predict_proba(["a"])
    once = clock.seconds
    assert once > 0 and clock.depth == 0
    inner.predict_proba(["a"])
    assert clock.seconds > once
