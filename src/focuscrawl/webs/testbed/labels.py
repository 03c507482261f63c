"""Ground truth of the test bed: the kind of every URL an application generates, from its URL scheme alone.

Each application has its rules: (kind, regular expression on the URL's path and query) in order, the first
that matches names the kind; a URL no rule matches is ``other``. The builder writes them into the test bed's
``labels.json`` (``{host: {"app": name, "rules": [[kind, pattern], ...]}}``); scoring code reads them back with
``UrlLabeller``. The crawler never sees them: they are ground truth, like an offline web's labels.

The kinds, shared by the applications so that a benchmark can add them up:

- ``content``: a page of text filled from one text (a wiki page, a ticket, a blog post, a calendar's event);
- ``history``, ``version``, ``diff``: a page's list of revisions, an old revision, the difference of two;
- ``timeline``: what changed, day by day (Trac's timeline, endless in both directions);
- ``calendar``: a calendar's day, week, month, three-month or year view (endless in both directions);
- ``occurrence``: one date of an event (a one-time event's only date, or each date of a recurring one),
  showing the event's text again;
- ``translation``: a content page again with the application's navigation in another language (the same
  text: the calendar serves every page under ``/de/``, ``/fr/`` and ``/es/`` too);
- ``query``: a query, report, search, facet, filter, sort or next-page view of a listing or table;
- ``listing``: an index, a table's first page, a tag, category or author page, a roadmap or milestone;
- ``archive``: a listing by date (a blog's archives, a year's or a month's posts);
- ``row``: a data browser's page of one table row (a line of text);
- ``export``: the same data in another format (CSV, RSS, Atom, JSON, plain text);
- ``account``: login, preferences, registration;
- ``help``: the application's own manual and about pages;
- ``asset``: style sheets, scripts, images.

For the defences' target (issue 44: "at most 5% of the budget on generated variants and thin rows") the kinds fall
into three groups, defined here once (``KIND_GROUPS``):

- ``content``: the pages a topic's reader wants;
- *generated variants and thin rows* (``GENERATED_KINDS``): what an application makes from its content, per page,
  per date or per parameter, so that their number grows with the content times the views and a crawler can spend
  any budget there: revisions (history, version, diff), date views (timeline, calendar, archive), a content's text
  again (occurrence, translation), a listing's views (query: facets, sorts, searches, next pages), the data in
  another format (export), a table's single rows (row: a line of text each), and forms (account: login, and an
  edit, cancel or delete form per event or ticket);
- *site pages* (``SITE_KINDS``): listings (an index, a table's first page, a tag, category or author page, a
  roadmap: one per section or tag, the way a crawler reaches content, not multiplied by views), the
  application's manual (help), assets, and URLs no rule names (other). Not counted against the target, and
  reported beside it: a crawl that spends its budget there is not trapped, but does not find content either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

KINDS = ("content", "history", "version", "diff", "timeline", "calendar", "occurrence", "translation", "query",
         "listing", "archive", "row", "export", "account", "help", "asset", "other")
GENERATED_KINDS = frozenset({"history", "version", "diff", "timeline", "calendar", "archive", "occurrence",
                             "translation", "query", "export", "row", "account"})
SITE_KINDS = frozenset({"listing", "help", "asset", "other"})
KIND_GROUPS = {"content": frozenset({"content"}), "generated": GENERATED_KINDS, "site": SITE_KINDS}
LABELS_FILE = "labels.json"

# Trac (a wiki and an issue tracker in one). The test bed's wiki pages live under /wiki/Topics/.
TRAC_RULES = [
    ("asset", r"^/(chrome|pygments)/"),
    ("account", r"^/(login|logout|prefs|register|newticket)\b"),
    ("export", r"[?&]format=(csv|tab|rss|txt)\b|^/search/opensearch|^/(wiki|ticket)/.*[?&]format="),
    ("diff", r"[?&]action=diff\b|^/diff\b"),
    ("history", r"[?&]action=history\b"),
    ("version", r"^/(wiki|ticket)/[^?]*\?(.*&)?(version|cversion|cnum_hist)="),
    ("content", r"^/wiki/Topics/[^?]+$|^/ticket/\d+$"),
    ("timeline", r"^/timeline\b"),
    ("query", r"^/(query|report|search)\b"),
    ("listing", r"^/(roadmap|milestone|wiki/TitleIndex|wiki/RecentChanges)\b|^/$|^/wiki/?$|^/wiki/Topics/?$"),
    ("help", r"^/(about|wiki)\b"),
]
# Datasette (a data browser): one database ``testbed`` with the table ``pages``.
DATASETTE_RULES = [
    ("asset", r"^/-/static"),
    ("export", r"\.(json|csv)(\?|$)|[?&]_format="),
    ("help", r"^/-/"),
    ("row", r"^/[^/?]+/[^/?]+/[^/?]+$"),
    ("query", r"^/[^/?]+(/[^/?]+)?\?|^/[^/?]+/-/query"),
    ("listing", r"^/([^/?]+(/[^/?]+)?)?$"),
]
# Pelican (a blog, served as static files): posts at /posts/YYYY/MM/SLUG.html.
PELICAN_RULES = [
    ("asset", r"^/theme/"),
    ("export", r"^/feeds/|\.(xml|atom|rss)$"),
    ("archive", r"^/(archives\.html|posts/\d{4}/(\d{2}/)?(index\.html)?$)"),
    ("content", r"^/posts/\d{4}/\d{2}/[^/]+\.html$"),
    ("listing", r"^/((tag|category|author)/[^/]+\.html|(tags|categories|authors)\.html|index\d*\.html)?$"),
]
# django-scheduler (a calendar), its URLs (schedule/urls.py) under an optional language prefix (i18n_patterns).
_LANG = r"^(/(de|fr|es))?"
SCHEDULER_RULES = [
    ("asset", r"^/static/"),
    ("export", _LANG + r"/(ical|feed|api)\b"),
    ("account", _LANG + r"/(event/(create|edit|delete)|occurrence/(cancel|edit))/|^/(accounts|admin)/"),
    ("translation", r"^/(de|fr|es)/event/\d+/$"),
    ("content", r"^/event/\d+/$"),
    ("occurrence", _LANG + r"/occurrence/\d+/"),
    ("calendar", _LANG + r"/(calendar/(year|tri_month|compact_month|month|week|daily)/|fullcalendar/)"),
    ("listing", _LANG + r"/(calendar/[-\w]+/)?(\?.*)?$"),
]
RULES = {"trac": TRAC_RULES, "datasette": DATASETTE_RULES, "pelican": PELICAN_RULES, "scheduler": SCHEDULER_RULES}


def path_and_query(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class UrlLabeller:
    """The kind of a test bed URL: ``{host: (app, rules)}`` read from ``labels.json`` (or given)."""

    def __init__(self, hosts: dict[str, tuple[str, list[tuple[str, str]]]]):
        self._hosts = {host: (app, [(kind, re.compile(pattern)) for kind, pattern in rules])
                       for host, (app, rules) in hosts.items()}

    @classmethod
    def load(cls, testbed_dir: str | Path) -> UrlLabeller:
        data = json.loads((Path(testbed_dir) / LABELS_FILE).read_text())
        return cls({host: (entry["app"], [tuple(rule) for rule in entry["rules"]]) for host, entry in data.items()})

    def app(self, url: str) -> str | None:
        """The application serving ``url`` (None: not an application's host)."""
        entry = self._hosts.get((urlsplit(url).hostname or "").lower())
        return entry[0] if entry else None

    def kind(self, url: str) -> str | None:
        """The kind of an application's URL (None: not an application's host)."""
        entry = self._hosts.get((urlsplit(url).hostname or "").lower())
        if entry is None:
            return None
        target = path_and_query(url)
        return next((kind for kind, pattern in entry[1] if pattern.search(target)), "other")


def write_labels(testbed_dir: Path, hosts: dict[str, str]) -> None:
    """``labels.json`` for ``hosts`` (host -> application name)."""
    data = {host: {"app": app, "rules": [list(rule) for rule in RULES[app]]} for host, app in hosts.items()}
    (testbed_dir / LABELS_FILE).write_text(json.dumps(data, indent=1) + "\n")
