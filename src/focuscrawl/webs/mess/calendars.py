"""Event calendars: each day links to the previous and next day, month and year, and to a few events."""

from __future__ import annotations

import datetime as dt

from focuscrawl.types import Link
from focuscrawl.webs.mess.state import MessState, Section
from focuscrawl.webs.mess.traps import materialise, trap_target, trap_text

CALENDAR_NOTES = ("Add this event to your calendar.", "All times are local.", "Submit an event.",
                  "Subscribe to the events feed.", "Tickets are available at the door.")


def build_calendar(state: MessState, section: Section) -> None:
    """The section's days from a seeded start, each written from the entry whose stretch it is in."""
    rng = state.rng("calendar", section.index, section.host)
    start = dt.date(rng.randint(1996, 2008), 1, 1) + dt.timedelta(rng.randrange(365))
    template = rng.choice(("/events/{y}/{m:02d}/{d:02d}/", "/calendar/?date={y}-{m:02d}-{d:02d}",
                           "/calendar/day.php?y={y}&m={m}&d={d}"))
    if not section.on_site:
        template = template.replace("/events/", "/").replace("/calendar/", "/")

    def path(day: dt.date) -> str:
        return template.format(y=day.year, m=day.month, d=day.day)

    n = state.profile.calendar.pages
    days = [start + dt.timedelta(i) for i in range(n)]
    materialise(state, section, [path(day) for day in days])
    index = {url: i for i, url in enumerate(section.urls) if url}
    for i, (day, url) in enumerate(zip(days, section.urls)):
        if not url:
            continue
        entry = section.entry_of(i)
        page = state.pages[url]
        title = state.originals[entry].title
        page.title = f"{title} - events on {day:%d %B %Y}" if title else f"Events on {day:%d %B %Y}"
        page.text = trap_text(state, rng, entry, f"Events on {day:%A %d %B %Y}.", rng.randint(2, 4),
                              rng.choice(CALENDAR_NOTES))
        targets = [("Previous day", day - dt.timedelta(1)), ("Next day", day + dt.timedelta(1)),
                   ("Previous month", _add_months(day, -1)), ("Next month", _add_months(day, 1)),
                   ("Next year", _add_months(day, 12))]
        pool = state.pool(entry)
        for _ in range(2):  # events on other days, with words of the neighbourhood
            words = pool[rng.randrange(len(pool))].split()[:6]
            targets.append((" ".join(words).rstrip(".,;:"), day + dt.timedelta(rng.randint(2, 40))))
        for anchor, target_day in targets:
            target = trap_target(state, section, path(target_day), index)
            if target:
                page.links.append(Link(target, anchor))


def _add_months(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, 28))
