"""Seeds that can crawl: a benchmark's seeds reach at least min(budget, share of the web) pages, a topic that
has no such seeds is refused in one line, and summary.json records what each run's seeds reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from focuscrawl.bench.protocol import TopicError, load_topic
from focuscrawl.bench.runner import run_benchmark
from focuscrawl.cli.main import app
from focuscrawl.config import BenchConfig
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.webs.store import OfflineWeb, WebWriter

BIRDS = "bird feather wing nest egg beak flight migration songbird plumage"
TRAINS = "train railway station engine track locomotive carriage timetable signal freight"
HUB = [f"http://hub.test/h{i}" for i in range(40)]
STUBS = [f"http://stub.test/s{i}" for i in range(7)]
LONELY = [f"http://lonely.test/l{i}" for i in range(4)]
TARGET = "http://target.test/t"


def _text(words: str, i: int) -> str:
    """30 of the words, each after "the": keywords alone would read as a link farm's page (and close the hub)."""
    w = words.split()
    return " ".join(f"the {w[(i + k) % len(w)]}" for k in range(30))


def build_dead_end_web(directory: Path) -> Path:
    """A hub of 40 pages in one cycle (even ones about birds, odd ones about trains) that also leads to a 404
    and, through a redirect, to one more page; and relevant pages that lead almost nowhere: birds stubs (s0
    links to itself, s1 to a dead URL, s2..s6 a cycle of five pages) and lonely.test's pages, each linking
    only to itself, the only pages labelled topic.lonely. 52 pages answer 200: from a hub page a crawl
    can fetch 41 of them (the hub and the redirect's target; neither the dead URL nor the redirect's own URL
    holds a page), from a stub 1 or 5."""
    with WebWriter(directory, {"name": "dead-ends"}) as w:
        for i, url in enumerate(HUB):
            birds = i % 2 == 0
            w.add_page(url, text=_text(BIRDS if birds else TRAINS, i), labels=["topic.birds" if birds else "other"])
            w.add_link(url, HUB[(i + 1) % len(HUB)], "next")
        w.add_link(HUB[0], "http://hub.test/gone", "gone")
        w.add_link(HUB[1], "http://hub.test/moved", "moved")
        w.add_page("http://hub.test/moved", status=301, location=TARGET)
        w.add_page(TARGET, text=_text(TRAINS, 3), labels=["other"])
        for i, url in enumerate(STUBS):
            w.add_page(url, text=_text(BIRDS, i + 1), labels=["topic.birds.stub"])
        w.add_link(STUBS[0], STUBS[0], "me")
        w.add_link(STUBS[1], "http://stub.test/gone", "gone")
        for i in range(2, 7):
            w.add_link(STUBS[i], STUBS[2 + (i - 1) % 5], "next")
        for i, url in enumerate(LONELY):
            w.add_page(url, text=_text(BIRDS, i + 2), labels=["topic.lonely"])
            w.add_link(url, url, "me")
    return directory


@pytest.fixture()
def dead_end_web(tmp_path: Path) -> Path:
    return build_dead_end_web(tmp_path / "dead-ends")


def test_reach_counts_the_pages_a_crawl_can_fetch(dead_end_web):
    graph = OfflineWeb(dead_end_web).link_graph()
    index = graph.index
    assert int(graph.fetchable.sum()) == 52
    assert graph.reach([index[HUB[7]]]) == 41  # 40 hub pages and the redirect's target, not the 404 nor the 301
    assert [graph.reach([index[url]]) for url in STUBS] == [1, 1, 5, 5, 5, 5, 5]
    assert graph.reach([index[STUBS[0]], index[STUBS[3]]]) == 6
    candidates = [index[url] for url in HUB + STUBS]
    assert graph.can_reach(candidates, 5).tolist() == [True] * 40 + [False, False] + [True] * 5
    assert graph.can_reach(candidates, 6).tolist() == [True] * 40 + [False] * 7
    assert not graph.can_reach(candidates, 42).any()


def test_dead_ends_are_never_seeds(dead_end_web):
    web = OfflineWeb(dead_end_web)
    # 30 pages or a tenth of the web's 52 if fewer: 6, more than the five-page cycle of stubs reaches
    topic = load_topic(web, "topic.birds", budget=30)
    assert topic.reach_threshold == 6
    assert set(STUBS) & set(topic.candidates), "stubs are relevant pages with outlinks: candidates, not seeds"
    assert topic.seed_pool == [url for url in topic.candidates if url in HUB]
    for run in range(20):
        seeds = topic.seeds_for_run(run, 3)
        assert set(seeds) <= set(HUB) and topic.reach(seeds) == 41
    # A budget of 5 asks for 5 pages: the cycle of stubs reaches that, a stub on its own still does not.
    small = load_topic(web, "topic.birds", budget=5)
    assert small.reach_threshold == 5
    assert set(small.seed_pool) - set(HUB) == set(STUBS[2:]) & set(small.candidates)
    # The share is a setting: 90% of the web (47 pages) is more than any page reaches.
    with pytest.raises(TopicError, match="none of its"):
        load_topic(web, "topic.birds", budget=1000, reach_share=0.9).seeds_for_run(0, 1)


def test_a_topic_of_dead_ends_is_refused_in_one_line(dead_end_web, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["bench", "--web", str(dead_end_web), "--topic", "topic.lonely", "--strategy", "bfs",
                                 "--budget", "30", "--runs", "1", "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert ("error: topic 'topic.lonely' on 'dead-ends' cannot be seeded: none of its 2 candidate seed pages "
            "(relevant, with outlinks) can reach 6 pages (the budget, 30, or 0.1 of the web's 52 pages if fewer)"
            in line), result.output
    assert not (tmp_path / "out").exists(), "refused before any crawl"
    # More seeds per run than pages that qualify: refused the same way.
    result = runner.invoke(app, ["bench", "--web", str(dead_end_web), "--topic", "topic.birds", "--strategy", "bfs",
                                 "--budget", "30", "--runs", "1", "--seeds-per-run", "25",
                                 "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and "and a run takes 25" in " ".join(result.output.split()), result.output
    # topic init --from-web takes the same rule.
    result = runner.invoke(app, ["topic", "init", str(tmp_path / "t"), "--from-web", str(dead_end_web),
                                 "--topic", "topic.lonely", "--budget", "30"])
    assert result.exit_code == 2 and "cannot be seeded" in result.output, result.output


def test_topic_init_from_web_draws_seeds_that_can_crawl(dead_end_web, tmp_path):
    runner = CliRunner()
    for run in range(5):
        result = runner.invoke(app, ["topic", "init", str(tmp_path / f"t{run}"), "--from-web", str(dead_end_web),
                                     "--topic", "topic.birds", "--seeds-per-run", "3", "--budget", "30",
                                     "--run", str(run)])
        assert result.exit_code == 0, result.output
        seeds = load_topic_dir(tmp_path / f"t{run}").seeds
        assert seeds == load_topic(OfflineWeb(dead_end_web), "topic.birds", budget=30).seeds_for_run(run, 3)
        assert set(seeds) <= set(HUB)
    result = runner.invoke(app, ["topic", "init", str(tmp_path / "bad"), "--from-web", str(dead_end_web),
                                 "--topic", "topic.birds", "--budget", "0"])
    assert result.exit_code == 2 and "setting budget" in result.output, result.output


def test_summary_records_what_each_run_can_reach(dead_end_web, tmp_path):
    summary = run_benchmark(BenchConfig(web=str(dead_end_web), topic="topic.birds", strategies=["bfs"], budget=30,
                                        runs=3, seeds_per_run=2, out=tmp_path / "out"))
    reach = json.loads((tmp_path / "out" / "summary.json").read_text())["seed_reach"]
    assert reach == summary["seed_reach"]
    topic = load_topic(OfflineWeb(dead_end_web), "topic.birds", budget=30)
    assert reach == {"threshold": 6, "share": 0.1, "web_pages": 52, "candidates": len(topic.candidates),
                     "seed_pool": len(topic.seed_pool), "runs": [41, 41, 41]}
    runs = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert all(set(r["seeds"]) <= set(HUB) for r in runs)
    # every crawl had pages to fetch until the budget ran out
    assert all(row["steps_mean"] == 30 for row in summary["strategies"])
    assert "each can reach at least 6 of the web's 52 pages" in (tmp_path / "out" / "summary.md").read_text()


def test_a_suite_row_that_cannot_be_seeded_stops_the_suite_before_any_crawl(tmp_path):
    build_dead_end_web(tmp_path / "webs" / "dead-ends")
    suite = tmp_path / "suite.yml"
    suite.write_text("name: ends\nwebs: [dead-ends]\nstrategies: [bfs]\ndefaults: {budget: 30, runs: 1}\nrows:\n"
                     "  - {web: dead-ends, topic: topic.birds}\n  - {web: dead-ends, topic: topic.lonely}\n")
    result = CliRunner().invoke(app, ["bench", "--suite", str(suite), "--webs", str(tmp_path / "webs"),
                                      "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "error: row dead-ends/topic.lonely: topic 'topic.lonely' on 'dead-ends' cannot be seeded" in result.output
    assert not (tmp_path / "out").exists(), "not the seedable row either: nothing is crawled"
