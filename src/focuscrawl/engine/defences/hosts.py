"""A per-host health breaker: back off from a host that keeps failing, and close it when it goes on failing.

A circuit breaker counted in crawl steps, so that the offline benchmark and a real crawl behave alike: after
``defer_after`` consecutive failures (network errors, 5xx, 429) the host's URLs the policy selects are parked
for ``backoff_steps`` steps, twice as long after each further failure; after ``close_after`` consecutive
failures the host is closed like a capped host. A success resets the count. Over HTTP the fetcher's own
politeness (delay between requests, Retry-After) still applies: parking a URL only ever waits longer.

A parked selection stays the policy's: it is fetched when its host's back-off ends (or when nothing else is
left to fetch), and comes back in its observation as any selection does; a host closed meanwhile drops it.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.pipeline import HOST_FAILING, Crawl, Defence, Fetch
from focuscrawl.types import Page, Selection

# What the crawler refused itself (robots.txt, an unusable or refused URL or address): not the host failing.
_OWN_REFUSALS = ("disallowed by robots.txt", "refused", "looks like a spider trap", "redirect to an unusable url",
                 "url longer", "malformed url", "scheme", "url has no host", "port 0", "credentials in url")


class HostHealthSettings(BaseModel):
    """Per host, consecutive failures (status 0, 5xx, 429): back off after a few, close the host after more."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    defer_after: Annotated[int, Field(ge=1)] = Field(3, description="consecutive failures before a host's URLs wait")
    backoff_steps: Annotated[int, Field(ge=1)] = Field(
        20, description="crawl steps the first back-off lasts; each further failure doubles it")
    close_after: Annotated[int, Field(ge=1)] = Field(
        6, description="consecutive failures that close a host for the rest of the crawl ('host failing')")


def is_failure(page: Page) -> bool:
    """The host failed this request: no answer, a server error or throttling (not a 404, not our own refusal)."""
    if page.status == 429 or page.status >= 500:
        return True
    return page.status == 0 and not page.error.strip().lower().startswith(_OWN_REFUSALS)


class HostHealth(Defence):
    """Consecutive failures per host, the hosts backing off (until which step), closed hosts, parked selections."""

    name = "host_health"

    def __init__(self, settings: HostHealthSettings):
        self.settings = settings
        self.failures: Counter[str] = Counter()
        self.until: dict[str, int] = {}
        self.closed: set[str] = set()
        # host -> selections waiting for its back-off to end, with the select time each took
        self.parked: dict[str, deque[tuple[Selection, float]]] = {}

    def record(self, host: str, page: Page, step: int) -> bool:
        """Count the fetch's outcome; True when it closes the host."""
        if host in self.closed:
            return False
        if not is_failure(page):
            self.failures.pop(host, None)
            self.until.pop(host, None)
            return False
        self.failures[host] += 1
        n = self.failures[host]
        if n >= self.settings.close_after:
            self.closed.add(host)
            self.until.pop(host, None)
            return True
        if n >= self.settings.defer_after:
            self.until[host] = step + self.settings.backoff_steps * 2 ** (n - self.settings.defer_after)
        return False

    def waiting(self, host: str, step: int) -> bool:
        """Whether ``host`` is backing off at ``step``."""
        return self.until.get(host, -1) > step

    def release(self, step: int, anyway: bool = False) -> tuple[Selection, float] | None:
        """A parked selection whose host's back-off is over (``anyway``: the longest parked one regardless), in
        the order hosts were first parked; None when there is none."""
        for host in list(self.parked):
            if anyway or not self.waiting(host, step):
                queue = self.parked[host]
                item = queue.popleft()
                if not queue:
                    del self.parked[host]
                return item
        return None

    # -- its hooks -----------------------------------------------------------------------------
    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        return HOST_FAILING if host in self.closed else ""

    def hold(self, selection: Selection, select_s: float, host: str, step: int) -> bool:
        """A selection of a host backing off is parked until its back-off ends."""
        if not self.waiting(host, step):
            return False
        self.parked.setdefault(host, deque()).append((selection, select_s))
        return True

    def holds_back(self, host: str, step: int) -> bool:
        return self.waiting(host, step)

    def own_selection(self, crawl: Crawl, step: int, anyway: bool) -> tuple[Selection, float] | None:
        return self.release(step, anyway) if self.parked else None

    def host_closed(self, host: str) -> list[str]:
        """The host is closed (or capped): its parked selections will not be fetched."""
        return [selection.url for selection, _ in self.parked.pop(host, ())]

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """Every fetch counts, a defence's own too; the one that closes the host is hidden whatever else it is."""
        if self.record(fetch.host, fetch.page, fetch.step):
            fetch.verdict, fetch.hidden = fetch.verdict or HOST_FAILING, True
            fetch.skipped.extend(crawl.close_host(fetch.host, HOST_FAILING))
