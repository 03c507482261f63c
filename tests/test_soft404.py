"""Soft 404s found in any language (focuscrawl.engine.defences.soft404): what gives cause to probe a host is read
from its pages' texts, never from phrases. German, French and "Oops!" not-found pages are caught offline and
served on loopback; a host of short but distinct pages (a data browser's rows) is never probed.
"""

from __future__ import annotations

from html import escape
from urllib.parse import unquote, urlsplit

import pytest
from aiohttp import web as aioweb
from conftest import BIRD_WORDS, crawl_records
from test_defences import crawl, page_text

from focuscrawl.engine.defences import PROBE, SOFT_404, DefenceSettings
from focuscrawl.types import Link, Page
from focuscrawl.webs.store import OfflineWeb, WebWriter

# (title, text) of a host's not-found page, which echoes the path asked for, in three styles none of them English
NOT_FOUND = {
    "german": ("Seite nicht gefunden", "Die angeforderte Seite {path} existiert leider nicht oder wurde verschoben. "
                                       "Bitte prüfen Sie die Adresse oder kehren Sie zur Startseite zurück."),
    "french": ("Page introuvable", "La page {path} est introuvable ou a été déplacée. Vérifiez l'adresse saisie "
                                   "ou revenez à la page d'accueil du site."),
    "oops": ("Oops!", "Oops! {path}? We looked everywhere and came back empty-handed. Try the home page, or "
                      "one of the links below."),
}
MISSING = 6  # links from the hub to pages the host does not have


def _soft_web(directory) -> OfflineWeb:
    """A relevant host whose hub links to four articles and to ``MISSING`` pages it does not have (404 in the
    store: a soft-404 host answers them with its not-found page), and a data browser of short but distinct rows."""
    with WebWriter(directory, {"name": "soft"}) as w:
        w.add_page("http://soft.test/", title="hub", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        w.add_link("http://soft.test/", "http://rows.test/", "bird rows")
        for i in range(4):
            w.add_link("http://soft.test/", f"http://soft.test/r{i}", "bird")
            w.add_page(f"http://soft.test/r{i}", title=f"r{i}", text=page_text(BIRD_WORDS, i + 1), labels=["birds"])
        for i in range(MISSING):
            w.add_link("http://soft.test/", f"http://soft.test/missing/m{i}", "bird nest")
        w.add_page("http://rows.test/", title="bird table", text=page_text(BIRD_WORDS, 9))
        # a row each (fewer than the trap rule's 20): a few words and numbers of its own, under one heading
        for i in range(15):
            w.add_link("http://rows.test/", f"http://rows.test/row?id={i}", f"bird {i}")
            w.add_page(f"http://rows.test/row?id={i}", title=f"Bird {i}",
                       text=f"Specimen {i} nest {i * 7 % 13} egg {i * 31} wing {i % 5}.{i * 3 % 10} cm site {i * 17}")
    return OfflineWeb(directory)


def _not_found(style: str, url: str) -> tuple[str, str]:
    title, text = NOT_FOUND[style]
    return title, text.format(path=unquote(urlsplit(url).path))


class SoftHost:
    """The offline web, with soft.test answering 200 and its not-found page in ``style`` for what it does not have."""

    def __init__(self, web: OfflineWeb, style: str):
        self.web, self.style = web, style

    def fetch(self, url: str) -> Page:
        page = self.web.fetch(url)
        if urlsplit(url).hostname == "soft.test" and page.status == 404:
            title, text = _not_found(self.style, url)
            return Page(url=url, final_url=url, status=200, title=title, text=text,
                        outlinks=[Link("http://soft.test/", "Start")])
        return page

    def html(self, url: str):
        return self.web.html(url)


def _counted(verdicts: list[str], urls: list[str]) -> tuple[int, int, int]:
    """(probes, soft 404s, missing pages fetched) of a crawl."""
    return verdicts.count(PROBE), verdicts.count(SOFT_404), sum("/missing/" in u for u in urls)


@pytest.mark.parametrize("style", list(NOT_FOUND))
def test_not_found_pages_in_any_language_are_caught_offline(tmp_path, style):
    web = SoftHost(_soft_web(tmp_path / "w"), style)
    events, _, _ = crawl(web, ["http://soft.test/"], budget=80)
    probes, soft, missing = _counted([e.verdict for e in events], [e.url for e in events])
    # the second not-found page is a near-copy of the first (without the path each echoes): the host is probed
    # then, and every later one is caught
    assert missing == MISSING and probes == 1 and soft == MISSING - 2
    probe = next(e for e in events if e.verdict == PROBE)
    assert probe.host == "soft.test" and probe.status == 200
    assert [e.url for e in events].index(probe.url) == [e.url for e in events].index("http://soft.test/missing/m1") + 1
    # the data browser's 15 short rows are distinct: its host gives no cause, and no row is taken as a soft 404
    assert sum(e.host == "rows.test" for e in events) == 16
    assert not any(e.host == "rows.test" and e.verdict for e in events)
    # the same web answering 404 for what it does not have: probed on the same evidence? no, 404s have no text
    events, _, _ = crawl(web.web, ["http://soft.test/"], budget=80)
    assert not any(e.verdict for e in events)


def test_a_host_probed_after_its_first_pages_catches_every_not_found_page(tmp_path):
    """With ``probe_after_pages``, a host is probed on its count of pages alone, before any not-found page; a host
    whose random path answers 404 costs that one probe and no page."""
    web = SoftHost(_soft_web(tmp_path / "w"), "german")
    settings = DefenceSettings.model_validate({"soft_404": {"probe_after_pages": 2}})
    events, _, _ = crawl(web, ["http://soft.test/"], budget=80, defences=settings)
    probes, soft, missing = _counted([e.verdict for e in events], [e.url for e in events])
    assert probes == 2 and soft == missing == MISSING  # soft.test and rows.test, each once
    assert not any(e.host == "rows.test" and e.verdict not in ("", PROBE) for e in events)


@pytest.mark.parametrize("style", ["german", "oops"])
def test_not_found_pages_in_any_language_are_caught_over_http(tmp_path, style):
    web = _soft_web(tmp_path / "w")

    async def hook(request, host, url):
        if host != "soft.test" or web.fetch(url).status != 404:
            return None
        title, text = _not_found(style, url)
        return aioweb.Response(status=200, content_type="text/html", text=(
            f"<html><head><title>{escape(title)}</title></head><body><p>{escape(text)}</p>"
            f'<a href="/">Start</a></body></html>'))

    served = crawl_records(tmp_path / "w", tmp_path / "run", served=True, seeds=["http://soft.test/"], budget=80,
                           hook=hook)
    probes, soft, missing = _counted([r["verdict"] for r in served], [r["url"] for r in served])
    assert missing == MISSING and probes == 1 and soft == MISSING - 2
    assert not any(r["url"].startswith("http://rows.test/") and r["verdict"] for r in served)
