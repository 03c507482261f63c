"""Builders of offline webs from Wikispeedia and WebKB: synthetic folders (fast) and the real data (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

import focuscrawl.webs
from focuscrawl.html import parse_html, render_html
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.store import OfflineWeb, label_matches
from focuscrawl.webs.webkb import LABELS, build_webkb, split_response
from focuscrawl.webs.wikispeedia import (
    EMBEDDED_TOPICS,
    article_url,
    build_embedded,
    build_wikispeedia,
    load,
    select_embedded,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EMBEDDED = Path(focuscrawl.webs.__file__).parent / "embedded"
WS = "https://schools-wikipedia.org/wp"

TSV_HEADER = "# The list of all articles.\n# FORMAT:   article\n#\n\n"


def _article(title: str, subjects: str, body: str) -> str:
    return (
        f"   #copyright\n\n{title}\n\n2007 Schools Wikipedia Selection. Related subjects: {subjects}\n"
        f"and more subjects on a wrapped line\n\n{body}\n"
    )


ARTICLES = {
    "Zebra": _article(
        "Zebra",
        "Mammals",
        "   Zebras are African equids. They eat grass\n   and live in herds.\n\n   Manet never painted one.",
    ),
    "Grass": _article("Grass", "Plants", "   Grass is eaten by the zebra."),
    "%C3%89douard_Manet": _article("Édouard Manet", "Artists", "   A painter of the 19th century."),
    "10th_century": _article("10th century", "General history", "   Years 901 to 1000."),
    "Pikachu": _article("Pikachu", "Games", "   A character. See Zebra."),
}
CATEGORIES = [
    ("Zebra", "subject.Science.Biology.Mammals"),
    ("Zebra", "subject.Geography.African_Geography"),
    ("Grass", "subject.Science.Biology.Plants"),
    ("Grass", "subject.Everyday_life.Food_and_agriculture"),
    ("%C3%89douard_Manet", "subject.People.Artists"),
    ("10th_century", "subject.History.General_history"),
]
LINKS = [
    ("Zebra", "%C3%89douard_Manet"),
    ("Zebra", "Grass"),
    ("Grass", "Zebra"),
    ("Pikachu", "Zebra"),
    ("%C3%89douard_Manet", "10th_century"),
]


@pytest.fixture
def wikispeedia_src(tmp_path: Path) -> Path:
    root = tmp_path / "src" / "wikispeedia"
    (root / "plaintext_articles").mkdir(parents=True)
    (root / "articles.tsv").write_text(TSV_HEADER + "".join(f"{n}\n" for n in ARTICLES), encoding="utf-8")
    (root / "categories.tsv").write_text(TSV_HEADER + "".join(f"{a}\t{c}\n" for a, c in CATEGORIES), encoding="utf-8")
    (root / "links.tsv").write_text(TSV_HEADER + "".join(f"{a}\t{b}\n" for a, b in LINKS), encoding="utf-8")
    for name, text in ARTICLES.items():
        (root / "plaintext_articles" / f"{name}.txt").write_text(text, encoding="utf-8")
    return root


def test_wikispeedia_pages_urls_and_labels(wikispeedia_src: Path, tmp_path: Path) -> None:
    # The outer folder is accepted too.
    web = OfflineWeb(build_wikispeedia(wikispeedia_src.parent, tmp_path / "web"))
    assert article_url("Zebra") == f"{WS}/z/Zebra.htm"
    assert article_url("10th_century") == f"{WS}/other/10th_century.htm"
    assert article_url("%C3%89douard_Manet") == f"{WS}/other/%C3%89douard_Manet.htm"
    page = web.fetch(f"{WS}/z/Zebra.htm")
    assert page.status == 200 and page.title == "Zebra" and page.content_type == "text/html"
    # Fetched text is whitespace-collapsed, exactly as parse_html gives it for the same page served over HTTP.
    assert page.text == "Zebras are African equids. They eat grass and live in herds. Manet never painted one."
    stats = web.stats()
    assert stats["pages"] == 5 and stats["links"] == 5 and stats["dead_links"] == 0
    for url in (r.url for r in web.records()):
        text = web.fetch(url).text
        assert "Related subjects" not in text and "#copyright" not in text and "wrapped line" not in text
    labels = web.labels()
    assert labels[f"{WS}/z/Zebra.htm"] == "subject.Geography.African_Geography,subject.Science.Biology.Mammals"
    assert f"{WS}/p/Pikachu.htm" not in labels
    assert web.fetch(f"{WS}/other/%C3%89douard_Manet.htm").title == "Édouard Manet"
    assert web.meta["name"] == "wikispeedia" and "West" in web.meta["citation"]


def test_wikispeedia_links_anchors_in_page_order(wikispeedia_src: Path, tmp_path: Path) -> None:
    web = OfflineWeb(build_wikispeedia(wikispeedia_src, tmp_path / "web"))
    zebra = f"{WS}/z/Zebra.htm"
    page = web.fetch(zebra)
    # links.tsv has Manet first; the text mentions grass first.
    assert [(link.url, link.anchor) for link in page.outlinks] == [
        (f"{WS}/g/Grass.htm", "Grass"),
        (f"{WS}/other/%C3%89douard_Manet.htm", "Édouard Manet"),
    ]
    assert web.html(zebra) is None  # text only; rendered when served
    html = render_html(page.title, page.text, page.outlinks)
    assert f'<a href="{WS}/g/Grass.htm">Grass</a>' in html
    assert parse_html(html, zebra) == (page.title, page.text, page.outlinks)


def test_wikispeedia_refuses_to_overwrite(wikispeedia_src: Path, tmp_path: Path) -> None:
    build_wikispeedia(wikispeedia_src, tmp_path / "web")
    with pytest.raises(FileExistsError):
        build_wikispeedia(wikispeedia_src, tmp_path / "web")
    build_wikispeedia(wikispeedia_src, tmp_path / "web", overwrite=True)


def test_embedded_selection_is_deterministic_and_closed(wikispeedia_src: Path, tmp_path: Path) -> None:
    data = load(wikispeedia_src)
    groups = ((("subject.Science.Biology.Mammals",), 1), (("subject.Everyday_life.Food_and_agriculture",), 1))
    names = select_embedded(data, groups=groups, neighbours=1)
    assert names == select_embedded(data, groups=groups, neighbours=1)
    assert {"Zebra", "Grass"} <= set(names)
    web = OfflineWeb(build_embedded(wikispeedia_src, tmp_path / "demo"))
    assert web.meta["name"] == "wikispeedia-demo"
    assert web.stats()["dead_links"] == 0


WEBKB_FILES = {
    "course/cornell/http:^^www.cs.cornell.edu^Info^Courses^CS100^": (
        b"MIME-Version: 1.0\r\nServer: CERN/3.0\r\nContent-Type: text/html\r\nContent-Length: 300\r\n\r\n"
        b"<html><head><title>CS100 Home</title></head><body><h1>CS 100</h1>"
        b'<a href="syllabus.html">Syllabus</a> <a href="../../../People/bob/">Bob</a> '
        b'<a href="http://WWW.CS.UTEXAS.EDU:80/users/bob/#x">Bob at Texas</a> '
        b'<a href="mailto:cs100@cs.cornell.edu">mail</a></body></html>'
        b"\x00\x00\x00"  # NUL padding, as in a few files of the 1997 crawl
    ),
    "course/cornell/http:^^www.cs.cornell.edu^Info^Courses^CS100^syllabus.html": (
        b"Date: Tue, 14 Jan 1997 21:00:00 GMT\nContent-type: text/plain\n\nWeek 1: loops.\n"
    ),
    "student/texas/http:^^www.cs.utexas.edu^users^bob^": (
        b"<html><title>Bob's page</title>Caf\xe9 lover. <a href=../alice/>Alice</a></html>"
    ),
    "faculty/misc/http:^^www.cs.utexas.edu:80^users^bob^": (
        b"Date: Wed, 20 Nov 1996 10:00:00 GMT\nContent-Type: text/html; charset=utf-8\n\n"
        b"<html><title>Bob again</title><body>Caf\xc3\xa9</body></html>"
    ),
    "staff/cornell/http:^^www.tc.cornell.edu^~anne": (
        b"WWW Alert:  Redirection response from server is not handled by this client\r\n"
        b"Location: http://www.tc.cornell.edu/~anne/\r\nContent-type: text/html\r\n\r\n"
        b'<HEAD><TITLE>Document moved</TITLE></HEAD><BODY><A HREF="http://www.tc.cornell.edu/~anne/">here</A></BODY>'
    ),
    "other/misc/ftp:^^ftp.example.edu^pub": b"<HTML><TITLE>pub directory</TITLE></HTML>",
}


@pytest.fixture
def webkb_src(tmp_path: Path) -> Path:
    root = tmp_path / "webkb"
    for name, content in WEBKB_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def test_webkb_headers_links_and_labels(webkb_src: Path, tmp_path: Path) -> None:
    web = OfflineWeb(build_webkb(webkb_src, tmp_path / "web"))
    course = "http://www.cs.cornell.edu/Info/Courses/CS100/"
    page = web.fetch(course)
    assert page.status == 200 and page.title == "CS100 Home"
    assert "MIME-Version" not in page.text and "Content-Length" not in page.text
    assert web.html(course).startswith("<html>") and "\x00" not in web.html(course)
    assert [(link.url, link.anchor) for link in page.outlinks] == [
        (course + "syllabus.html", "Syllabus"),
        ("http://www.cs.cornell.edu/People/bob/", "Bob"),
        ("http://www.cs.utexas.edu/users/bob/", "Bob at Texas"),
    ]
    # A link leaving the set is a dead end that answers 404.
    assert web.fetch("http://www.cs.cornell.edu/People/bob/").status == 404
    assert web.fetch("http://www.cs.utexas.edu/users/bob/").status == 200
    syllabus = web.fetch(course + "syllabus.html")
    assert syllabus.content_type == "text/plain" and syllabus.text == "Week 1: loops."
    assert web.fetch("http://www.tc.cornell.edu/~anne").outlinks[0].url == "http://www.tc.cornell.edu/~anne/"

    labels = web.labels()
    # The same normalised URL twice: the first file (sorted by label folder) wins, labels merge.
    bob = "http://www.cs.utexas.edu/users/bob/"
    assert labels[bob] == "faculty,student"
    assert web.fetch(bob).title == "Bob again" and web.fetch(bob).text == "Café"
    assert labels[course] == "course"
    stats = web.stats()
    assert stats["pages"] == 4  # the ftp: page has no http(s) URL and is skipped
    assert stats["dead_links"] == 2  # People/bob and ~anne/
    assert web.meta["topic_defaults"] == {"train_host_pattern": r"cornell\.edu$"}
    assert "Craven" in web.meta["citation"] and web.meta["name"] == "webkb"


def test_webkb_response_splitting() -> None:
    headers, body = split_response(b"HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=iso-8859-1\r\n\r\n<p>x")
    assert headers["content-type"].endswith("iso-8859-1") and body == b"<p>x"
    assert split_response(b"<html>Note: no headers\n\nhere</html>") == ({}, b"<html>Note: no headers\n\nhere</html>")


def test_web_names_resolve_to_directories() -> None:
    assert resolve_web_dir("embedded") == resolve_web_dir("demo") == EMBEDDED
    assert resolve_web_dir("webs/webkb") == Path("webs/webkb")


def test_embedded_web_opens_with_both_topics() -> None:
    web = OfflineWeb(EMBEDDED)
    stats = web.stats()
    assert web.name == "wikispeedia-demo"
    assert 250 <= stats["pages"] <= 450 and stats["dead_links"] == 0
    labels = list(web.labels().values())
    for topic in EMBEDDED_TOPICS:
        assert sum(label_matches(label, topic) for label in labels) >= 60
    assert (EMBEDDED / "web.sqlite").stat().st_size < 3_300_000
    page = web.fetch(next(r.url for r in web.records()))
    assert page.ok and page.text and "Related subjects" not in page.text
    # From a relevant page most of the web is reachable by links.
    start = next(url for url, label in web.labels().items() if label_matches(label, EMBEDDED_TOPICS[0]))
    seen, todo = {start}, [start]
    while todo:
        for link in web.fetch(todo.pop()).outlinks:
            if link.url not in seen:
                seen.add(link.url)
                todo.append(link.url)
    assert len(seen) >= 0.8 * stats["pages"]


needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not available")


@pytest.mark.slow
@needs_data
def test_real_wikispeedia(tmp_path: Path) -> None:
    web = OfflineWeb(build_wikispeedia(DATA / "wikispeedia", tmp_path / "web"))
    stats = web.stats()
    assert stats["pages"] == 4598 and stats["hosts"] == 1
    assert stats["links"] == 119_879 and stats["dead_links"] == 0 and stats["dead_urls"] == 0
    assert stats["labels"]["subject.Science.Biology.Birds"] == 161
    assert not any("Schools Wikipedia Selection" in text for text in web.texts(r.url for r in web.records()))


@pytest.mark.slow
@needs_data
def test_real_webkb(tmp_path: Path) -> None:
    web = OfflineWeb(build_webkb(DATA / "webkb", tmp_path / "web"))
    stats = web.stats()
    assert 5_700 <= stats["pages"] <= 5_814
    assert stats["hosts"] >= 300
    assert stats["dead_links"] > stats["links"] // 2  # most links leave the 1997 sample
    assert set(stats["labels"]) == set(LABELS)
    cornell = sum(1 for r in web.records() if r.status == 200 and r.host.endswith("cornell.edu"))
    assert cornell > 500


@pytest.mark.slow
@needs_data
def test_embedded_web_is_up_to_date(tmp_path: Path) -> None:
    rebuilt = OfflineWeb(build_embedded(DATA / "wikispeedia", tmp_path / "demo"))
    shipped = OfflineWeb(EMBEDDED)
    assert rebuilt.labels() == shipped.labels()
    assert rebuilt.stats()["links"] == shipped.stats()["links"]
