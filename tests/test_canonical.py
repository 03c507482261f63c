"""``rel=canonical`` as a hint, never a verdict on a URL not fetched (focuscrawl.engine.defences.copies.Canonical),
read the same offline and over HTTP (``<link rel="canonical">`` and the ``Link`` header, focuscrawl.html).

One hand-made web holds hostile and mistaken canonicals and real copies; it is crawled offline and served on
loopback, with the same driver (``focuscrawl.crawl.Crawler``), and both crawls must fetch what a crawl without the
defences fetches, catch only the real copies, and agree step for step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from aiohttp import web
from conftest import BIRD_WORDS, OTHER_WORDS, crawl_records
from test_defences import page_text

from focuscrawl.engine.defences.duplicates import NearDuplicates, NearDuplicateSettings, page_shingles, similarity
from focuscrawl.html import link_header_canonical, page_canonical, render_html
from focuscrawl.http.response import page_from_body
from focuscrawl.http.settings import FetchConfig
from focuscrawl.webs.store import OfflineWeb, WebWriter

HUB = "http://hub.test/"
EVIL, VICTIM, DEEP = "http://evil.test/page", "http://victim.test/important", "http://victim.test/deep"
HEADER_PAGE, HEADER_VICTIM = "http://evil.test/header", "http://victim.test/other"
VICTIM2, LOOKALIKE = "http://victim.test/second", "http://lookalike.test/second"  # 0.5-0.9 alike, two sites
LIST1, LIST2 = "http://list.test/", "http://list.test/?page=2"
HOME, SITE_PAGES = "http://site.test/", [f"http://site.test/{name}" for name in ("a", "b", "c")]
ORIGINAL, PRINTED = "http://copy.test/story", "http://copy.test/story?print=1"  # the original met first
LATE_ORIGINAL, EARLY_COPY = "http://copy.test/article", "http://copy.test/article?print=1"  # the copy met first
ONLY_CANONICAL = {"near_duplicates": {"enabled": False}}  # the canonical defence alone decides on copies


def _listing(i: int, items: range) -> str:
    """A listing page: one introduction every page of the listing shares, and its own items (each a sentence)."""
    intro = "This listing shows the birds of the region with a short note on each bird and its nest."
    notes = " ".join(f"Item {k}: the {BIRD_WORDS.split()[k % 10]} seen at site {k} nested in spring {k + 1990} "
                     f"near the river {k * 7} with {k % 5 + 2} eggs." for k in items)
    return f"{intro} {notes} Page {i} of the listing."


def _loose_copy(text: str) -> str:
    """``text`` with its last 60 words replaced: 0.5-0.9 like it (a copy with another ending)."""
    words = text.split()
    return " ".join(words[:-60] + [f"other{k}" for k in range(60)])


def build_web(directory: Path) -> Path:
    """The hub links, in this order (bfs fetches them so), to: a hostile page naming the victim's URL as its
    canonical; page 2 of a listing naming page 1; three pages naming their site's home; the victim, page 1 and the
    home; a real copy met after its original and one met before it; a page of another site, 0.5-0.9 like one of
    the victim's, naming it; a page whose ``Link`` header (over HTTP; its store row offline) names another victim
    page."""
    with WebWriter(directory, {"name": "canonicals"}) as w:
        def page(url: str, text: str, links: tuple[str, ...] | list[str] = (), canonical: str | None = None,
                 title: str = "") -> None:
            w.add_page(url, title=title or url, text=text, canonical=canonical, labels=["birds"])
            for target in links:
                w.add_link(url, target, "bird nest")

        hub_links = [EVIL, LIST2, *SITE_PAGES, VICTIM, LIST1, HOME, ORIGINAL, PRINTED, EARLY_COPY, LATE_ORIGINAL,
                     VICTIM2, LOOKALIKE, HEADER_PAGE, HEADER_VICTIM]
        page(HUB, page_text(OTHER_WORDS, 0), hub_links)
        page(EVIL, page_text(OTHER_WORDS, 1), canonical=VICTIM)
        page(VICTIM, page_text(BIRD_WORDS, 7), [DEEP], title="important")
        page(DEEP, page_text(BIRD_WORDS, 8))
        second = page_text(BIRD_WORDS, 10)
        page(VICTIM2, second, title="second")
        page(LOOKALIKE, _loose_copy(second), canonical=VICTIM2, title="second")
        page(HEADER_PAGE, page_text(OTHER_WORDS, 2), canonical=HEADER_VICTIM)  # served with a Link header instead
        page(HEADER_VICTIM, page_text(BIRD_WORDS, 9))
        page(LIST1, _listing(1, range(0, 12)), [f"{LIST1}item/{k}" for k in range(0, 12)])
        page(LIST2, _listing(2, range(12, 24)), [f"{LIST1}item/{k}" for k in range(12, 24)], canonical=LIST1)
        for k in range(24):
            page(f"{LIST1}item/{k}", page_text(BIRD_WORDS, 100 + k))
        page(HOME, page_text(BIRD_WORDS, 20))
        for i, url in enumerate(SITE_PAGES):
            page(url, page_text(BIRD_WORDS, 21 + i), [f"{url}/more"], canonical=HOME)
            page(f"{url}/more", page_text(BIRD_WORDS, 30 + i))
        story = page_text(BIRD_WORDS, 40)
        page(ORIGINAL, story)
        page(PRINTED, _loose_copy(story), [f"{ORIGINAL}/printed-only"], canonical=ORIGINAL)
        page(f"{ORIGINAL}/printed-only", page_text(BIRD_WORDS, 41))
        article = page_text(BIRD_WORDS, 50)
        page(EARLY_COPY, _loose_copy(article), [f"{LATE_ORIGINAL}/from-the-copy"], canonical=LATE_ORIGINAL)
        page(LATE_ORIGINAL, article)
        page(f"{LATE_ORIGINAL}/from-the-copy", page_text(BIRD_WORDS, 51))
    return directory


def _link_header_instead(web_dir: Path):
    """A hook serving ``HEADER_PAGE`` as the web has it, but naming its canonical in a Link header, not the HTML."""
    stored = OfflineWeb(web_dir).fetch(HEADER_PAGE)

    async def hook(request: web.Request, host: str, url: str) -> web.StreamResponse | None:
        if url != HEADER_PAGE:
            return None
        html = render_html(stored.title, stored.text, stored.outlinks)
        return web.Response(text=html, content_type="text/html",
                            headers={"Link": f'<{HEADER_VICTIM}>; rel="canonical", </feed>; rel=alternate'})
    return hook


def crawl(web_dir: Path, run: Path, *, served: bool, defences: dict | None = None) -> list[dict]:
    """bfs from the hub, offline or served (``HEADER_PAGE`` with a Link header); the records of pages.jsonl."""
    return crawl_records(web_dir, run, served=served, seeds=[HUB], budget=80, defences=defences,
                         hook=_link_header_instead(web_dir) if served else None)


@pytest.fixture(scope="module")
def canonical_web(tmp_path_factory) -> Path:
    return build_web(tmp_path_factory.mktemp("canonicals") / "web")


def test_the_fixture_means_what_it_says(canonical_web):
    """The loose copies are 0.5-0.9 like their originals (a copy by their canonical, no near-copy by text alone);
    the listing's pages, the site's pages and its home are far apart."""
    web, reading = OfflineWeb(canonical_web), NearDuplicateSettings()
    index = NearDuplicates(reading)

    def like(a: str, b: str) -> float:
        sig = [index.signature(page_shingles(p.title, p.text, reading)) for p in (web.fetch(a), web.fetch(b))]
        return similarity(*sig)

    for copy, original in ((PRINTED, ORIGINAL), (EARLY_COPY, LATE_ORIGINAL), (LOOKALIKE, VICTIM2)):
        assert 0.5 <= like(copy, original) < reading.threshold, copy
    assert like(LIST2, LIST1) < 0.5 and max(like(url, HOME) for url in SITE_PAGES) < 0.5
    assert np.isclose(like(VICTIM, VICTIM), 1.0)


@pytest.fixture(scope="module", params=[False, True], ids=["offline", "http"])
def crawled(request, canonical_web, tmp_path_factory) -> tuple[dict[str, str], list[dict], set[str]]:
    """The canonical defence alone, offline and served: (each URL's verdict, the records, the URLs a crawl without
    the defences fetches)."""
    root = tmp_path_factory.mktemp("crawls")
    records = crawl(canonical_web, root / "run", served=request.param, defences=ONLY_CANONICAL)
    without = crawl(canonical_web, root / "off", served=request.param, defences={"enabled": False})
    return {r["url"]: r["verdict"] for r in records}, records, {r["url"] for r in without}


def test_a_hostile_canonical_on_another_site_removes_nothing(crawled):
    """A page on evil.test naming victim.test/important (in its HTML, or over HTTP in its Link header): the victim
    and what only it links to are still fetched; a page of another site 0.5-0.9 like a victim page it names is no
    copy of it (across sites only a near-copy is)."""
    verdicts, _, _ = crawled
    assert verdicts[VICTIM] == verdicts[DEEP] == verdicts[EVIL] == ""
    assert verdicts[HEADER_VICTIM] == verdicts[HEADER_PAGE] == ""
    assert verdicts[VICTIM2] == verdicts[LOOKALIKE] == ""


def test_page_two_of_a_listing_naming_page_one_loses_nothing(crawled):
    verdicts, _, _ = crawled
    assert verdicts[LIST2] == verdicts[LIST1] == ""
    assert all(verdicts[f"{LIST1}item/{k}"] == "" for k in range(24)), "both pages' items are followed"


def test_every_page_naming_the_home_page_loses_nothing(crawled):
    verdicts, _, _ = crawled
    assert verdicts[HOME] == ""
    assert all(verdicts[url] == verdicts[f"{url}/more"] == "" for url in SITE_PAGES)


def test_a_real_copy_naming_its_original_is_still_a_copy(crawled):
    """The later of a page and its canonical, their texts agreeing, is the duplicate of the earlier."""
    verdicts, _, _ = crawled
    assert verdicts[PRINTED] == f"duplicate of {ORIGINAL}" and f"{ORIGINAL}/printed-only" not in verdicts
    assert verdicts[EARLY_COPY] == verdicts[f"{LATE_ORIGINAL}/from-the-copy"] == ""
    assert verdicts[LATE_ORIGINAL] == f"duplicate of {EARLY_COPY}"


def test_a_canonical_keeps_nothing_out_of_the_frontier(crawled):
    """Every URL a crawl without the defences fetches is fetched (but the link of a caught copy), none skipped."""
    verdicts, records, without = crawled
    assert not [s for r in records for s in r["skipped"]]
    assert set(verdicts) == without - {f"{ORIGINAL}/printed-only"}


def test_offline_and_over_http_the_crawl_is_the_same_step_for_step(canonical_web, tmp_path):
    offline = crawl(canonical_web, tmp_path / "offline", served=False)
    served = crawl(canonical_web, tmp_path / "http", served=True)
    assert [(r["url"], r["verdict"]) for r in served] == [(r["url"], r["verdict"]) for r in offline]
    assert {r["verdict"] for r in served} >= {"", f"duplicate of {ORIGINAL}", f"duplicate of {EARLY_COPY}"}


def test_the_link_header_and_the_html_name_the_canonical():
    base = "https://a.test/dir/page?x=1"
    assert link_header_canonical('<https://a.test/x>; rel="canonical"', base) == "https://a.test/x"
    assert link_header_canonical('</p?b=2&a=1>; rel="next canonical", <https://b.test/>; rel=alternate',
                                 base) == "https://a.test/p?a=1&b=2"
    assert link_header_canonical('<https://a.test/x>; title="a; b, rel=canonical"; rel=prev', base) is None
    assert link_header_canonical('<https://a.test/x>; anchor="#s"; rel=canonical', base) is None  # another resource
    assert link_header_canonical('<https://a.test/x>; rel=canonical, <https://a.test/y>; rel=canonical', base) is None
    assert link_header_canonical("garbage", base) is None and link_header_canonical(None, base) is None
    assert page_canonical("https://a.test/x", None) == page_canonical(None, "https://a.test/x") == "https://a.test/x"
    assert page_canonical("https://a.test/x", "https://a.test/y") is None  # a page contradicting itself: no hint

    config = FetchConfig()
    html = b'<html><head><link rel="Canonical" href="/orig"></head><body><p>text</p></body></html>'
    page = page_from_body(base, base, 200, "text/html", html, config)
    assert page.canonical == "https://a.test/orig"
    page = page_from_body(base, base, 200, "text/html", b"<p>text</p>", config,
                          link_header='<https://a.test/h>; rel="canonical"')
    assert page.canonical == "https://a.test/h"
    page = page_from_body(base, base, 200, "text/html", html, config, link_header='<https://a.test/h>; rel=canonical')
    assert page.canonical is None
    assert page_from_body(base, base, 404, "text/html", html, config).canonical is None
