"""Trap patterns and URL aliases from general evidence (issue 44), each on a small real-shaped web served on
loopback: a calendar whose day views are copies of each other but whose event pages are not, a forum of distinct
threads under one ``?t=N`` pattern, a listing's sort and filter views, and copies one query parameter apart. Each
test also crawls with its rule undone and shows what the rule changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BIRD_WORDS, OTHER_WORDS, crawl_records
from test_defences import page_text

from focuscrawl.engine.defences import TRAP_PATTERN, VIEW_VARIANT
from focuscrawl.engine.defences.views import ViewParameters
from focuscrawl.webs.store import WebWriter

SLOW = pytest.mark.slow  # two served crawls a test
# the listings defence also closes a calendar's day views and a shop's views (they quote the host's pages and link
# to known URLs): off where a test shows what the trap rule does alone (tests/test_listings.py has its own)
NO_LISTINGS = {"listings": {"enabled": False}}

TEMPLATE = ("Events calendar of the town hall. Day view. All times are local. Subscribe to the feed, print this "
            "page, or add the events to your own calendar. Submit an event of your own with the form on the "
            "front page. Recurring this day: the morning market on the square, the choir rehearsal in the "
            "church hall, and the evening walk along the river with the local guides.")


def _calendar(directory: Path, days: int = 300, events: int = 60) -> Path:
    """A calendar as django-scheduler makes one: day views (a template, the same recurring events and a line of
    the day's own: not near-duplicates, but each mostly its family's text) linking to the next and previous day,
    to a new occurrence page of each recurring event (a copy of that event's page, at a new URL each day) and to
    one event of its own; an event list links to every event,
    whose pages each carry their own text (off the crawl's topic)."""
    with WebWriter(directory, {"name": "calendar"}) as w:
        w.add_page("http://cal.test/", title="town", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        w.add_link("http://cal.test/", "http://cal.test/calendar/day/1/", "today")
        w.add_link("http://cal.test/", "http://cal.test/events/", "all events")
        w.add_page("http://cal.test/events/", title="events", text=page_text(OTHER_WORDS, 500), labels=["other"])
        for k in range(1, events + 1):
            w.add_page(f"http://cal.test/event/{k}/", title=f"event {k}", text=page_text(OTHER_WORDS, k),
                       labels=["other"])
            w.add_link("http://cal.test/events/", f"http://cal.test/event/{k}/", f"event {k}")
            w.add_link(f"http://cal.test/event/{k}/", "http://cal.test/events/", "all events")
        for d in range(1, days + 1):
            day = f"http://cal.test/calendar/day/{d}/"
            own = " ".join(f"d{d}w{k}" for k in range(12))  # the day's own event, a line of its own
            w.add_page(day, title=f"day {d}", text=f"{TEMPLATE} Day {d}: {own}.", labels=["other"])
            for step in (1, -1):
                if 1 <= d + step <= days:
                    w.add_link(day, f"http://cal.test/calendar/day/{d + step}/", "next" if step > 0 else "previous")
            for e in range(3):
                occurrence = f"http://cal.test/occurrence/{e}/{d}/"
                w.add_link(day, occurrence, f"recurring {e}")
                w.add_page(occurrence, title=f"recurring {e}", labels=["other"],
                           text=f"{TEMPLATE.split('.')[0]} occurrence. " + page_text(OTHER_WORDS, 100 + e, 60))
                w.add_link(occurrence, day, "back to the day")
            w.add_link(day, f"http://cal.test/event/{d % events + 1}/", "an event")
    return directory


def _fetched(records: list[dict], part: str) -> list[dict]:
    return [r for r in records if part in r["url"]]


def _skipped(records: list[dict], why: str) -> list[str]:
    return [url for r in records for url, reason in r["skipped"] if reason == why]


@SLOW
def test_a_calendar_whose_days_are_copies_closes_and_its_event_pages_stay_open(tmp_path):
    web = _calendar(tmp_path / "web")
    seeds = ["http://cal.test/"]
    on = crawl_records(web, tmp_path / "on", served=True, seeds=seeds, budget=250, defences=NO_LISTINGS)
    days, events = _fetched(on, "/calendar/day/"), _fetched(on, "/event/")
    assert len(events) == 60 and not any("/event/" in url for url in _skipped(on, TRAP_PATTERN))
    assert len(days) <= 25 and any(r["verdict"] == TRAP_PATTERN for r in days)
    assert len(_fetched(on, "/occurrence/")) <= 25
    # undone: each day links to new occurrences (another pattern), so the days never run dry
    off = crawl_records(web, tmp_path / "off", served=True, seeds=seeds, budget=250,
                        defences={"traps": {"min_pattern_new": 0, "distinct_records": False}, **NO_LISTINGS})
    assert len(_fetched(off, "/calendar/day/")) > 60


def _forum(directory: Path, threads: int = 80, on_topic: tuple[int, ...] = (70, 71, 72)) -> Path:
    """A forum: every thread under one pattern (``showthread.php?t=N``), each with its own text, mostly off the
    crawl's topic; each links to the next two threads, so the on-topic ones lie deep in the chain."""
    with WebWriter(directory, {"name": "forum"}) as w:
        w.add_page("http://forum.test/", title="forum", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        w.add_link("http://forum.test/", "http://forum.test/showthread.php?t=1", "latest")
        for t in range(1, threads + 1):
            url = f"http://forum.test/showthread.php?t={t}"
            birds = t in on_topic
            w.add_page(url, title=f"thread {t}", text=page_text(BIRD_WORDS if birds else OTHER_WORDS, t),
                       labels=["birds" if birds else "other"])
            for n in (t + 1, t + 2):
                if n <= threads:
                    w.add_link(url, f"http://forum.test/showthread.php?t={n}", f"thread {n}")
            w.add_link(url, "http://forum.test/", "forum")
    return directory


@SLOW
def test_one_id_parameter_over_distinct_records_is_not_a_trap(tmp_path):
    web = _forum(tmp_path / "web")
    seeds = ["http://forum.test/"]
    on = crawl_records(web, tmp_path / "on", served=True, seeds=seeds, budget=120)
    assert len(_fetched(on, "showthread.php")) == 80 and not _skipped(on, TRAP_PATTERN)
    assert {f"http://forum.test/showthread.php?t={t}" for t in (70, 71, 72)} <= {r["url"] for r in on}
    # undone: off-topic threads that link only to other threads yield nothing, and the pattern closes at 20
    off = crawl_records(web, tmp_path / "off", served=True, seeds=seeds, budget=120,
                        defences={"traps": {"distinct_records": False}})
    assert _skipped(off, TRAP_PATTERN) and len(_fetched(off, "showthread.php")) <= 25
    assert "http://forum.test/showthread.php?t=70" not in {r["url"] for r in off}


SORTS, COLOURS, SIZES = ("", "name", "price", "date"), ("", "red", "green", "blue"), ("", "s", "m", "l")


def _shop(directory: Path, items: int = 30) -> Path:
    """A listing of items with sort and filter views: every combination of a sort order, a colour and a size is a
    view listing the matching items (all of them, reordered, or a part), and links to every other view."""
    def view(sort: str, colour: str, size: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in (("colour", colour), ("size", size), ("sort", sort)) if v)
        return "http://shop.test/items" + (f"?{query}" if query else "")

    with WebWriter(directory, {"name": "shop"}) as w:
        w.add_page("http://shop.test/", title="shop", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        w.add_link("http://shop.test/", view("", "", ""), "all items")
        combos = [(s, c, z) for s in SORTS for c in COLOURS for z in SIZES]
        for s, c, z in combos:
            chosen = [k for k in range(items) if (not c or k % 3 == COLOURS.index(c) - 1)
                      and (not z or k % 3 == (SIZES.index(z) + k // 3) % 3)]
            order = sorted(chosen, key=lambda k: (k * (SORTS.index(s) + 1)) % items)
            w.add_page(view(s, c, z), title="items", labels=["other"],
                       text="Items of the shop. " + " ".join(f"item {k} in stock." for k in order))
            for k in order:
                w.add_link(view(s, c, z), f"http://shop.test/item/{k}", f"item {k}")
            for other in combos:
                if other != (s, c, z):
                    w.add_link(view(s, c, z), view(*other), "view")
        for k in range(items):
            w.add_page(f"http://shop.test/item/{k}", title=f"item {k}", text=page_text(OTHER_WORDS, k),
                       labels=["other"])
            w.add_link(f"http://shop.test/item/{k}", view("", "", ""), "all items")
    return directory


@SLOW
def test_a_listings_sort_and_filter_views_are_variants_not_new_content(tmp_path):
    views = ViewParameters(support=1)
    assert views.observe("http://s.test/l?sort=a", ["http://s.test/i/1", "http://s.test/i/2", "http://s.test/i/3"]) \
        is None
    # page 2 of a listing lists other records: ``page`` is not a view parameter
    assert views.observe("http://s.test/l?page=2", ["http://s.test/i/4", "http://s.test/i/5", "http://s.test/i/6"]) \
        is None
    # a link that repeats the view's own values (its export) echoes the view, not what it lists
    assert views.observe("http://s.test/l?sort=b", ["http://s.test/i/3", "http://s.test/i/2", "http://s.test/i/1",
                                                    "http://s.test/l.json?sort=b"]) == "s.test/l"
    assert views.params == {"s.test/l": {"sort"}}
    assert views.base_of("http://s.test/l?page=2&sort=c") == ("http://s.test/l?page=2", "http://s.test/l")
    assert views.base_of("http://s.test/l.json?sort=c") == ("http://s.test/l.json", "http://s.test/l.json")  # echo
    assert views.base_of("http://s.test/l?page=2") is None

    web = _shop(tmp_path / "web")
    seeds = ["http://shop.test/"]
    on = crawl_records(web, tmp_path / "on", served=True, seeds=seeds, budget=120)
    assert len(_fetched(on, "/items")) <= 12 and len(_skipped(on, VIEW_VARIANT)) > 30
    assert len(_fetched(on, "/item/")) == 30
    # undone: the views are fetched until their pattern runs dry
    off = crawl_records(web, tmp_path / "off", served=True, seeds=seeds, budget=120,
                        defences={"traps": {"view_support": 0}, **NO_LISTINGS})
    assert len(_fetched(off, "/items")) >= 20 and not _skipped(off, VIEW_VARIANT)


def _copies(directory: Path, articles: int = 10) -> Path:
    """news.test's articles, each also under ``?from=home`` (the same page) and copied on another registered
    domain (other.test, the same path and text); the hub links to all three forms."""
    with WebWriter(directory, {"name": "copies"}) as w:
        w.add_page("http://news.test/", title="news", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        for i in range(1, articles + 1):
            for url in (f"http://news.test/a{i}", f"http://news.test/a{i}?from=home", f"http://other.test/a{i}"):
                w.add_page(url, title=f"a{i}", text=page_text(BIRD_WORDS, i), labels=["birds"])
                w.add_link("http://news.test/", url, f"article {i}")
    return directory


@SLOW
def test_an_ignorable_parameter_is_learned_from_copies_and_no_rule_crosses_registered_domains(tmp_path):
    web = _copies(tmp_path / "web")
    seeds = ["http://news.test/"]
    on = crawl_records(web, tmp_path / "on", served=True, seeds=seeds, budget=60)
    by_rule = [(url, why) for r in on for url, why in r["skipped"] if why.startswith("duplicate of ")]
    assert len(by_rule) == 10 - 3 and all(url.endswith("?from=home") for url, _ in by_rule)
    assert all(why == "duplicate of " + url.removesuffix("?from=home") for url, why in by_rule)
    other = _fetched(on, "other.test")  # another registered domain: every copy fetched, each caught after its fetch
    assert len(other) == 10 and all(r["verdict"].startswith("duplicate of http://news.test/") for r in other)
    # undone: every ?from=home copy costs its fetch
    off = crawl_records(web, tmp_path / "off", served=True, seeds=seeds, budget=60,
                        defences={"url_aliases": {"parameters": False}})
    assert len(_fetched(off, "?from=home")) == 10


def test_alias_rules_from_evidence_keep_to_one_registered_domain():
    from focuscrawl.engine.defences.aliases import UrlAliases, UrlAliasSettings, rule_of

    assert rule_of("http://a.test/x?ref=1", "http://a.test/x") == ("param", ("a.test", "ref"))
    assert rule_of("http://a.test/x", "http://a.test/x?lang=en") == ("param", ("a.test", "lang"))
    assert rule_of("http://a.test/x?p=1", "http://a.test/x?p=2") is None  # another value: maybe another page
    assert rule_of("http://a.test/About.html", "http://a.test/about.html") == ("lower", ("a.test",))
    assert rule_of("http://m.a.test/x", "http://a.test/x") == ("host", (("http", "m.a.test"), ("http", "a.test")))
    assert rule_of("http://m.b.test/x", "http://a.test/x") is None  # two registered domains: never a rule
    assert rule_of("http://a.co.uk/x", "http://b.co.uk/x") is None
    off = UrlAliasSettings(parameters=False, lower_case=False, host_prefixes=False)
    assert rule_of("http://a.test/x?ref=1", "http://a.test/x", off) is None
    assert rule_of("http://m.a.test/x", "http://a.test/x", off) is None
    aliases = UrlAliases(UrlAliasSettings(min_support=2))
    for i in range(2):
        aliases.learn(f"http://a.test/P{i}.html", f"http://a.test/p{i}.html")
        aliases.learn(f"http://a.test/q{i}?print=1", f"http://a.test/q{i}")
    assert aliases.rewrite("http://a.test/News/R.html?print=1&id=3") == "http://a.test/news/r.html?id=3"
    assert aliases.rewrite("http://b.test/News/R.html?print=1") == "http://b.test/News/R.html?print=1"
