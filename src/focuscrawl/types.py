"""The few value types every layer shares: what a fetch returns, what a policy observes, what a step emits.

They live at the bottom of the import graph so that webs, the engine and strategies can all use them
without knowing about each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Link:
    """A hyperlink as found on a page: absolute, normalised target URL and its anchor text."""

    url: str
    anchor: str = ""


@dataclass(slots=True)
class Page:
    """The result of fetching one URL, from any environment (offline store, loopback HTTP, real web).

    ``status`` is the HTTP status (0 for a network failure). ``final_url`` differs from ``url`` after
    redirects. ``text`` is the page's main text and ``outlinks`` its links; both are empty on failure.
    There is deliberately no label here: ground truth never travels with a page.
    """

    url: str
    final_url: str
    status: int
    content_type: str = ""
    title: str = ""
    text: str = ""
    outlinks: list[Link] = field(default_factory=list)
    html: str | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True, slots=True)
class Outlink:
    """A link handed to a policy: normalised, not yet fetched, its host not capped.

    ``new`` is False when the URL was already discovered from another page (policies that track all
    parents, such as Han et al.'s, use such re-discoveries; others may ignore them).
    """

    url: str
    anchor: str
    host: str
    new: bool


@dataclass(slots=True)
class Observation:
    """What a policy learns after the engine fetched the URL it selected.

    ``relevance`` is the topic classifier's probability on the fetched page and ``reward`` the
    reinforcement signal derived from it (1.0 when relevance >= 0.5), both from the agent's own
    classifier, never from ground truth. ``links`` are the page's outlinks after the engine's closure
    and per-domain filtering.
    """

    step: int
    url: str
    page: Page
    relevance: float
    reward: float
    links: list[Outlink]


@dataclass(frozen=True, slots=True)
class StepEvent:
    """One crawl step, as emitted to metrics, logs, progress displays and run folders.

    ``relevant`` is the ground-truth judgement when the environment has labels (offline webs), else None.
    ``decision_ms`` is the time spent inside the policy for this step (select + observe), fetching and
    reward computation excluded.
    """

    step: int
    url: str
    host: str
    status: int
    reward: float
    relevance: float
    relevant: bool | None
    frontier_size: int
    decision_ms: float
    parent: str | None
    depth: int
