"""``mess_web``: read WEB, plan every pathology in an order where each finds what it needs, write OUT."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focuscrawl.webs.mess.calendars import build_calendar
from focuscrawl.webs.mess.copies import fill_copies, link_printable, plan_near_duplicates
from focuscrawl.webs.mess.facets import build_facet
from focuscrawl.webs.mess.farms import build_farms, plan_farms
from focuscrawl.webs.mess.hosts import add_broken_links, plan_behaviours, soften_dead_ends
from focuscrawl.webs.mess.links import replace_links
from focuscrawl.webs.mess.pagination import build_pagination
from focuscrawl.webs.mess.profile import PROFILES, MessProfile
from focuscrawl.webs.mess.redirects import add_loops
from focuscrawl.webs.mess.scripts import move_to_scripts
from focuscrawl.webs.mess.sessions import plan_mirrors, plan_sessions
from focuscrawl.webs.mess.state import MessState
from focuscrawl.webs.mess.traps import enter, plan_sections
from focuscrawl.webs.mess.write import write_pages
from focuscrawl.webs.store import WEB_FILE, OfflineWeb, WebWriter

MESS_VERSION = 3  # bump when a change alters the web a given source, profile and seed give
TRAP_BUILDERS = {"calendar": build_calendar, "pagination": build_pagination, "facet": build_facet}


@dataclass
class MessReport:
    """What ``mess_web`` made: injected URLs per kind, host behaviours, and how long it took."""

    out: Path
    profile_name: str
    profile: MessProfile
    seed: int
    injected: dict[str, int]
    hosts: dict[str, dict[str, Any]]
    moved_links: int
    html_dropped: int
    seconds: float


def plan(state: MessState) -> None:
    """Plan every pathology. The order matters where one needs another: traps exist before host behaviours
    are drawn (a trap's host may fail, and its first page is its not-found page's home); copies exist
    before links are replaced by them; links are replaced before some move into scripts; a copy takes
    its original's links only when they are final."""
    p = state.profile
    for kind, trap in (("calendar", p.calendar), ("pagination", p.pagination), ("facet", p.facet)):
        if trap.enabled:
            plan_sections(state, kind, trap.sections, trap.injected_hosts, trap.entry_share)
    farm_words = plan_farms(state) if p.farm.enabled else {}
    for section in state.sections:
        if section.kind in TRAP_BUILDERS:
            TRAP_BUILDERS[section.kind](state, section)
    build_farms(state, farm_words)
    for section in state.sections:
        enter(state, section, farm_words)
    plan_behaviours(state)
    sessions = plan_sessions(state) if p.session.enabled else {}
    mirrors = plan_mirrors(state) if p.mirror.enabled else {}
    near_duplicates = plan_near_duplicates(state) if p.near_duplicate.enabled else {}
    replace_links(state, sessions, mirrors, near_duplicates)
    if p.script.enabled:
        move_to_scripts(state)
    if p.near_duplicate.enabled:
        link_printable(state, near_duplicates)
    if p.redirect.enabled and p.redirect.loop_share:
        add_loops(state)
    if p.soft_404.enabled and p.soft_404.broken_share:
        add_broken_links(state)
    for original in state.originals.values():
        state.rows[original.url].links = original.final + original.added
        state.rows[original.url].script_links = original.moved
    fill_copies(state)
    soften_dead_ends(state)


def mess_web(source: str | Path, out: str | Path, profile: MessProfile | None = None, *, seed: int = 0,
             profile_name: str = "default", overwrite: bool = False) -> MessReport:
    """Write OUT: the offline web ``source`` with ``profile``'s pathologies added (the package's docstring)."""
    started = time.perf_counter()
    profile = profile or PROFILES[profile_name]
    source, out = Path(source), Path(out)
    if out.resolve() == source.resolve():
        raise ValueError(f"OUT must be another directory than WEB ({source})")
    web = OfflineWeb(source)
    try:
        if "mess" in web.meta:
            raise ValueError(f"{source} is a messy web already; mess the web it was made from")
        if (out / WEB_FILE).exists() and not overwrite:
            raise FileExistsError(f"{out / WEB_FILE} already exists; pass --overwrite to replace it")
        state = MessState(web, profile, seed)
        plan(state)
        meta = {**web.meta, "name": f"{web.name}-mess", "builder": "focuscrawl.webs.mess.mess_web"}
        with WebWriter(out, meta, overwrite=overwrite) as writer:
            counts = write_pages(state, writer)
            hosts = {host: behaviour.to_json() for host, behaviour in sorted(state.behaviours.items())}
            writer.set_meta("mess", {
                "version": MESS_VERSION, "profile": profile_name, "seed": seed,
                "options": profile.model_dump(mode="json"), "from": web.name, "hosts": hosts,
                "injected": counts, "script_links": state.moved_links,
            })
    finally:
        web.close()
    return MessReport(out, profile_name, profile, seed, counts, hosts, state.moved_links, state.html_dropped,
                      time.perf_counter() - started)
