"""django-scheduler 0.12 (on Django 5.2) in the test bed: a calendar of events dated over two years, some of
them recurring, with the application's own day, week, month, three-month and year views (each with links to
the period before and after, endlessly), event and occurrence pages, an iCalendar export, an RSS feed and a
JSON API; its navigation in English, German, French and Spanish (Django's ``i18n_patterns``: ``/de/...``,
``/fr/...``, ``/es/...``, with the usual language switcher on every page).

django-scheduler is an application, not a site: a site gives it a settings module, URLs and a ``base.html``.
``SITE`` is that site, as small as a deployment of it can be; it is served by uvicorn (already in the
applications' virtualenv for Datasette) through Django's ASGI handler."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from focuscrawl.webs.testbed.apps import run
from focuscrawl.webs.testbed.sources import Source

FILL_SCRIPT = Path(__file__).with_name("fill_scheduler.py")
ARGV = ["{bin}/uvicorn", "--app-dir", "{dir}", "--host", "{ip}", "--port", "{port}", "--no-access-log",
        "--log-level", "warning", "testbed_site.asgi:application"]
FRONT = "/"
CALENDAR = "events"  # the calendar's slug
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
DAYS = 730  # events dated over two years from START
RECURRING = (("WEEKLY", 0.10, 8, 20), ("MONTHLY", 0.05, 4, 12))  # rule, share of events, fewest and most repeats

SETTINGS = '''\
"""The test bed's calendar site (focuscrawl.webs.testbed.app_scheduler): django-scheduler and what it needs."""
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "a test bed served on loopback only; not a secret"
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "django.contrib.sessions", "schedule"]
MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware", "django.middleware.locale.LocaleMiddleware",
              "django.middleware.common.CommonMiddleware", "django.contrib.auth.middleware.AuthenticationMiddleware"]
ROOT_URLCONF = "testbed_site.urls"
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [BASE_DIR / "templates"],
              "APP_DIRS": True, "OPTIONS": {"context_processors": [
                  "django.template.context_processors.request", "django.template.context_processors.i18n",
                  "django.contrib.auth.context_processors.auth", "testbed_site.languages.language_links"]}}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "calendar.sqlite3"}}
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français"), ("es", "Español")]
USE_I18N = True
USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
'''
URLS = '''\
from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path

urlpatterns = i18n_patterns(path("", include("schedule.urls")), prefix_default_language=False)
'''
ASGI = '''\
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testbed_site.settings")
application = get_asgi_application()
'''
LANGUAGE_LINKS = '''\
"""The language switcher's links: the page asked for, in each of the site's languages."""
from django.conf import settings
from django.urls import translate_url


def language_links(request):
    query = request.META.get("QUERY_STRING", "")
    return {"language_links": [(code, name, translate_url(request.path, code) + (f"?{query}" if query else ""))
                               for code, name in settings.LANGUAGES]}
'''
BASE_HTML = '''\
{% load i18n %}<!DOCTYPE html>
<html lang="{{ LANGUAGE_CODE }}"><head><meta charset="utf-8">
<title>{% block head_title %}{% trans "Calendar" %}{% endblock %} - Test bed events</title></head>
<body>
<nav><a href="{% url "calendar_list" %}">{% trans "Available Calendars" %}</a> |
<a href="{% url "month_calendar" "events" %}">{% trans "Month" %}</a> |
<a href="{% url "week_calendar" "events" %}">{% trans "Week" %}</a> |
<a href="{% url "day_calendar" "events" %}">{% trans "Day" %}</a> |
<a href="{% url "calendar_ical" "1" %}">iCal</a>
<span class="languages">{% for code, name, url in language_links %}
<a href="{{ url }}" hreflang="{{ code }}">{{ name }}</a>{% endfor %}</span>
</nav>
{% block body %}{% endblock %}
</body></html>
'''


def event(source: Source, rng: random.Random) -> dict:
    """An event made from one text: its title, its paragraphs as the description, a date and hour in the two
    years, an hour or three long; some repeat weekly or monthly for a while."""
    start = START + timedelta(days=rng.randrange(DAYS), hours=rng.randint(9, 18))
    item = {"title": source.title[:255], "description": "\n\n".join(source.paragraphs[:8]),
            "start": start.isoformat(), "end": (start + timedelta(hours=rng.randint(1, 3))).isoformat(),
            "rule": None, "until": None}
    draw = rng.random()
    for rule, share, fewest, most in RECURRING:
        if draw < share:
            step = timedelta(weeks=1) if rule == "WEEKLY" else timedelta(days=31)
            item.update(rule=rule, until=(start + step * rng.randint(fewest, most)).isoformat())
            break
        draw -= share
    return item


def write_site(app_dir: Path) -> None:
    site = app_dir / "testbed_site"
    site.mkdir(parents=True, exist_ok=True)
    for name, text in (("__init__.py", ""), ("settings.py", SETTINGS), ("urls.py", URLS), ("asgi.py", ASGI),
                       ("languages.py", LANGUAGE_LINKS)):
        (site / name).write_text(text)
    (app_dir / "templates").mkdir(exist_ok=True)
    (app_dir / "templates" / "base.html").write_text(BASE_HTML)


def build(python: Path, app_dir: Path, events: list[Source], rng: random.Random) -> list[tuple[Source, str]]:
    """Write the site, make its database and fill the calendar: (source, path) of every event page."""
    write_site(app_dir)
    spec = {"calendar": {"name": "Events", "slug": CALENDAR},
            "events": [event(source, rng) for source in events]}
    spec_file = app_dir / "testbed-spec.json"
    spec_file.write_text(json.dumps(spec))
    done = run([str(python), str(FILL_SCRIPT), str(app_dir), str(spec_file)], "filling the calendar")
    ids = json.loads(done.stdout.strip().splitlines()[-1])
    return [(source, f"/event/{number}/") for source, number in zip(events, ids)]
