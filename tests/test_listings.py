"""Listing pages from general evidence (issues 43 and 44): a blog served on loopback whose tag and category pages
quote the excerpts of its articles. The listings get their allowance, every article is still fetched; with the
rule off the crawl spends its budget on every tag."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import crawl_records

from focuscrawl.engine.defences import LISTING
from focuscrawl.engine.defences.listings import listing_family
from focuscrawl.webs.store import WebWriter

SITE = "http://blog.test"
ARTICLES, TAGS, CATEGORIES, PER_INDEX = 40, 30, 4, 10
NAV = "Field notes, a journal of the river valley. Home, categories, archives, about the authors."


def _article_text(i: int) -> str:
    """An article of its own words: its first 60 are the excerpt its listings quote."""
    return " ".join(f"a{i}w{k}" for k in range(320))


def _excerpt(i: int) -> str:
    return " ".join(_article_text(i).split()[:60])


def _slug(n: int) -> str:
    """A name without digits, as a tag's or category's slug is (a number would make one trap pattern of them)."""
    return "".join("bcdfghjklm"[int(d)] for d in str(n)) + "-notes"


def _tags_of(i: int) -> list[int]:
    return sorted({i % TAGS, (7 * i + 3) % TAGS, (11 * i + 5) % TAGS})


def _blog(directory: Path) -> Path:
    """A blog as Pelican writes one: a paginated index of all articles (excerpts and links), articles that link
    to their tags and category, and a page per tag and per category that lists its articles' excerpts."""
    articles = [f"{SITE}/posts/2024/{1 + i % 12:02d}/entry-{i}.html" for i in range(ARTICLES)]
    tags = {t: [i for i in range(ARTICLES) if t in _tags_of(i)] for t in range(TAGS)}
    categories = {c: [i for i in range(ARTICLES) if i % CATEGORIES == c] for c in range(CATEGORIES)}
    def tag_url(t: int) -> str:
        return f"{SITE}/tag/{_slug(t)}.html"

    def category_url(c: int) -> str:
        return f"{SITE}/category/{_slug(c)}.html"

    index_urls = [f"{SITE}/"] + [f"{SITE}/index{n}.html" for n in range(2, ARTICLES // PER_INDEX + 1)]

    def listing(w: WebWriter, url: str, title: str, members: list[int], more: str | None = None) -> None:
        text = " ".join(f"Entry {i}. {_excerpt(i)} Read more." for i in members)
        w.add_page(url, title=title, text=f"{NAV} {title}. {text}", labels=["other"])
        for i in members:
            w.add_link(url, articles[i], f"entry {i}")
        for c in range(CATEGORIES):
            w.add_link(url, category_url(c), f"section {c}")
        if more:
            w.add_link(url, more, "older entries")

    with WebWriter(directory, {"name": "blog"}) as w:
        for n, url in enumerate(index_urls):
            members = list(range(n * PER_INDEX, (n + 1) * PER_INDEX))
            listing(w, url, "Field notes", members, index_urls[n + 1] if n + 1 < len(index_urls) else None)
        for i, url in enumerate(articles):
            w.add_page(url, title=f"Entry {i}", text=f"{NAV} {_article_text(i)}", labels=["other"])
            w.add_link(url, index_urls[0], "home")
            w.add_link(url, category_url(i % CATEGORIES), f"section {i % CATEGORIES}")
            for t in _tags_of(i):
                w.add_link(url, tag_url(t), f"topic {t}")
        for t, members in tags.items():
            listing(w, tag_url(t), f"Topic {t}", members)
        for c, members in categories.items():
            listing(w, category_url(c), f"Section {c}", members)
    return directory


def _fetched(records: list[dict], part: str) -> list[dict]:
    return [r for r in records if part in r["url"] and not r.get("verdict", "").startswith("soft-404")]


def test_a_listing_family_generalises_the_varying_segment_not_its_words():
    assert listing_family("http://b.test/tag/birds.html") == listing_family("http://b.test/tag/rivers.html")
    assert listing_family("http://b.test/tag/birds.html") != listing_family("http://b.test/category/birds.html")
    assert listing_family("http://b.test/posts/2024/") == "b.test/posts/{n}/"
    assert listing_family("http://b.test/wiki/Bird?action=history") == "b.test/wiki/{x}"


@pytest.mark.slow  # two served crawls
def test_tag_listings_that_quote_known_articles_are_capped_and_every_article_is_fetched(tmp_path):
    web = _blog(tmp_path / "web")
    seeds, budget = [f"{SITE}/"], ARTICLES + TAGS + CATEGORIES + ARTICLES // PER_INDEX
    on = crawl_records(web, tmp_path / "on", served=True, seeds=seeds, budget=budget,
                       defences={"listings": {"enabled": True}})
    assert len(_fetched(on, "/posts/")) == ARTICLES  # no article is lost
    tags_on = _fetched(on, "/tag/")
    skipped = [url for r in on for url, why in r["skipped"] if why == LISTING]
    assert len(tags_on) <= TAGS // 2 and any("/tag/" in url for url in skipped)
    assert not any("/posts/" in url for url in skipped)
    # undone: every tag page is fetched
    off = crawl_records(web, tmp_path / "off", served=True, seeds=seeds, budget=budget,
                        defences={"listings": {"enabled": False}})
    assert len(_fetched(off, "/posts/")) == ARTICLES
    assert len(_fetched(off, "/tag/")) == TAGS
    print(f"tags fetched: {len(tags_on)} with the rule, {TAGS} without")


def test_listing_settings_come_from_the_command_line_with_one_error_line(tmp_path):
    from typer.testing import CliRunner

    from focuscrawl.cli.main import app
    from focuscrawl.config import BenchConfig, load_config

    config = load_config(BenchConfig, overrides=["defences.listings.allowance=5", "defences.listings.enabled=false"])
    assert config.defences.listings.allowance == 5 and not config.defences.on("listings")
    assert "listings" not in config.defences.build(1, 10)
    assert "listings" in load_config(BenchConfig, overrides=["defences.listings.enabled=true"]).defences.build(1, 10)
    result = CliRunner().invoke(app, ["bench", "--budget", "10", "--runs", "1", "--out", str(tmp_path / "b"),
                                      "-s", "defences.listings.allowance=0"])
    assert result.exit_code != 0
    assert result.output.count("error:") == 1 and "Traceback" not in result.output and "allowance" in result.output
