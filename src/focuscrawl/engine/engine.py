"""The crawl loop: the one place that knows the order of select, fetch, score, observe.

The same ``CrawlEngine`` serves the offline benchmark (``run``, synchronous) and the real web (an async
driver calls ``next_selection`` for as many requests as it keeps in flight and ``record`` as they
complete). It owns everything that must be identical across strategies for a comparison to be fair: the
closure (never fetch a URL twice), URL normalisation, the per-domain cap, the budget and the event stream, and
the defences against the messy web (``focuscrawl.engine.defences``, one pipeline of hooks: tracking and session
parameters, copies, URL aliases, soft 404s, failing hosts, trap patterns, link farms), so that every strategy meets
the same web through them.

In a distributed crawl each shard's engine owns a partition of the hosts (``owns``): links to other hosts
do not enter its frontier but wait in ``outgoing`` for the shard to send them to their owner, and links
another shard found enter it through ``adopt``. Without ``owns`` nothing of that happens.

Its crawl state (closure, discovered URLs, host counters, selections in flight, the policy) can be
written out and read back (``snapshot`` / ``restore``): a run folder's checkpoints. Together with the
operation log of a run folder (``focuscrawl.crawl.resume``) that is the one resume mechanism.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from focuscrawl.engine import checkpoint
from focuscrawl.engine.caps import DomainCap
from focuscrawl.engine.defences import Defences, Fetch
from focuscrawl.engine.scope import Scope
from focuscrawl.policy import CrawlContext, Policy, Ready, adopt
from focuscrawl.types import (
    ForeignLinks,
    Observation,
    Outlink,
    Page,
    RelevanceModel,
    Selection,
    StepEvent,
    Web,
    decision_point,
)
from focuscrawl.urls import normalize_url, site_of

if TYPE_CHECKING:
    from focuscrawl.topic.thin import ThinPages

EventSink = Callable[[StepEvent], None]


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
          "frontier_size", "_limit", "_in_flight", "_in_flight_per_host", "kept_out", "defences", "thin_pages")


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
        defences: Defences | None = None,
        thin_pages: ThinPages | None = None,
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
        # the defences' state is crawl state (checkpointed); without any the engine is as it always was
        self.defences = defences if defences is not None else Defences()
        self.thin_pages = thin_pages  # a page much shorter than the topic's examples is judged by its length too
        self.stats = CrawlStats()
        self.fetched: set[str] = set()
        self.parent: dict[str, str | None] = {}
        self.depth: dict[str, int] = {}
        self.fetches_per_host: Counter[str] = Counter()
        self.pending_per_host: Counter[str] = Counter()
        self.capped_hosts: set[str] = set()
        self.kept_out: set[str] = set()  # URLs the defences kept out of the frontier (listed once, when they were)
        # The crawl's clock as its driver gives it with each record (``record(at=)``: the wall clock over HTTP);
        # None in a crawl without one (offline webs), whose defences count time in steps.
        self.clock_s: float | None = None
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
            url = self.normalize(raw)
            if url is None:
                raise ValueError(f"seed {raw!r} is not an http(s) URL")
            out_of_scope = self.scope.reason(url, 0)
            if out_of_scope is not None:
                raise ValueError(f"seed {url} is out of the crawl's scope: {out_of_scope}")
            if self.owns is not None and not self.owns(url):
                continue  # another shard's seed
            if url not in self.parent:
                self._discover(url, None, site_of(url))
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

    def next_selection(self, ready: Ready | None = None) -> Selection | None:
        """Ask the policy for the next URL worth fetching; None when the budget or frontier is spent.

        ``ready(host)``: whether a fetch from the host could start now (a polite driver's hint, passed on to
        ``Policy.select_ready`` with the hosts the defences hold back, those backing off, refused)."""
        if self.done:
            return None
        started = time.perf_counter()
        defences = self.defences
        if ready is not None and defences.holds_hosts:
            ready = _not_held_back(ready, defences, self.stats.steps)
        try:
            while True:
                # the defences' own first: a soft-404 probe, a parked selection whose host's back-off is over
                own = defences.own_selection(self, self.stats.steps)
                if own is None:
                    selection = self.policy.select() if ready is None else self.policy.select_ready(ready)
                    if selection is None:
                        # nothing else to fetch, and no fetch in flight that could bring more: a host still backing
                        # off is tried now rather than never (with fetches in flight, their driver asks again later)
                        own = None if self._in_flight else defences.own_selection(self, self.stats.steps, anyway=True)
                        if own is None:
                            return None
                selection, earlier_s = own if own is not None else (selection, 0.0)
                url = selection.url
                host = site_of(url)
                probe = defences.is_own(url)
                # Fetches in flight count against the cap: every fetch counts once recorded, whatever its
                # status, so a host whose cap they would reach is as good as capped (concurrent crawls).
                if (url in self.fetched or url in self._in_flight or host in self.capped_hosts
                        or self.fetches_per_host[host] + self._in_flight_per_host[host] >= self._limit
                        or (not probe and defences.refuse(url, host, self))):
                    self.stats.skipped_selections += 1
                    continue
                holdable = own is None and not probe  # a selection the defences gave back is not held again
                if holdable and defences.hold(selection, time.perf_counter() - started, host, self.stats.steps):
                    continue
                if url not in self.parent and not probe:
                    self._discover(url, None, host)
                self._in_flight[url] = (selection, earlier_s + time.perf_counter() - started)
                self._in_flight_per_host[host] += 1
                return selection
        finally:
            self.stats.decision_s += time.perf_counter() - started

    def record(self, url: str, page: Page, fetch_s: float = 0.0, at: float | None = None) -> StepEvent:
        """Account for the fetch of ``url``, a URL of ``next_selection``: closure, defences, reward, observation, event.

        ``at``: the wall clock (seconds) of this record, in a crawl that has one (over HTTP: the driver logs it, and
        a resume gives it again); the host breaker's time. (A URL the engine did not select, which only tests do,
        is observed as a bare selection.)
        """
        if at is not None:
            self.clock_s = at
        host = site_of(url)
        selection, select_s = Selection(url), 0.0
        if url in self._in_flight:
            selection, select_s = self._in_flight.pop(url)
            self._in_flight_per_host[host] -= 1
        step = self.stats.steps
        self.stats.steps += 1
        self.stats.fetch_s += fetch_s
        self._mark_fetched(url, host)
        fetch = self._fetched(url, host, page, step)
        # the defences judge the page before it is scored, then with its score and links (pipeline.Defences)
        self.defences.inspect(fetch, self)
        if not fetch.verdict:
            fetch.relevance = self.relevance(page)
            # a redirect that left the scope (another domain, an excluded path) is fetched, but not followed further
            if self.scope.allows(fetch.final_url, self.depth.get(url, 0)):
                fetch.links = self._candidates(url, page)
        fetch.rewarded = self.rewards(fetch.relevance)
        self.defences.review(fetch, self)
        reward = 1.0 if self.rewards(fetch.relevance) else 0.0
        foreign: list[tuple[str, str]] = []
        links = self._new_links(url, fetch.links, foreign, fetch.skipped) if fetch.links else []
        self._send_foreign(fetch, reward, foreign)
        observe_s = 0.0
        if not fetch.own:  # a defence's own fetch: no selection of the policy's to answer
            # a page the defences caught is shown empty: no new evidence
            shown = Page(url=page.url, final_url=page.final_url, status=page.status, content_type=page.content_type,
                         error=page.error) if fetch.hidden else page
            started = time.perf_counter()
            self.policy.observe(Observation(step, selection, shown, fetch.relevance, reward, links))
            observe_s = time.perf_counter() - started
            self.stats.decision_s += observe_s
        relevant = None
        if self.judge is not None:
            relevant = bool(page.ok and not fetch.verdict and self.judge(fetch.final_url))
            if relevant:
                self.stats.relevant += 1
                self.stats.relevant_hosts.add(site_of(fetch.final_url))
        self._update_cap(step + 1)
        event = StepEvent(step=step, url=url, host=host, status=page.status, reward=reward, relevance=fetch.relevance,
                          relevant=relevant, frontier_size=self.frontier_size,
                          decision_ms=(select_s + observe_s) * 1000.0, parent=self.parent.get(url),
                          depth=self.depth.get(url, 0), score=selection.score, reason=selection.reason,
                          verdict=fetch.verdict, skipped=tuple(fetch.skipped))
        for sink in self.sinks:
            sink(event)
        return event

    def _fetched(self, url: str, host: str, page: Page, step: int) -> Fetch:
        """The fetch as the defences judge it. A redirect's target joins the closure, counted once against the host
        asked; a redirect to a page fetched before is a duplicate of it (no reward, no links, as always)."""
        final_url = url
        if page.final_url and page.final_url != url:
            final_url = self.normalize(page.final_url) or url
        duplicate = final_url != url and final_url in self.fetched
        fetch = Fetch(self.defences, url, final_url, host, page, step, self.defences.is_own(url), duplicate)
        if final_url != url and not duplicate:
            self._mark_fetched(final_url, site_of(final_url), counts=False)
            fetch.joined.append(final_url)
        return fetch

    def _send_foreign(self, fetch: Fetch, reward: float, foreign: list[tuple[str, str]]) -> None:
        """Links into other shards' hosts go to their owners; so does a redirect (or canonical) into their hosts:
        that shard must learn the target is fetched, or it fetches it again."""
        fetched_elsewhere = [u for u in fetch.joined if self.owns is not None and not self.owns(u)]
        if foreign or fetched_elsewhere:
            page = fetch.page
            sent = Page(url=page.url, final_url=page.final_url, status=page.status, content_type=page.content_type,
                        title=page.title, text=page.text, outlinks=list(page.outlinks))
            self.outgoing.append(ForeignLinks(fetch.url, sent, fetch.relevance, reward, self.depth.get(fetch.url, 0),
                                              foreign, fetched_elsewhere))

    def relevance(self, page: Page, learn: bool = True) -> float:
        """The agent's classifier's probability that ``page`` is on topic (0 for a failed or empty page). A model
        that learns online (an ``OnlineRelevanceModel``) learns from the page too, if ``learn``; a user's judge with
        ``judge_page`` is given the page itself."""
        if not (page.ok and (page.text or page.title)):
            return 0.0
        judge_page = getattr(self.classifier, "judge_page", None)
        if judge_page is not None:  # a user's judge (focuscrawl.topic.judges) reads the whole page, and its answer
            return judge_page(page)  # is the relevance as it is: the user's model, not the topic's, is the judge
        text = f"{page.title}\n{page.text}"
        if getattr(self.classifier, "learns_online", False):
            relevance = float(self.classifier.predict_page(text))
            if learn:
                self.classifier.learn_one(text)  # a self-training model learns from every page it scores
        else:
            relevance = float(self.classifier.predict_proba([text])[0])
        if self.thin_pages is None:
            return relevance
        return self.thin_pages.shrink(relevance, page.text, site_of(page.final_url or page.url),
                                      decision_point(self.classifier), learn)

    def rewards(self, relevance: float) -> bool:
        """Whether a page of this relevance is rewarded: at or above the classifier's ``decision_point``."""
        return relevance >= decision_point(self.classifier)

    def is_short(self, text: str) -> bool | None:
        """The text is under the topic's thin-page floor; None for a topic without one (``defences.Crawl``)."""
        return None if self.thin_pages is None else self.thin_pages.is_short(text)

    def is_probe(self, url: str) -> bool:
        """Whether ``url`` is a fetch a defence makes itself (a soft-404 probe), not one of the policy's selections:
        a driver fetches it as any other, and ``record`` observes it without the policy."""
        return self.defences.is_own(url)

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
        """Links another shard found (or, in a Scrapy crawl, a page fetched outside the policy) enter this shard's
        closure bookkeeping and its policy's frontier.

        Filtered as a page's own outlinks are (fetched, capped, not owned here, duplicates); the policy gets
        them in a ``foreign`` Observation of the parent page (``focuscrawl.policy.adopt``). Returns how many it got.
        """
        for url in foreign.fetched:  # fetched by the sender (a redirect's target): closure only, no fetch counted
            if url not in self.fetched and (self.owns is None or self.owns(url)):
                self._mark_fetched(url, site_of(url), counts=False)
        links: list[Outlink] = []
        seen: set[str] = set()
        for url, anchor in foreign.links:
            if url in seen or url in self.fetched or (self.owns is not None and not self.owns(url)):
                continue
            seen.add(url)
            host = site_of(url)
            if host in self.capped_hosts or self.defences.refuse(url, host, self):
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
        state = {name: getattr(self, name) for name in _STATE}
        if getattr(self.classifier, "learns_online", False):  # crawl state of its own: checkpointed with it
            state["classifier"] = self.classifier
        return checkpoint.dump((state, self.policy), self._shared_inputs())

    def restore(self, blob: bytes) -> None:
        """Replace the crawl state and the policy by a ``snapshot`` of the same crawl (same inputs). Raises
        ``checkpoint.CheckpointFormatError`` for a snapshot of another format (another version of focuscrawl)."""
        state, policy = checkpoint.load(blob, self._shared_inputs())
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
    def normalize(self, url: str) -> str | None:
        """A URL as the crawl keeps it (its closure's and its selections' key): ``normalize_url``, then the
        defences' rewriting (URL hygiene, URL aliases). None for a URL that is not http(s)."""
        return self.defences.url(normalize_url(url))

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
        if (url in self.parent and host not in self.capped_hosts and self.pending_per_host[host] > 0
                and url not in self.kept_out):
            self.pending_per_host[host] -= 1
            self.frontier_size -= 1
        if counts:
            self.fetches_per_host[host] += 1
            if self.fetches_per_host[host] >= self._limit:
                self._cap_host(host)

    def _cap_host(self, host: str) -> list[str]:
        """Close ``host``; the URLs of the selections the defences held for it, dropped as its pending ones are."""
        if host in self.capped_hosts:
            return []
        self.capped_hosts.add(host)
        self.frontier_size -= self.pending_per_host.pop(host, 0)
        dropped = self.defences.host_closed(host)
        self.policy.on_host_capped(host)
        return dropped

    def _pending(self, keep: Callable[[str], bool]) -> list[str]:
        """Discovered URLs not fetched, not in flight, not kept out before, on open hosts, for which ``keep`` holds."""
        kept_out, fetched, in_flight, capped = self.kept_out, self.fetched, self._in_flight, self.capped_hosts
        return [url for url in self.parent if url not in fetched and url not in kept_out and url not in in_flight
                and keep(url) and site_of(url) not in capped]

    # -- what the defences ask of the crawl (pipeline.Crawl) -----------------------------------------
    def known(self, url: str) -> bool:
        return url in self.parent or url in self.fetched or url in self._in_flight

    def askable(self, url: str) -> bool:
        return (url not in self.fetched and url not in self._in_flight and url not in self.parent
                and site_of(url) not in self.capped_hosts and self.scope.allows(url, 0)
                and (self.owns is None or self.owns(url)))

    def depth_of(self, url: str) -> int:
        return self.depth.get(url, 0)

    def join(self, fetch: Fetch, url: str) -> None:
        if url not in self.fetched and url not in self._in_flight:
            self._mark_fetched(url, site_of(url), counts=False)
            fetch.joined.append(url)

    def close_host(self, host: str, why: str) -> list[tuple[str, str]]:
        """A failing host or a link farm is closed as a capped host is; its pending and held URLs, with ``why``."""
        pending = self._pending(lambda url: site_of(url) == host)
        return [(url, why) for url in dict.fromkeys(pending + self._cap_host(host))]

    def drop_pending(self, why: Callable[[str], str]) -> list[tuple[str, str]]:
        dropped = []
        for url in self._pending(lambda url: True):
            reason = why(url)
            if reason:
                self.kept_out.add(url)
                host = site_of(url)
                if self.pending_per_host[host] > 0:
                    self.pending_per_host[host] -= 1
                    self.frontier_size -= 1
                dropped.append((url, reason))
        return dropped

    def _update_cap(self, next_step: int) -> None:
        limit = self.cap.limit(next_step, self.budget)
        if limit < self._limit:
            self._limit = limit
            for host, count in list(self.fetches_per_host.items()):
                if count >= limit:
                    self._cap_host(host)

    def _candidates(self, parent: str, page: Page) -> list[tuple[str, str]]:
        """The page's outlinks as the crawl keeps URLs, once each, without fetched ones: (URL, anchor)."""
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for link in page.outlinks:
            url = self.normalize(link.url)
            if url is None or url in seen or url in self.fetched or url == parent:
                continue
            seen.add(url)
            out.append((url, link.anchor))
        return out

    def fresh(self, candidates: list[tuple[str, str]], depth: int) -> Iterator[str]:
        """The candidates that would enter the frontier as URLs never discovered before."""
        for url, _ in candidates:
            if url in self.parent or (self.owns is not None and not self.owns(url)):
                continue
            host = site_of(url)
            if (host not in self.capped_hosts and not self.defences.refuse(url, host, self)
                    and self.scope.allows(url, depth)):
                yield url

    def _new_links(self, parent: str, candidates: list[tuple[str, str]], foreign: list[tuple[str, str]],
                   skipped: list[tuple[str, str]]) -> list[Outlink]:
        """The page's outlinks for the policy; those to hosts another shard owns go to ``foreign`` instead, those
        the defences keep out to ``skipped``."""
        links: list[Outlink] = []
        depth = self.depth.get(parent, 0) + 1
        for url, anchor in candidates:
            if self.owns is not None and not self.owns(url):
                if self.scope.allows(url, depth):
                    foreign.append((url, anchor))  # its owner filters and caps it
                    if len(links) + len(foreign) >= self.max_outlinks:
                        break
                continue
            host = site_of(url)
            refused = self.defences.refuse(url, host, self)
            if refused:
                if url not in self.kept_out:  # listed once, where it was first kept out
                    self.kept_out.add(url)
                    skipped.append((url, refused))
                continue
            if host in self.capped_hosts:
                continue
            new = url not in self.parent
            if new and not self.scope.allows(url, depth):
                continue  # out of scope: never in the frontier, never a step
            if new:
                self._discover(url, parent, host)
            links.append(Outlink(url, anchor, host, new))
            if len(links) + len(foreign) >= self.max_outlinks:
                break
        return links


def _not_held_back(ready: Ready, defences: Defences, step: int) -> Ready:
    """``ready``, and a host the defences hold back at ``step`` (one backing off) is not."""
    return lambda host: ready(host) and not defences.holds_back(host, step)


