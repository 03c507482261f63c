"""Thin pages: a page much shorter than the topic's relevant examples is not rewarded for the few topic words it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BIRD_WORDS, OTHER_WORDS, _text

from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.config import RunSettings
from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.topic.thin import ThinPages
from focuscrawl.types import TopicInputs
from focuscrawl.webs.store import OfflineWeb, WebWriter


def test_floor_is_a_share_of_the_median_relevant_example():
    texts = ["one two three four", "a b c d e f g h", "x " * 100, "word " * 1000]
    thin = ThinPages.from_examples(texts, [1, 1, 1, 0], ratio=0.5)
    assert thin is not None and thin.floor_words == 4.0  # median of 4, 8 and 100 words, halved
    assert ThinPages.from_examples(texts, [1, 1, 1, 0], ratio=0) is None  # turned off
    assert ThinPages.from_examples(texts, [0, 0, 0, 0], ratio=0.5) is None  # no relevant example: no floor
    with pytest.raises(ValueError):
        ThinPages(0)


def test_a_short_page_is_thin_only_on_a_host_of_short_pages():
    thin = ThinPages(floor_words=4.0, min_host_pages=3)
    # rows.test: every page short; from its third page on (its record is then mostly short) a page shrinks
    assert [thin.factor("one two", "rows.test") for _ in range(4)] == [1.0, 1.0, 0.5, 0.5]
    assert thin.factor("1 2 3 4 5 6", "rows.test") == 0.0 and thin.factor("a b c d e", "rows.test") == 1.0
    # wiki.test: articles, and a stub among them keeps its whole score
    for _ in range(5):
        assert thin.factor("word " * 50, "wiki.test") == 1.0
    assert thin.factor("a stub", "wiki.test") == 1.0
    # a page looked at, not fetched (learn=False), changes no host's record
    assert thin.factor("one", "new.test", learn=False) == 1.0 and thin.host_pages["new.test"] == [0, 0]


def _web_with_rows(directory: Path) -> Path:
    """Articles about birds on birds.test, each linking to one-line "row" pages of a data browser on rows.test,
    which carry five bird words each and link to each other."""
    with WebWriter(directory, {"name": "rows"}) as w:
        for i in range(6):
            url = f"http://birds.test/a{i}"
            w.add_page(url, title=f"a{i}", text=_text(BIRD_WORDS, i), labels=["topic.birds"])
            w.add_link(url, f"http://birds.test/a{(i + 1) % 6}", "bird")
            w.add_link(url, f"http://rows.test/r{i}", "bird row")
        for i in range(6):
            w.add_page(f"http://trains.test/t{i}", title=f"t{i}", text=_text(OTHER_WORDS, i), labels=["topic.trains"])
        for i in range(30):
            url = f"http://rows.test/r{i}"
            w.add_page(url, title=f"row {i}", text=" ".join(BIRD_WORDS.split()[i % 5:i % 5 + 5]), labels=["rows"])
            w.add_link(url, f"http://rows.test/r{(i + 1) % 30}", "next bird row")
    return directory


def _crawl(web_dir: Path, ratio: float) -> list:
    web = OfflineWeb(web_dir)
    # the user's examples: five bird texts and five train texts of 80 words each (40 topic words)
    texts = [_text(BIRD_WORDS, i) for i in range(5)] + [_text(OTHER_WORDS, i) for i in range(5)]
    topic = TopicInputs("birds", ["bird"], texts, [1] * 5 + [0] * 5)
    events: list = []
    settings = RunSettings(budget=30, seed=0, reward_model="tfidf", thin_page_ratio=ratio)
    crawl = build_crawl(settings, "best-first", topic, ["http://birds.test/a0"], classifiers=Classifiers(topic, 0),
                        judge=lambda url: "birds.test" in url, sinks=[events.append])
    crawl.engine.run(web)
    web.close()
    return events


def test_one_line_pages_are_not_rewarded_and_shrink_by_their_length(tmp_path):
    web_dir = _web_with_rows(tmp_path / "rows")
    plain = {e.url: e for e in _crawl(web_dir, ratio=0)}
    thin = {e.url: e for e in _crawl(web_dir, ratio=0.125)}
    rows_plain = [e for url, e in plain.items() if "rows.test" in url]
    # the classifier alone calls each row relevant
    assert rows_plain and all(e.reward == 1.0 for e in rows_plain if not e.verdict)
    rows_thin = [e for url, e in thin.items() if "rows.test" in url]
    # the floor: an eighth of the examples' 80 words (40 topic words, each after a short word) = 10 words; from the
    # host's fifth fetched row on, its record is mostly short pages
    for event in rows_thin[4:]:
        assert event.reward == 0.0
        if event.url in plain and not event.verdict:
            assert event.relevance == pytest.approx(plain[event.url].relevance * 5 / 10)
    # articles are as long as the examples: judged as before
    for url, event in thin.items():
        if "birds.test" in url and url in plain and event.verdict != PROBE:
            assert event.relevance == plain[url].relevance and event.reward == 1.0
    assert len(rows_thin) < len(rows_plain)  # best-first no longer follows the rows' links first


def test_a_thin_page_shrinks_from_the_judges_decision_point():
    """At 0.5 the shrinking is ``relevance x factor``; for a judge that decides lower (a calibrated one) a thin page
    lands as far under its point as under 0.5 on the balanced scale, where a plain share of its smaller number would
    leave it over the point. A page that is not thin keeps its relevance to the bit."""
    thin = ThinPages(40.0)
    for _ in range(5):
        thin.factor("row " * 10, "rows.test")  # a host of short pages
    short, long = "row " * 20, "word " * 60  # half the floor; over it
    assert thin.shrink(0.86, short, "rows.test", 0.5, learn=False) == 0.86 * 0.5
    calibrated = thin.shrink(0.5, short, "rows.test", 0.2, learn=False)
    assert 0.5 * 0.5 > 0.2 and calibrated < 0.2  # a plain share would reward it; shrunk from the point it is not
    nearly = "row " * 36  # 0.9 of the floor: a confident page stays over the point, a page at the point falls under
    assert thin.shrink(0.2, nearly, "rows.test", 0.2, learn=False) < 0.2 < thin.shrink(0.9, nearly, "rows.test", 0.2,
                                                                                     learn=False)
    assert thin.shrink(0.123456789, long, "rows.test", 0.2, learn=False) == 0.123456789
    assert thin.shrink(0.0, short, "rows.test", 0.2, learn=False) == 0.0
