"""Messy webs (focuscrawl.webs.mess): every pathology is there, labelled, and behaves as documented offline.

The web is built here: two hosts, one storing HTML (as WebKB does) and one storing text (as Wikispeedia
does), with labels, dead links and text made of sentences. A small profile makes every pathology occur on
it. The served side is in tests/test_serve.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import aiohttp
import pytest

from focuscrawl.cli.main import main
from focuscrawl.html import parse_document, parse_html
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.settings import FetchConfig
from focuscrawl.types import Link
from focuscrawl.urls import host_of
from focuscrawl.webs.mess import KINDS, SPAM_WORDS, make_profile, mess_web
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import WEB_FILE, OfflineWeb, WebWriter

SUBJECTS = ("rivers", "glaciers", "volcanoes", "deserts", "forests", "islands")
VERBS = ("shape", "cover", "feed", "surround", "divide", "outlast")
OBJECTS = ("the northern valleys", "most coastal plains", "several mountain ranges", "the old trade routes",
           "a third of the continent", "the western lowlands")
COPY_KINDS = ("session", "tracking", "mirror", "twin", "near-duplicate")

# Small sizes and large shares, so that a web of 70 pages meets every pathology.
SMALL = {
    "calendar.sections": 2, "calendar.injected_hosts": 1, "calendar.pages": 40, "calendar.entry_share": 0.2,
    "pagination.sections": 1, "pagination.pages": 30, "pagination.items": 4, "pagination.entry_share": 0.2,
    "facet.sections": 1, "facet.injected_hosts": 1, "facet.facets": 2, "facet.values": 2, "facet.sorts": 2,
    "facet.entry_share": 0.2,
    "session.hosts": 2, "session.sessions": 2, "session.pages": 10, "session.link_share": 0.1,
    "tracking.link_share": 0.1, "mirror.hosts": 2, "mirror.pages": 10, "mirror.link_share": 0.1,
    "twin.link_share": 0.1, "near-duplicate.page_share": 0.2, "near-duplicate.link_share": 0.1,
    "redirect.link_share": 0.1, "redirect.loop_share": 0.1,
    "soft-404.hosts": 3, "soft-404.broken_share": 0.3,
    "failing.error_hosts": 1, "failing.error_share": 0.3, "failing.timeout_hosts": 1, "failing.timeout_share": 0.3,
    "failing.slow_hosts": 1, "failing.burst": 0,
    "farm.hosts": 2, "farm.pages": 30, "farm.entry_share": 0.1, "farm.words": 10, "farm.links": 5,
    "script.page_share": 0.3, "script.link_share": 0.5,
}


def _text(rng: random.Random, i: int) -> str:
    sentences = [f"Page {i} tells how {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
                 f"in region {rng.randrange(1000)}." for _ in range(rng.randint(3, 6))]
    return "\n\n".join(sentences)


def build_web(directory: Path) -> Path:
    """uni.test stores HTML (a dead link on every page); wiki.test stores text; both link to each other."""
    rng = random.Random(5)
    uni = [f"http://www.uni.test/dept/p{i}.html" for i in range(30)] + ["http://www.uni.test/dept/"]
    wiki = [f"https://wiki.test/wp/Article_{i}.htm" for i in range(40)]
    with WebWriter(directory, {"name": "two-hosts", "topic_defaults": {}}) as w:
        for i, url in enumerate(uni):
            targets = [uni[(i + k) % len(uni)] for k in (1, 2, 5, 11)] + [wiki[i % len(wiki)],
                                                                           f"http://www.uni.test/gone{i}.html"]
            anchors = "".join(f'<li><a href="{t}">link {k} of {i}</a></li>' for k, t in enumerate(targets))
            paragraphs = "".join(f"<p>{p}</p>" for p in _text(rng, i).split("\n\n"))
            html = (f"<html><head><title>Department page {i}</title></head><body>{paragraphs}"
                    f"<ul>{anchors}</ul></body></html>")
            title, text, links = parse_html(html, url)
            w.add_page(url, title=title, text=text, html=html, labels=["topic.a" if i % 2 else "topic.b"])
            for link in links:
                w.add_link(url, link.url, link.anchor)
        for i, url in enumerate(wiki):
            w.add_page(url, title=f"Article {i}", text=_text(rng, 100 + i), labels=["topic.a" if i % 3 else "topic.c"])
            for k in (1, 3, 7, 13, 20):
                w.add_link(url, wiki[(i + k) % len(wiki)], f"Article {(i + k) % len(wiki)}")
            if i % 5 == 0:
                w.add_link(url, uni[i % len(uni)], "a department")
    return directory


@pytest.fixture(scope="module")
def webs(tmp_path_factory):
    """(the clean web, the messy web, the report), built once for the module."""
    root = tmp_path_factory.mktemp("mess")
    clean = build_web(root / "clean")
    report = mess_web(clean, root / "messy", make_profile("default", SMALL), seed=3)
    source, messy = OfflineWeb(clean), OfflineWeb(root / "messy")
    yield source, messy, report
    source.close()
    messy.close()


def _ok(web: OfflineWeb, url: str) -> bool:
    """Whether ``url`` is fetched without its host failing it (a failing host fails a fixed share of URLs)."""
    return web.pathology(url) not in ("failing", "timeout")


def test_every_kind_is_injected_and_labelled(webs):
    source, messy, report = webs
    injected = messy.injected()
    counts = Counter(item.kind for item in injected.values())
    assert set(counts) == set(KINDS), counts
    assert report.injected == {kind: counts[kind] for kind in KINDS}
    assert messy.stats()["injected"] == dict(sorted(counts.items()))
    originals = {r.url for r in source.records() if 200 <= r.status < 300}
    labels = messy.labels()
    for url, item in injected.items():
        assert url not in labels  # a page never gains a label, a copy of a relevant page included
        if item.kind in (*COPY_KINDS, "redirect"):
            assert item.original in originals, (url, item)
        else:
            assert item.original is None, (url, item)
    # the traps are as deep as asked
    hosts = Counter((item.kind, host_of(url)) for url, item in injected.items())
    assert max(n for (kind, _), n in hosts.items() if kind == "calendar") >= 40
    assert max(n for (kind, _), n in hosts.items() if kind == "facet") == 18  # (2 + 1) ** 2 * 2
    assert max(n for (kind, _), n in hosts.items() if kind == "farm") == 30


def test_pages_labels_and_bodies_of_the_web_are_kept(webs):
    source, messy, _ = webs
    assert messy.labels() == source.labels()
    injected = messy.injected()
    for record in source.records():
        if not 200 <= record.status < 300:
            continue  # a dead end may have become a soft 404 (tested below)
        want, got = source.stored(record.url), messy.stored(record.url)
        assert (got.status, got.title, got.text, got.canonical) == (want.status, want.title, want.text, None)
        # Each stored link is still there, in order: as it was, as a copy or redirect of its target, or moved
        # into a script; links into traps, print versions, loops and broken links come after them.
        rendered = messy.fetch(record.url, render=True).outlinks if _ok(messy, record.url) else None
        def stands_for(new: Link, old: Link) -> bool:
            return new.anchor == old.anchor and (new.url == old.url or (
                new.url in injected and injected[new.url].original == old.url))

        # added links lead to new URLs without an original (a trap, a loop, a broken link), or to a
        # near-duplicate of the page itself; a stored dead link may have become a soft 404
        stored = {link.url for link in want.outlinks}
        html_links = [link for link in got.outlinks if link.url in stored or link.url not in injected
                      or injected[link.url].original not in (None, record.url)]
        scripted = messy.script_links(record.url)
        assert len(html_links) + len(scripted) == len(want.outlinks)
        for old in want.outlinks:
            if html_links and stands_for(html_links[0], old):
                html_links.pop(0)
            else:
                assert stands_for(scripted.pop(0), old), (record.url, old)
        if rendered is not None:
            assert rendered == got.outlinks + messy.script_links(record.url)
        if source.html(record.url) is not None:  # stored HTML stays, and reads as the page's links
            parsed = parse_document(messy.html(record.url), record.url)
            assert (parsed.text, parsed.links) == (got.text, got.outlinks)


def test_copies_show_their_original(webs):
    _, messy, report = webs
    injected = messy.injected()
    assert report.html_dropped == 0
    seen = Counter()
    for url, item in injected.items():
        if item.kind not in COPY_KINDS or not (_ok(messy, url) and _ok(messy, item.original)):
            continue
        copy, original = messy.fetch(url), messy.fetch(item.original)
        assert copy.status == 200 and copy.final_url == url and copy.title == original.title
        if item.kind == "near-duplicate":  # the text with a banner, a date line or a footer added
            assert original.text in copy.text and copy.text != original.text
        else:
            assert copy.text == original.text
        assert copy.canonical in (None, item.original)
        seen[item.kind, copy.canonical is not None] += 1
        if messy.html(item.original) is not None:  # a copy of a page with HTML has HTML reading as the copy
            parsed = parse_document(messy.html(url), url)
            assert (parsed.text, parsed.links) == (copy.text, copy.outlinks)
    assert {kind for kind, _ in seen} == set(COPY_KINDS)
    assert seen["near-duplicate", True] and seen["near-duplicate", False]  # some name their original, some not


def test_sessions_and_mirrors_keep_their_links_inside(webs):
    _, messy, _ = webs
    injected = messy.injected()
    for kind, marker in (("session", ("jsessionid=", "sid=")), ("mirror", None)):
        copies = [url for url, item in injected.items() if item.kind == kind]
        inside = 0
        for url in copies:
            for link in messy.stored(url).outlinks:
                if injected.get(link.url) is not None and injected[link.url].kind == kind:
                    inside += 1
                    if marker:
                        ids = [part for part in url.replace("?", ";").split(";") if part.startswith(marker)]
                        assert ids and any(i in link.url for i in ids)  # the same session id
        assert inside > len(copies) // 2, kind


def test_traps_read_like_their_neighbourhood(webs):
    source, messy, _ = webs
    sentences = {s for r in source.records() if 200 <= r.status < 300
                 for s in source.stored(r.url).text.split(". ")}
    words = {w.lower().strip(".,") for r in source.records() if 200 <= r.status < 300
             for w in source.stored(r.url).text.split()}
    injected = messy.injected()
    for kind in ("calendar", "pagination", "facet", "farm"):
        pages = [messy.stored(url) for url, item in injected.items() if item.kind == kind]
        pages = [page for page in pages if page.status == 200 and page.title != "Page not found"]
        assert pages, kind
        for page in pages[:20]:
            assert page.outlinks
            if kind == "farm":  # stuffed with the linking pages' words, nothing else but spam words
                assert set(page.text.lower().replace(".", "").split()) <= words | set(SPAM_WORDS)
            else:  # borrowed sentences of the web
                assert any(s in page.text for s in sentences if len(s) > 30), (kind, page.text)
    calendar = next(url for url, item in injected.items() if item.kind == "calendar" and messy.stored(url).ok
                    and messy.stored(url).title != "Page not found")
    anchors = {link.anchor for link in messy.stored(calendar).outlinks}
    assert {"Next day", "Previous day", "Next month", "Next year"} <= anchors


def test_redirect_chains_end_at_their_original_and_loops_nowhere(webs):
    _, messy, _ = webs
    db = sqlite3.connect(messy.directory / WEB_FILE)
    location = dict(db.execute("SELECT url, location FROM pages WHERE status BETWEEN 300 AND 399"))
    injected = messy.injected()
    starts = {link.url for r in messy.records() if r.status == 200 for link in messy.stored(r.url).outlinks
              if link.url in location}
    assert starts
    for start in starts:
        path = [start]
        while path[-1] in location and len(path) <= 10:
            path.append(location[path[-1]])
        fetched = messy.fetch(start) if all(_ok(messy, u) for u in path) else None
        if injected[start].kind == "redirect":
            assert 3 <= len(path) <= 5 and path[-1] == injected[start].original
            assert fetched is None or fetched.final_url == path[-1]
        else:
            assert injected[start].kind == "redirect-loop" and len(path) == 11
            assert fetched is None or fetched.status == 310


def test_soft_404_hosts_answer_every_path(webs):
    source, messy, _ = webs
    soft = [host for host, b in messy.behaviours.items() if b.soft_404 is not None]
    assert soft
    for host in soft:
        url = f"https://{host}/no/such/page-{random.Random(host).randrange(10**6)}.html"
        if not _ok(messy, url):
            continue
        page = messy.fetch(url)
        assert (page.status, page.title) == (200, "Page not found") and "/no/such/page-" in page.text
        assert page.outlinks and page.outlinks[0].anchor == "Home" and messy.stored(page.outlinks[0].url).ok
        assert messy.pathology(url) == "soft-404"
    for record in source.records():  # WEB's dead ends on a soft-404 host became not-found pages
        if record.status == 404 and host_of(record.url) in soft:
            assert messy.stored(record.url).status == 200 and messy.injected()[record.url].kind == "dead-link"
    plain = [h for h in {host_of(r.url) for r in messy.records()} if h not in soft]
    probes = [f"http://{host}/nothing" for host in sorted(plain)]
    answered = [messy.fetch(url).status for url in probes if _ok(messy, url)]
    assert answered and set(answered) == {404}


def test_failing_hosts_fail_a_fixed_share_of_urls_whatever_the_order(webs):
    _, messy, _ = webs
    again = OfflineWeb(messy.directory)
    modes = {b.failure: host for host, b in messy.behaviours.items() if b.failure}
    assert set(modes) == {"errors", "timeout", "slow"}
    for mode in ("errors", "timeout"):
        urls = [f"https://{modes[mode]}/probe/{i}" for i in range(400)]
        first = [messy.fetch(u) for u in urls]
        shuffled = list(urls)
        random.Random(1).shuffle(shuffled)
        second = {u: again.fetch(u) for u in shuffled}
        assert [(p.status, p.error) for p in first] == [(second[u].status, second[u].error) for u in urls]
        failed = [p for p in first if p.status in (0, 500, 503)]
        assert 80 < len(failed) < 160  # a share of 0.3
        if mode == "timeout":
            assert {(p.status, p.error) for p in failed} == {(0, "timed out")}
            assert messy.pathology(urls[first.index(failed[0])]) == "timeout"
        else:
            assert {p.status for p in failed} == {500, 503}
            assert messy.pathology(urls[first.index(failed[0])]) == "failing"
    slow = [r.url for r in messy.records() if host_of(r.url) == modes["slow"] and r.status == 200]
    assert slow and all(messy.fetch(u).ok for u in slow[:20])  # slow over HTTP only
    again.close()


def test_script_links_are_seen_only_when_rendered(webs):
    source, messy, report = webs
    scripted = [r.url for r in messy.records() if messy.script_links(r.url)]
    of_web = [u for u in scripted if source.stored(u) is not None]  # copies repeat their original's
    assert of_web and report.moved_links == sum(len(messy.script_links(u)) for u in of_web)
    for url in scripted:
        if not _ok(messy, url):
            continue
        plain, rendered = messy.fetch(url), messy.fetch(url, render=True)
        hidden = messy.script_links(url)
        assert not set(hidden) & set(plain.outlinks)
        assert rendered.outlinks == plain.outlinks + hidden


@pytest.mark.slow
def test_same_seed_same_tables_other_seed_other_web(webs, tmp_path):
    """Built again in another process, with other string hashes (so no set order can leak in): equal tables."""
    source, messy, _ = webs
    script = ("import json, sys; from focuscrawl.webs.mess import make_profile, mess_web; "
              "mess_web(sys.argv[1], sys.argv[2], make_profile('default', json.loads(sys.argv[3])), seed=3)")
    subprocess.run([sys.executable, "-c", script, str(source.directory), str(tmp_path / "again"), json.dumps(SMALL)],
                   check=True, env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert _tables(tmp_path / "again") == _tables(messy.directory)
    mess_web(source.directory, tmp_path / "other", make_profile("default", SMALL), seed=4)
    assert _tables(tmp_path / "other")["injected"] != _tables(messy.directory)["injected"]


def test_one_pathology_off_leaves_the_others_as_they_were(webs, tmp_path):
    source, messy, _ = webs
    mess_web(source.directory, tmp_path / "no-farm", make_profile("default", {**SMALL, "farm.enabled": False}),
             seed=3)
    without = OfflineWeb(tmp_path / "no-farm")
    calendars = {u for u, item in messy.injected().items() if item.kind in ("calendar", "session", "tracking")}
    assert calendars == {u for u, item in without.injected().items() if item.kind in ("calendar", "session",
                                                                                     "tracking")}
    assert "farm" not in Counter(item.kind for item in without.injected().values())
    without.close()


def test_profile_none_is_a_faithful_copy(webs, tmp_path):
    source, _, _ = webs
    report = mess_web(source.directory, tmp_path / "copy", make_profile("none"), profile_name="none")
    assert report.injected == {} and report.hosts == {}
    want, got = _tables(source.directory), _tables(tmp_path / "copy")
    assert set(got) == set(want) == {"meta", "pages", "links"}
    assert got["pages"] == want["pages"] and got["links"] == want["links"]
    meta_want, meta_got = dict(want["meta"]), dict(got["meta"])
    assert meta_got.pop("mess") and meta_got.pop("name") == '"two-hosts-mess"'
    assert {k: v for k, v in meta_got.items() if k != "builder"} == \
           {k: v for k, v in meta_want.items() if k not in ("builder", "name")}


def test_profiles_refuse_wrong_options():
    assert make_profile("default", {"calendar.pages": "5000"}).calendar.pages == 5000
    assert not make_profile("none").calendar.enabled
    assert make_profile("none", {"calendar.enabled": True}).calendar.enabled
    for settings in ({"calendar.pages": 0}, {"calendar.nope": 1}, {"nope.pages": 1}, {"calendar": 3},
                     {"tracking.link_share": 1.5}, {"redirect.min_hops": 5, "redirect.max_hops": 3},
                     {"facet.injected_hosts": 5}):
        with pytest.raises(ValueError):
            make_profile("default", settings)
    with pytest.raises(ValueError, match="unknown mess profile"):
        make_profile("chaos")


def test_cli_builds_reports_and_refuses_bad_input_in_one_line(webs, tmp_path, capsys):
    source, _, _ = webs
    args = ["web", "mess", str(source.directory), str(tmp_path / "out"), "--seed", "3"]
    assert main(args + [f"-s{key}={value}" for key, value in SMALL.items()]) == 0
    printed = capsys.readouterr().out
    assert "injected URLs" in printed and "calendar" in printed and "built in" in printed
    assert main(["web", "info", str(tmp_path / "out")]) == 0
    assert "injected" in capsys.readouterr().out
    for bad in (["-s", "calendar.pages=0"], ["-s", "nonsense.x=1"], ["-s", "calendar.pages"],
                ["--profile", "chaos"], ["--overwrite", "-s", "farm.links=x"], []):
        where = tmp_path / "out" if not bad else tmp_path / "elsewhere"
        code = main(["web", "mess", str(source.directory), str(where), *bad])
        err = capsys.readouterr().err
        lines = [line for line in err.strip().split("\n") if line.strip()]
        assert code != 0 and "Traceback" not in err and lines[-1].startswith("error:") and len(lines) <= 2, err
    for web_dir, out_dir in ((tmp_path / "missing", tmp_path / "o1"), (tmp_path / "out", tmp_path / "o2"),
                             (source.directory, source.directory)):
        code = main(["web", "mess", str(web_dir), str(out_dir)])
        err = capsys.readouterr().err
        assert code != 0 and err.strip().startswith("error:") and "Traceback" not in err, err
    assert not (tmp_path / "elsewhere" / WEB_FILE).exists()


def test_parse_document_reads_the_canonical_url():
    html = ('<html><head><link rel="stylesheet" href="/s.css"><link rel="Canonical alternate" href="../a.htm?x=1">'
            '<link rel="canonical" href="/second"></head><body><a href="b.htm">b</a>'
            '<script>document.write(\'<a href="/hidden">h</a>\')</script></body></html>')
    parsed = parse_document(html, "https://site.test/dir/page.htm")
    assert parsed.canonical == "https://site.test/a.htm?x=1"
    assert parsed.links == [Link("https://site.test/dir/b.htm", "b")]
    assert parse_document("<p>no head</p>", "https://site.test/").canonical is None
    assert parse_html(html, "https://site.test/dir/page.htm") == (parsed.title, parsed.text, parsed.links)


def _tables(directory: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(directory / WEB_FILE)
    try:
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: sorted(db.execute(f"SELECT * FROM {name}").fetchall(), key=repr) for name in names}
    finally:
        db.close()


@pytest.mark.slow
def test_served_messy_web_gives_the_offline_pages(webs):
    """Over HTTP the messy web answers as offline: copies, traps, soft 404s, 5xx, timeouts (a short hang),
    canonical URLs in the head, and script-only links that an HTML parser does not see."""
    _, messy, _ = webs
    injected = messy.injected()
    by_kind: dict[str, list[str]] = {}
    for url, item in injected.items():
        by_kind.setdefault(item.kind, []).append(url)
    sample = [url for kind, urls in sorted(by_kind.items()) if kind != "redirect-loop" for url in urls[:6]]
    sample += [r.url for r in messy.records() if r.url not in injected][:40]
    sample += [u for u in (r.url for r in messy.records()) if messy.script_links(u)][:10]
    sample += [url for url in injected if messy.stored(url).canonical][:10]
    soft = [host for host, b in messy.behaviours.items() if b.soft_404 is not None]
    sample += [f"http://{host}/missing/{i}.html" for host in soft for i in range(2)]
    failing = {b.failure: host for host, b in messy.behaviours.items() if b.failure}
    sample += [f"https://{failing['errors']}/probe/{i}" for i in range(12)]
    timeouts = [u for u in (f"https://{failing['timeout']}/probe/{i}" for i in range(20))
                if messy.pathology(u) == "timeout"]
    sample += timeouts[:2]  # each waits for the fetcher's timeout: two are enough
    sample = list(dict.fromkeys(sample))
    offline = [messy.fetch(url) for url in sample]
    statuses = {page.status for page in offline}
    assert {0, 200} <= statuses and statuses & {500, 503}

    async def fetch_served():
        async with serve_web(messy.directory, base_ip="127.0.9.1", hang_s=30.0, slow_body_s=0.2) as server:
            config = FetchConfig.loopback(server.hosts, min_delay=0, per_host_concurrency=8, throttle_retries=0,
                                          total_timeout=5.0, main_text=False)
            async with HttpFetcher(config) as fetcher:
                return await asyncio.gather(*(fetcher.fetch(url) for url in sample))

    served = asyncio.run(asyncio.wait_for(fetch_served(), 120))
    for url, want, got in zip(sample, offline, served):
        assert got.status == want.status, (url, got.status, got.error, want.status)
        if not want.ok:
            continue
        assert (got.final_url, got.title, got.text, got.outlinks) == \
               (want.final_url, want.title, want.text, want.outlinks), url
        assert parse_document(got.html, got.final_url).canonical == want.canonical, url
        for link in messy.script_links(want.final_url):  # in the page's script, not among its links
            assert link.url in got.html and link not in got.outlinks


def test_served_error_host_fails_in_bursts(webs, tmp_path):
    source, _, _ = webs
    mess_web(source.directory, tmp_path / "bursty", make_profile("default", {**SMALL, "failing.burst": 2}), seed=3)
    web = OfflineWeb(tmp_path / "bursty")
    host = next(h for h, b in web.behaviours.items() if b.failure == "errors")
    urls = [f"http://{host}/probe/{i}" for i in range(60)]
    fails = [web.pathology(u) == "failing" for u in urls]

    async def statuses():
        async with serve_web(web.directory, base_ip="127.0.9.1") as server:
            async with aiohttp.ClientSession() as session:
                out = []
                for url in urls:  # one after another: a burst is the requests that follow a failure
                    async with session.get(f"http://{server.hosts[host]}{url.split(host, 1)[1]}",
                                           headers={"Host": host}) as response:
                        out.append(response.status)
                return out

    got = asyncio.run(asyncio.wait_for(statuses(), 60))
    burst_left = 0
    for url, failed, status in zip(urls, fails, got):
        if failed:
            assert status in (500, 503)
            burst_left = 2
        elif burst_left:
            assert status == 503
            burst_left -= 1
        else:
            assert status == web.fetch(url).status  # 200 on a soft-404 host, else 404
    assert any(fails) and got.count(503) + got.count(500) > fails.count(True)
    web.close()
