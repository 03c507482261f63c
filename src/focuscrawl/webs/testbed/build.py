"""Build a test bed: real web applications filled with an offline web's texts, beside a copy of that web
whose pages link into them (``focuscrawl web testbed build``).

The folder it writes:

- ``web/``: the offline web, its pages and labels as they were, plus links from some of its pages into the
  applications (a page links to the wiki page, ticket or post made from its text, half of the time; 1% of its
  pages link to each application's front page), as sites link to their project's wiki, tracker, data and
  blog. A crawl seeded in the web meets the applications only through those links.
- ``apps/NAME/``: each application's data (a Trac environment, a Datasette database, a Pelican site, a
  django-scheduler site and its database).
- ``manifest.json``: each application's host name, front page, how to start it (``serve``) and how many
  items it holds; the virtualenv the applications run in (``apps.py``).
- ``labels.json``: the kind of every URL each application can generate, as rules on its URL scheme
  (``labels.py``); ``relevant.txt``: the applications' content pages made from a text of the topic.
  Both are ground truth, for scoring only: relevant pages of the web itself come from its labels.

A third of the wiki pages, tickets, posts and events (``FOREIGN_SHARE``) are made from texts in German,
French and Spanish (``translations``: Debian's translated package descriptions, downloaded once and cached),
half of them of the topic as far as Debian has them; the calendar's own navigation is in all four languages.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from html import escape
from pathlib import Path

from focuscrawl.html import insert_html
from focuscrawl.urls import normalize_url, site_of
from focuscrawl.webs.store import WEB_FILE, OfflineWeb, _pack, _unpack
from focuscrawl.webs.testbed import app_datasette as datasette
from focuscrawl.webs.testbed import app_pelican as pelican
from focuscrawl.webs.testbed import app_scheduler as scheduler
from focuscrawl.webs.testbed import app_trac as trac
from focuscrawl.webs.testbed.apps import ensure_apps
from focuscrawl.webs.testbed.labels import write_labels
from focuscrawl.webs.testbed.sources import Source, SourcePool
from focuscrawl.webs.testbed.translations import LANGUAGES, ForeignPool, default_index_dir, ensure_translations

MANIFEST_FILE = "manifest.json"
RELEVANT_FILE = "relevant.txt"
HOSTS = {"trac": "trac.testbed.example", "datasette": "data.testbed.example", "pelican": "blog.testbed.example",
         "scheduler": "cal.testbed.example"}
MODULES = {"trac": trac, "datasette": datasette, "pelican": pelican, "scheduler": scheduler}
WHAT = {"trac": "wiki with history and diffs; issue tracker with timeline, queries, reports",
        "datasette": "data browser: facets, filters, sorting, row pages", "pelican": "blog: tags, archives, feeds",
        "scheduler": "calendar: day, week, month and year views, events, iCal; in four languages"}
ANCHORS = {"/wiki/": "wiki", "/ticket/": "ticket", "/posts/": "blog post", "/event/": "event"}
WIKI_PAGES, TICKETS, POSTS, EVENTS, ROWS = 40, 60, 80, 80, 2000
TOPIC_SHARE = 0.5  # of the wiki pages, tickets, posts and events: texts of the topic (the rows: as the web has)
FOREIGN_SHARE = 1 / 3  # of the wiki pages, tickets, posts and events: texts in another language than English
LINK_SHARE = 0.5  # of the items made from a page: linked from it
FRONT_SHARE = 0.01  # of the web's pages: linking to each application's front page (at least 3)


def build_testbed(web_dir: str | Path, out: str | Path, topic: str, *, seed: int = 0,
                  apps_dir: str | Path | None = None, overwrite: bool = False,
                  languages: tuple[str, ...] = LANGUAGES, debian_index: str | Path | None = None,
                  log: Callable[[str], None] = print) -> dict:
    """Write the test bed (module docstring) to ``out``; returns its manifest. ``languages``: those of the
    texts in other languages (none: all English); ``debian_index``: where Debian's index and translations
    are cached (``translations.default_index_dir()`` unless told)."""
    started = time.monotonic()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{out} is not empty; pass --overwrite to replace it")
        shutil.rmtree(out)
    python = ensure_apps(Path(apps_dir) if apps_dir else None, log)
    if languages:
        debian_index = ensure_translations(Path(debian_index or default_index_dir()), tuple(languages), log=log)
    web = OfflineWeb(web_dir)
    try:
        if web.injected():
            raise ValueError(f"{web_dir} is a messy web: build a test bed from a clean one")
        page_urls = [url for url, _labels in sorted(web.labels().items())]
        foreign = ForeignPool(debian_index, tuple(languages), topic, set(page_urls)) if languages else None
        items = fill_apps(python, out / "apps", Texts(SourcePool(web, topic), foreign), seed)
    finally:
        web.close()
    links = links_into_apps(items, set(page_urls), random.Random(f"{seed}:links"))
    copy_web(Path(web_dir), out / "web", links, {"topic": topic, "seed": seed, "hosts": HOSTS})
    relevant = sorted(normalize_url(f"http://{HOSTS[app]}{path}") for app, found in items.items()
                      for source, path in found if source.relevant)
    (out / RELEVANT_FILE).write_text("".join(url + "\n" for url in relevant))
    write_labels(out, {host: app for app, host in HOSTS.items()})
    manifest = {"topic": topic, "seed": seed, "from": str(web_dir), "web": "web", "apps_python": str(python),
                "apps": {app: {"host": HOSTS[app], "what": WHAT[app], "dir": f"apps/{app}",
                               "front": f"http://{HOSTS[app]}{MODULES[app].FRONT}", "argv": MODULES[app].ARGV,
                               "content_pages": len(items[app]),
                               "relevant_pages": sum(source.relevant for source, _ in items[app]),
                               "languages": languages_of(items[app])}
                         for app in HOSTS},
                "languages": {"texts": ["en", *languages], "debian_topic": foreign.debian_topic if foreign else None,
                              "debian_texts": foreign.sizes() if foreign else {}},
                "links_into_apps": len(links), "built_s": round(time.monotonic() - started, 1)}
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


class Texts:
    """The texts items are made from: the web's pages and, for ``FOREIGN_SHARE`` of them, texts in other
    languages (``foreign``; None: English only)."""

    def __init__(self, web: SourcePool, foreign: ForeignPool | None):
        self.web, self.foreign = web, foreign

    def draw(self, rng: random.Random, count: int) -> list[Source]:
        other = round(count * FOREIGN_SHARE) if self.foreign else 0
        drawn = self.web.draw(rng, count - other, TOPIC_SHARE)
        if other:
            drawn += self.foreign.draw(rng, other, TOPIC_SHARE)
            rng.shuffle(drawn)
        return drawn


def languages_of(found: list[tuple[Source, str]]) -> dict[str, int]:
    return dict(sorted(Counter(source.language for source, _path in found).items()))


def fill_apps(python: Path, apps: Path, texts: Texts, seed: int) -> dict[str, list[tuple[Source, str]]]:
    """Fill every application; (source, path) of each content page, per application."""
    rng = {app: random.Random(f"{seed}:{app}") for app in HOSTS}
    return {
        "trac": trac.build(python, apps / "trac", texts.draw(rng["trac"], WIKI_PAGES),
                           texts.draw(rng["trac"], TICKETS), rng["trac"]),
        "datasette": datasette.build(apps / "datasette", texts.web.draw_any(rng["datasette"], ROWS),
                                     rng["datasette"]),
        "pelican": pelican.build(python, apps / "pelican", HOSTS["pelican"], texts.draw(rng["pelican"], POSTS),
                                 rng["pelican"]),
        "scheduler": scheduler.build(python, apps / "scheduler", texts.draw(rng["scheduler"], EVENTS),
                                     rng["scheduler"]),
    }


def links_into_apps(items: dict[str, list[tuple[Source, str]]], pages: set[str], rng: random.Random
                    ) -> list[tuple[str, str, str]]:
    """(web page, application URL, anchor) of each link the web's copy gains (module docstring); a text that
    is no page of the web (most texts in other languages) is linked from nowhere."""
    links = []
    page_urls = sorted(pages)
    for app, found in items.items():
        for source, path in found:
            if rng.random() < LINK_SHARE and source.url in pages:
                kind = next((name for prefix, name in ANCHORS.items() if path.startswith(prefix)), app)
                links.append((source.url, f"http://{HOSTS[app]}{path}", f"{kind}: {source.title}"))
        count = min(len(page_urls), max(3, round(FRONT_SHARE * len(page_urls))))
        for url in rng.sample(page_urls, count):
            links.append((url, f"http://{HOSTS[app]}{MODULES[app].FRONT}", f"{app} {WHAT[app].split(':')[0]}"))
    return links


def copy_web(web_dir: Path, out: Path, links: list[tuple[str, str, str]], testbed: dict) -> None:
    """The web as it is, plus ``links`` at the end of their pages (stored HTML too); each target a row that
    the web itself answers 404 (served, the application's host answers it)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(web_dir / WEB_FILE, out / WEB_FILE)
    db = sqlite3.connect(out / WEB_FILE)
    with db:
        name = json.loads(db.execute("SELECT value FROM meta WHERE key = 'name'").fetchone()[0])
        db.execute("UPDATE meta SET value = ? WHERE key = 'name'", (json.dumps(f"{name}-testbed"),))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('testbed', ?)", (json.dumps(testbed),))
        for src, dst, anchor in links:
            dst = normalize_url(dst)
            db.execute("INSERT OR IGNORE INTO pages (url, host, status) VALUES (?, ?, 404)", (dst, site_of(dst)))
            src_id, html = db.execute("SELECT id, html FROM pages WHERE url = ?", (src,)).fetchone()
            dst_id = db.execute("SELECT id FROM pages WHERE url = ?", (dst,)).fetchone()[0]
            order = db.execute("SELECT COALESCE(MAX(ord) + 1, 0) FROM links WHERE src = ?", (src_id,)).fetchone()[0]
            db.execute("INSERT INTO links VALUES (?, ?, ?, ?)", (src_id, order, dst_id, anchor))
            if html is not None:
                added = insert_html(_unpack(html), body_end=f'<p><a href="{escape(dst)}">{escape(anchor)}</a></p>')
                db.execute("UPDATE pages SET html = ? WHERE id = ?", (_pack(added), src_id))
    db.close()
