"""Fill a Trac environment from a JSON spec: ``python fill_trac.py ENV SPEC.json``.

Runs in the applications' virtualenv (``focuscrawl.webs.testbed.apps``), not in focuscrawl's: it imports Trac
and the standard library only. Wiki pages are saved revision by revision and tickets changed comment by
comment, each at its own time, through Trac's own models, so that page histories, diffs, ticket changes and
the timeline are Trac's, exactly as if people had written them.
"""

import json
import sys
from datetime import datetime, timezone

from trac.env import Environment
from trac.ticket.model import Component, Milestone, Ticket
from trac.wiki.model import WikiPage


def when(stamp: float) -> datetime:
    return datetime.fromtimestamp(stamp, timezone.utc)


def replace_defaults(env, spec) -> None:
    """Trac's example milestones and components out, the spec's in."""
    for milestone in Milestone.select(env, include_completed=True):
        milestone.delete()
    for component in Component.select(env):
        component.delete()
    for item in spec["milestones"]:
        milestone = Milestone(env)
        milestone.name = item["name"]
        milestone.description = item["description"]
        milestone.due = when(item["due"])
        if item.get("completed"):
            milestone.completed = when(item["completed"])
        milestone.insert()
    for name in spec["components"]:
        component = Component(env)
        component.name = name
        component.insert()


def fill(env_dir: str, spec_file: str) -> None:
    spec = json.loads(open(spec_file, encoding="utf-8").read())
    env = Environment(env_dir)
    replace_defaults(env, spec)
    for page in spec["wiki"]:
        for revision in page["revisions"]:
            wiki = WikiPage(env, page["name"])
            wiki.text = revision["text"]
            wiki.save(revision["author"], revision["comment"], when(revision["time"]))
    for item in spec["tickets"]:
        ticket = Ticket(env)
        for field in ("summary", "description", "reporter", "owner", "component", "milestone", "priority", "type",
                      "keywords"):
            ticket[field] = item[field]
        ticket["status"] = "new"
        ticket.insert(when=when(item["time"]))
        for change in item["changes"]:
            for field, value in change["fields"].items():
                ticket[field] = value
            ticket.save_changes(change["author"], change["comment"], when=when(change["time"]))


if __name__ == "__main__":
    fill(sys.argv[1], sys.argv[2])
