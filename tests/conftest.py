"""Shared fixtures: a tiny hand-made labelled web that every engine and strategy test can reason about."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.web.store import WebWriter

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

BIRD_WORDS = "bird feather wing nest egg beak flight migration songbird plumage"
OTHER_WORDS = "train railway station engine track locomotive carriage timetable signal freight"


def _text(words: str, i: int) -> str:
    w = words.split()
    return " ".join(w[(i + k) % len(w)] for k in range(40))


def build_tiny_web(directory: Path) -> Path:
    """Three hosts. birds.test holds a relevant cluster; trains.test is irrelevant; a tunnel through
    trains.test leads to a second relevant cluster on far.test; some links are dead."""
    with WebWriter(directory, {"name": "tiny"}) as w:
        def page(url: str, label: str, words: str, i: int, links: list[tuple[str, str]]) -> None:
            w.add_page(url, title=url.rsplit("/", 1)[-1], text=_text(words, i), labels=[label])
            for target, anchor in links:
                w.add_link(url, target, anchor)

        birds = [f"http://birds.test/b{i}" for i in range(10)]
        trains = [f"http://trains.test/t{i}" for i in range(10)]
        far = [f"http://far.test/f{i}" for i in range(5)]
        for i, url in enumerate(birds):
            links = [(birds[(i + 1) % 10], "bird"), (trains[i], "train"), ("http://birds.test/missing%d" % i, "gone")]
            page(url, "topic.birds", BIRD_WORDS, i, links)
        for i, url in enumerate(trains):
            links = [(trains[(i + 1) % 10], "train")] + ([(far[0], "far birds")] if i == 9 else [])
            page(url, "topic.trains", OTHER_WORDS, i, links)
        for i, url in enumerate(far):
            page(url, "topic.birds.far", BIRD_WORDS, i + 3, [(far[(i + 1) % 5], "bird")])
    return directory


@pytest.fixture()
def tiny_web(tmp_path: Path) -> Path:
    return build_tiny_web(tmp_path / "tiny")


def crawl_tiny(web_dir, strategy: str, budget: int = 30, seed: int = 1, **options):
    """Crawl the tiny web from birds.test/b0 with a TF-IDF classifier; returns (policy, step events)."""
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.engine import CrawlEngine
    from focuscrawl.strategies import CrawlContext, make_policy
    from focuscrawl.topic.relevance import TfidfRelevanceModel
    from focuscrawl.web.store import OfflineWeb

    web = OfflineWeb(web_dir)
    topic = load_topic(web, "topic.birds")
    clf = TfidfRelevanceModel().fit(topic.inputs.example_texts, topic.inputs.example_labels)
    policy = make_policy(strategy, **options)
    events = []
    engine = CrawlEngine(policy, clf, budget=budget, judge=topic.truth, sinks=[events.append])
    engine.start(CrawlContext(topic=topic.inputs, classifier=clf, seeds=["http://birds.test/b0"], budget=budget,
                              seed=seed))
    engine.run(web)
    return policy, events
