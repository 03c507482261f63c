"""A per-host circuit breaker in seconds: back off from a host that keeps failing, try it again now and then, and
close it only when it has failed for minutes.

Each host's breaker is closed (its URLs go), open (its URLs wait) or half-open (one trial request goes; the rest
wait for its outcome). ``open_after`` consecutive failures open it for ``open_s`` seconds; then one trial: a
success closes it again and forgets the failures, a failure reopens it twice as long (up to ``max_open_s``). The
host is closed for good ("host failing", as a capped host is) only when ``close_after_trials`` trials have failed
*and* its failures have lasted ``close_after_s`` seconds: a burst, however dense, never closes a host.

Outcomes are told apart (``failure_kind``):
- a DNS failure counts once per ``dns_ttl_s`` (the resolver's negative cache answers every lookup of that time
  with the same failure, instantly), and the host waits at least that long;
- a 429 (or 503) that says ``Retry-After`` waits that long (``max_retry_after_s`` at most) instead of the
  breaker's own period; without it, as a server error;
- server errors (5xx), timeouts and connections that fail count as they come;
- the crawler's own refusals (robots.txt, a refused address or URL) are no outcome of the host's at all;
- any other answer (2xx, 3xx, 404, ...) is a success.

Time is the crawl's clock (``Crawl.clock_s``): the wall clock of each fetch's record over HTTP and in Scrapy, and
in a crawl without one (offline webs) ``offline_step_s`` seconds per crawl step, so that offline crawls stay
reproducible and the messy benchmark still exercises the breaker. Between records time stands still. Over HTTP the
fetcher's own politeness (delays, Retry-After up to its ``max_retry_after``) still applies: the breaker only ever
adds waiting.

A selection the breaker holds back stays the policy's: it is parked, fetched when its host's turn comes (or when
nothing else is left to fetch), and comes back in its observation as any selection does; a host closed meanwhile
drops it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from focuscrawl.engine.defences.pipeline import HOST_FAILING, Crawl, Defence, Fetch
from focuscrawl.types import DNS_FAILURE, Page, Selection, retry_after_of

# What the crawler refused itself (robots.txt, an unusable or refused URL or address): not the host failing.
_OWN_REFUSALS = ("disallowed by robots.txt", "refused", "looks like a spider trap", "redirect to an unusable url",
                 "url longer", "malformed url", "scheme", "url has no host", "port 0", "credentials in url")

# The kinds of outcome ``failure_kind`` tells apart (None: a success).
REFUSAL = "refusal"
DNS = "dns"
THROTTLED = "throttled"
SERVER_ERROR = "server error"
NO_ANSWER = "no answer"  # a timeout, a connection that failed, a broken exchange


class HostHealthSettings(BaseModel):
    """A circuit breaker per host, in seconds of the crawl's clock (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    open_after: Annotated[int, Field(ge=1)] = Field(3, description="consecutive failures that open a host's breaker")
    open_s: Annotated[float, Field(gt=0)] = Field(
        60.0, description="seconds the breaker first stays open; doubled after each failed half-open trial")
    max_open_s: Annotated[float, Field(gt=0)] = Field(1800.0, description="the longest the breaker stays open")
    close_after_s: Annotated[float, Field(ge=0)] = Field(
        300.0, description="a host is closed for good only when its failures have lasted this long ...")
    close_after_trials: Annotated[int, Field(ge=1)] = Field(
        3, description="... and this many half-open trials have failed")
    dns_ttl_s: Annotated[float, Field(ge=0)] = Field(
        60.0, description="identical DNS failures of a host within this count once, and the host waits this long "
                          "(the resolver's negative-cache TTL)")
    max_retry_after_s: Annotated[float, Field(ge=0)] = Field(
        3600.0, description="the longest Retry-After (seconds or HTTP date) of a 429/503 that is honoured")
    offline_step_s: Annotated[float, Field(gt=0)] = Field(
        3.0, description="seconds one crawl step counts for in a crawl without a wall clock (offline webs)")
    clock: Literal["wall", "steps"] = Field(
        "wall", description="the clock of a crawl that has a wall clock (HTTP, Scrapy): 'wall', or 'steps' "
                            "(offline_step_s a step, as offline: a served web's crawl then breaks as its offline one)")

    @model_validator(mode="after")
    def _open_within_its_cap(self) -> HostHealthSettings:
        if self.open_s > self.max_open_s:
            raise ValueError(f"open_s ({self.open_s:g}) is longer than max_open_s ({self.max_open_s:g})")
        return self


def failure_kind(page: Page) -> str | None:
    """How the host did on this fetch: None for an answer (a success, a 404 too), ``REFUSAL`` for the crawler's
    own refusal (no outcome of the host's), else the kind of failure."""
    error = page.error.strip().lower()
    if page.status == 429:
        return THROTTLED
    if page.status >= 500:
        return THROTTLED if page.status == 503 and retry_after_of(error) is not None else SERVER_ERROR
    if page.status != 0:
        return None
    if error.startswith(_OWN_REFUSALS):
        return REFUSAL
    if DNS_FAILURE.lower() in error:
        return DNS
    return NO_ANSWER


def is_failure(page: Page) -> bool:
    """The host failed this request: no answer, a server error or throttling (not a 404, not our own refusal)."""
    return failure_kind(page) not in (None, REFUSAL)


@dataclass(slots=True)
class HostBreaker:
    """One host's breaker. ``until`` None: closed; ``now < until``: open; else half-open, with the time a trial
    was let through (``trial``) until its outcome is recorded."""

    failures: int = 0  # consecutive failures, counted (a repeated DNS failure is not)
    since: float = 0.0  # the first of them
    until: float | None = None
    period: float = 0.0  # the breaker's current open period
    trials_failed: int = 0
    trial: float | None = None
    dns: tuple[str, float] | None = None  # the DNS failure counted last, and when


class HostHealth(Defence):
    """The breakers of the hosts that failed lately, the hosts closed for good, the selections parked."""

    name = "host_health"

    def __init__(self, settings: HostHealthSettings):
        self.settings = settings
        self.breakers: dict[str, HostBreaker] = {}
        self.closed: set[str] = set()
        self.clock: float | None = None  # the crawl's wall clock at the last record (None: a crawl of steps)
        # host -> selections waiting for its breaker, with the select time each took
        self.parked: dict[str, deque[tuple[Selection, float]]] = {}

    def now(self, step: int) -> float:
        """The crawl's clock at ``step`` (the steps recorded so far)."""
        return self.clock if self.clock is not None else step * self.settings.offline_step_s

    def record(self, host: str, page: Page, now: float) -> bool:
        """Count the fetch's outcome at ``now``; True when it closes the host for good."""
        if host in self.closed:
            return False
        kind = failure_kind(page)
        if kind == REFUSAL:
            return False
        if kind is None:
            self.breakers.pop(host, None)
            return False
        breaker = self.breakers.setdefault(host, HostBreaker())
        if kind == DNS:
            if (breaker.dns is not None and breaker.dns[0] == page.error
                    and now - breaker.dns[1] < self.settings.dns_ttl_s):
                return False  # the negative cache's answer to a lookup that failed already: counted once
            breaker.dns = (page.error, now)
        return self._failed(breaker, now, self._wait_hint(kind, page))

    def _wait_hint(self, kind: str, page: Page) -> tuple[float, bool]:
        """(seconds the failure itself says to wait, whether that replaces the breaker's period)."""
        if kind == THROTTLED:
            retry_after = retry_after_of(page.error.strip().lower())
            if retry_after is not None:
                return min(retry_after, self.settings.max_retry_after_s), True
        if kind == DNS:
            return self.settings.dns_ttl_s, False
        return 0.0, False

    def _failed(self, breaker: HostBreaker, now: float, hint: tuple[float, bool]) -> bool:
        """A counted failure: open the breaker, or reopen it longer after a failed trial; True: close for good."""
        settings = self.settings
        wait, told = hint
        breaker.failures += 1
        if breaker.failures == 1:
            breaker.since = now
        if breaker.until is None:  # closed: opens after enough failures, or at once when told to wait
            if breaker.failures >= settings.open_after or wait > 0:
                breaker.period = settings.open_s
                opened = settings.open_s if breaker.failures >= settings.open_after else 0.0
                breaker.until = now + (wait if told else max(opened, wait))
            return False
        if now < breaker.until and breaker.trial is None:
            # a fetch sent before the breaker opened: it counts, and a Retry-After it brings is honoured
            breaker.until = max(breaker.until, now + wait)
            return False
        breaker.trial = None  # half-open: the trial (or a fetch in its time) failed
        breaker.trials_failed += 1
        breaker.period = min(2 * breaker.period, settings.max_open_s)
        breaker.until = now + (wait if told else max(breaker.period, wait))
        return (breaker.trials_failed >= settings.close_after_trials
                and now - breaker.since >= settings.close_after_s)

    def waiting(self, host: str, step: int) -> bool:
        """Whether ``host``'s URLs wait at ``step``: its breaker is open, or half-open with a trial out."""
        breaker = self.breakers.get(host)
        if breaker is None or breaker.until is None:
            return False
        now = self.now(step)
        longest = max(self.settings.max_open_s, self.settings.max_retry_after_s)
        if now < breaker.until:
            return breaker.until - now <= longest  # more is a wall clock set back: not waited for
        return self._trial_out(breaker, now)

    def _trial_out(self, breaker: HostBreaker, now: float) -> bool:
        """A trial was let through and its outcome is awaited; one whose outcome never comes (its selection was
        dropped on the way) is given up after the first open period."""
        return breaker.trial is not None and now < breaker.trial + self.settings.open_s

    def _let_through(self, host: str, step: int, anyway: bool = False) -> None:
        """A selection of ``host`` goes: when its breaker is half-open (or open, but nothing else is left to fetch:
        ``anyway``), it is a trial."""
        breaker = self.breakers.get(host)
        now = self.now(step)
        if breaker is not None and breaker.until is not None and (anyway or not self._trial_out(breaker, now)):
            breaker.trial = now

    def release(self, step: int, anyway: bool = False) -> tuple[Selection, float] | None:
        """A parked selection whose host may be tried (``anyway``: the longest parked one regardless), in the
        order hosts were first parked; None when there is none."""
        for host in list(self.parked):
            if anyway or not self.waiting(host, step):
                queue = self.parked[host]
                item = queue.popleft()
                if not queue:
                    del self.parked[host]
                self._let_through(host, step, anyway)
                return item
        return None

    # -- its hooks -----------------------------------------------------------------------------
    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        return HOST_FAILING if host in self.closed else ""

    def hold(self, selection: Selection, select_s: float, host: str, step: int) -> bool:
        """A selection of a host that waits is parked until its breaker lets it through."""
        if not self.waiting(host, step):
            self._let_through(host, step)
            return False
        self.parked.setdefault(host, deque()).append((selection, select_s))
        return True

    def holds_back(self, host: str, step: int) -> bool:
        return self.waiting(host, step)

    def own_selection(self, crawl: Crawl, step: int, anyway: bool) -> tuple[Selection, float] | None:
        return self.release(step, anyway) if self.parked else None

    def host_closed(self, host: str) -> list[str]:
        """The host is closed (or capped): its parked selections will not be fetched."""
        self.breakers.pop(host, None)
        return [selection.url for selection, _ in self.parked.pop(host, ())]

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """Every fetch counts, a defence's own too; the one that closes the host is hidden whatever else it is."""
        self.clock = crawl.clock_s if self.settings.clock == "wall" else None
        if self.record(fetch.host, fetch.page, self.now(fetch.step)):
            self.closed.add(fetch.host)
            fetch.verdict, fetch.hidden = fetch.verdict or HOST_FAILING, True
            fetch.skipped.extend(crawl.close_host(fetch.host, HOST_FAILING))
