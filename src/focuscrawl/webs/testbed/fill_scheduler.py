"""Make and fill the calendar site's database from a JSON spec: ``python fill_scheduler.py SITE SPEC.json``.

Runs in the applications' virtualenv (``focuscrawl.webs.testbed.apps``), not in focuscrawl's: it imports
Django, django-scheduler and the standard library only. Tables are made by Django's own migrations, events
through django-scheduler's models, as its admin would make them. Prints the events' ids as a JSON list.
"""

import json
import os
import sys
from datetime import datetime


def fill(site_dir: str, spec_file: str) -> list[int]:
    sys.path.insert(0, site_dir)
    os.environ["DJANGO_SETTINGS_MODULE"] = "testbed_site.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from schedule.models import Calendar, Event, Rule

    call_command("migrate", verbosity=0, interactive=False)
    spec = json.loads(open(spec_file, encoding="utf-8").read())
    calendar = Calendar.objects.create(**spec["calendar"])
    rules = {}
    ids = []
    for item in spec["events"]:
        rule = item["rule"]
        if rule and rule not in rules:
            rules[rule] = Rule.objects.create(name=rule.capitalize(), description=f"Every {rule.lower()[:-2]}",
                                              frequency=rule)
        made = Event.objects.create(
            calendar=calendar, title=item["title"], description=item["description"],
            start=datetime.fromisoformat(item["start"]), end=datetime.fromisoformat(item["end"]),
            rule=rules.get(rule), end_recurring_period=datetime.fromisoformat(item["until"]) if item["until"] else None)
        ids.append(made.id)
    return ids


if __name__ == "__main__":
    print(json.dumps(fill(sys.argv[1], sys.argv[2])))
