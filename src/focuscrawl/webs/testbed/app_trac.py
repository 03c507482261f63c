"""Trac 1.6 in the test bed: a wiki whose pages have several revisions, and tickets with comments, owners,
components, milestones and status changes, spread over two years, so that page histories, diffs, ticket
changes, the timeline, custom queries, reports and their CSV/RSS exports are all there to be crawled."""

from __future__ import annotations

import configparser
import json
import random
import re
from pathlib import Path

from focuscrawl.webs.testbed.apps import run
from focuscrawl.webs.testbed.sources import Source

FILL_SCRIPT = Path(__file__).with_name("fill_trac.py")
START = 1672531200.0  # 2023-01-01, when the project's history starts
DAY = 86400.0
PEOPLE = ("alice", "bob", "carol", "dave", "erin", "frank")
ARGV = ["{bin}/tracd", "--hostname", "{ip}", "-p", "{port}", "-s", "{dir}"]
FRONT = "/"
# Trac's defaults that would send a crawler off the bed (the logo's and footer's links to trac.edgewall.org),
# and CamelCase words that name no page: plain text, as a wiki of imported prose would set it.
INI = {"header_logo": {"link": "/", "src": ""}, "project": {"footer": " ", "url": ""},
       "wiki": {"ignore_missing_pages": "true"}, "logging": {"log_type": "none"}}


def page_name(source: Source) -> str:
    return "Topics/" + (re.sub(r"[^A-Za-z0-9]+", "_", source.title).strip("_") or "Page")


def wiki_page(source: Source, rng: random.Random) -> dict:
    """A page written in 2-4 revisions, each adding paragraphs to the last, by different people."""
    paragraphs = source.paragraphs[:12]
    count = min(len(paragraphs), rng.randint(2, 4)) or 1
    when = START + rng.uniform(0, 600) * DAY
    revisions = []
    for number in range(1, count + 1):
        shown = paragraphs[:max(1, round(len(paragraphs) * number / count))]
        revisions.append({"text": f"= {source.title} =\n\n" + "\n\n".join(shown), "author": rng.choice(PEOPLE),
                          "comment": "started the page" if number == 1 else f"added {len(shown)} paragraphs",
                          "time": when})
        when += rng.uniform(0.5, 40) * DAY
    return {"name": page_name(source), "revisions": revisions}


def ticket(source: Source, rng: random.Random, milestones: list[str]) -> dict:
    """A ticket about ``source``: its first paragraph as description, later ones as comments; some closed."""
    when = START + rng.uniform(0, 600) * DAY
    changes = []
    for paragraph in source.paragraphs[1:rng.randint(2, 5)]:
        when += rng.uniform(0.2, 20) * DAY
        changes.append({"author": rng.choice(PEOPLE), "comment": paragraph, "time": when, "fields": {}})
    if changes:
        changes[0]["fields"] = {"status": "assigned", "owner": changes[0]["author"]}
    if len(changes) > 1 and rng.random() < 0.6:
        changes[-1]["fields"] = {"status": "closed", "resolution": rng.choice(("fixed", "fixed", "wontfix"))}
    return {"summary": source.title, "description": source.paragraphs[0], "reporter": rng.choice(PEOPLE),
            "owner": "", "component": source.area, "milestone": rng.choice(milestones),
            "priority": rng.choice(("minor", "major", "major", "critical")),
            "type": rng.choice(("defect", "enhancement", "task")), "keywords": source.subject,
            "time": START + rng.uniform(0, 600) * DAY if not changes else changes[0]["time"] - DAY, "changes": changes}


def spec(wiki: list[Source], tickets: list[Source], rng: random.Random) -> dict:
    milestones = [{"name": f"release-{n}", "description": f"Everything for release {n}.",
                   "due": START + 120 * n * DAY, "completed": START + 120 * n * DAY if n < 4 else None}
                  for n in range(1, 7)]
    names = [m["name"] for m in milestones]
    pages = {page["name"]: page for page in (wiki_page(source, rng) for source in wiki)}  # a title once
    return {"milestones": milestones, "components": sorted({source.area for source in tickets}),
            "wiki": list(pages.values()), "tickets": [ticket(source, rng, names) for source in tickets]}


def build(python: Path, app_dir: Path, wiki: list[Source], tickets: list[Source], rng: random.Random
          ) -> list[tuple[Source, str]]:
    """Make and fill the Trac environment ``app_dir``: (source, path) of every content page it holds."""
    app_dir.parent.mkdir(parents=True, exist_ok=True)
    run([str(python.parent / "trac-admin"), str(app_dir), "initenv", "Test bed", "sqlite:db/trac.db"],
        "trac-admin initenv")
    write_ini(app_dir / "conf" / "trac.ini")
    filled = spec(wiki, tickets, rng)
    spec_file = app_dir / "testbed-spec.json"
    spec_file.write_text(json.dumps(filled))
    run([str(python), str(FILL_SCRIPT), str(app_dir), str(spec_file)], "filling Trac")
    by_name = {page_name(source): source for source in wiki}
    items = [(by_name[page["name"]], f"/wiki/{page['name']}") for page in filled["wiki"]]
    return items + [(source, f"/ticket/{number}") for number, source in enumerate(tickets, 1)]


def write_ini(path: Path) -> None:
    """Set ``INI``'s options in the ini file Trac wrote, keeping the rest."""
    config = configparser.RawConfigParser()
    config.read(path, encoding="utf-8")
    for section, options in INI.items():
        if not config.has_section(section):
            config.add_section(section)
        for option, value in options.items():
            config.set(section, option, value)
    with open(path, "w", encoding="utf-8") as out:
        config.write(out)
