"""Page text is the main content: boilerplate (menus, cookie banners, sidebars, footers) is dropped from the text
that relevance and pages.jsonl see, while the title and every outlink (the menu's too) come from the whole page.

The crawl tests serve pages with real boilerplate on loopback through ``serve_web``'s hook; nothing here
contacts a real host.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web
from conftest import BIRD_WORDS, OTHER_WORDS, _text

from focuscrawl.crawl import Crawler
from focuscrawl.html import extract_main_text, parse_html
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import TopicInputs
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WebWriter

SITE = "http://news.test"
COOKIE = "We use cookies to improve your experience accept all cookies manage preferences"
FOOTER = "Copyright newsroom limited all rights reserved imprint privacy policy terms of service"
SIDEBAR = "Most read today celebrity gossip horoscope lottery numbers weather forecast"


def article_html(i: int, body: str) -> str:
    """A news-site page: header menu, cookie banner, sidebar and footer around one long article."""
    menu = "".join(f'<li><a href="/section/{s}">{s.title()} news</a></li>' for s in ("world", "sport", "culture"))
    paragraphs = "".join(f"<p>{body} Paragraph {k} of article {i} continues the story at length.</p>"
                         for k in range(6))
    return f"""<!doctype html><html><head><title>Article {i}</title></head><body>
<header><nav><ul>{menu}</ul></nav></header>
<div class="cookie-banner" id="cookie-consent"><p>{COOKIE}</p><button>Accept</button></div>
<aside class="sidebar"><h3>Most read</h3><ul><li><a href="/a{i + 1}">{SIDEBAR}</a></li></ul></aside>
<main><article><h1>Article {i}</h1>{paragraphs}<p><a href="/a{i + 1}">Read the next article</a></p></article></main>
<footer><p>{FOOTER}</p><a href="/imprint">Imprint</a></footer>
</body></html>"""


def test_main_text_drops_boilerplate_but_title_and_links_come_from_the_whole_page():
    html = article_html(3, _text(BIRD_WORDS, 3))
    title, text, links = parse_html(html, f"{SITE}/a3", main_text=True)
    assert title == "Article 3"
    assert "Paragraph 5 of article 3" in text and "Paragraph 0 of article 3" in text
    for boilerplate in (COOKIE, FOOTER, SIDEBAR):
        assert boilerplate not in text
    urls = {link.url for link in links}
    assert {f"{SITE}/section/world", f"{SITE}/section/sport", f"{SITE}/imprint", f"{SITE}/a4"} <= urls

    _, whole, whole_links = parse_html(html, f"{SITE}/a3")  # off: the body minus script/style/nav
    assert FOOTER in whole and COOKIE in whole and "Paragraph 5 of article 3" in whole
    assert whole_links == links


def test_no_main_content_falls_back_to_the_whole_text():
    tiny = "<html><head><title>t</title></head><body><a href='/x'>x</a></body></html>"
    assert extract_main_text(tiny) == "" or "x" in extract_main_text(tiny)
    _, text, links = parse_html(tiny, f"{SITE}/", main_text=True)
    assert text == "x" and [link.url for link in links] == [f"{SITE}/x"]
    assert parse_html("", f"{SITE}/", main_text=True)[1] == ""
    assert extract_main_text("<html><body>\x00\x00<p>\ud800</p>") is not None  # odd input: no exception


def _news_web(directory: Path) -> Path:
    """The offline web only lists the URLs (and their labels for nobody here); the hook serves the HTML."""
    with WebWriter(directory, {"name": "news"}) as w:
        for i in range(8):
            w.add_page(f"{SITE}/a{i}", title=f"Article {i}", text="served by the hook")
    return directory


async def _serve_articles(request: web.Request, host: str, url: str) -> web.StreamResponse | None:
    path = request.path
    if path.startswith("/a"):
        i = int(path[2:])
        words = BIRD_WORDS if i % 2 == 0 else OTHER_WORDS
        return web.Response(text=article_html(i, _text(words, i)), content_type="text/html")
    return None


def _crawl(web_dir: Path, topic_dir: Path, run: Path, **fetch) -> list[dict]:
    async def go() -> None:
        async with serve_web(web_dir, hook=_serve_articles, base_ip="127.0.8.1") as server:
            hosts_map = run.parent / f"{run.name}-hosts.json"
            hosts_map.write_text(json.dumps(server.hosts))
            crawler = Crawler(topic=topic_dir, out=run, progress="none", plot=False, strategy="bfs", budget=5,
                              concurrency=2, hosts_map=hosts_map, fetch={"min_delay": 0, **fetch})
            async for _ in crawler.run():
                pass

    asyncio.run(asyncio.wait_for(go(), 120))
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


@pytest.fixture()
def news(tmp_path: Path) -> tuple[Path, Path]:
    topic_dir = tmp_path / "topic"
    texts = [_text(BIRD_WORDS, i) for i in range(5)] + [_text(OTHER_WORDS, i) for i in range(5)]
    write_topic_dir(topic_dir, TopicInputs("birds", ["bird"], texts, [1] * 5 + [0] * 5, seeds=[f"{SITE}/a0"]))
    return _news_web(tmp_path / "web"), topic_dir


def test_a_served_crawl_writes_main_text_and_follows_menu_links(news, tmp_path):
    web_dir, topic_dir = news
    records = _crawl(web_dir, topic_dir, tmp_path / "run")
    articles = [r for r in records if "/a" in r["url"]]
    assert len(records) == 5 and articles
    for record in articles:
        assert record["title"].startswith("Article")
        assert "continues the story" in record["text"]
        assert FOOTER not in record["text"] and COOKIE not in record["text"] and SIDEBAR not in record["text"]
    # bfs from a0 reaches the menu's section pages: outlinks came from the whole page, nav included
    assert any("/section/" in r["url"] for r in records)


def test_fetch_main_text_false_keeps_the_whole_body(news, tmp_path):
    web_dir, topic_dir = news
    records = _crawl(web_dir, topic_dir, tmp_path / "run", main_text=False)
    article = next(r for r in records if r["url"].endswith("/a0"))
    assert FOOTER in article["text"] and COOKIE in article["text"]


def test_the_fetcher_default_is_main_text():
    assert FetchConfig().main_text is True
    assert HttpFetcher(FetchConfig(main_text=False)).config.main_text is False
