from __future__ import annotations

import gzip
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.html import decode_html, looks_like_html
from focuscrawl.types import Link
from focuscrawl.webs.store import OfflineWeb
from focuscrawl.webs.warc_import import LabelsFormatError, import_warc

HOME = """<!DOCTYPE html><html><head><title>Home page</title></head><body>
<p>Welcome to the example site about mammals.</p>
<a href="/a.html">Page A</a> <a href="b.html#top">Page <b>B</b></a>
<a href="/missing.html">gone</a> <a href="/old">old page</a> <a href="/logo.png">logo</a>
<a href="mailto:x@example.org">mail</a> <a href="/a.html">A again</a>
</body></html>"""
PAGE_A = "<html><head><title>A</title></head><body><p>Whales are mammals.</p><a href='/'>home</a></body></html>"
PAGE_B = (
    "<html><head><meta charset='iso-8859-1'><title>B caf\u00e9</title></head><body>"
    "<p>Le caf\u00e9 des baleines.</p><a href='http://other.example.net/x'>elsewhere</a></body></html>"
)


def _response(writer, url, status, headers, body: bytes, record_type="response"):
    http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, record_type, payload=BytesIO(body), http_headers=http))


def _chunked(data: bytes, size: int = 50) -> bytes:
    pieces = [data[i:i + size] for i in range(0, len(data), size)]
    parts = [b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces]
    return b"".join(parts) + b"0\r\n\r\n"


def write_warc(path: Path, gzip_records: bool = True) -> Path:
    html = [("Content-Type", "text/html; charset=utf-8")]
    with open(path, "wb") as handle:
        w = WARCWriter(handle, gzip=gzip_records)
        w.write_record(w.create_warcinfo_record(path.name, {"software": "test"}))
        w.write_record(w.create_warc_record("http://example.org/", "request", payload=BytesIO(
            b"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n"), warc_content_type="application/http; msgtype=request"))
        _response(w, "http://example.org/", "200 OK", html, HOME.encode())
        # a.html: first captured as an error, later successfully: the 200 wins.
        _response(w, "http://example.org/a.html", "503 Service Unavailable", html, b"busy")
        _response(w, "http://example.org/a.html", "200 OK", html, PAGE_A.encode())
        # b.html: gzip-encoded, chunked, charset declared only in <meta>.
        _response(w, "http://example.org/b.html", "200 OK",
                  [("Content-Type", "text/html"), ("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")],
                  _chunked(gzip.compress(PAGE_B.encode("latin-1"))))
        # A later capture of the home page: ignored, the first 200 wins.
        _response(w, "http://example.org/", "200 OK", html, b"<html><title>Second capture</title></html>")
        moved = [("Location", "HTTP://Example.ORG:80/b.html#frag")]
        _response(w, "http://example.org/old", "301 Moved Permanently", moved, b"")
        _response(w, "http://example.org/logo.png", "200 OK", [("Content-Type", "image/png")], b"\x89PNG\r\n\x1a\n")
        _response(w, "http://example.org/denied", "403 Forbidden", html, b"<html>no</html>")
        w.write_record(w.create_revisit_record("http://example.org/a.html", "sha1:AAAA", "http://example.org/a.html",
                                               "2020-01-01T00:00:00Z"))
        w.write_record(w.create_warc_record("http://example.org/", "metadata", payload=BytesIO(b"outlinks: x"),
                                            warc_content_type="application/warc-fields"))
    return path


def write_labels(path: Path, extra: str = "") -> Path:
    path.write_text(
        "# url<TAB>labels\n\n"
        "http://example.org/\tsubject.Mammals\n"
        "HTTP://EXAMPLE.ORG:80/a.html\tsubject.Mammals.Whales, subject.Sea\n"
        "http://example.org/old\tsubject.French\n"  # a redirect: the label follows it to b.html
        "http://example.org/never-crawled\tsubject.Mammals\n" + extra,
        encoding="utf-8",
    )
    return path


@pytest.fixture(params=[True, False], ids=["gzip", "plain"])
def web(tmp_path, request):
    warc = write_warc(tmp_path / ("crawl.warc.gz" if request.param else "crawl.warc"), request.param)
    report = import_warc(warc, write_labels(tmp_path / "labels.tsv"), tmp_path / "web")
    web = OfflineWeb(tmp_path / "web")
    yield web, report
    web.close()


def test_report_counts(web):
    _, report = web
    assert report.responses == 8
    assert report.pages == 3
    assert report.redirects == 1
    assert report.non_html == 1
    assert report.error_status == 1
    assert report.duplicates == 2
    assert report.revisits == 1
    assert report.skipped_records == 3  # warcinfo, request, metadata
    assert report.labelled == 3
    assert report.labels_via_redirect == 1
    assert report.labels_without_page == 1
    assert report.warnings and "no 2xx page" in report.warnings[0]
    assert "labels_without_page" in str(report)


def test_meta(web):
    w, _ = web
    assert w.name == "crawl"
    assert w.meta["builder"] == "import-warc"
    assert w.meta["source"].endswith(("crawl.warc.gz", "crawl.warc"))


def test_links_anchors_and_first_capture(web):
    w, _ = web
    page = w.fetch("http://example.org/")
    assert page.status == 200 and page.title == "Home page"
    assert "mammals" in page.text
    assert page.outlinks == [
        Link("http://example.org/a.html", "Page A"),
        Link("http://example.org/b.html", "Page B"),
        Link("http://example.org/missing.html", "gone"),
        Link("http://example.org/old", "old page"),
        Link("http://example.org/logo.png", "logo"),
    ]
    assert "<title>Home page</title>" in w.html("http://example.org/")


def test_later_200_replaces_error(web):
    w, _ = web
    page = w.fetch("http://example.org/a.html")
    assert page.status == 200 and page.text == "Whales are mammals. home"


def test_gzip_chunked_and_meta_charset(web):
    w, _ = web
    page = w.fetch("http://example.org/b.html")
    assert page.status == 200
    assert page.title == "B caf\u00e9" and "caf\u00e9 des baleines" in page.text
    assert page.outlinks == [Link("http://other.example.net/x", "elsewhere")]


def test_redirect_followed(web):
    w, _ = web
    page = w.fetch("http://example.org/old")
    assert page.status == 200
    assert page.final_url == "http://example.org/b.html"  # Location resolved and normalised
    assert page.title == "B caf\u00e9"


def test_redirect_to_uncaptured_target_is_dead_end(tmp_path):
    warc = write_warc(tmp_path / "c.warc.gz")
    with open(warc, "ab") as handle:
        w = WARCWriter(handle, gzip=True)
        _response(w, "http://example.org/r", "302 Found", [("Location", "elsewhere?b=2&a=1")], b"")
    import_warc(warc, write_labels(tmp_path / "l.tsv"), tmp_path / "web")
    page = OfflineWeb(tmp_path / "web").fetch("http://example.org/r")
    assert page.status == 404 and page.final_url == "http://example.org/elsewhere?a=1&b=2"


def test_dead_links_and_non_html(web):
    w, _ = web
    assert w.fetch("http://example.org/missing.html").status == 404
    assert w.fetch("http://other.example.net/x").status == 404
    assert w.fetch("http://example.org/denied").status == 403
    png = w.fetch("http://example.org/logo.png")
    assert png.status == 200 and png.content_type == "image/png"
    assert png.text == "" and png.outlinks == []


def test_labels(web):
    w, _ = web
    assert w.labels() == {
        "http://example.org/": "subject.Mammals",
        "http://example.org/a.html": "subject.Mammals.Whales,subject.Sea",
        "http://example.org/b.html": "subject.French",  # given for /old, which redirects here
    }


def test_redirect_chain_label_follows_to_captured_page(tmp_path):
    warc = write_warc(tmp_path / "c.warc.gz")
    labels = tmp_path / "l.tsv"
    labels.write_text("http://example.org/r\tsubject.French\n")
    with open(warc, "ab") as handle:
        w = WARCWriter(handle, gzip=True)
        _response(w, "http://example.org/r", "302 Found", [("Location", "/old")], b"")
    report = import_warc(warc, labels, tmp_path / "web")
    web = OfflineWeb(tmp_path / "web")
    assert report.labels_via_redirect == 1
    assert web.labels() == {"http://example.org/b.html": "subject.French"}


@pytest.mark.parametrize(
    "line, message",
    [
        ("http://example.org/x subject.A\n", "line 7: expected 'url<TAB>label"),
        ("http://example.org/x\ta\tb\n", "line 7: expected"),
        ("ftp://example.org/x\tsubject.A\n", "line 7: 'ftp://example.org/x' is not an absolute http(s) URL"),
        ("http://example.org/x\t , \n", "line 7: no label"),
        ("http://example.org/x\tsubject A\n", "line 7: labels may not contain spaces"),
    ],
)
def test_bad_tsv_line(tmp_path, line, message):
    warc = write_warc(tmp_path / "c.warc.gz")
    labels = write_labels(tmp_path / "l.tsv", extra=line)
    with pytest.raises(LabelsFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_warc(warc, labels, tmp_path / "web")
    assert not (tmp_path / "web").exists()


def test_overwrite(tmp_path):
    warc = write_warc(tmp_path / "c.warc.gz")
    labels = write_labels(tmp_path / "l.tsv")
    import_warc(warc, labels, tmp_path / "web")
    with pytest.raises(FileExistsError):
        import_warc(warc, labels, tmp_path / "web")
    import_warc(warc, labels, tmp_path / "web", overwrite=True)


# The one decoder of the web layer (fetcher, WARC import, WebKB), tested here once per rule.
@pytest.mark.parametrize(
    ("body", "content_type", "text"),
    [
        (b"\xef\xbb\xbfok", "text/html; charset=latin1", "ok"),  # a BOM beats the header
        (b"\xff\xfeo\x00k\x00", None, "ok"),  # UTF-16 LE by its BOM
        (b"\xfe\xff\x00o\x00k", "text/html; charset=utf-8", "ok"),  # UTF-16 BE by its BOM
        ("\u20ac".encode("cp1252"), "text/html; charset=ISO-8859-1", "\u20ac"),  # latin-1 is windows-1252
        ("\u201cq\u201d".encode("cp1252"), 'text/html; charset="us-ascii"', "\u201cq\u201d"),  # so is ASCII
        ("\u9555".encode("gbk"), "text/html; charset=GB2312", "\u9555"),  # and GB2312 is GB18030
        ("<meta charset='windows-1251'>\u042f".encode("cp1251"), "text/html", "<meta charset='windows-1251'>\u042f"),
        (b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">\xf1', None,
         '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">\u042f'),
        # the header's charset beats the page's
        ("<meta charset=koi8-r>\u00e9".encode(), "text/html; charset=utf-8", "<meta charset=koi8-r>\u00e9"),
        ("caf\u00e9".encode(), "text/html; charset=bogus", "caf\u00e9"),  # unknown label: skipped, UTF-8
        (b"<meta charset=utf-7>+AGE-", "text/html; charset=x-user-defined", "<meta charset=utf-7>+AGE-"),
        (b"<meta charset=base64>ok", None, "<meta charset=base64>ok"),  # a Python codec, not a text encoding
        ("caf\u00e9".encode(), "text/html; charset=utf-16", "caf\u00e9"),  # UTF-16 without a BOM: ignored
        ("caf\u00e9".encode("cp1252"), None, "caf\u00e9"),  # not UTF-8: windows-1252
        (b"\x81\x93", None, "\x81\u201c"),  # WHATWG windows-1252: no byte fails
    ],
)
def test_decode_html(body, content_type, text):
    assert decode_html(body, content_type) == text


def test_decode_html_truncated_multibyte():
    cut = "caf\u00e9".encode()[:-1]
    assert decode_html(cut, truncated=True) == "caf\ufffd"  # a character cut at the end, not a cp1252 page
    assert decode_html(cut) == "caf\u00c3"


@pytest.mark.parametrize(
    ("head", "html"),
    [
        (b"<!DOCTYPE html><title>x</title>", True),
        (b"\xef\xbb\xbf \n<!-- made by hand --> <html\nlang=en>", True),
        (b'<?xml version="1.0"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN">\n<html>', True),
        (b"<p>A paragraph", True),
        (b'<?xml version="1.0"?><rss version="2.0">', False),
        (b"<pre>not a tag HTML starts with", False),
        (b'{"json": true}', False),
        (b"\x89PNG\r\n\x1a\n", False),
        (b"<!---->" * 146 + b"x", False),  # many comments: answered at once, no exponential backtracking
    ],
)
def test_looks_like_html(head, html):
    assert looks_like_html(head) is html


def test_imported_warc_benches(tmp_path):
    """A handful of pages written by warcio becomes a web the benchmark can crawl and score."""
    from focuscrawl.bench.runner import run_benchmark
    from focuscrawl.config import BenchConfig

    web_dir = tmp_path / "web"
    import_warc(write_warc(tmp_path / "crawl.warc.gz"), write_labels(tmp_path / "labels.tsv"), web_dir)
    summary = run_benchmark(BenchConfig(web=str(web_dir), topic="subject.Mammals", strategies=["bfs", "random"],
                                        budget=6, runs=1, out=tmp_path / "bench"))
    rows = {row["strategy"]: row for row in summary["strategies"]}
    assert summary["relevant_total"] + summary["held_out_relevant"] == 2 and set(rows) == {"oracle", "bfs", "random"}
    assert rows["oracle"]["relevant_pages_mean"] >= 1 and (tmp_path / "bench" / "summary.json").exists()
