"""The few value types every layer shares: what a fetch returns, what a policy observes, what a step emits,
what a user says a topic is, and the shape of a relevance classifier.

They live at the bottom of the import graph so that webs, topics, the engine and strategies can all use
them without knowing about each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

# ``Page.error`` phrases written by the fetchers (HTTP, Scrapy) and read by the engine's host breaker
# (``focuscrawl.engine.defences.hosts``): in the error text, so that a run folder's stored pages replay the same.
DNS_FAILURE = "DNS lookup failed"  # "DNS lookup failed for a.example: ...": the host's name did not resolve
RETRY_AFTER = "retry after "  # "retry after 120 s": a 429 or 503 answer's Retry-After, in seconds from the answer


def retry_after_error(seconds: float) -> str:
    """The error of a 429 or 503 answer that said when to come back (``retry_after_of`` reads it)."""
    return f"{RETRY_AFTER}{max(0.0, seconds):g} s"


def retry_after_of(error: str) -> float | None:
    """The seconds a ``retry_after_error`` says, or None for any other error."""
    if not error.startswith(RETRY_AFTER):
        return None
    try:
        return float(error[len(RETRY_AFTER):].split()[0])
    except (ValueError, IndexError):
        return None


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
    ``canonical`` is the URL the page names as its own with ``<link rel="canonical">`` or a ``Link: <...>;
    rel="canonical"`` header (normalised), when it does: a hint, from the site, that two URLs are one document.
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
    canonical: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@runtime_checkable
class Web(Protocol):
    """Something that can be fetched. Knows nothing about topics or policies.

    ``fetch`` takes a normalised URL and always returns a Page (failures are pages with a non-2xx
    status, never exceptions), because on the real web a failed fetch is an ordinary outcome that
    still costs a crawl step.
    """

    def fetch(self, url: str) -> Page: ...


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


@dataclass(frozen=True, slots=True)
class Selection:
    """A policy's answer to "what next?": the URL, why, and what it wants back when the page arrives.

    ``score`` is the strategy's own value of the choice (a priority, a Q-value; None for a random or
    exploring pick) and ``reason`` a few words a user can read ("linked from 3 crawled pages of relevance
    2.71 in all", "exploring a new site"); both go to ``pages.jsonl``. ``memo`` is opaque to the engine: whatever the
    policy knew at selection time (the chosen action's features, say). The engine hands the same Selection back
    in the matching ``Observation``, however many fetches are in flight, so no policy keeps a table of
    pending selections.
    """

    url: str
    score: float | None = None
    reason: str = ""
    memo: Any = None


@dataclass(slots=True)
class Observation:
    """What a policy learns after the engine fetched the URL of one of its selections.

    ``relevance`` is the topic classifier's probability on the fetched page and ``reward`` the
    reinforcement signal derived from it (1.0 when relevance reaches the classifier's ``decision_point``, 0.5 unless
    it names another), both from the agent's own
    classifier, never from ground truth. ``links`` are the page's outlinks after the engine's closure
    and per-domain filtering.

    ``foreign`` (``Policy.adopt``): links that are not a fetch of one of this policy's selections. In a distributed
    crawl the page was fetched by another shard, which owns its host, and ``links`` are its outlinks to hosts this
    shard owns; in a Scrapy crawl the page was fetched outside the policy; in a crawl over HTTP ``links`` are the
    URLs of the page's site's sitemap (the page: the first the crawl fetched on it). The selection is a bare one
    (``memo`` None) and ``step`` is this crawl's (shard's) step count: nothing of this policy's was fetched.
    """

    step: int
    selection: Selection
    page: Page
    relevance: float
    reward: float
    links: list[Outlink]
    foreign: bool = False

    @property
    def url(self) -> str:
        return self.selection.url


@dataclass(slots=True)
class ForeignLinks:
    """Links a page has to hosts another shard owns (distributed crawls), with what that shard's policy needs.

    ``page`` is the parent as fetched (title, text and outlinks; no HTML), ``relevance`` and ``reward`` the
    sending shard's classifier's verdict on it, ``depth`` its depth; ``links`` are (URL, anchor) pairs,
    normalised, all owned by the receiving shard. ``fetched``: URLs of the receiving shard that the sender
    has fetched already (the target of a redirect from one of its own URLs), for the receiver's closure.
    """

    parent: str
    page: Page
    relevance: float
    reward: float
    depth: int
    links: list[tuple[str, str]]
    fetched: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StepEvent:
    """One crawl step, as emitted to metrics, logs, progress displays and run folders.

    ``relevant`` is the ground-truth judgement when the environment has labels (offline webs), else None.
    ``decision_ms`` is the time spent inside the policy for this step (the select that chose it and the
    observe of its page), fetching and reward computation excluded. ``score`` and ``reason`` are the
    policy's, from the step's ``Selection``.

    ``verdict`` is why the engine's defences (``focuscrawl.engine.defences``) gave the page no reward and no
    links, or "" when they did not: ``duplicate of URL``, ``soft 404``, ``trap pattern``, ``host failing``,
    ``link farm``, or ``soft-404 probe`` for a fetch the engine made itself. ``skipped`` lists the URLs the
    defences kept out of the frontier at this step, each with why (a closed trap pattern's, failing host's or
    link farm's pending URLs and links; pending URLs a learned URL alias names as copies of others, ``duplicate
    of URL``), so that nothing is dropped silently.
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
    score: float | None = None
    reason: str = ""
    verdict: str = ""
    skipped: tuple[tuple[str, str], ...] = ()


@dataclass
class TopicInputs:
    """What a user hands a focused crawler for a topic: keywords, perhaps a sentence describing it, labelled
    example texts (no URLs; possibly none) and seeds.

    ``example_labels[i]`` is 1 when ``example_texts[i]`` is on topic, else 0. No ground truth beyond these.
    """

    name: str
    keywords: list[str]
    example_texts: list[str]
    example_labels: list[int]
    seeds: list[str] = field(default_factory=list)
    description: str = ""

    def __post_init__(self) -> None:
        if len(self.example_texts) != len(self.example_labels):
            raise ValueError("example_texts and example_labels differ in length")
        if self.example_labels and len(set(self.example_labels)) < 2:
            raise ValueError(f"topic {self.name!r} needs both relevant and irrelevant example texts")


@runtime_checkable
class RelevanceModel(Protocol):
    """A relevance classifier: ``fit`` on labelled texts, then ``predict_proba`` in batches (P(on topic) per text).

    Implementations live in ``focuscrawl.topic``; the engine and the strategies only call ``predict_proba``. A model
    may say where it decides with a ``threshold`` attribute (``decision_point``); without one it decides at 0.5.
    """

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> RelevanceModel: ...

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray: ...


REWARD_THRESHOLD = 0.5  # where a judge that names no threshold of its own calls a page on topic


def decision_point(model: object) -> float:
    """The probability at and above which ``model`` calls a page on topic: its ``threshold`` if it names one, else
    0.5. A judge calibrated to its examples' prior (topic.vector_judge) decides where its uncalibrated self said
    one half, below 0.5: rewarding at 0.5 would reward fewer pages than it calls on topic, and a crawl that learns
    from its rewards would then move with the judge's scale rather than with its verdicts."""
    return float(getattr(model, "threshold", REWARD_THRESHOLD))


@runtime_checkable
class OnlineRelevanceModel(RelevanceModel, Protocol):
    """A relevance model that learns from the crawl itself (``learns_online = True``; a topic from keywords).

    The engine asks it about each fetched page with ``predict_page`` (which may use what is too dear for
    link contexts, such as a sentence transformer), then hands it the page with ``learn_one``; strategies
    call ``predict_proba`` on link contexts as with any model. Its state is crawl state: checkpointed with
    the crawl.
    """

    learns_online: bool

    def predict_page(self, text: str) -> float: ...

    def learn_one(self, text: str) -> None: ...


@runtime_checkable
class PageJudgingModel(RelevanceModel, Protocol):
    """A relevance model that judges a fetched page from the page itself, not only its text: a user's judge
    (``focuscrawl.topic.judges``, ``--judge``). The engine asks it about each fetched page with ``judge_page`` (a
    probability in [0, 1]); strategies call ``predict_proba`` on link contexts as with any model."""

    def judge_page(self, page: Page) -> float: ...
