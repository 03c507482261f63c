"""Pelican 4.12 in the test bed: a blog of posts with tags, a category, an author and a date each, built into
static pages (posts, tag, category and author pages, yearly and monthly archives, paginated indexes, Atom
feeds) and served by a static file server, as a blog made with Pelican is."""

from __future__ import annotations

import html
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from focuscrawl.webs.testbed.apps import run
from focuscrawl.webs.testbed.sources import Source

ARGV = ["{python}", "-m", "http.server", "--bind", "{ip}", "--directory", "{dir}/output", "{port}"]
FRONT = "/"
AUTHORS = ("Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra")
START = datetime(2021, 1, 1, tzinfo=timezone.utc)
LANG = "en"  # the blog's DEFAULT_LANG
CONFIG = """\
SITENAME = "Test bed blog"
SITEURL = {siteurl!r}
RELATIVE_URLS = False
TIMEZONE = "UTC"
DEFAULT_LANG = {lang!r}
DEFAULT_PAGINATION = 10
ARTICLE_URL = ARTICLE_SAVE_AS = "posts/{{date:%Y}}/{{date:%m}}/{{slug}}.html"
# A post in another language than DEFAULT_LANG: Pelican's "{{slug}}-{{lang}}.html", in the same folders.
ARTICLE_LANG_URL = ARTICLE_LANG_SAVE_AS = "posts/{{date:%Y}}/{{date:%m}}/{{slug}}-{{lang}}.html"
YEAR_ARCHIVE_URL = YEAR_ARCHIVE_SAVE_AS = "posts/{{date:%Y}}/index.html"
MONTH_ARCHIVE_URL = MONTH_ARCHIVE_SAVE_AS = "posts/{{date:%Y}}/{{date:%m}}/index.html"
FEED_ALL_ATOM = "feeds/all.atom.xml"
CATEGORY_FEED_ATOM = "feeds/{{slug}}.atom.xml"
TAG_FEED_ATOM = "feeds/tag-{{slug}}.atom.xml"
LINKS = ()
SOCIAL = ()
# The theme's menu: the archives and indexes a blog's sidebar links to (notmyidea links none of them itself).
MENUITEMS = {menu!r}
"""


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "post"


def post(source: Source, date: datetime, author: str, tags: list[str]) -> str:
    """A post in Pelican's HTML reader format: metadata in <meta> tags, the body as it will show."""
    body = "\n".join(f"<p>{html.escape(paragraph)}</p>" for paragraph in source.paragraphs[:12])
    meta = {"date": date.strftime("%Y-%m-%d %H:%M"), "category": source.area, "tags": ", ".join(tags),
            "author": author, "slug": slug(source.title), "lang": source.language}
    head = "\n".join(f'<meta name="{name}" content="{html.escape(value)}" />' for name, value in meta.items())
    return f"<html><head><title>{html.escape(source.title)}</title>\n{head}\n</head><body>\n{body}\n</body></html>\n"


def build(python: Path, app_dir: Path, host: str, posts: list[Source], rng: random.Random
          ) -> list[tuple[Source, str]]:
    """Write the posts and the configuration, run ``pelican``: (source, path) of every post page."""
    content = app_dir / "content"
    content.mkdir(parents=True, exist_ok=True)
    items, slugs = [], set()
    for number, source in enumerate(posts):
        if slug(source.title) in slugs:
            continue
        slugs.add(slug(source.title))
        date = START + timedelta(days=rng.uniform(0, 1000))
        tags = sorted({source.subject, *rng.sample(("notes", "reading", "links", "review", "draft ideas"), 2)})
        (content / f"post-{number:04d}.html").write_text(post(source, date, rng.choice(AUTHORS), tags))
        suffix = "" if source.language == LANG else f"-{source.language}"
        items.append((source, f"/posts/{date:%Y}/{date:%m}/{slug(source.title)}{suffix}.html"))
    years = sorted({path.split("/")[2] for _, path in items})
    menu = [("Archives", "/archives.html"), ("Tags", "/tags.html"), ("Categories", "/categories.html"),
            ("Authors", "/authors.html")] + [(year, f"/posts/{year}/index.html") for year in years]
    (app_dir / "pelicanconf.py").write_text(CONFIG.format(siteurl=f"http://{host}", menu=tuple(menu), lang=LANG))
    run([str(python), "-m", "pelican", str(content), "-o", str(app_dir / "output"), "-s",
         str(app_dir / "pelicanconf.py"), "-q"], "pelican")
    return items
