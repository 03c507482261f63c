"""The policy contract (focuscrawl.policy), checked for every registered strategy and preset.

On the tiny web: selections come back in their observations with their memo, at one and at eight fetches
in flight; the same seed gives the same crawl; an engine snapshot restored into a fresh crawl continues
exactly as the original does (what a resumed real crawl relies on); and ground truth never reaches a
policy: with the web's labels scrambled (and the engine's judge with them) every policy that does not
declare it reads ground truth crawls exactly as before.
"""

from __future__ import annotations

import random

import pytest
from conftest import tiny_crawl

from focuscrawl.bench.protocol import GroundTruth, load_topic
from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.config import RunSettings
from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.strategies import names, resolve
from focuscrawl.webs.store import OfflineWeb, WebWriter

ALL = names()
LEARNERS = [n for n in ALL if not resolve(n).spec.needs_ground_truth]


class Spy:
    """Wraps a policy's select/observe: every selection must come back, as the same object, exactly once."""

    def __init__(self, policy):
        self.returned: dict[int, object] = {}
        self.observed = 0
        select, observe = policy.select, policy.observe

        def spy_select():
            selection = select()
            if selection is not None:
                self.returned[id(selection)] = selection
            return selection

        def spy_observe(observation):
            assert self.returned.get(id(observation.selection)) is observation.selection, \
                "the observation does not carry the Selection select returned"
            self.observed += 1
            return observe(observation)

        policy.select, policy.observe = spy_select, spy_observe


def _drive(engine, web, in_flight: int, steps: int | None = None) -> list[str]:
    """Fetch up to ``in_flight`` selections at a time, recorded in reverse order of selection."""
    urls: list[str] = []
    while not engine.done and (steps is None or len(urls) < steps):
        batch = []
        for _ in range(in_flight):
            selection = engine.next_selection()
            if selection is None:
                break
            batch.append(selection.url)
        if not batch:
            break
        for url in reversed(batch):
            engine.record(url, web.fetch(url))
            urls.append(url)
    return urls


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("in_flight", [1, 8])
def test_every_selection_comes_back_with_its_memo(tiny_web, name, in_flight):
    crawl, events, web = tiny_crawl(tiny_web, name, budget=30)
    spy = Spy(crawl.policy)
    urls = _drive(crawl.engine, web, in_flight)
    assert len(urls) == len(set(urls)) > 10 and len(urls) == len(events)
    # every selection of the policy's comes back to it; a soft-404 probe is the engine's own fetch, never observed
    assert spy.observed == len([e for e in events if e.verdict != PROBE])
    assert [e.step for e in events] == list(range(len(events)))
    assert all(e.decision_ms >= 0 for e in events)


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_crawl(tiny_web, name):
    first, _, web = tiny_crawl(tiny_web, name, budget=30, seed=5)
    second, _, _ = tiny_crawl(tiny_web, name, budget=30, seed=5)
    assert _drive(first.engine, web, 3) == _drive(second.engine, web, 3)


@pytest.mark.parametrize("name", ALL)
def test_snapshot_round_trip_continues_the_same_crawl(tiny_web, name):
    original, _, web = tiny_crawl(tiny_web, name, budget=30)
    head = _drive(original.engine, web, 2, steps=12)
    blob = original.engine.snapshot()
    tail = _drive(original.engine, web, 2)
    restored, _, _ = tiny_crawl(tiny_web, name, budget=30)
    restored.engine.restore(blob)
    assert restored.engine.stats.steps == len(head)
    assert _drive(restored.engine, web, 2) == tail


def _scrambled_copy(src, dst, seed: int = 7):
    """The same pages and links with the labels dealt out again at random."""
    web = OfflineWeb(src)
    labels = web.labels()
    shuffled = list(labels.values())
    random.Random(seed).shuffle(shuffled)
    scrambled = dict(zip(labels, shuffled))
    with WebWriter(dst, {"name": "tiny-scrambled"}) as writer:
        for record in web.records():
            page = web.fetch(record.url)
            writer.add_page(record.url, status=record.status, title=page.title, text=page.text,
                            labels=scrambled.get(record.url, "").split(","))
            for link in page.outlinks:
                writer.add_link(record.url, link.url, link.anchor)
    web.close()
    return dst


@pytest.mark.parametrize("name", LEARNERS)
def test_ground_truth_never_reaches_a_policy(tiny_web, tmp_path, name):
    web = OfflineWeb(tiny_web)
    topic = load_topic(web, "topic.birds")  # the user's inputs: the same in both crawls
    scrambled_web = OfflineWeb(_scrambled_copy(tiny_web, tmp_path / "scrambled"))
    scrambled_truth = GroundTruth("topic.birds", frozenset(u for u, lab in scrambled_web.labels().items()
                                                         if lab.startswith("topic.birds")))
    assert scrambled_truth.relevant != topic.truth.relevant
    settings = RunSettings(budget=30, seed=3, reward_model="tfidf")
    classifiers = Classifiers(topic.inputs, 0)
    runs = []
    for crawl_web, truth in ((web, topic.truth), (scrambled_web, scrambled_truth)):
        events = []
        crawl = build_crawl(settings, name, topic.inputs, ["http://birds.test/b0"], classifiers=classifiers,
                            judge=truth, sinks=[events.append])
        crawl.engine.run(crawl_web)
        runs.append(([e.url for e in events], [e.relevant for e in events]))
    assert runs[0][0] == runs[1][0], "the crawl changed with the labels: ground truth leaked into the policy"
    assert runs[0][1] != runs[1][1], "the scrambled labels must score the crawl differently"


@pytest.mark.slow
def test_the_strategy_in_docs_interfaces_runs_from_a_file_of_its_own(tmp_path, monkeypatch):
    """docs/interfaces.md's "Adding a strategy, in one file" example, as a user would run it."""
    import json
    import re
    from pathlib import Path

    from typer.testing import CliRunner

    from focuscrawl.cli.main import app

    doc = (Path(__file__).parents[1] / "docs" / "interfaces.md").read_text()
    section = doc[doc.index("## Adding a strategy, in one file"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "anchor_first.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(app, ["bench", "--strategy", "anchor_first:AnchorFirst,bfs", "--budget", "40",
                                      "--runs", "1", "-s", "options.anchor_first:AnchorFirst.exploration=0.1",
                                      "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    rows = {r["strategy"]: r for r in json.loads((tmp_path / "out" / "summary.json").read_text())["strategies"]}
    assert rows["anchor_first:AnchorFirst"]["steps_mean"] == 40
