"""The crawl loop: the one place that knows the order of select, fetch, score, observe.

The same ``CrawlEngine`` serves the offline benchmark (``run``, synchronous) and the real web (an async
driver calls ``next_selection`` for as many requests as it keeps in flight and ``record`` as they
complete). It owns everything that must be identical across strategies for a comparison to be fair: the
closure (never fetch a URL twice), URL normalisation, the per-domain cap, the budget and the event stream, and
the defences against the messy web (``focuscrawl.engine.defences``: tracking and session parameters, copies,
soft 404s, failing hosts, trap patterns), so that every strategy meets the same web through them.

In a distributed crawl each shard's engine owns a partition of the hosts (``owns``): links to other hosts
do not enter its frontier but wait in ``outgoing`` for the shard to send them to their owner, and links
another shard found enter it through ``adopt``. Without ``owns`` nothing of that happens.

Its crawl state (closure, discovered URLs, host counters, selections in flight, the policy) can be
written out and read back (``snapshot`` / ``restore``): a run folder's checkpoints. Together with the
operation log of a run folder (``focuscrawl.crawl.resume``) that is the one resume mechanism.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from focuscrawl.engine.caps import DomainCap
from focuscrawl.engine.defences import (
    DUPLICATE,
    HOST_FAILING,
    LINK_FARM,
    PROBE,
    SOFT_404,
    TRAP_PATTERN,
    Defences,
    duplicate_of,
    url_patterns,
)
from focuscrawl.engine.defences.hosts import HostHealth
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
)
from focuscrawl.urls import normalize_url, site_of

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
          "frontier_size", "_limit", "_in_flight", "_in_flight_per_host", "defences")


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
        # the defences' state is crawl state (checkpointed); without them the engine is as it always was
        self.defences = defences if defences is not None else Defences()
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
        ``Policy.select_ready`` with the hosts the engine holds back, those backing off, refused)."""
        if self.done:
            return None
        started = time.perf_counter()
        defences = self.defences
        if ready is not None and defences.hosts is not None:
            ready = _not_backing_off(ready, defences.hosts, self.stats.steps)
        try:
            while True:
                # the engine's own first: a soft-404 probe, a parked selection whose host's back-off is over
                selection, earlier_s, released = self._engine_selection()
                if selection is None:
                    selection = self.policy.select() if ready is None else self.policy.select_ready(ready)
                    earlier_s = 0.0
                    if selection is None:
                        # nothing else to fetch: a host still backing off is tried now rather than never
                        selection, earlier_s, released = self._release_parked(anyway=True)
                        if selection is None:
                            return None
                url = selection.url
                host = site_of(url)
                probe = self.is_probe(url)
                # Fetches in flight count against the cap: every fetch counts once recorded, whatever its
                # status, so a host whose cap they would reach is as good as capped (concurrent crawls).
                if (url in self.fetched or url in self._in_flight or host in self.capped_hosts
                        or self.fetches_per_host[host] + self._in_flight_per_host[host] >= self._limit
                        or (not probe and defences.shut(url, host))):
                    self.stats.skipped_selections += 1
                    continue
                if (defences.hosts is not None and not probe and not released
                        and defences.hosts.waiting(host, self.stats.steps)):
                    defences.hosts.park(host, selection, earlier_s + time.perf_counter() - started)
                    continue
                if url not in self.parent and not probe:
                    self._discover(url, None, host)
                self._in_flight[url] = (selection, earlier_s + time.perf_counter() - started)
                self._in_flight_per_host[host] += 1
                return selection
        finally:
            self.stats.decision_s += time.perf_counter() - started

    def _engine_selection(self) -> tuple[Selection | None, float, bool]:
        """A selection of the engine's own, if one is due: (selection, select seconds it took before, released)."""
        soft = self.defences.soft_404
        while soft is not None and soft.queued:
            url = soft.queued.popleft()
            host = site_of(url)
            if (url in self.fetched or url in self._in_flight or url in self.parent or host in self.capped_hosts
                    or not self.scope.allows(url, 0) or (self.owns is not None and not self.owns(url))):
                soft.probe_host.pop(url, None)  # cannot be asked: the host stays unprobed
                continue
            return Selection(url, None, f"not the strategy's: a path {host} cannot have, to learn whether it "
                                        "answers missing pages with a page (a soft 404)"), 0.0, False
        if self.defences.hosts is not None and self.defences.hosts.parked:
            return self._release_parked()
        return None, 0.0, False

    def _release_parked(self, anyway: bool = False) -> tuple[Selection | None, float, bool]:
        hosts = self.defences.hosts
        item = hosts.release(self.stats.steps, anyway) if hosts is not None else None
        return (None, 0.0, False) if item is None else (item[0], item[1], True)

    def record(self, url: str, page: Page, fetch_s: float = 0.0) -> StepEvent:
        """Account for the fetch of ``url``, a URL of ``next_selection``: closure, caps, reward, observation, event.

        (A URL the engine did not select, which only tests do, is observed as a bare selection.)
        """
        host = site_of(url)
        selection, select_s = Selection(url), 0.0
        if url in self._in_flight:
            selection, select_s = self._in_flight.pop(url)
            self._in_flight_per_host[host] -= 1
        step = self.stats.steps
        self.stats.steps += 1
        self.stats.fetch_s += fetch_s
        self._mark_fetched(url, host)
        defences = self.defences
        probe = self.is_probe(url)

        final_url = url
        if page.final_url and page.final_url != url:
            final_url = self.normalize(page.final_url) or url
        duplicate = False
        joined: list[str] = []  # URLs this fetch adds to the closure besides its own: a redirect's target, a canonical
        if final_url != url:
            duplicate = final_url in self.fetched
            if not duplicate:
                # A redirect's target joins the closure; the fetch was counted once, against the host asked.
                self._mark_fetched(final_url, site_of(final_url), counts=False)
                joined.append(final_url)
        # Why the page gives no reward and no links, if it does not: a redirect to a fetched page (as always), or
        # a defence's verdict, whose page the policy sees empty (no new evidence).
        verdict = duplicate_of(final_url) if duplicate else ""
        skipped: list[tuple[str, str]] = []
        runs = None  # the page's text as the defences read it (shingle hashes), once for all of them
        if probe:
            verdict = PROBE
            defences.probe_answered(url, page)
        elif not duplicate and page.ok and defences.reads_text and (page.text or page.title):
            runs = defences.read(page)
        if runs is not None and defences.texts is not None:
            canonical = self._canonical(page, url, final_url)
            verdict = defences.copy_verdict(url, final_url, host, page, runs, canonical, self.fetched)
            if (canonical is not None and not verdict and defences.canonical is not None
                    and canonical not in self.fetched and canonical not in self._in_flight):
                # as a redirect's target: the page is that URL's document, which need not be fetched again
                self._mark_fetched(canonical, site_of(canonical), counts=False)
                joined.append(canonical)
        if defences.aliases is not None and (verdict == SOFT_404 or page.status in (404, 410)):
            defences.aliases.not_found(url)  # a URL rule that made a not-found URL is wrong for this site
        hidden = bool(verdict) and not duplicate
        if (hidden and defences.aliases is not None and verdict.startswith(DUPLICATE)
                and defences.aliases.learn(final_url, verdict[len(DUPLICATE):])):
            self._merge_aliases(skipped)

        relevance = 0.0 if verdict else self.relevance(page)
        # a redirect that left the scope (another domain, an excluded path) is fetched, but not followed further
        followed = not verdict and self.scope.allows(final_url, self.depth.get(url, 0))
        candidates = self._candidates(url, page) if followed else []
        traps = defences.traps
        if traps is not None and not probe and page.ok:
            fresh = self._fresh(candidates, self.depth.get(url, 0) + 1)  # lazily: the first way out decides
            new = not verdict and traps.yields_new(url, fresh, relevance >= REWARD_THRESHOLD, runs)
            if runs is not None:
                traps.remember(runs)
            closed = traps.record(url, new)
            if closed:
                self._close_patterns(closed, skipped)
                if not verdict:  # the fetch that showed the pattern yields nothing new: no reward, no links
                    verdict, hidden, relevance, candidates = TRAP_PATTERN, True, 0.0, []
        if defences.hosts is not None and defences.hosts.record(host, page, step):
            verdict, hidden = verdict or HOST_FAILING, True
            self._close_host(host, skipped, HOST_FAILING)
        if defences.farms is not None and not probe and page.ok and not verdict:
            farms = defences.farms.record(host, page.text, (url for url, _ in candidates))  # read if stuffed
            for farm in farms:
                self._close_host(farm, skipped, LINK_FARM)
            if host in farms:
                verdict, hidden, relevance, candidates = LINK_FARM, True, 0.0, []
        reward = 1.0 if relevance >= REWARD_THRESHOLD else 0.0
        foreign: list[tuple[str, str]] = []
        links = self._new_links(url, candidates, foreign, skipped) if candidates else []
        # a redirect (or canonical) into another shard's hosts: that shard must learn the target is fetched, or it
        # fetches it again
        fetched_elsewhere = [u for u in joined if self.owns is not None and not self.owns(u)]
        if foreign or fetched_elsewhere:
            sent = Page(url=page.url, final_url=page.final_url, status=page.status, content_type=page.content_type,
                        title=page.title, text=page.text, outlinks=list(page.outlinks))
            self.outgoing.append(ForeignLinks(url, sent, relevance, reward, self.depth.get(url, 0), foreign,
                                              fetched_elsewhere))

        observe_s = 0.0
        if not probe:  # the engine's own fetch: no selection of the policy's to answer
            shown = page
            if hidden:
                shown = Page(url=page.url, final_url=page.final_url, status=page.status,
                             content_type=page.content_type, error=page.error)
            started = time.perf_counter()
            self.policy.observe(Observation(step, selection, shown, relevance, reward, links))
            observe_s = time.perf_counter() - started
            self.stats.decision_s += observe_s

        relevant = None
        if self.judge is not None:
            relevant = bool(page.ok and not verdict and self.judge(final_url))
            if relevant:
                self.stats.relevant += 1
                self.stats.relevant_hosts.add(site_of(final_url))
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
            verdict=verdict,
            skipped=tuple(skipped),
        )
        for sink in self.sinks:
            sink(event)
        return event

    def relevance(self, page: Page, learn: bool = True) -> float:
        """The agent's classifier's probability that ``page`` is on topic (0 for a failed or empty page). A model
        that learns online (an ``OnlineRelevanceModel``) learns from the page too, if ``learn``."""
        if not (page.ok and (page.text or page.title)):
            return 0.0
        text = f"{page.title}\n{page.text}"
        if getattr(self.classifier, "learns_online", False):
            relevance = float(self.classifier.predict_page(text))
            if learn:
                self.classifier.learn_one(text)  # a self-training model learns from every page it scores
            return relevance
        return float(self.classifier.predict_proba([text])[0])

    def is_probe(self, url: str) -> bool:
        """Whether ``url`` is a fetch the engine makes itself (a soft-404 probe), not one of the policy's selections:
        a driver fetches it as any other, and ``record`` observes it without the policy."""
        return self.defences.soft_404 is not None and self.defences.soft_404.is_probe(url)

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
            if host in self.capped_hosts or self.defences.shut(url, host):
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
    def normalize(self, url: str) -> str | None:
        """A URL as the crawl keeps it (its closure's and its selections' key): ``normalize_url``, then the URL
        hygiene of the defences when it is on. None for a URL that is not http(s)."""
        return self.defences.url(normalize_url(url))

    def _canonical(self, page: Page, url: str, final_url: str) -> str | None:
        """The page's rel=canonical URL as the crawl keeps it, when it names another URL than the page's."""
        if page.canonical is None:
            return None
        canonical = self.normalize(page.canonical)
        return None if canonical in (None, url, final_url) else canonical

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
                and url not in self.defences.skipped):
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
        if self.defences.hosts is not None:
            self.defences.hosts.drop_parked(host)  # a parked selection is dropped as a capped host's selections are
        self.policy.on_host_capped(host)

    def _pending(self, keep: Callable[[str], bool]) -> list[str]:
        """Discovered URLs not fetched, not in flight, not skipped before, on open hosts, for which ``keep`` holds."""
        skipped, fetched, in_flight, capped = self.defences.skipped, self.fetched, self._in_flight, self.capped_hosts
        return [url for url in self.parent if url not in fetched and url not in skipped and url not in in_flight
                and keep(url) and site_of(url) not in capped]

    def _close_host(self, host: str, skipped: list[tuple[str, str]], why: str) -> None:
        """A failing host or a link farm is closed as a capped host is; its pending and parked URLs are listed as
        skipped, with ``why``."""
        hosts = self.defences.hosts
        parked = [selection.url for selection, _ in hosts.parked.get(host, ())] if hosts is not None else []
        pending = self._pending(lambda url: site_of(url) == host)
        skipped.extend((url, why) for url in dict.fromkeys(pending + parked))
        self._cap_host(host)

    def _merge_aliases(self, skipped: list[tuple[str, str]]) -> None:
        """A URL rule came into use: pending URLs it rewrites to a URL fetched, in flight or pending leave the
        frontier, listed as duplicates of it."""
        aliases = self.defences.aliases
        assert aliases is not None
        for url in self._pending(lambda url: aliases.rewrite(url) != url):
            alias = aliases.rewrite(url)
            if alias in self.parent or alias in self.fetched or alias in self._in_flight:
                self._leave_frontier(url)
                skipped.append((url, duplicate_of(alias)))

    def _leave_frontier(self, url: str) -> None:
        self.defences.skipped.add(url)
        host = site_of(url)
        if self.pending_per_host[host] > 0:
            self.pending_per_host[host] -= 1
            self.frontier_size -= 1

    def _close_patterns(self, patterns: list[str], skipped: list[tuple[str, str]]) -> None:
        """Trap patterns lost their allowance: their pending URLs leave the frontier, listed as skipped."""
        closed = set(patterns)
        for url in self._pending(lambda url: not closed.isdisjoint(url_patterns(url))):
            self._leave_frontier(url)
            skipped.append((url, TRAP_PATTERN))

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

    def _fresh(self, candidates: list[tuple[str, str]], depth: int) -> Iterator[str]:
        """The candidates that would enter the frontier as URLs never discovered before."""
        for url, _ in candidates:
            if url in self.parent or (self.owns is not None and not self.owns(url)):
                continue
            host = site_of(url)
            if host not in self.capped_hosts and not self.defences.shut(url, host) and self.scope.allows(url, depth):
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
            shut = self.defences.shut(url, host)
            if shut:
                if url not in self.defences.skipped:  # listed once, where it was first kept out
                    self.defences.skipped.add(url)
                    skipped.append((url, shut))
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


# Types the pickler saves without looking at a dispatch table: a shared input of one of these could not be written as
# a reference through the table, and is written through ``persistent_id`` instead.
_UNDISPATCHED = (type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset, type)


def _not_backing_off(ready: Ready, hosts: HostHealth, step: int) -> Ready:
    """``ready``, and a host the failing-host defence holds back at ``step`` is not."""
    return lambda host: ready(host) and not hosts.waiting(host, step)


def _shared_input(index: int) -> object:
    """What a checkpoint names a shared input by; ``_InputsUnpickler`` answers it with the live object."""
    raise pickle.UnpicklingError("a checkpoint's shared inputs are read by the engine's unpickler only")


class _InputsPickler(pickle.Pickler):
    """Writes the crawl's shared inputs as references (their index) instead of their contents.

    Through the dispatch table of the inputs' types, not ``persistent_id``: that is a Python call for every object
    of the checkpoint (each frontier URL and number among them), which made it most of a checkpoint's time."""

    def __init__(self, file, inputs: list[object]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        ids = {id(obj): i for i, obj in enumerate(inputs) if obj is not None}
        if any(isinstance(obj, _UNDISPATCHED) for obj in inputs if obj is not None):
            self.persistent_id = lambda obj: ids.get(id(obj))
            return
        table = copyreg.dispatch_table.copy()
        for kind in {type(obj) for obj in inputs if obj is not None}:
            def reduce(obj, fallback=table.get(kind)):
                index = ids.get(id(obj))
                if index is not None:
                    return _shared_input, (index,)
                return fallback(obj) if fallback is not None else obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

            table[kind] = reduce
        self.dispatch_table = table


class _InputsUnpickler(pickle.Unpickler):
    def __init__(self, file, inputs: list[object]):
        super().__init__(file)
        self._inputs = inputs

    def persistent_load(self, pid):  # checkpoints written before the dispatch table
        return self._inputs[pid]

    def find_class(self, module: str, name: str):
        if module == __name__ and name == "_shared_input":
            return self._inputs.__getitem__
        return super().find_class(module, name)
