"""The engine's defences against the messy web (focuscrawl.engine.defences), each on a small web built here.

Each defence catches its pathology and says so: in the step's event (``verdict``, ``skipped``), in pages.jsonl and
the state store, and in the dashboard's counts. A caught page still answers its selection, with relevance 0,
reward 0, an empty page and no links, and the ground-truth judge is not asked about it. A clean web crawls as
without the defences, and a crawl with them resumes exactly.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import BIRD_WORDS, OTHER_WORDS, _text, tiny_crawl

from focuscrawl.bench.protocol import GroundTruth
from focuscrawl.builder import build_crawl
from focuscrawl.config import BenchConfig, CrawlConfig, RunSettings, load_config
from focuscrawl.engine.defences import HOST_FAILING, PROBE, SOFT_404, TRAP_PATTERN, DefenceSettings, url_patterns
from focuscrawl.topic.topic_dir import write_topic_dir
from focuscrawl.types import Link, Page, TopicInputs
from focuscrawl.urls import normalize_url, strip_tracking_and_session
from focuscrawl.webs.store import OfflineWeb, WebWriter

TOPIC = TopicInputs("birds", ["bird", "nest"], [_text(BIRD_WORDS, i) for i in range(6)]
                    + [_text(OTHER_WORDS, i) for i in range(6)], [1] * 6 + [0] * 6)
OFF = DefenceSettings.off()


def page_text(words: str, i: int, unique: int = 300) -> str:
    """A text of the topic's words and ``unique`` words of this page alone: distinct from every other page's."""
    return _text(words, i) + " " + " ".join(f"p{i}w{k}" for k in range(unique))


class Wrapped:
    """An offline web plus what the store cannot hold in this test: canonical links, failing and soft-404 hosts."""

    def __init__(self, web: OfflineWeb, canonical: dict[str, str] | None = None, failing: tuple[str, ...] = (),
                 soft_404: tuple[str, ...] = ()):
        self.web, self.canonical, self.failing, self.soft = web, canonical or {}, failing, soft_404

    def fetch(self, url: str) -> Page:
        host = urlsplit(url).hostname
        if host in self.failing:
            return Page(url=url, final_url=url, status=503, error="service unavailable")
        page = self.web.fetch(url)
        if host in self.soft and page.status == 404:
            path = urlsplit(url).path
            return Page(url=url, final_url=url, status=200, title="Page not found",
                        text=f"Sorry, the page {path} could not be found on this site. It may have moved, or the "
                             "address may be mistyped. Try the home page, or one of the pages below.",
                        outlinks=[Link(f"http://{host}/", "Home")])
        page.canonical = self.canonical.get(url)
        return page

    def html(self, url: str):
        return self.web.html(url)


class AsyncFetcher:
    """``Wrapped`` with a fetcher's interface, for the run-folder crawls of ``focuscrawl.crawl.Crawler``."""

    def __init__(self, web: Wrapped):
        self.web = web

    async def fetch(self, url: str) -> Page:
        return self.web.fetch(url)

    async def aclose(self) -> None:
        pass


class Spy:
    """Every observation the policy gets, and whether each selection came back exactly once."""

    def __init__(self, policy):
        self.observations = []
        self.selected = []
        select, observe = policy.select, policy.observe

        def spy_select():
            selection = select()
            if selection is not None:
                self.selected.append(selection)
            return selection

        def spy_observe(observation):
            self.observations.append(observation)
            return observe(observation)

        policy.select, policy.observe = spy_select, spy_observe


def crawl(web, seeds, *, budget=60, strategy="bfs", defences: DefenceSettings | None = None, relevant=(),
          seed=0):
    """Crawl ``web`` to the end of the budget; returns (events, engine, spy)."""
    settings = RunSettings(budget=budget, seed=seed, reward_model="tfidf",
                           defences=defences if defences is not None else DefenceSettings())
    events = []
    built = build_crawl(settings, strategy, TOPIC, list(seeds), judge=GroundTruth("birds", frozenset(relevant)),
                        sinks=[events.append])
    spy = Spy(built.policy)
    built.engine.run(web)
    return events, built.engine, spy


def by_url(events):
    return {e.url: e for e in events}


# -- URL hygiene -------------------------------------------------------------------------------------------------
def test_tracking_and_session_parameters_leave_urls_and_nothing_else_does():
    clean = strip_tracking_and_session
    assert clean(normalize_url("http://a.test/x;jsessionid=0A1B2C3D4E?utm_source=news&id=3")) == \
        "http://a.test/x?id=3"
    assert clean("http://a.test/p?fbclid=IwAR0abc&gclid=Cj0K1&page=2") == "http://a.test/p?page=2"
    assert clean("http://a.test/p?PHPSESSID=9f8e7d6c5b&q=birds") == "http://a.test/p?q=birds"
    assert clean("http://a.test/p?sid=8f14e45fceea167a5a36dedd4bea2543") == "http://a.test/p"
    # a short sid is a content id (a story number), and courlan's looser rules (keywords, source) stay out
    for kept in ("http://a.test/story?sid=12", "http://a.test/QueryNF?keywords=Amy+Briggs",
                 "http://a.test/fwais.pl?Source=dri_public", "http://a.test/profile?uid=7"):
        assert clean(kept) == kept


def test_copies_under_tracking_and_session_urls_are_one_url(tmp_path):
    variants = ["http://a.test/p1?utm_medium=email&utm_source=news", "http://a.test/p2;jsessionid=0A1B2C3D4E5F",
                "http://a.test/p3?fbclid=IwAR0abcdef"]
    with WebWriter(tmp_path / "w", {"name": "tracking"}) as w:
        w.add_page("http://a.test/", title="hub", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        for i, variant in enumerate(variants, start=1):
            w.add_link("http://a.test/", normalize_url(variant), f"page {i}")
            w.add_link("http://a.test/", f"http://a.test/p{i}", f"page {i}")
            for url in (f"http://a.test/p{i}", normalize_url(variant)):  # the copy answers as its original does
                w.add_page(url, title=f"p{i}", text=page_text(BIRD_WORDS, i), labels=["birds"])
    web = OfflineWeb(tmp_path / "w")
    on, _, _ = crawl(web, ["http://a.test/"])
    assert [e.url for e in on] == ["http://a.test/", "http://a.test/p1", "http://a.test/p2", "http://a.test/p3"]
    off, _, _ = crawl(web, ["http://a.test/"], defences=OFF)
    assert len(off) == 7, "without the defences each copy costs a fetch"


# -- near-duplicates -------------------------------------------------------------------------------------------
def _copies_web(directory: Path) -> Path:
    """A hub linking to an article and to its print version (the text plus a banner), which alone links to an
    otherwise unreachable page."""
    with WebWriter(directory, {"name": "copies"}) as w:
        w.add_page("http://a.test/", title="hub", text=page_text(OTHER_WORDS, 0), labels=["other"])
        w.add_link("http://a.test/", "http://a.test/article", "article")
        w.add_link("http://a.test/", "http://a.test/article?print=1", "print")
        w.add_page("http://a.test/article", title="article", text=page_text(BIRD_WORDS, 1), labels=["birds"])
        w.add_page("http://a.test/article?print=1", title="article",
                   text="Printed from a.test on 3 May 2001. " + page_text(BIRD_WORDS, 1), labels=["birds"])
        w.add_link("http://a.test/article?print=1", "http://a.test/only-from-the-copy", "more birds")
        w.add_page("http://a.test/only-from-the-copy", title="more", text=page_text(BIRD_WORDS, 2), labels=["birds"])
    return directory


def test_a_near_duplicate_gives_no_reward_no_evidence_and_no_ground_truth(tmp_path):
    web = OfflineWeb(_copies_web(tmp_path / "w"))
    relevant = ("http://a.test/article", "http://a.test/article?print=1", "http://a.test/only-from-the-copy")
    events, engine, spy = crawl(web, ["http://a.test/"], relevant=relevant)
    assert [e.url for e in events] == ["http://a.test/", "http://a.test/article", "http://a.test/article?print=1"]
    copy = events[2]
    assert copy.verdict == "duplicate of http://a.test/article"
    assert (copy.relevance, copy.reward, copy.relevant) == (0.0, 0.0, False)
    assert events[1].reward == 1.0 and events[1].relevant
    assert engine.stats.relevant == 1, "the judge is not asked about a copy"
    seen = spy.observations[2]
    assert seen.selection is spy.selected[2] and len(spy.observations) == len(spy.selected) == 3
    assert (seen.links, seen.page.text, seen.page.title, seen.page.outlinks) == ([], "", "", [])
    off, off_engine, _ = crawl(web, ["http://a.test/"], defences=OFF, relevant=relevant)
    assert [e.verdict for e in off] == [""] * 4 and off_engine.stats.relevant == 3


# -- rel=canonical ---------------------------------------------------------------------------------------------
def test_rel_canonical_names_the_original(tmp_path):
    web = OfflineWeb(_copies_web(tmp_path / "w"))
    named = {"http://a.test/article?print=1": "http://a.test/article"}
    only_canonical = DefenceSettings(near_duplicates={"enabled": False})
    # the original first: the copy naming it is its duplicate
    events, _, _ = crawl(Wrapped(web, canonical=named), ["http://a.test/"], defences=only_canonical)
    assert by_url(events)["http://a.test/article?print=1"].verdict == "duplicate of http://a.test/article"
    # the copy first: the original is not taken as fetched (a canonical is no verdict on a URL not fetched); when
    # fetched, its text agreeing with the copy's that named it, it is the copy's duplicate (the first form wins)
    events, engine, _ = crawl(Wrapped(web, canonical=named), ["http://a.test/article?print=1", "http://a.test/"],
                              defences=only_canonical)
    assert events[0].url == "http://a.test/article?print=1" and events[0].verdict == "" and events[0].reward == 1.0
    assert "http://a.test/only-from-the-copy" in by_url(events)
    assert by_url(events)["http://a.test/article"].verdict == "duplicate of http://a.test/article?print=1"
    # a site naming one page as every page's canonical (a common mistake) loses nothing: the texts disagree
    home = {"http://a.test/article": "http://a.test/", "http://a.test/article?print=1": "http://a.test/"}
    events, _, _ = crawl(Wrapped(web, canonical=home), ["http://a.test/"], defences=only_canonical)
    assert [e.verdict for e in events] == [""] * 4


# -- URL aliases learned from copies ---------------------------------------------------------------------------
def test_url_rules_shown_by_copies_rewrite_the_urls_met_after_them():
    from focuscrawl.engine.defences.aliases import UrlAliases, UrlAliasSettings, rule_of

    assert rule_of("http://www.a.test/x", "https://a.test/x") == ("host", (("http", "www.a.test"), ("https", "a.test")))
    assert rule_of("http://a.test/d/index.html", "http://a.test/d/") == ("tail", ("a.test", "/", "index.html", ""))
    assert rule_of("http://a.test/x", "http://b.test/x") is None  # other sites: no alias
    assert rule_of("http://a.test/x", "http://a.test/y") is None
    aliases = UrlAliases(UrlAliasSettings(min_support=2))
    assert not aliases.learn("http://a.test/d/index.html", "http://a.test/d/")  # one pair shows nothing yet
    assert aliases.rewrite("http://a.test/e/index.html") == "http://a.test/e/index.html"
    assert aliases.learn("http://a.test/e/index.html", "http://a.test/e/")
    assert aliases.rewrite("http://a.test/f/index.html") == "http://a.test/f/"
    assert aliases.rewrite("http://a.test/f/page.html") == "http://a.test/f/page.html"
    assert aliases.rewrite("http://other.test/f/index.html") == "http://other.test/f/index.html"
    for i in range(2):
        aliases.learn(f"https://a.test/p{i}", f"http://a.test/p{i}")
    assert aliases.rewrite("https://a.test/g/index.html") == "http://a.test/g/"
    for i in range(3):  # the reverse of a rule in use is never learned: no loop
        assert not aliases.learn(f"http://a.test/q{i}", f"https://a.test/q{i}")
    # a host alias that makes a not-found URL is retired for good: a partial mirror met first does not swallow its site
    for i in range(2):
        aliases.learn(f"http://b.test/p{i}", f"http://www.b.test/p{i}")
    assert aliases.rewrite("http://b.test/only-here") == "http://www.b.test/only-here"
    assert not aliases.not_found("http://www.b.test/never-rewritten")
    assert aliases.not_found("http://www.b.test/only-here")
    assert aliases.rewrite("http://b.test/only-here") == "http://b.test/only-here"
    for i in range(2, 5):
        assert not aliases.learn(f"http://b.test/p{i}", f"http://www.b.test/p{i}")


def test_a_tail_rule_towards_a_partial_twin_is_retired_when_it_makes_a_not_found_url():
    from focuscrawl.engine.defences.aliases import UrlAliases, UrlAliasSettings

    # a crawl that fetched the twins first (page.htm/) learns the tail rule towards them
    aliases = UrlAliases(UrlAliasSettings(min_support=2))
    for i in range(2):
        aliases.learn(f"http://c.test/p{i}.htm", f"http://c.test/p{i}.htm/")
    assert aliases.rewrite("http://c.test/q.htm") == "http://c.test/q.htm/"
    # q has no twin: its rewritten URL is a not-found page, and the rule goes for good
    assert aliases.not_found("http://c.test/q.htm/")
    assert aliases.rewrite("http://c.test/r.htm") == "http://c.test/r.htm"
    assert not aliases.learn("http://c.test/p3.htm", "http://c.test/p3.htm/")
    assert not aliases.learn("http://c.test/p4.htm", "http://c.test/p4.htm/")
    # its reverse, the twins' form rewritten to the page's, may then be learned
    for i in range(5, 7):
        aliases.learn(f"http://c.test/p{i}.htm/", f"http://c.test/p{i}.htm")
    assert aliases.rewrite("http://c.test/s.htm/") == "http://c.test/s.htm"
    # ignorable parameters and case-blind paths are retired the same way
    for i in range(2):
        aliases.learn(f"http://d.test/p{i}?lang=en", f"http://d.test/p{i}")
        aliases.learn(f"http://d.test/P{i}x", f"http://d.test/p{i}x")
    assert aliases.rewrite("http://d.test/a?lang=en") == "http://d.test/a"
    assert aliases.not_found("http://d.test/a")
    assert aliases.rewrite("http://d.test/b?lang=en") == "http://d.test/b?lang=en"
    assert aliases.rewrite("http://d.test/About") == "http://d.test/about"
    assert aliases.not_found("http://d.test/about")
    assert aliases.rewrite("http://d.test/About") == "http://d.test/About"


def _mirrored_web(directory: Path) -> Path:
    """a.test's ten articles, each also answering under www.a.test; the hub links to both forms of each."""
    with WebWriter(directory, {"name": "mirrored"}) as w:
        w.add_page("http://a.test/", title="hub", text=page_text(OTHER_WORDS, 0), labels=["other"])
        for i in range(1, 11):
            for host in ("a.test", "www.a.test"):
                w.add_page(f"http://{host}/p{i}", title=f"p{i}", text=page_text(BIRD_WORDS, i), labels=["birds"])
            w.add_link("http://a.test/", f"http://a.test/p{i}", f"article {i}")
            w.add_link("http://a.test/p1", f"http://www.a.test/p{i}", f"article {i} (mirror)")
    return directory


def test_a_mirror_costs_a_few_fetches_then_its_urls_are_the_originals(tmp_path):
    web = OfflineWeb(_mirrored_web(tmp_path / "w"))
    events, engine, _ = crawl(web, ["http://a.test/"], budget=40)
    support = DefenceSettings().url_aliases.min_support
    copies = [e for e in events if e.url.startswith("http://www.a.test/")]
    assert len(copies) == support and all(e.verdict.startswith("duplicate of http://a.test/") for e in copies)
    merged = [(url, why) for e in events for url, why in e.skipped]
    assert {url for url, _ in merged} == {f"http://www.a.test/p{i}" for i in range(1, 11)} - {e.url for e in copies}
    assert all(why == "duplicate of " + url.replace("www.", "") for url, why in merged)
    assert len(events) == 11 + support
    off, _, _ = crawl(web, ["http://a.test/"], budget=40, defences=DefenceSettings(url_aliases={"enabled": False}))
    assert len(off) == 21, "without the rule every mirrored page costs a fetch"


def test_a_mirror_met_first_whose_pages_name_their_originals_is_left_after_a_few_pages(tmp_path):
    # the crawl starts on the mirror: no copy can confirm a rule (the originals are never linked), but each mirror
    # page names its original as its canonical, and after three of them the mirror's URLs met later are the originals
    with WebWriter(tmp_path / "w", {"name": "mirror-first"}) as w:
        w.add_page("http://www.a.test/", title="hub", text=page_text(OTHER_WORDS, 0), labels=["other"])
        for i in range(1, 11):
            for host in ("a.test", "www.a.test"):
                w.add_page(f"http://{host}/p{i}", title=f"p{i}", text=page_text(BIRD_WORDS, i), labels=["birds"])
        for i in range(1, 4):
            w.add_link("http://www.a.test/", f"http://www.a.test/p{i}", f"article {i}")
        for i in range(4, 11):
            w.add_link("http://www.a.test/p3", f"http://www.a.test/p{i}", f"article {i}")
    canonical = {f"http://www.a.test/p{i}": f"http://a.test/p{i}" for i in range(1, 11)}
    web = Wrapped(OfflineWeb(tmp_path / "w"), canonical=canonical)
    events, _, _ = crawl(web, ["http://www.a.test/"], budget=40)
    fetched = [e.url for e in events]
    assert fetched[:4] == ["http://www.a.test/", *[f"http://www.a.test/p{i}" for i in range(1, 4)]]
    assert sorted(fetched[4:]) == sorted(f"http://a.test/p{i}" for i in range(4, 11))
    off, _, _ = crawl(web, ["http://www.a.test/"], budget=40, defences=DefenceSettings(url_aliases={"enabled": False}))
    assert {f"http://www.a.test/p{i}" for i in range(4, 11)} <= {e.url for e in off}


# -- failing hosts ---------------------------------------------------------------------------------------------
def test_a_failing_host_backs_off_then_is_closed(tmp_path):
    """Offline the breaker's clock is ``offline_step_s`` per step (3 s): it opens for 60 s = 20 steps after 3
    failures, tries one request after 20, 40 and 80 steps, and closes the host after the third failed trial, when its
    failures have lasted 426 s >= 300 s: the steps of the breaker counted in steps before it (20, 40, 80; 6
    failures)."""
    with WebWriter(tmp_path / "w", {"name": "failing"}) as w:
        w.add_page("http://hub.test/", title="hub", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        for i in range(10):
            w.add_link("http://hub.test/", f"http://bad.test/b{i}", "bird")
        for i in range(160):
            w.add_link("http://hub.test/", f"http://good.test/g{i}", "bird")
            w.add_page(f"http://good.test/g{i}", title=f"g{i}", text=page_text(BIRD_WORDS, i + 1, 20),
                       labels=["birds"])
    web = Wrapped(OfflineWeb(tmp_path / "w"), failing=("bad.test",))
    events, engine, spy = crawl(web, ["http://hub.test/"], budget=200)
    settings = DefenceSettings().host_health
    bad = [e.step for e in events if e.host == "bad.test"]
    assert bad == [1, 2, 3, 23, 63, 143]  # three failures, then a trial after 60, 120 and 240 s
    assert len(bad) == settings.open_after + settings.close_after_trials
    assert (bad[-1] - bad[0]) * settings.offline_step_s >= settings.close_after_s
    closing = events[bad[-1]]
    assert closing.verdict == HOST_FAILING
    assert sorted(url for url, why in closing.skipped if why == HOST_FAILING) == \
        [f"http://bad.test/b{i}" for i in range(len(bad), 10)]
    assert engine.frontier_size == 0 and len(spy.observations) == len(events)
    off, _, _ = crawl(web, ["http://hub.test/"], defences=OFF)
    assert [e.host for e in off].count("bad.test") == 10


# -- soft 404 --------------------------------------------------------------------------------------------------
def test_a_soft_404_host_is_probed_once_and_its_not_found_pages_are_caught(tmp_path):
    with WebWriter(tmp_path / "w", {"name": "soft"}) as w:
        w.add_page("http://soft.test/", title="hub", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        for i in range(4):
            w.add_link("http://soft.test/", f"http://soft.test/r{i}", "bird")
            w.add_page(f"http://soft.test/r{i}", title=f"r{i}", text=page_text(BIRD_WORDS, i + 1), labels=["birds"])
        for i in range(6):
            w.add_link("http://soft.test/", f"http://soft.test/missing/m{i}", "bird nest")
    web = Wrapped(OfflineWeb(tmp_path / "w"), soft_404=("soft.test",))
    events, engine, spy = crawl(web, ["http://soft.test/"])
    verdicts = [e.verdict for e in events]
    # the second not-found page, a near-copy of the first without the path each echoes, gives cause
    assert verdicts.count(PROBE) == 1 and verdicts.count(SOFT_404) == 4
    probe = events[verdicts.index(PROBE)]
    assert probe.reason.startswith("not the strategy's") and probe.status == 200
    assert verdicts.index(PROBE) == [e.url for e in events].index("http://soft.test/missing/m1") + 1
    # the probe is a step of the budget, never the policy's: every other step answers one of its selections
    assert len(spy.observations) == len(spy.selected) == len(events) - 1
    assert probe.url not in {s.url for s in spy.selected}
    # the same crawl probes the same path (the crawl's seed and the host decide it)
    again, _, _ = crawl(web, ["http://soft.test/"])
    assert [e.url for e in again] == [e.url for e in events]
    # a host that answers 404 gives no cause (a 404 has no text to compare)
    events, _, _ = crawl(OfflineWeb(tmp_path / "w"), ["http://soft.test/"])
    assert PROBE not in [e.verdict for e in events]


# -- trap patterns ---------------------------------------------------------------------------------------------
def _calendar_web(directory: Path, days: int = 200) -> Path:
    """A small relevant site whose hub links into an endless-looking calendar, whose days borrow the site's text
    (as real traps do: a benchmark's messy webs make them so)."""
    with WebWriter(directory, {"name": "calendar"}) as w:
        w.add_page("http://birds.test/", title="hub", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        w.add_link("http://birds.test/", "http://birds.test/events/2001/1", "events")
        for i in range(5):
            w.add_link("http://birds.test/", f"http://birds.test/b{i}", "bird")
            w.add_page(f"http://birds.test/b{i}", title=f"b{i}", text=page_text(BIRD_WORDS, i + 1), labels=["birds"])
        for d in range(1, days):
            url = f"http://birds.test/events/2001/{d}"
            # thirds of the site's pages, combined anew each day: no day is a copy, and no day's text is new
            sources = [d % 5, (d + d // 5 % 4 + 1) % 5, (d + d // 20 % 4 + 1) % 5]
            parts = [page_text(BIRD_WORDS, j + 1).split()[113 * k:113 * (k + 1)] for k, j in enumerate(sources)]
            w.add_page(url, title=f"day {d}", labels=["other"],
                       text=f"Events on day {d}. " + " ".join(parts[0] + parts[1] + parts[2]))
            w.add_link(url, f"http://birds.test/events/2001/{d + 1}", "next day")
            w.add_link(url, f"http://birds.test/events/2001/{d + 2}", "day after")
    return directory


def test_a_pattern_that_yields_nothing_new_loses_its_allowance(tmp_path):
    web = OfflineWeb(_calendar_web(tmp_path / "w"))
    assert url_patterns("http://birds.test/events/2001/17") == ("birds.test/events/{n}/{n}",)
    assert url_patterns("http://a.test/list?page=3&cat=x") == ("a.test/list?cat&page", "a.test/list?*")
    events, engine, _ = crawl(web, ["http://birds.test/"], budget=100)
    days = [e for e in events if "/events/" in e.url]
    traps = DefenceSettings().traps
    assert traps.min_fetches <= len(days) <= traps.min_fetches + 2
    assert days[-1].verdict == TRAP_PATTERN and days[-1] is events[-1]
    skipped = [url for e in events for url, why in e.skipped if why == TRAP_PATTERN]
    assert skipped and all("/events/" in url for url in skipped)
    assert engine.frontier_size == 0, "the frontier is spent: the calendar no longer counts in it"
    off, _, _ = crawl(web, ["http://birds.test/"], budget=100, defences=OFF)
    assert sum("/events/" in e.url for e in off) == 100 - 6


# -- a clean web, the settings --------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["bfs", "best-first", "adaptive", "tres"])
def test_a_clean_web_crawls_as_without_the_defences(tiny_web, strategy):
    runs = []
    for defences in (DefenceSettings(), OFF):
        built, events, web = tiny_crawl(tiny_web, strategy, budget=35)
        built.engine.defences = defences.build(1, 35)
        built.engine.run(web)
        runs.append([(e.url, e.relevance, e.reward, e.relevant, e.verdict, e.skipped) for e in events])
    # the tiny web's pages are short texts of one vocabulary, near-copies of each other as a host's not-found pages
    # are: a host may be probed (a step of the budget, answered 404), and nothing else changes
    probes = [r for r in runs[0] if r[4] == PROBE]
    defended = [r for r in runs[0] if r[4] != PROBE]
    assert len(probes) <= len({urlsplit(r[0]).hostname for r in runs[0]})
    assert defended == runs[1][:len(defended)]


def test_settings_are_one_group_with_one_error_line_each():
    config = load_config(BenchConfig, overrides=["defences.near_duplicates.threshold=0.95",
                                                 "defences.traps.enabled=false"])
    assert config.defences.near_duplicates.threshold == 0.95 and not config.defences.on("traps")
    assert config.run_settings(0).defences == config.defences
    with pytest.raises(ValueError, match="threshold"):
        load_config(BenchConfig, overrides=["defences.near_duplicates.threshold=2"])
    with pytest.raises(ValueError, match="trehsold"):
        load_config(BenchConfig, overrides=["defences.near_duplicates.trehsold=0.5"])
    # a run folder's identity holds the defences (a resume with others would diverge), unless they are off
    assert "defences" in load_config(CrawlConfig).identity()
    assert "defences" not in load_config(CrawlConfig, overrides=["defences.enabled=false"]).identity()


def test_a_bad_defence_setting_is_one_error_line(tmp_path):
    from typer.testing import CliRunner

    from focuscrawl.cli.main import app

    result = CliRunner().invoke(app, ["bench", "--budget", "10", "--runs", "1", "--out", str(tmp_path / "b"),
                                      "-s", "defences.soft_404.threshold=7"])
    assert result.exit_code != 0
    assert result.output.count("error:") == 1 and "Traceback" not in result.output


# -- the run folder: pages.jsonl, the store, the dashboard, resume ---------------------------------------------
def _messy_web(directory: Path) -> Path:
    """Copies, a calendar and a failing host at once."""
    _calendar_web(directory / "cal", days=120)
    with WebWriter(directory / "web", {"name": "messy"}) as w:
        source = OfflineWeb(directory / "cal")
        for record in source.records():
            page = source.fetch(record.url)
            w.add_page(record.url, status=record.status, title=page.title, text=page.text,
                       labels=["birds"] if "/b" in record.url or record.url.endswith(".test/") else ["other"])
            for link in page.outlinks:
                w.add_link(record.url, link.url, link.anchor)
        for i in range(5):
            copy = f"http://birds.test/b{i}?print=1"
            w.add_link("http://birds.test/", copy, "print")
            w.add_page(copy, title=f"b{i}", text="Printed copy. " + page_text(BIRD_WORDS, i + 1))
        for i in range(8):
            w.add_link("http://birds.test/", f"http://down.test/d{i}", "bird")
    return directory / "web"


def _topic_dir(path: Path, seeds: list[str]) -> Path:
    topic = TopicInputs("birds", TOPIC.keywords, TOPIC.example_texts, TOPIC.example_labels, seeds=seeds)
    return write_topic_dir(path, topic)


def _run(run: Path, topic_dir: Path, web: Wrapped, stop_after: int | None = None, **settings) -> list:
    from focuscrawl.crawl import Crawler

    async def go():
        crawler = Crawler(topic=topic_dir, out=run, progress="none", plot=False, fetcher=AsyncFetcher(web),
                          strategy="bfs", budget=70, **settings)
        out = []
        async for record in crawler.run():
            out.append(record)
            if stop_after is not None and len(out) == stop_after:
                crawler.stop(immediate=True)
        return out

    return asyncio.run(go())


def test_verdicts_reach_pages_jsonl_the_store_and_the_dashboard(tmp_path):
    from focuscrawl.dashboard import views
    from focuscrawl.dashboard.run import RunReader
    from focuscrawl.storage.state import StateStore

    web = Wrapped(OfflineWeb(_messy_web(tmp_path)), failing=("down.test",))
    run = tmp_path / "run"
    # a small web's crawl lasts less than the 300 s of failures that close a host for good: not asked for here
    _run(run, _topic_dir(tmp_path / "topic", ["http://birds.test/"]), web, concurrency=1,
         defences={"host_health": {"close_after_s": 0}})
    lines = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
    verdicts = [line["verdict"] for line in lines]
    # three print copies are fetched and caught; they show `print` to be ignorable, and the other two never cost a fetch
    support = DefenceSettings().url_aliases.min_support
    assert sum(v.startswith("duplicate of http://birds.test/b") for v in verdicts) == support
    assert sum(why.startswith("duplicate of http://birds.test/b") for line in lines for _, why in line["skipped"]) \
        == 5 - support
    assert verdicts.count(HOST_FAILING) == 1 and verdicts.count(TRAP_PATTERN) == 1
    skipped = [why for line in lines for _, why in line["skipped"]]
    settings = DefenceSettings().host_health
    assert skipped.count(HOST_FAILING) == 8 - settings.open_after - settings.close_after_trials
    assert TRAP_PATTERN in skipped
    store = StateStore(run / "state.sqlite")
    try:
        assert [s.verdict for s in store.steps()] == verdicts
        assert [[list(x) for x in s.skipped] for s in store.steps()] == [line["skipped"] for line in lines]
    finally:
        store.close()
    view = RunReader(run)
    view.refresh()
    counts = {d["kind"]: (d["pages"], d["skipped"]) for d in view.snapshot()["defences"]}
    assert counts["duplicate"] == (support, 5 - support)
    assert counts[HOST_FAILING] == (1, 2) and counts[TRAP_PATTERN] == (1, skipped.count(TRAP_PATTERN))
    snapshot = view.snapshot()
    assert snapshot["totals"]["caught"] == verdicts.count(TRAP_PATTERN) + verdicts.count(HOST_FAILING) + support
    assert snapshot["totals"]["kept_out"] == len(skipped)
    panel = views.crawl_fragments(snapshot, lambda path: path)["problems"]
    assert "Caught by the defences" in panel and "trap pattern" in panel and "host failing" in panel


def test_a_crawl_with_the_defences_resumes_as_the_original(tmp_path):
    web = Wrapped(OfflineWeb(_messy_web(tmp_path)), failing=("down.test",))
    topic_dir = _topic_dir(tmp_path / "topic", ["http://birds.test/"])
    whole = [(r.url, r.verdict) for r in _run(tmp_path / "whole", topic_dir, web, concurrency=1)]
    assert any(verdict for _, verdict in whole)
    for checkpoint_every in (0, 4):  # by replay alone, and from a checkpoint of the defences' state
        run = tmp_path / f"run{checkpoint_every}"
        first = _run(run, topic_dir, web, stop_after=23, concurrency=1, checkpoint_every=checkpoint_every)
        assert len(first) == 23
        rest = _run(run, topic_dir, web, concurrency=1, checkpoint_every=checkpoint_every)
        assert [(r.url, r.verdict) for r in first + rest] == whole


def test_a_store_from_before_the_defences_gets_their_columns(tmp_path):
    """A run folder of the same store format, written before the defences: its steps read with no verdict, the
    store gains the columns, and the dashboard reads it even before that (read-only, it cannot add them)."""
    import re
    import sqlite3

    from focuscrawl.dashboard.run import RunReader
    from focuscrawl.storage.state import SCHEMA, STATE_FILE, StateStore

    # the store's schema as it was: the steps table ends at warc_end
    old = re.sub(r"warc_end INTEGER,.*?skipped TEXT NOT NULL DEFAULT '\[\]'\n", "warc_end INTEGER\n", SCHEMA,
                 flags=re.S)
    assert "verdict" not in old and "warc_end INTEGER\n);" in old
    (tmp_path / "run").mkdir()
    db = sqlite3.connect(tmp_path / "run" / STATE_FILE)
    db.executescript(old)
    db.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    db.execute("INSERT INTO steps (step, url, final_url, host, status, content_type, title, error, body, fetched_at, "
               "fetch_s, relevance, reward, depth, parent, score, reason, frontier_size, warc_end) VALUES "
               "(0, 'http://a.test/', 'http://a.test/', 'a.test', 200, 'text/html', 'a', '', ?, 1.0, 0.1, 0.9, 1.0, "
               "0, NULL, NULL, 'a seed', 3, NULL)", (__import__("zlib").compress(b'{"text": "t", "outlinks": []}'),))
    db.commit()
    db.close()
    reader = RunReader(tmp_path / "run")
    reader.refresh()
    assert reader.steps == 1 and reader.snapshot()["defences"] == []
    store = StateStore(tmp_path / "run" / STATE_FILE)
    try:
        [record] = list(store.steps())
        assert (record.verdict, record.skipped, record.to_json("bfs")["verdict"]) == ("", [], "")
    finally:
        store.close()


def test_on_a_messy_web_the_defences_spend_less_on_what_it_injected(tmp_path):
    """The messy-web generator's pathologies (focuscrawl web mess) on test_mess's small web, crawled by the
    benchmark: with the defences, no step goes to a tracking or session copy, and fewer to injected URLs."""
    from test_mess import SMALL, build_web

    from focuscrawl.bench.runner import run_benchmark
    from focuscrawl.webs.mess import make_profile, mess_web

    clean = build_web(tmp_path / "clean")
    mess_web(clean, tmp_path / "messy", make_profile("default", SMALL), seed=3)
    spent = {}
    for name, defences in (("on", DefenceSettings()), ("off", OFF)):
        summary = run_benchmark(BenchConfig(web=str(tmp_path / "messy"), topic="topic.a", strategies=["bfs"],
                                            budget=150, runs=2, out=tmp_path / name, defences=defences))
        spent[name] = next(s for s in summary["strategies"] if s["strategy"] == "bfs")
    assert spent["off"]["spent_mean"].get("session", 0) + spent["off"]["spent_mean"].get("tracking", 0) > 0
    assert spent["on"]["spent_mean"].get("session", 0) == spent["on"]["spent_mean"].get("tracking", 0) == 0
    assert spent["on"]["injected_share_mean"] < spent["off"]["injected_share_mean"]


def test_a_link_farm_host_is_closed_after_a_few_pages_and_no_written_host_is(tmp_path):
    """The messy-web generator's link farms (pages of stuffed topic words) on test_mess's small web: bfs enters each
    farm, and the defences close it after ``min_pages`` of its pages, listing its pending URLs; no host of the clean
    web, whose pages are written sentences, is closed."""
    from test_mess import SMALL, build_web

    from focuscrawl.engine.defences import LINK_FARM
    from focuscrawl.webs.mess import make_profile, mess_web

    clean = build_web(tmp_path / "clean")
    mess_web(clean, tmp_path / "messy", make_profile("default", SMALL), seed=3)
    messy = OfflineWeb(tmp_path / "messy")
    farm_hosts = {urlsplit(url).hostname for url, injected in messy.injected().items() if injected.kind == "farm"}
    seeds = ["http://www.uni.test/dept/", "https://wiki.test/wp/Article_0.htm"]
    fetched = {}
    on = DefenceSettings(link_farms={"min_pages": 10})  # the small web's farms have 30 pages, not 1,500
    for name, defences in (("on", on), ("off", OFF)):
        events, _, _ = crawl(messy, seeds, budget=600, defences=defences)
        fetched[name] = Counter(urlsplit(e.url).hostname for e in events)
        if name == "on":
            closing = [e for e in events if e.verdict == LINK_FARM]
            assert {urlsplit(e.url).hostname for e in closing} == farm_hosts
            min_pages = on.link_farms.min_pages
            assert all(fetched["on"][host] <= min_pages + 2 for host in farm_hosts)  # + pages without enough words
            assert any(why == LINK_FARM for e in closing for _, why in e.skipped)
    assert all(fetched["off"][host] > fetched["on"][host] for host in farm_hosts)
    messy.close()


def test_hosts_a_closed_farm_links_to_are_suspects_closed_after_fewer_pages():
    """Farm alliances: once a host is closed as a farm, the hosts its stuffed pages linked to need only
    ``suspect_min_pages`` judged pages; a host it links to whose pages are written text is never closed, and a host
    no closed farm links to keeps the full allowance."""
    from focuscrawl.engine.defences.farms import LinkFarms, LinkFarmSettings

    stuffed = "bird nest migration songbird plumage feather beak flight wing egg " * 4
    written = "The bird builds a nest in the tall grass and lays two eggs, which both of its parents keep warm. " * 3
    farms = LinkFarms(LinkFarmSettings(min_pages=10, suspect_min_pages=3))

    def spam(host: str, text: str, links=()) -> list[str]:
        """A stuffed page with a stuffed title: two signs of spam, enough for a page to count."""
        return farms.record(host, text, links, "Bird nest - best bird nest - bird nest guide")

    for _ in range(2):  # two pages on each, before any farm is known
        assert spam("b.test", stuffed, ["http://c.test/x"]) == []
        assert farms.record("w.test", written) == []
        assert spam("d.test", stuffed) == []
    closed = [spam("a.test", stuffed, ["http://a.test/", "http://b.test/y", "https://w.test/"]) for _ in range(10)]
    assert closed[:9] == [[]] * 9 and closed[9] == ["a.test"]  # the farm itself closes on its 10th page
    assert farms.suspects == {"b.test", "w.test"}
    assert spam("b.test", stuffed) == ["b.test"]  # its 3rd judged page; it makes c.test a suspect in turn
    assert "c.test" in farms.suspects and "c.test" not in farms.closed  # not judged yet
    assert farms.record("w.test", written) == [] and "w.test" not in farms.closed  # written text: never a farm
    assert spam("d.test", stuffed) == [] and "d.test" not in farms.closed  # not linked: full allowance
    for _ in range(100):  # a host of written text is read until it is plainly no farm, then no more
        farms.record("big.test", written)
    assert "big.test" in farms.cleared and farms.judged["big.test"] == 100
    spam("big.test", stuffed)
    assert farms.judged["big.test"] == 100


def test_short_word_share_reads_written_text_not_keywords_and_leaves_unspaced_scripts_alone():
    from focuscrawl.engine.defences.farms import short_word_share

    written = "The bird builds a nest in the tall grass and lays two eggs, which both of its parents keep warm. " * 3
    stuffed = "bird nest migration songbird plumage feather beak flight wing egg " * 4
    assert short_word_share(written, 30) >= 0.4
    assert short_word_share(stuffed, 30) < DefenceSettings().link_farms.max_short_share
    assert short_word_share("bird nest", 30) is None  # too short to judge
    assert short_word_share("鸟类筑巢 " * 40, 30) is None  # no spaces between words: never judged


def test_a_polite_hint_names_a_host_backing_off_as_not_ready(tmp_path):
    """``next_selection(ready)`` hands the policy the driver's hint with the engine's own held-back hosts added: a
    host backing off after failures is not ready, whatever the driver says."""
    with WebWriter(tmp_path / "w", {"name": "failing"}) as w:
        w.add_page("http://hub.test/", title="hub", text=page_text(BIRD_WORDS, 0), labels=["birds"])
        for i in range(10):
            w.add_link("http://hub.test/", f"http://bad.test/b{i}", "bird")
            w.add_link("http://hub.test/", f"http://good.test/g{i}", "bird")
            w.add_page(f"http://good.test/g{i}", title=f"g{i}", text=page_text(BIRD_WORDS, i + 1), labels=["birds"])
    web = Wrapped(OfflineWeb(tmp_path / "w"), failing=("bad.test",))
    settings = RunSettings(budget=30, seed=0, reward_model="tfidf", defences=DefenceSettings())
    built = build_crawl(settings, "bfs", TOPIC, ["http://hub.test/"], judge=GroundTruth("birds", frozenset()))
    engine, verdicts = built.engine, []
    built.policy.select_ready = lambda ready: verdicts.append((ready("bad.test"), ready("good.test"))) or \
        built.policy.select()
    for _ in range(12):
        selection = engine.next_selection(lambda host: True)
        engine.record(selection.url, web.fetch(selection.url))
    assert verdicts[0] == (True, True)  # nothing has failed yet
    assert (False, True) in verdicts, "bad.test backs off after its failures: not ready"
    assert engine.defences["host_health"].waiting("bad.test", engine.stats.steps)
