"""The test bed of real web applications (focuscrawl.webs.testbed): URL kinds from each application's URL scheme,
texts in other languages from a small slice of Debian's real index (tests/data/testbed-debian: 12 packages, 6
tagged field::biology, their descriptions in en, de, fr and es as Debian publishes them), and (slow: installs
Trac, Datasette, Pelican and django-scheduler into their own virtualenv, starts their servers) the builder on
the embedded web, each application serving, its real URLs labelled, pages in four languages, and a short
crawl's spend per kind."""

from __future__ import annotations

import bz2
import hashlib
import json
import lzma
import random
import re
import tempfile
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from focuscrawl.urls import normalize_url
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.store import OfflineWeb
from focuscrawl.webs.testbed import UrlLabeller, build_testbed, read_manifest, serve_testbed
from focuscrawl.webs.testbed.apps import APPLICATIONS, PINS, install_plan
from focuscrawl.webs.testbed.build import FOREIGN_SHARE, HOSTS, Texts
from focuscrawl.webs.testbed.labels import RULES
from focuscrawl.webs.testbed.sources import SourcePool
from focuscrawl.webs.testbed.spend import WEB, relevant_urls, spend_of, spend_of_run
from focuscrawl.webs.testbed.translations import ForeignPool, ensure_translations

TOPIC = "subject.Science.Biology"
LABELLER = UrlLabeller({host: (app, RULES[app]) for app, host in HOSTS.items()})
# URLs the applications generated when served (seen in their pages), and the kind each must get.
EXPECTED = {
    "http://trac.testbed.example/": "listing",
    "http://trac.testbed.example/wiki/Topics/Ancient_Egypt": "content",
    "http://trac.testbed.example/ticket/12": "content",
    "http://trac.testbed.example/wiki/Topics/Apple?action=history": "history",
    "http://trac.testbed.example/wiki/Topics/Apple?action=diff&version=2": "diff",
    "http://trac.testbed.example/wiki/Topics/Apple?version=1": "version",
    "http://trac.testbed.example/ticket/3?cnum_hist=1&cversion=0": "version",
    "http://trac.testbed.example/ticket/3?action=diff&version=2": "diff",
    "http://trac.testbed.example/timeline?from=2024-04-25T00%3A00%3A00Z&precision=second": "timeline",
    "http://trac.testbed.example/query?group=status&milestone=release-4": "query",
    "http://trac.testbed.example/report/1?asc=1&sort=ticket": "query",
    "http://trac.testbed.example/query?format=csv&milestone=release-4": "export",
    "http://trac.testbed.example/timeline?daysback=90&format=rss": "export",
    "http://trac.testbed.example/wiki/WikiStart?format=txt": "export",
    "http://trac.testbed.example/login": "account",
    "http://trac.testbed.example/prefs/advanced": "account",
    "http://trac.testbed.example/wiki/TracGuide": "help",
    "http://trac.testbed.example/roadmap": "listing",
    "http://trac.testbed.example/milestone/release-2": "listing",
    "http://trac.testbed.example/chrome/common/css/trac.css": "asset",
    "http://data.testbed.example/": "listing",
    "http://data.testbed.example/testbed/pages": "listing",
    "http://data.testbed.example/testbed/pages/37": "row",
    "http://data.testbed.example/testbed/pages?year=1995": "query",
    "http://data.testbed.example/testbed/pages?_facet=area&_sort_desc=year": "query",
    "http://data.testbed.example/testbed/pages?_next=100": "query",
    "http://data.testbed.example/testbed?sql=select+id+from+pages": "query",
    "http://data.testbed.example/testbed/pages.json?_shape=array": "export",
    "http://data.testbed.example/testbed/pages/37.json": "export",
    "http://data.testbed.example/testbed/pages.csv?_size=max": "export",
    "http://data.testbed.example/-/versions": "help",
    "http://data.testbed.example/-/static/app.css?d59929=": "asset",
    "http://blog.testbed.example/": "listing",
    "http://blog.testbed.example/index3.html": "listing",
    "http://blog.testbed.example/posts/2023/09/eagle.html": "content",
    "http://blog.testbed.example/tag/birds.html": "listing",
    "http://blog.testbed.example/category/science.html": "listing",
    "http://blog.testbed.example/author/grace-hopper.html": "listing",
    "http://blog.testbed.example/archives.html": "archive",
    "http://blog.testbed.example/posts/2023/index.html": "archive",
    "http://blog.testbed.example/posts/2023/09/index.html": "archive",
    "http://blog.testbed.example/feeds/all.atom.xml": "export",
    "http://blog.testbed.example/theme/css/main.css": "asset",
    "http://cal.testbed.example/": "listing",
    "http://cal.testbed.example/calendar/events/": "listing",
    "http://cal.testbed.example/event/7/": "content",
    "http://cal.testbed.example/de/event/7/": "translation",
    "http://cal.testbed.example/fr/event/7/": "translation",
    "http://cal.testbed.example/es/": "listing",
    "http://cal.testbed.example/calendar/month/events/?year=2024&month=3": "calendar",
    "http://cal.testbed.example/calendar/month/events/?year=2024&month=4&day=1&hour=0&minute=0&second=0": "calendar",
    "http://cal.testbed.example/de/calendar/daily/events/?year=2024&month=3&day=5": "calendar",
    "http://cal.testbed.example/calendar/week/events/": "calendar",
    "http://cal.testbed.example/calendar/year/events/?year=2025": "calendar",
    "http://cal.testbed.example/calendar/tri_month/events/?year=2024&month=3": "calendar",
    "http://cal.testbed.example/calendar/compact_month/events/": "calendar",
    "http://cal.testbed.example/occurrence/7/2024/3/5/10/0/0/": "occurrence",
    "http://cal.testbed.example/occurrence/7/12/": "occurrence",
    "http://cal.testbed.example/ical/calendar/1/": "export",
    "http://cal.testbed.example/fr/feed/calendar/upcoming/1/": "export",
    "http://cal.testbed.example/api/occurrences?calendar_slug=events&start=2024-03-01": "export",
    "http://cal.testbed.example/event/edit/events/7/": "account",
    "http://cal.testbed.example/de/event/delete/7/": "account",
    "http://cal.testbed.example/occurrence/edit/7/2024/3/5/10/0/0/": "account",
    "http://cal.testbed.example/event/create/events/": "account",
}


def test_labellers_give_each_url_its_kind():
    assert {url: LABELLER.kind(url) for url in EXPECTED} == EXPECTED
    assert LABELLER.kind("https://schools-wikipedia.org/wp/a/Ant.htm") is None
    assert LABELLER.app("http://data.testbed.example/testbed/pages/1") == "datasette"


def test_spend_counts_requests_by_app_and_kind_and_relevant_pages_once():
    relevant = frozenset({"http://blog.testbed.example/posts/2023/09/eagle.html", "https://w.org/a"})
    fetched = [("https://w.org/a", None), ("https://w.org/b", "https://w.org/a"),
               ("http://blog.testbed.example/posts/2023/09/eagle.html", None),
               ("http://data.testbed.example/testbed/pages/1", None)]
    spend = spend_of(fetched, LABELLER, relevant)
    assert (spend.requests, spend.relevant, spend.relevant_in_apps) == (4, 2, 1)
    assert spend.by_app == Counter({WEB: 2, "pelican": 1, "datasette": 1})
    assert spend.by_kind == Counter({WEB: 2, "content": 1, "row": 1})


def test_an_apps_virtualenv_of_fewer_applications_gets_the_missing_ones_added():
    earlier = [pin for pin in PINS if not pin.lower().startswith(("django", "icalendar", "pytz", "sqlparse"))]
    assert install_plan(earlier) == (False, ["django-scheduler==0.12.0"])
    assert install_plan([]) == (True, APPLICATIONS)
    assert install_plan(["Trac==1.5"]) == (True, APPLICATIONS)  # another version: made anew


DEBIAN_SLICE = Path(__file__).parent / "data" / "testbed-debian"


def debian_index(folder: Path) -> Path:
    """The slice of Debian's index as a mirror lays it out: Packages.xz, Translation-en.xz, Translation-LL.bz2
    and a Release listing their SHA256."""
    folder.mkdir(parents=True, exist_ok=True)
    listed = []
    for name in ("Packages", "Translation-en", "Translation-de", "Translation-fr", "Translation-es"):
        text = (DEBIAN_SLICE / name).read_bytes()
        english_or_index = name in ("Packages", "Translation-en")
        data = lzma.compress(text) if english_or_index else bz2.compress(text)
        file = folder / (name + (".xz" if english_or_index else ".bz2"))
        file.write_bytes(data)
        where = "binary-amd64" if name == "Packages" else "i18n"
        listed.append(f" {hashlib.sha256(data).hexdigest()} {len(data)} main/{where}/{file.name}")
    (folder / "Release").write_text("Suite: oldstable\nCodename: bookworm\nSHA256:\n" + "\n".join(listed) + "\n")
    return folder


def test_translations_are_read_from_the_cache_and_labelled_by_debian_topic(tmp_path):
    index = debian_index(tmp_path / "debian")

    def no_network(url, timeout):
        raise AssertionError(f"fetched {url}: the cached files match the Release")
    assert ensure_translations(index, ("de", "fr", "es"), get=no_network, log=lambda _: None) == index
    pool = ForeignPool(index, ("de", "fr", "es"), TOPIC, set())
    assert pool.debian_topic == "topic.biology"
    assert pool.sizes() == {language: {"topic": 6, "other": 6} for language in ("de", "fr", "es")}
    german = {source.title.split(":")[0]: source for source in pool.topic["de"]}
    assert german["autodock"].language == "de" and german["autodock"].labels == ("Debian.Biology",)
    assert all(not source.relevant for source in pool.other["fr"])
    drawn = pool.draw(random.Random(0), 9, 0.5)
    assert [source.language for source in drawn].count("es") == 3 and len({s.title for s in drawn}) == 9
    # A topic Debian has no field for: no text in another language is relevant.
    assert ForeignPool(index, ("de",), "subject.History", set()).sizes() == {"de": {"topic": 0, "other": 12}}


def test_a_translation_that_does_not_match_the_release_is_refused(tmp_path):
    index = debian_index(tmp_path / "debian")
    (index / "Translation-de.bz2").unlink()
    fetched = []

    def mirror(url, timeout):
        fetched.append(url)
        name = url.rsplit("/", 1)[1]
        if name != "Translation-de.bz2":
            return (index / name).read_bytes()
        return b"not the file the Release lists"
    with pytest.raises(ValueError, match="do not match the Release"):
        ensure_translations(index, ("de",), get=mirror, log=lambda _: None)
    # The missing file was fetched first; then, in case the mirror had published a newer Release since, the
    # index and the file once more: still not the Release's, so refused.
    assert fetched[0].endswith("main/i18n/Translation-de.bz2") and fetched[-1] == fetched[0]
    assert not (index / "Translation-de.bz2").exists()


def test_a_third_of_the_texts_are_in_other_languages(tmp_path):
    index = debian_index(tmp_path / "debian")
    web = OfflineWeb(resolve_web_dir("embedded"))
    try:
        texts = Texts(SourcePool(web, TOPIC), ForeignPool(index, ("de", "fr", "es"), TOPIC, set()))
        drawn = texts.draw(random.Random(1), 30)
    finally:
        web.close()
    languages = Counter(source.language for source in drawn)
    assert languages["en"] == 30 - round(30 * FOREIGN_SHARE) and sorted(languages.values()) == [3, 3, 4, 20]
    assert any(source.relevant for source in drawn if source.language != "en")


# -- slow: the real applications ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def testbed(tmp_path_factory) -> Path:
    """The embedded web's test bed; the applications' virtualenv kept across sessions in the temp folder."""
    apps = Path(tempfile.gettempdir()) / "focuscrawl-test-testbed-apps"
    out = tmp_path_factory.mktemp("testbed")
    build_testbed(resolve_web_dir("embedded"), out, TOPIC, apps_dir=apps, overwrite=True, log=lambda _: None,
                  debian_index=debian_index(tmp_path_factory.mktemp("debian")))
    return out


@pytest.fixture(scope="module")
def served(testbed):
    with serve_testbed(testbed) as hosts:
        yield hosts


def get(hosts: dict[str, str], url: str) -> tuple[int, str]:
    parts = urlsplit(url)
    request = urllib.request.Request(f"http://{hosts[parts.hostname]}{parts.path or '/'}"
                                     + (f"?{parts.query}" if parts.query else ""), headers={"Host": parts.hostname})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def generated_urls(hosts: dict[str, str], starts: list[str], limit: int) -> dict[str, int]:
    """URL -> status of the first ``limit`` URLs of the host of ``starts``, breadth first from them."""
    seen: dict[str, int] = {}
    queue = list(starts)
    front = starts[0]
    while queue and len(seen) < limit:
        url = queue.pop(0)
        if url in seen:
            continue
        seen[url], body = get(hosts, url)
        for href in re.findall(r'href="([^"]+)"', body):
            link = normalize_url(urljoin(url, href.replace("&amp;", "&")))
            if link and urlsplit(link).hostname == urlsplit(front).hostname and link not in seen:
                queue.append(link)
    return seen


@pytest.mark.slow
def test_builder_fills_the_apps_and_links_the_web_into_them(testbed):
    manifest = read_manifest(testbed)
    assert set(manifest["apps"]) == {"trac", "datasette", "pelican", "scheduler"}
    assert manifest["apps"]["scheduler"]["relevant_pages"] > 10
    assert manifest["apps"]["trac"]["relevant_pages"] > 10 and manifest["apps"]["pelican"]["relevant_pages"] > 10
    relevant = (testbed / "relevant.txt").read_text().split()
    assert len(relevant) == sum(entry["relevant_pages"] for entry in manifest["apps"].values())
    assert {LABELLER.kind(url) for url in relevant} == {"content"}
    web = OfflineWeb(testbed / manifest["web"])
    linked = {link.url for record in web.records() if record.status == 200
              for link in web.fetch(record.url).outlinks if LABELLER.app(link.url)}
    web.close()
    assert {LABELLER.app(url) for url in linked} == {"trac", "datasette", "pelican", "scheduler"}
    assert len(linked) >= manifest["links_into_apps"] // 2


@pytest.mark.slow
def test_each_app_serves_and_its_urls_get_the_expected_kinds(testbed, served):
    manifest = read_manifest(testbed)
    must_have = {"trac": {"content", "history", "diff", "version", "timeline", "query", "export", "listing", "help"},
                 "datasette": {"listing", "query", "row", "export"},
                 "pelican": {"content", "listing", "archive", "export"},
                 "scheduler": {"content", "listing", "calendar", "translation", "export"}}
    relevant = (testbed / "relevant.txt").read_text().split()
    for app, entry in manifest["apps"].items():
        # From the front page and two content pages: what a crawler arriving by the web's links meets first.
        seen = generated_urls(served, [entry["front"], *[url for url in relevant if LABELLER.app(url) == app][:2]],
                              150)
        kinds = Counter(LABELLER.kind(url) for url in seen)
        assert must_have[app] <= set(kinds), (app, kinds)
        assert kinds["other"] <= 0.1 * len(seen), (app, [url for url in seen if LABELLER.kind(url) == "other"])
        content = [url for url in seen if LABELLER.kind(url) == "content"]
        assert all(seen[url] == 200 for url in content), app
    assert all(get(served, url)[0] == 200 for url in relevant[::10])


@pytest.mark.slow
def test_a_short_served_crawl_reports_its_spend_per_kind(testbed, served, tmp_path):
    from focuscrawl.bench.protocol import init_from_web, load_topic
    from focuscrawl.crawl import Crawler

    web_dir = testbed / read_manifest(testbed)["web"]
    init_from_web(tmp_path / "topic", web_dir, TOPIC, seeds=3, budget=100)
    hosts_map = tmp_path / "hosts.json"
    hosts_map.write_text(json.dumps(served))
    Crawler(topic=tmp_path / "topic", out=tmp_path / "run", hosts_map=hosts_map, budget=100, strategy="best-first",
            progress="none", plot=False, concurrency=8,
            scope={"allowed_domains": ["schools-wikipedia.org", "testbed.example"]},
            fetch={"min_delay": 0.0, "per_host_concurrency": 4}).crawl()
    web = OfflineWeb(web_dir)
    relevant = relevant_urls(testbed, load_topic(web, TOPIC, budget=100).truth.relevant)
    web.close()
    spend = spend_of_run(tmp_path / "run", LABELLER, relevant)
    assert 90 <= spend.requests <= 110
    assert sum(spend.by_kind.values()) == sum(spend.by_app.values()) == spend.requests
    assert spend.relevant > 0 and spend.by_app[WEB] > 0


@pytest.mark.slow
def test_the_bed_has_pages_in_four_languages(testbed, served):
    """A third of each application's content pages are in German, French or Spanish, served as such, some of
    them of the topic; the calendar's own navigation is translated under /de/, /fr/ and /es/."""
    manifest = read_manifest(testbed)
    assert manifest["languages"]["texts"] == ["en", "de", "fr", "es"]
    for app in ("trac", "pelican", "scheduler"):
        languages = manifest["apps"][app]["languages"]
        assert set(languages) == {"en", "de", "fr", "es"}, (app, languages)
        assert sum(count for code, count in languages.items() if code != "en") >= manifest["apps"][app][
            "content_pages"] // 4
    spec = json.loads((testbed / "apps" / "scheduler" / "testbed-spec.json").read_text())
    german = next(number for number, event in enumerate(spec["events"], 1) if "Dieses Paket" in event["description"]
                  or " und " in event["description"])
    status, body = get(served, f"http://cal.testbed.example/event/{german}/")
    assert status == 200 and " und " in body
    status, body = get(served, f"http://cal.testbed.example/fr/event/{german}/")
    assert status == 200 and 'lang="fr"' in body and "Calendriers disponibles" in body
    assert "täglich" in get(served, "http://cal.testbed.example/de/")[1]  # django-scheduler's German "Daily"
    relevant = (testbed / "relevant.txt").read_text().split()
    blog = [url for url in relevant if LABELLER.app(url) == "pelican"]
    bodies = [get(served, url)[1] for url in blog]
    assert any(" der " in body or " die " in body for body in bodies)  # a German post of the topic
    assert any(" les " in body or " des " in body for body in bodies)  # and a French one
