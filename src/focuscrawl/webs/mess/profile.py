"""The mess profile: one settings model per pathology, the named profiles, and the kinds of the ground truth."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

Share = Annotated[float, Field(ge=0.0, le=1.0)]
Size = Annotated[int, Field(ge=1)]
Count = Annotated[int, Field(ge=0)]


class Pathology(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True


class Calendar(Pathology):
    """Event calendars: each day links to the previous and next day, month and year, and to a few events."""

    sections: Size = Field(3, description="calendars")
    injected_hosts: Count = Field(2, description="of them on a host of their own (events.HOST), the rest on a "
                                                "host of the web, linked from that host's pages")
    pages: Size = Field(3000, description="days materialised per calendar (past them: dead ends)")
    entry_share: Share = Field(0.02, description="share of pages with a link into a calendar")


class Pagination(Pathology):
    """Paginated listings that never end: page N links to N+1, N+10, the first and the last."""

    sections: Size = 3
    injected_hosts: Count = 0
    pages: Size = Field(2000, description="listing pages per section")
    items: Size = Field(10, description="pages of the web listed on each listing page")
    entry_share: Share = 0.02


class Facet(Pathology):
    """Faceted search: every combination of facet values and sort orders is a page linking to its neighbours."""

    sections: Size = 2
    injected_hosts: Count = 1
    facets: Size = Field(4, le=6, description="facets (year, type, region, format, language, level)")
    values: Size = Field(5, le=8, description="values per facet (plus 'any')")
    sorts: Size = Field(2, le=4, description="sort orders")
    items: Size = 8
    entry_share: Share = 0.02

    @property
    def pages(self) -> int:
        return (self.values + 1) ** self.facets * self.sorts


class Copies(Pathology):
    link_share: Share = Field(0.03, description="share of the links to an eligible page that lead to a copy instead")
    canonical_share: Share = Field(0.5, description="share of copies naming their original with rel=canonical")


class Session(Copies):
    """Session ids: a share of links into a host carry one; every link inside the session keeps it."""

    hosts: Size = Field(2, description="hosts with sessions (drawn with odds growing as their page count squared: "
                                       "the big hosts, where a crawl spends its budget)")
    sessions: Size = Field(4, description="session ids per host (half in the path, half in the query)")
    pages: Size = Field(1000, description="pages of the host copied per session")
    link_share: Share = 0.08
    canonical_share: Share = 0.3


class Tracking(Copies):
    """Tracking parameters (utm_*, fbclid, gclid) on links to a page; the site's own links stay clean."""

    variants: Size = Field(3, description="tracking URLs per page, at most")
    canonical_share: Share = 0.6


class Mirror(Copies):
    """Host mirrors: the www./bare host name and the other scheme serve the same pages."""

    hosts: Size = Field(1, description="hosts mirrored, each under both variants (drawn as session hosts are)")
    pages: Size = Field(1000, description="pages of the host copied per mirror")
    link_share: Share = 0.04


class Twin(Copies):
    """index.html and trailing-slash twins: /dir/ and /dir/index.html, /a.htm and /a.htm/."""


class NearDuplicate(Copies):
    """The same page at another URL (print, amp, replytocom, archive) with a changed banner, date or footer."""

    page_share: Share = Field(0.05, description="share of pages that have near-duplicates")
    copies: Size = Field(2, le=4, description="near-duplicates of such a page, at most")
    linked_share: Share = Field(0.5, description="share of such pages linking to their first one ('Printable "
                                                 "version')")
    link_share: Share = 0.02


class Redirect(Pathology):
    """Redirect chains that end at a page, and loops that end nowhere."""

    link_share: Share = Field(0.02, description="share of links replaced by a chain to the same page")
    min_hops: Size = 2
    max_hops: Size = Field(4, le=5)
    loop_share: Share = Field(0.005, description="share of pages with a link into a redirect loop")

    @model_validator(mode="after")
    def _hops(self) -> Redirect:
        if self.min_hops > self.max_hops:
            raise ValueError(f"min_hops ({self.min_hops}) is above max_hops ({self.max_hops})")
        return self


class SoftNotFound(Pathology):
    """Soft-404 hosts: any URL they have no page for answers 200 with a "page not found" page linking home."""

    hosts: Size = Field(2, description="soft-404 hosts (drawn as failing hosts are)")
    broken_share: Share = Field(0.02, description="share of their pages with a broken (mistyped) link")


class Failing(Pathology):
    """Hosts that fail: 500/503 errors (in bursts over HTTP), timeouts, slow bodies.

    The hosts are WEB's, the bigger the likelier; on a web with fewer hosts than asked for (Wikispeedia has
    one), the traps' own hosts make up the rest, WEB's hosts taking the first modes (errors, then timeout).
    """

    error_hosts: Count = 2
    error_share: Share = Field(0.1, description="share of an error host's URLs answering 500 or 503")
    burst: Count = Field(4, description="over HTTP, requests after an error that fail too")
    timeout_hosts: Count = 1
    timeout_share: Share = Field(0.3, description="share of a timeout host's URLs that never answer")
    hang_s: float = Field(90.0, gt=0, description="over HTTP, how long a timeout keeps a request waiting")
    slow_hosts: Count = 1
    slow_body_s: float = Field(20.0, ge=0, description="over HTTP, how long a slow host takes to send a body")


class Farm(Pathology):
    """Link farms: hosts of pages stuffed with the linking pages' most distinctive words, linking each other."""

    hosts: Size = 3
    pages: Size = Field(1500, description="pages per farm")
    entry_share: Share = Field(0.01, description="share of pages with a link into a farm")
    words: Size = Field(30, description="distinctive (tf-idf) words of a linking page a farm page is made of")
    links: Size = Field(20, description="links from a farm page to others")


class Script(Pathology):
    """Links that exist only in JavaScript: moved out of a page's HTML into a script that adds them."""

    page_share: Share = Field(0.1, description="share of pages with script-only links")
    link_share: Share = Field(0.5, description="share of such a page's links that only the script adds")


class MessProfile(BaseModel):
    """Every pathology of a messy web, on or off, with its sizes (``-s KIND.OPTION=VALUE`` sets one)."""

    model_config = ConfigDict(extra="forbid")

    calendar: Calendar = Field(default_factory=Calendar)
    pagination: Pagination = Field(default_factory=Pagination)
    facet: Facet = Field(default_factory=Facet)
    session: Session = Field(default_factory=Session)
    tracking: Tracking = Field(default_factory=Tracking)
    mirror: Mirror = Field(default_factory=Mirror)
    twin: Twin = Field(default_factory=Twin)
    near_duplicate: NearDuplicate = Field(default_factory=NearDuplicate)
    redirect: Redirect = Field(default_factory=Redirect)
    soft_404: SoftNotFound = Field(default_factory=SoftNotFound)
    failing: Failing = Field(default_factory=Failing)
    farm: Farm = Field(default_factory=Farm)
    script: Script = Field(default_factory=Script)

    @model_validator(mode="after")
    def _sections(self) -> MessProfile:
        for name in ("calendar", "pagination", "facet"):
            trap = getattr(self, name)
            if trap.injected_hosts > trap.sections:
                raise ValueError(f"{name}.injected_hosts ({trap.injected_hosts}) is above {name}.sections "
                                 f"({trap.sections})")
        return self

    def enabled(self) -> list[str]:
        return [name for name in type(self).model_fields if getattr(self, name).enabled]


def _profile_none() -> MessProfile:
    data = MessProfile().model_dump()
    for options in data.values():
        options["enabled"] = False
    return MessProfile.model_validate(data)


PROFILES: dict[str, MessProfile] = {"default": MessProfile(), "none": _profile_none()}

# The kinds of the ``injected`` table, in the order reports list them.
KINDS = ("calendar", "pagination", "facet", "farm", "session", "tracking", "mirror", "twin", "near-duplicate",
         "redirect", "redirect-loop", "soft-404", "dead-link")


def make_profile(name: str = "default", settings: Mapping[str, Any] | None = None) -> MessProfile:
    """The named profile with ``settings`` ("calendar.pages" -> 5000, ...) applied and checked."""
    if name not in PROFILES:
        raise ValueError(f"unknown mess profile {name!r} (known: {', '.join(PROFILES)})")
    data = PROFILES[name].model_dump()
    for key, value in (settings or {}).items():
        path = key.split(".")
        path[0] = path[0].replace("-", "_")  # the kind as written in the injected table: near-duplicate, soft-404
        node = data
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                raise ValueError(f"setting {key}: unknown setting (pathologies: {', '.join(data)})")
            node = node[part]
        node[path[-1]] = value
    return MessProfile.model_validate(data)
