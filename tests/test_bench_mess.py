"""The benchmark on a messy web (focuscrawl web mess): the same topic inputs and seeds as on the clean web, a page
found through any of its URLs counts once, and each crawl's steps on injected URLs are counted by kind."""

from __future__ import annotations

import json

import pytest
from test_mess import SMALL, build_web

from focuscrawl.bench.protocol import CreditOnce, GroundTruth, load_topic
from focuscrawl.bench.runner import FIRST_COPY, SPENT_KINDS, run_benchmark
from focuscrawl.config import BenchConfig
from focuscrawl.webs.mess import make_profile, mess_web
from focuscrawl.webs.store import OfflineWeb


@pytest.fixture(scope="module")
def webs(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-mess")
    clean = build_web(root / "clean")
    mess_web(clean, root / "messy", make_profile("default", SMALL), seed=3)
    return clean, root / "messy"


def test_a_page_counts_once_whichever_of_its_urls_is_fetched():
    truth = GroundTruth("t", frozenset({"http://a.test/p", "http://a.test/q"}),
                        originals={"http://a.test/p?utm_source=x": "http://a.test/p",
                                   "http://www.a.test/p": "http://a.test/p", "http://a.test/r?sid=1": "http://a.test/r"})
    judge = truth.credit_once()
    assert isinstance(judge, CreditOnce)
    assert judge("http://a.test/p?utm_source=x")  # a copy of a relevant page: the page is found
    assert not judge("http://a.test/p") and not judge("http://www.a.test/p")  # ... once
    assert not judge("http://a.test/r?sid=1")  # a copy of an irrelevant page
    assert judge("http://a.test/q") and not judge("http://a.test/q")
    assert truth("http://a.test/p") and not truth("http://a.test/p?utm_source=x")  # what an oracle plans with
    assert truth.credit_once()("http://a.test/p")  # each crawl is judged afresh


def test_a_messy_web_gives_the_clean_webs_topic_inputs_and_seeds(webs):
    clean, messy = webs
    topics = []
    for directory in (clean, messy):
        web = OfflineWeb(directory)
        topic = load_topic(web, "topic.a", seed=0, budget=30)
        topics.append((topic.inputs.example_texts, topic.inputs.example_labels, topic.candidates, topic.seed_pool,
                       topic.reach_threshold, topic.truth.relevant, [topic.seeds_for_run(r, 2) for r in range(3)]))
        injected = web.injected()
        assert not any(url in injected for url in topic.candidates)
        web.close()
    assert topics[0] == topics[1]


def test_bench_counts_what_each_crawl_spent_on_injected_urls(webs, tmp_path):
    clean, messy = webs
    summaries = {}
    for name, directory in (("clean", clean), ("messy", messy)):
        config = BenchConfig(web=str(directory), topic="topic.a", strategies=["bfs", "best-first"], budget=60, runs=2,
                             seeds_per_run=2, out=tmp_path / name)
        summaries[name] = run_benchmark(config)
    assert all("spent_mean" not in row for row in summaries["clean"]["strategies"])
    runs = [json.loads(line) for line in (tmp_path / "messy" / "runs.jsonl").read_text().splitlines()]
    for row in summaries["messy"]["strategies"]:
        mine = [r for r in runs if r["strategy"] == row["strategy"]]
        assert row["spent_mean"] and set(row["spent_mean"]) <= {*SPENT_KINDS, "redirect", FIRST_COPY}
        for kind, mean in row["spent_mean"].items():
            assert mean == pytest.approx(sum(r["spent"].get(kind, 0) for r in mine) / len(mine))
        spent = [sum(n for k, n in r["spent"].items() if k in SPENT_KINDS) / r["steps"] for r in mine]
        assert row["injected_share_mean"] == pytest.approx(sum(spent) / len(spent))
        assert 0 < row["injected_share_mean"] < 1
    assert summaries["messy"]["relevant_total"] == summaries["clean"]["relevant_total"]
    assert "injected URLs" in (tmp_path / "messy" / "summary.md").read_text()


@pytest.mark.slow
def test_a_suite_runs_on_its_webs_messy_versions(tmp_path):
    from typer.testing import CliRunner

    from focuscrawl.cli.main import app

    suite = tmp_path / "suite.yml"
    suite.write_text("name: mini\nwebs: [embedded]\nstrategies: [bfs]\ndefaults: {budget: 40, runs: 2, "
                     "examples_irrelevant: 20}\nrows:\n  - {web: embedded, topic: subject.Science.Biology, "
                     "half: tuning}\n  - {web: embedded, topic: subject.Everyday_life.Food_and_agriculture, "
                     "half: held-out}\n")
    runner = CliRunner()
    clean = runner.invoke(app, ["bench", "--suite", str(suite), "--webs", str(tmp_path), "--jobs", "1",
                                "--out", str(tmp_path / "clean"), "--quiet"])
    assert clean.exit_code == 0, clean.output
    result = runner.invoke(app, ["bench", "--suite", str(suite), "--webs", str(tmp_path), "--mess", "default",
                                 "--jobs", "1", "--out", str(tmp_path / "messy")])
    assert result.exit_code == 0, result.output
    assert "making the messy web" in result.output and (tmp_path / "embedded-mess-default" / "web.sqlite").is_file()
    for folder in ("embedded_subject.Science.Biology", "embedded_subject.Everyday_life.Food_and_agriculture"):
        messy = json.loads((tmp_path / "messy" / "rows" / folder / "summary.json").read_text())
        plain = json.loads((tmp_path / "clean" / "rows" / folder / "summary.json").read_text())
        assert messy["web_dir"].endswith("embedded-mess-default") and messy["relevant_total"] == plain["relevant_total"]
        seeds = [[json.loads(line)["seeds"] for line in (tmp_path / name / "rows" / folder / "runs.jsonl").open()]
                 for name in ("clean", "messy")]
        assert seeds[0] == seeds[1]  # the clean suite's seeds
        assert "spent_mean" in messy["strategies"][1]
    for bad in (["--mess", "nonsense"], ["--mess", "default", "--web", "embedded"]):
        again = runner.invoke(app, ["bench", "--suite", str(suite), "--webs", str(tmp_path), *bad])
        assert again.exit_code != 0 and "Traceback" not in again.output
        assert len([line for line in again.output.strip().split("\n") if line.strip()]) <= 2, again.output
    alone = runner.invoke(app, ["bench", "--web", "embedded", "--topic", "subject.Science.Biology",
                                "--mess", "default"])
    assert alone.exit_code != 0 and "--mess goes with --suite" in alone.output
