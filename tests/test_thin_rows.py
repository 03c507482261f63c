"""Thin rows (issues 43 and 44): a data browser's one-record pages, served next to the topic's articles. The rows'
family gets its allowance and is closed; every article is still fetched; with the rule off every row is fetched."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BIRD_WORDS, _text, crawl_records

from focuscrawl.engine.defences import THIN_ROWS
from focuscrawl.topic.thin import ThinPages
from focuscrawl.webs.store import WebWriter

DATA, BIRDS = "http://data.test", "http://birds.test"
ROWS, ARTICLES = 40, 12


def _name(n: int) -> str:
    """A record's name: a word of its own (distinct records, which the trap rule leaves open)."""
    return "".join("bcdfghjklm"[int(d)] for d in str(n)) + "ara"


def _browser(directory: Path) -> Path:
    """Articles of the topic's words (80, as long as its examples) on birds.test, each linking to the next and to
    a data browser's table; the table links to 40 row pages of four words each (under the floor, an eighth of the
    examples' 80 words, each naming its own record) and to the articles; each row links back to the table."""
    articles = [f"{BIRDS}/a{i}" for i in range(ARTICLES)]
    rows = [f"{DATA}/db/birds/{i}" for i in range(ROWS)]
    table = f"{DATA}/db/birds"
    with WebWriter(directory, {"name": "browser"}) as w:
        for i, url in enumerate(articles):
            w.add_page(url, title=f"Article {i}", text=_text(BIRD_WORDS, i), labels=["topic.birds"])
            w.add_link(url, articles[(i + 1) % ARTICLES], "bird")
            w.add_link(url, table, "bird records")
        w.add_page(table, title="birds table", text=_text(BIRD_WORDS, 3), labels=["other"])
        for i, url in enumerate(rows):
            w.add_page(url, title=f"row {i}", text=f"bird {_name(i)} {_name(i + ROWS)} nest", labels=["other"])
            w.add_link(url, table, "birds table")
            w.add_link(table, url, f"bird {i}")
        for url in articles:
            w.add_link(table, url, "bird")
    return directory


def _fetched(records: list[dict], part: str) -> list[dict]:
    return [r for r in records if part in r["url"] and not r.get("verdict", "").startswith("soft-404")]


def test_a_page_is_short_under_the_floor_whatever_its_host():
    thin = ThinPages(floor_words=10)
    assert thin.is_short("bird nest egg") and not thin.is_short(" ".join(["bird"] * 10))


@pytest.mark.parametrize("served", [False, True])
def test_a_family_of_rows_is_closed_after_its_allowance_and_every_article_is_fetched(tmp_path, served):
    web = _browser(tmp_path / "web")
    seeds, budget = [f"{BIRDS}/a0"], ARTICLES + ROWS + 1
    # the trap rule alone stops numbered rows of so little text after its allowance (20 here): off in both crawls,
    # so that each shows what this rule does
    on = crawl_records(web, tmp_path / "on", served=served, seeds=seeds, budget=budget,
                       defences={"traps": {"enabled": False}, "thin_rows": {"enabled": True}})
    assert len(_fetched(on, "/a")) == ARTICLES
    rows_on = _fetched(on, "/db/birds/")
    skipped = [url for r in on for url, why in r["skipped"] if why == THIN_ROWS]
    assert len(rows_on) <= 6 + 1 and len(rows_on) + len(skipped) == ROWS  # the allowance, then all refused
    assert not any(BIRDS in url for url in skipped) and not any(url.endswith("/db/birds") for url in skipped)
    off = crawl_records(web, tmp_path / "off", served=served, seeds=seeds, budget=budget,
                        defences={"thin_rows": {"enabled": False}, "traps": {"enabled": False}})
    assert len(_fetched(off, "/db/birds/")) == ROWS


def test_thin_row_settings_come_from_the_command_line(tmp_path):
    from focuscrawl.config import BenchConfig, load_config

    config = load_config(BenchConfig, overrides=["defences.thin_rows.allowance=3", "defences.thin_rows.enabled=true"])
    assert config.defences.thin_rows.allowance == 3 and "thin_rows" in config.defences.build(1, 10)
    off = load_config(BenchConfig, overrides=["defences.thin_rows.enabled=false"])
    assert "thin_rows" not in off.defences.build(1, 10)
