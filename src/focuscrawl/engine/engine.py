"""The crawl loop: the one place that knows the order of select, fetch, score, observe.

The same ``CrawlEngine`` serves the offline benchmark (``run``, synchronous) and the real web (an async
driver calls ``next_selection`` for as many requests as it keeps in flight and ``record`` as they
complete). It owns everything that must be identical across strategies for a comparison to be fair: the
closure (never fetch a URL twice), URL normalisation, the per-domain cap, the budget and the event stream.

In a distributed crawl each shard's engine owns a partition of the hosts (``owns``): links to other hosts
do not enter its frontier but wait in ``outgoing`` for the shard to send them to their owner, and links
another shard found enter it through ``adopt``. Without ``owns`` nothing of that happens.

Its crawl state (closure, discovered URLs, host counters, selections in flight, the policy) can be
written out and read back (``snapshot`` / ``restore``): a run folder's checkpoints. Together with the
operation log of a run folder (``focuscrawl.crawl.resume``) that is the one resume mechanism.
"""

from __future__ import annotations

import io
import pickle
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from focuscrawl.engine.caps import DomainCap
from focuscrawl.engine.scope import Scope
from focuscrawl.policy import CrawlContext, Policy, adopt
from focuscrawl.types import (
    ForeignLinks,
    Observation,
    Outlink,
    Page,
    RelevanceModel,
    Selection,
    StepEvent,
)
from focuscrawl.urls import domain_of, normalize_url
from focuscrawl.web import Web

EventSink = Callable[[StepEvent], None]
REWARD_THRESHOLD = 0.5


@dataclass
class CrawlStats:
    steps: int = 0
    relevant: int = 0
    skipped_selections: int = 0
    decision_s: float = 0.0
    fetch_s: float = 0.0
    relevant_hosts: set[str] = field(default_factory=set)


# The engine attributes that are crawl state (``snapshot`` writes exactly these, with the policy); everything
# else is wiring or settings of this process (classifier, sinks, judge, budget: a resume may raise it).
_STATE = ("stats", "fetched", "parent", "depth", "fetches_per_host", "pending_per_host", "capped_hosts",
          "frontier_size", "_limit", "_in_flight", "_in_flight_per_host")


class CrawlEngine:
    """Drives one policy over one crawl. Ground truth (``judge``) only labels events, never reaches the policy."""

    def __init__(
        self,
        policy: Policy,
        classifier: RelevanceModel,
        *,
        budget: int,
        max_per_domain: DomainCap | str | int | None = None,
        judge: Callable[[str], bool] | None = None,
        sinks: Iterable[EventSink] = (),
        max_outlinks: int = 1000,
        scope: Scope | None = None,
        owns: Callable[[str], bool] | None = None,
    ):
        if budget <= 0:
            raise ValueError("budget must be positive")
        self.policy = policy
        self.classifier = classifier
        self.budget = budget
        self.cap = max_per_domain if isinstance(max_per_domain, DomainCap) else DomainCap.parse(max_per_domain)
        self.judge = judge
        self.sinks = list(sinks)
        self.max_outlinks = max_outlinks
        self.scope = scope if scope is not None else Scope()
        self.stats = CrawlStats()
        self.fetched: set[str] = set()
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        self.fetches_per_host: Counter[str] = Counter()
        self.pending_per_host: Counter[str] = Counter()
        self.capped_hosts: set[str] = set()
        self.frontier_size = 0
        self._limit = self.cap.limit(0, budget)
        # URL -> (its Selection, seconds of select calls it took): handed back at record time.
        self._in_flight: dict[str, tuple[Selection, float]] = {}
        self._in_flight_per_host: Counter[str] = Counter()
        self.context: CrawlContext | None = None
        # Distributed crawls: which URLs this shard owns (None: all), and links found for other shards since
        # the last take_outgoing(). Not crawl state: a resumed shard finds its sent links in its store.
        self.owns = owns
        self.outgoing: list[ForeignLinks] = []

    # -- setup ---------------------------------------------------------------------------------
    def start(self, context: CrawlContext) -> None:
        """Normalise the seeds, register them as discovered and hand the context to the policy."""
        seeds = []
        for raw in context.seeds:
            url = normalize_url(raw)
            if url is None:
                raise ValueError(f"seed {raw!r} is not an http(s) URL")
            out_of_scope = self.scope.reason(url, 0)
            if out_of_scope is not None:
                raise ValueError(f"seed {url} is out of the crawl's scope: {out_of_scope}")
            if self.owns is not None and not self.owns(url):
                continue  # another shard's seed
            if url not in self.parent:
                self._discover(url, None, domain_of(url))
                seeds.append(url)
        if not seeds and self.owns is None:
            raise ValueError("no seeds: a crawl needs at least one seed URL")
        context.seeds = seeds
        self.context = context
        started = time.perf_counter()
        self.policy.reset(context)
        self.stats.decision_s += time.perf_counter() - started

    # -- the step, split in two halves so that async drivers can interleave fetches ------------
    @property
    def done(self) -> bool:
        return self.stats.steps + len(self._in_flight) >= self.budget

    def next_selection(self) -> Selection | None:
        """Ask the policy for the next URL worth fetching; None when the budget or frontier is spent."""
        if self.done:
            return None
        started = time.perf_counter()
        try:
            while True:
                selection = self.policy.select()
                if selection is None:
                    return None
                url = selection.url
                host = domain_of(url)
                # Fetches in flight count against the cap: every fetch counts once recorded, whatever its
                # status, so a host whose cap they would reach is as good as capped (concurrent crawls).
                if (url in self.fetched or url in self._in_flight or host in self.capped_hosts
                        or self.fetches_per_host[host] + self._in_flight_per_host[host] >= self._limit):
                    self.stats.skipped_selections += 1
                    continue
                if url not in self.parent:
                    self._discover(url, None, host)
                self._in_flight[url] = (selection, time.perf_counter() - started)
                self._in_flight_per_host[host] += 1
                return selection
        finally:
            self.stats.decision_s += time.perf_counter() - started

    def record(self, url: str, page: Page, fetch_s: float = 0.0) -> StepEvent:
        """Account for the fetch of ``url``, a URL of ``next_selection``: closure, caps, reward, observation, event.

        (A URL the engine did not select, which only tests do, is observed as a bare selection.)
        """
        host = domain_of(url)
        selection, select_s = Selection(url), 0.0
        if url in self._in_flight:
            selection, select_s = self._in_flight.pop(url)
            self._in_flight_per_host[host] -= 1
        step = self.stats.steps
        self.stats.steps += 1
        self.stats.fetch_s += fetch_s
        self._mark_fetched(url, host)

        final_url = url
        if page.final_url and page.final_url != url:
            final_url = normalize_url(page.final_url) or url
        duplicate = False
        if final_url != url:
            duplicate = final_url in self.fetched
            if not duplicate:
                # A redirect's target joins the closure; the fetch was counted once, against the host asked.
                self._mark_fetched(final_url, domain_of(final_url), counts=False)

        relevance = 0.0
        if page.ok and not duplicate and (page.text or page.title):
            text = f"{page.title}\n{page.text}"
            if getattr(self.classifier, "learns_online", False):  # an OnlineRelevanceModel
                relevance = float(self.classifier.predict_page(text))
                self.classifier.learn_one(text)  # a self-training model learns from every page it scores
            else:
                relevance = float(self.classifier.predict_proba([text])[0])
        reward = 1.0 if relevance >= REWARD_THRESHOLD else 0.0
        # a redirect that left the scope (another domain, an excluded path) is fetched, but not followed further
        followed = not duplicate and self.scope.allows(final_url, self.depth.get(url, 0))
        foreign: list[tuple[str, str]] = []
        links = self._new_links(url, page, foreign) if followed else []
        # a redirect into another shard's hosts: that shard must learn the target is fetched, or it fetches it again
        fetched_elsewhere = [final_url] if (final_url != url and not duplicate and self.owns is not None
                                            and not self.owns(final_url)) else []
        if foreign or fetched_elsewhere:
            sent = Page(url=page.url, final_url=page.final_url, status=page.status, content_type=page.content_type,
                        title=page.title, text=page.text, outlinks=list(page.outlinks))
            self.outgoing.append(ForeignLinks(url, sent, relevance, reward, self.depth.get(url, 0), foreign,
                                              fetched_elsewhere))

        started = time.perf_counter()
        self.policy.observe(Observation(step, selection, page, relevance, reward, links))
        observe_s = time.perf_counter() - started
        self.stats.decision_s += observe_s

        relevant = None
        if self.judge is not None:
            relevant = bool(page.ok and not duplicate and self.judge(final_url))
            if relevant:
                self.stats.relevant += 1
                self.stats.relevant_hosts.add(domain_of(final_url))
        self._update_cap(step + 1)
        event = StepEvent(
            step=step,
            url=url,
            host=host,
            status=page.status,
            reward=reward,
            relevance=relevance,
            relevant=relevant,
            frontier_size=self.frontier_size,
            decision_ms=(select_s + observe_s) * 1000.0,
            parent=self.parent.get(url),
            depth=self.depth.get(url, 0),
            score=selection.score,
            reason=selection.reason,
        )
        for sink in self.sinks:
            sink(event)
        return event

    def run(self, web: Web) -> CrawlStats:
        """Synchronous loop for in-process environments such as offline webs."""
        while not self.done:
            selection = self.next_selection()
            if selection is None:
                break
            started = time.perf_counter()
            page = web.fetch(selection.url)
            self.record(selection.url, page, time.perf_counter() - started)
        return self.stats

    # -- distributed crawls: links across shards ---------------------------------------------------
    def take_outgoing(self) -> list[ForeignLinks]:
        """The links found for other shards since the last call (each parent page's, in step order)."""
        outgoing, self.outgoing = self.outgoing, []
        return outgoing

    def adopt(self, foreign: ForeignLinks) -> int:
        """Links another shard found enter this shard's closure bookkeeping and its policy's frontier.

        Filtered as a page's own outlinks are (fetched, capped, not owned here, duplicates); the policy gets
        them in a ``foreign`` Observation of the parent page (``focuscrawl.policy.adopt``). Returns how many it got.
        """
        for url in foreign.fetched:  # fetched by the sender (a redirect's target): closure only, no fetch counted
            if url not in self.fetched and (self.owns is None or self.owns(url)):
                self._mark_fetched(url, domain_of(url), counts=False)
        links: list[Outlink] = []
        seen: set[str] = set()
        for url, anchor in foreign.links:
            if url in seen or url in self.fetched or (self.owns is not None and not self.owns(url)):
                continue
            seen.add(url)
            host = domain_of(url)
            if host in self.capped_hosts:
                continue
            new = url not in self.parent
            if new and not self.scope.allows(url, foreign.depth + 1):
                continue
            if new:
                self._discover(url, foreign.parent, host)
                self.depth[url] = foreign.depth + 1
            links.append(Outlink(url, anchor, host, new))
        if links:
            started = time.perf_counter()
            adopt(self.policy, Observation(self.stats.steps, Selection(foreign.parent), foreign.page,
                                          foreign.relevance, foreign.reward, links, foreign=True))
            self.stats.decision_s += time.perf_counter() - started
        return len(links)

    @property
    def in_flight(self) -> list[str]:
        """URLs selected and not yet recorded, in selection order."""
        return list(self._in_flight)

    # -- checkpoints -----------------------------------------------------------------------------
    def snapshot(self) -> bytes:
        """The crawl state and the policy, pickled; the run's inputs by reference only.

        The context's topic and classifier (and an oracle's judge) are rebuilt identically on resume, and may
        be large or hold open files, so a checkpoint names them instead of copying them. Raises what pickle
        raises for a policy that breaks the contract by being unpicklable.
        """
        assert self.context is not None, "start() first"
        buffer = io.BytesIO()
        state = {name: getattr(self, name) for name in _STATE}
        if getattr(self.classifier, "learns_online", False):  # crawl state of its own: checkpointed with it
            state["classifier"] = self.classifier
        _InputsPickler(buffer, self._shared_inputs()).dump((state, self.policy))
        return buffer.getvalue()

    def restore(self, blob: bytes) -> None:
        """Replace the crawl state and the policy by a ``snapshot`` of the same crawl (same inputs)."""
        state, policy = _InputsUnpickler(io.BytesIO(blob), self._shared_inputs()).load()
        for name in _STATE:
            setattr(self, name, state[name])
        if "classifier" in state:  # the policy's reference came back with it, in the same pickle
            self.classifier = state["classifier"]
        self.policy = policy

    def _shared_inputs(self) -> list[object]:
        context = self.context
        assert context is not None
        # a classifier that learns online has crawl state of its own: snapshot() writes it with the crawl
        classifiers = [] if getattr(self.classifier, "learns_online", False) else [context.classifier, self.classifier]
        return [context.topic, *classifiers, self.judge]

    # -- bookkeeping ---------------------------------------------------------------------------
    def _discover(self, url: str, parent: str | None, host: str) -> None:
        self.parent[url] = parent
        self.depth[url] = 0 if parent is None else self.depth.get(parent, 0) + 1
        if host not in self.capped_hosts:
            self.pending_per_host[host] += 1
            self.frontier_size += 1

    def _mark_fetched(self, url: str, host: str, counts: bool = True) -> None:
        """``url`` joins the closure; ``counts``: it was a fetch attempt, which the per-domain cap counts."""
        if url in self.fetched:
            return
        self.fetched.add(url)
        if url in self.parent and host not in self.capped_hosts and self.pending_per_host[host] > 0:
            self.pending_per_host[host] -= 1
            self.frontier_size -= 1
        if counts:
            self.fetches_per_host[host] += 1
            if self.fetches_per_host[host] >= self._limit:
                self._cap_host(host)

    def _cap_host(self, host: str) -> None:
        if host in self.capped_hosts:
            return
        self.capped_hosts.add(host)
        self.frontier_size -= self.pending_per_host.pop(host, 0)
        self.policy.on_host_capped(host)

    def _update_cap(self, next_step: int) -> None:
        limit = self.cap.limit(next_step, self.budget)
        if limit < self._limit:
            self._limit = limit
            for host, count in list(self.fetches_per_host.items()):
                if count >= limit:
                    self._cap_host(host)

    def _new_links(self, parent: str, page: Page, foreign: list[tuple[str, str]]) -> list[Outlink]:
        """The page's outlinks for the policy; those to hosts another shard owns go to ``foreign`` instead."""
        links: list[Outlink] = []
        seen: set[str] = set()
        depth = self.depth.get(parent, 0) + 1
        for link in page.outlinks:
            url = normalize_url(link.url)
            if url is None or url in seen or url in self.fetched or url == parent:
                continue
            seen.add(url)
            if self.owns is not None and not self.owns(url):
                if self.scope.allows(url, depth):
                    foreign.append((url, link.anchor))  # its owner filters and caps it
                    if len(links) + len(foreign) >= self.max_outlinks:
                        break
                continue
            host = domain_of(url)
            if host in self.capped_hosts:
                continue
            new = url not in self.parent
            if new and not self.scope.allows(url, depth):
                continue  # out of scope: never in the frontier, never a step
            if new:
                self._discover(url, parent, host)
            links.append(Outlink(url, link.anchor, host, new))
            if len(links) + len(foreign) >= self.max_outlinks:
                break
        return links


class _InputsPickler(pickle.Pickler):
    """Writes the crawl's shared inputs as references (their index) instead of their contents."""

    def __init__(self, file, inputs: list[object]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._ids = {id(obj): i for i, obj in enumerate(inputs) if obj is not None}

    def persistent_id(self, obj):
        return self._ids.get(id(obj))


class _InputsUnpickler(pickle.Unpickler):
    def __init__(self, file, inputs: list[object]):
        super().__init__(file)
        self._inputs = inputs

    def persistent_load(self, pid):
        return self._inputs[pid]
