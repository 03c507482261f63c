"""End-to-end benchmark on the embedded web, plus the protocol's promises (no label leaks, determinism)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import BIRD_WORDS, OTHER_WORDS, _text
from typer.testing import CliRunner

from focuscrawl.bench.protocol import TopicError, load_topic, topic_keywords
from focuscrawl.bench.runner import run_benchmark
from focuscrawl.cli.main import app
from focuscrawl.config import BenchConfig
from focuscrawl.webs import embedded_web_dir
from focuscrawl.webs.store import OfflineWeb, WebWriter

FIELDS = {"strategy", "runs", "harvest_rate_mean", "harvest_rate_std", "relevant_pages_mean",
          "relevant_domains_mean", "oracle_ratio_mean", "auc_ratio_mean", "domains_auc_ratio_mean", "decision_ms_mean",
          "wall_s"}


@pytest.mark.slow
def test_bench_on_embedded_web(tmp_path):
    kwargs = dict(web="embedded", topic="subject.Science.Biology", strategies=["random", "bfs", "best-first"],
                  budget=120, runs=2, seeds_per_run=1, seed=3)
    summary = run_benchmark(BenchConfig(out=tmp_path / "a", **kwargs))
    for name in ("summary.json", "summary.md", "harvest.png", "runs.jsonl"):
        assert (tmp_path / "a" / name).stat().st_size > 0
    assert {"web", "topic", "relevant_total", "budget", "max_per_domain"} <= set(summary)
    rows = {row["strategy"]: row for row in summary["strategies"]}
    assert list(rows) == ["oracle", "random", "bfs", "best-first"]
    assert all(FIELDS <= set(row) for row in rows.values())
    assert rows["oracle"]["oracle_ratio_mean"] == 1.0 and rows["oracle"]["auc_ratio_mean"] == 1.0
    for row in rows.values():
        assert 0.0 <= row["harvest_rate_mean"] <= 1.0
        assert row["auc_ratio_mean"] <= 1.0 + 1e-9
    # The learned crawler beats the blind ones on this topic.
    assert rows["best-first"]["auc_ratio_mean"] > max(rows["random"]["auc_ratio_mean"], rows["bfs"]["auc_ratio_mean"])

    again = run_benchmark(BenchConfig(out=tmp_path / "b", **kwargs))

    def strip(s):
        return [{k: v for k, v in r.items() if k not in ("decision_ms_mean", "wall_s")} for r in s["strategies"]]

    assert strip(again) == strip(summary), "same command, same numbers"


def build_many_host_web(directory):
    """A seed on seed.test links an irrelevant hub, x.test, and the head of a chain of 8 relevant pages on a.test;
    the hub links one relevant page on each of b.test, c.test and d.test. The examples come from train.test, so
    every relevant page off it is scored. The oracle takes relevant frontier URLs first: the whole chain, then the
    hub and its three hosts; BFS takes the hub second and the three hosts by step 6."""
    with WebWriter(directory, {"name": "hosts", "topic_defaults": {"train_host_pattern": r"train\.test$"}}) as w:
        def page(url: str, label: str, words: str, i: int) -> None:
            w.add_page(url, title=url, text=_text(words, i), labels=[label])

        for i in range(6):
            page(f"http://train.test/{i}", "birds" if i % 2 else "other", BIRD_WORDS if i % 2 else OTHER_WORDS, i)
        page("http://seed.test/", "birds", BIRD_WORDS, 0)
        page("http://x.test/", "other", OTHER_WORDS, 1)
        chain = [f"http://a.test/{i}" for i in range(8)]
        w.add_link("http://seed.test/", "http://x.test/", "more")
        w.add_link("http://seed.test/", chain[0], "bird")
        for i, url in enumerate(chain):
            page(url, "birds", BIRD_WORDS, i + 2)
            if i + 1 < len(chain):
                w.add_link(url, chain[i + 1], "bird")
        for host in "bcd":
            page(f"http://{host}.test/", "birds", BIRD_WORDS, 5)
            w.add_link("http://x.test/", f"http://{host}.test/", "bird")
    return directory


def test_the_host_curve_and_domains_auc(tmp_path):
    """Each run records relevant hosts after each step (the engine's relevant_hosts), padded to the budget like the
    page curve; domains-AUC/oracle is its sum over the oracle's on the same seeds. The oracle plans for pages, not
    hosts, so a strategy can beat it on hosts while behind it on pages."""
    web = build_many_host_web(tmp_path / "web")
    # half the web's pages: only seed.test's page reaches that many, so every run starts there
    summary = run_benchmark(BenchConfig(web=str(web), topic="birds", strategies=["bfs"], budget=20, runs=2,
                                        seed_reach_share=0.5, out=tmp_path / "out",
                                        # its pages are near-copies, which would send soft-404 probes (steps)
                                        defences={"soft_404": {"enabled": False}}))
    runs = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    curves = {(r["strategy"], r["run"]): r for r in runs}
    assert all(r["seeds"] == ["http://seed.test/"] and r["steps"] == 13 for r in runs)  # all 13 pages, then none
    for r in runs:
        hosts = r["host_curve"]
        assert len(hosts) == len(r["curve"]) == 20 and hosts[-1] == r["relevant_domains"] == 5
        assert all(0 <= b - a <= c - d for a, b, d, c in zip(hosts, hosts[1:], r["curve"], r["curve"][1:])), \
            "a host is counted only at a relevant page's step, once"
    assert curves["oracle", 0]["host_curve"][:13] == [1] + [2] * 9 + [3, 4, 5]
    assert curves["bfs", 0]["host_curve"][:7] == [1, 1, 2, 3, 4, 5, 5]
    rows = {row["strategy"]: row for row in summary["strategies"]}
    oracle_sum, bfs_sum = (sum(curves[name, 0]["host_curve"]) for name in ("oracle", "bfs"))
    assert rows["bfs"]["domains_auc_ratios"] == [pytest.approx(bfs_sum / oracle_sum)] * 2
    assert rows["bfs"]["domains_auc_ratio_mean"] == pytest.approx(86 / 66)  # above 1.0 ...
    assert rows["bfs"]["auc_ratio_mean"] < 1.0  # ... while behind the oracle on pages
    assert rows["oracle"]["domains_auc_ratios"] == [1.0, 1.0]
    assert "| domains AUC/oracle |" in (tmp_path / "out" / "summary.md").read_text()
    assert "| 1.303 |" in (tmp_path / "out" / "summary.md").read_text()


def test_seeds_and_examples_are_deterministic_and_relevant():
    web = OfflineWeb(embedded_web_dir())
    a, b = load_topic(web, "subject.Science.Biology", seed=1), load_topic(web, "subject.Science.Biology", seed=1)
    assert a.seeds_for_run(0, 3) == b.seeds_for_run(0, 3)
    assert a.seeds_for_run(0, 3) != a.seeds_for_run(1, 3)
    assert all(a.truth(url) for url in a.seeds_for_run(2, 5))
    assert a.inputs.example_texts == b.inputs.example_texts
    assert "biology" in a.inputs.keywords and "birds" in a.inputs.keywords
    # What reaches an agent: texts and labels of examples, keywords. No URL of the web.
    assert not any(text.startswith("http") for text in a.inputs.example_texts)


@pytest.mark.slow
def test_the_number_of_irrelevant_examples_is_an_option(tmp_path):
    web = OfflineWeb(embedded_web_dir())
    few = load_topic(web, "subject.Science.Biology", examples_irrelevant=30).inputs
    assert few.example_labels.count(0) == 30
    assert few.example_labels.count(1) == load_topic(web, "subject.Science.Biology").inputs.example_labels.count(1)
    result = CliRunner().invoke(app, ["bench", "--strategy", "bfs", "--budget", "20", "--runs", "1",
                                      "--examples-irrelevant", "30", "--out", str(tmp_path / "b"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["examples"]["irrelevant"] == 30


def test_example_pages_are_never_scored(tiny_web):
    """Examples come from pages held out of scoring: not relevant to the judge (nor to the oracle), not in
    relevant_total, not seeds; and only tens of them, at most half of a topic sampled from the topic."""
    web = OfflineWeb(tiny_web)
    labels = web.labels()
    relevant = {u for u, lab in labels.items() if lab.startswith("topic.birds")}
    topic = load_topic(web, "topic.birds")
    held_out = relevant - topic.truth.relevant
    assert len(held_out) == topic.held_out_relevant == len(relevant) // 2 == sum(topic.inputs.example_labels)
    assert sorted(web.texts(held_out)) == sorted(t for t, y in zip(topic.inputs.example_texts,
                                                                   topic.inputs.example_labels) if y)
    assert topic.held_out == len(topic.inputs.example_texts)
    assert topic.truth.total == len(relevant) - len(held_out)
    assert set(topic.seed_pool) <= topic.truth.relevant


def test_train_hosts_are_kept_out_of_seeds(tmp_path):
    with WebWriter(tmp_path / "w", {"name": "split", "topic_defaults": {"train_host_pattern": r"train\.test$"}}) as w:
        for host in ("train.test", "crawl.test"):
            for i in range(6):
                label = "course" if i % 2 else "other"
                w.add_page(f"http://{host}/{i}", text=f"{label} page number {i} {host}", labels=[label])
                w.add_link(f"http://{host}/{i}", f"http://{host}/{(i + 1) % 6}", "next")
    topic = load_topic(OfflineWeb(tmp_path / "w"), "course")
    assert topic.seed_pool and all("crawl.test" in url for url in topic.seed_pool)
    assert all("train.test" in text for text in topic.inputs.example_texts)
    assert topic.held_out == 6 and all("crawl.test" in url for url in topic.truth.relevant)  # the train host


def test_topic_errors_are_clear():
    web = OfflineWeb(embedded_web_dir())
    with pytest.raises(TopicError, match="no page"):
        load_topic(web, "subject.Nonexistent")
    assert topic_keywords("a.B_c", {"a.B_c.Sub_one", "a.Other"}) == ["b c", "sub one"]


@pytest.mark.slow
def test_cli_bench_and_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["bench", "--web", "embedded", "--topic", "subject.Everyday_life.Food_and_agriculture",
                                 "--strategy", "bfs,best-first", "--budget", "60", "--runs", "1",
                                 "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["budget"] == 60
    bad = runner.invoke(app, ["bench", "--web", "embedded", "--strategy", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown strategy" in bad.output
    bad = runner.invoke(app, ["bench", "--web", str(tmp_path), "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "not an offline web" in bad.output
    bad = runner.invoke(app, ["bench", "--web", "embedded", "--max-per-domain", "lots", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "per-domain cap" in bad.output


@pytest.mark.slow
def test_global_score_is_the_geometric_mean_of_per_web_oracle_ratios(tmp_path):
    from focuscrawl.bench.global_score import geometric_mean, parse_targets

    assert geometric_mean([0.25, 1.0]) == pytest.approx(0.5)
    assert geometric_mean([0.0, 1.0]) == 0.0
    targets = parse_targets("embedded", "subject.Science.Biology,subject.Science.Physics", "1")
    assert [(t.topic, t.seeds_per_run) for t in targets] == [("subject.Science.Biology", 1),
                                                             ("subject.Science.Physics", 1)]
    with pytest.raises(ValueError, match="--web has 2 values"):
        parse_targets("a,b", "x,y,z", "1")

    result = CliRunner().invoke(app, ["bench", "--global", "--web", "embedded",
                                      "--topic", "subject.Science.Biology,subject.Science.Physics",
                                      "--strategy", "random,bfs", "--budget", "40", "--runs", "1",
                                      "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "global.json").read_text())
    per_web = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*/summary.json"))]
    assert len(per_web) == 2
    for row in scores["strategies"]:
        ratios = [next(r for r in s["strategies"] if r["strategy"] == row["strategy"])["oracle_ratio_mean"]
                  for s in per_web]
        assert row["per_web_score"] == ratios
        assert row["global_score"] == pytest.approx(geometric_mean(ratios))
        domains = [next(r for r in s["strategies"] if r["strategy"] == row["strategy"])["domains_auc_ratio_mean"]
                   for s in per_web]
        assert row["global_domains_auc"] == pytest.approx(geometric_mean(domains))
    assert (tmp_path / "global.md").read_text().startswith("# Global score over 2 webs")
    assert "| global domains AUC |" in (tmp_path / "global.md").read_text()
    # a web's summary from before domains-AUC: no global domains AUC, shown "-", the rest as before
    from focuscrawl.bench.global_score import combine, global_markdown

    for summary in per_web:
        for entry in summary["strategies"]:
            del entry["domains_auc_ratio_mean"]
    old = combine(per_web, budget=40, runs=1, max_per_domain=None, seed=0)
    assert [row["global_score"] for row in old["strategies"]] == [row["global_score"] for row in scores["strategies"]]
    assert all(math.isnan(row["global_domains_auc"]) for row in old["strategies"])
    assert "| - |" in global_markdown(old)


@pytest.mark.slow
def test_strategy_options_reach_the_policy_and_bad_ones_fail_early(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["bench", "--strategy", "bfs", "--set", "options.bfs.depth=3", "--budget", "10",
                                 "--runs", "1", "--out", str(tmp_path / "bad"), "--quiet"])
    assert result.exit_code == 2 and "strategy 'bfs' has no option depth" in result.output
    assert not (tmp_path / "bad" / "summary.json").exists()
    # an option's type and range come from the policy's signature: checked before any crawl
    for value, message in (("2", "option explore=2: Input should be less than or equal to 1"),
                           ("x", "option explore='x': Input should be a valid number")):
        result = runner.invoke(app, ["bench", "--strategy", "adaptive", "--set", f"options.adaptive.explore={value}",
                                     "--budget", "10", "--runs", "1", "--out", str(tmp_path / "bad"), "--quiet"])
        assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
        assert not (tmp_path / "bad" / "summary.json").exists()
    result = runner.invoke(app, ["bench", "--strategy", "bfs", "--set", "tres.gamma=0", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "setting tres: unknown setting" in result.output
    # han-async's epsilon is a constructor option: 1.0 makes it a random crawler, visibly different. Options
    # of a strategy (han) reach its presets (han-async); a preset's own entry would win.
    settings = dict(web="embedded", strategies=["han-async"], budget=60, runs=1)
    base = run_benchmark(BenchConfig(out=tmp_path / "a", **settings))
    random_like = run_benchmark(BenchConfig(out=tmp_path / "b", options={"han": {"epsilon": 1.0}}, **settings))
    assert random_like["options"] == {"han": {"epsilon": 1.0}}
    assert base["strategies"][1]["relevant_pages_mean"] != random_like["strategies"][1]["relevant_pages_mean"]


@pytest.mark.slow
def test_demo_command_runs_the_baselines_and_tres(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--budget", "40", "--runs", "1"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [row["strategy"] for row in summary["strategies"]] == ["oracle", "random", "bfs", "best-first", "tres",
                                                                   "adaptive"]
    assert len(summary["word_vectors"]) == 1 and len(summary["word_vectors"][0]) == 16  # TRES used them
