"""How the hosts of a messy web misbehave: not-found pages that answer 200, and failures.

A messy web (``focuscrawl.webs.mess``) records its hosts' behaviour in ``meta.mess.hosts``. This module is
the one definition of what that behaviour does, used by the offline fetch (``OfflineWeb.fetch``) and by
the loopback server (``focuscrawl.webs.serve``) alike, so that a crawl over HTTP meets what the in-process
crawl meets.

Offline, whether a URL fails depends on the URL alone (a hash of the web's seed and the URL), never on
what was fetched before: a benchmark's crawls stay independent of each other and of the order they fetch
in. Over HTTP an error host also fails in bursts (the requests after a failure fail too), a timeout host
hangs and a slow host trickles its bodies: what only a clock or a request order can show.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from focuscrawl.types import Link

# errors: a share of URLs answer 500 or 503; timeout: a share never answer (offline: status 0);
# slow: every body trickles over HTTP (offline: a normal page).
FAILURES = ("errors", "timeout", "slow")
TIMEOUT_ERROR = "timed out"
NOT_FOUND_TITLE = "Page not found"


def seeded_unit(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by the seed and the parts: the same on every machine, run and Python.

    A hash rather than a random generator, so a decision about one URL or link does not depend on how many
    decisions were drawn before it.
    """
    key = ":".join(str(part) for part in (seed, *parts)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64


@dataclass(frozen=True, slots=True)
class HostBehaviour:
    """What one host does besides serving its pages.

    ``soft_404``: the links of the not-found page the host answers with status 200 for any URL it has no
    page for (None: such URLs answer 404). ``failure`` (one of ``FAILURES``) with ``share``, the share of
    URLs that fail; ``burst``: over HTTP, requests after a failure that fail too; ``hang_s``: how long a
    timeout host keeps a request waiting; ``slow_body_s``: how long a slow host takes to send a body.
    """

    soft_404: tuple[Link, ...] | None = None
    failure: str | None = None
    share: float = 0.0
    burst: int = 0
    hang_s: float = 0.0
    slow_body_s: float = 0.0

    def failure_status(self, seed: int, url: str) -> int | None:
        """How a request for ``url`` fails, by the URL alone: 500 or 503, 0 for a timeout; None when it does not."""
        if self.failure not in ("errors", "timeout") or seeded_unit(seed, "fail", url) >= self.share:
            return None
        if self.failure == "timeout":
            return 0
        return 503 if seeded_unit(seed, "status", url) < 0.5 else 500

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.soft_404 is not None:
            data["soft_404"] = [[link.url, link.anchor] for link in self.soft_404]
        if self.failure is not None:
            data.update(failure=self.failure, share=self.share, burst=self.burst, hang_s=self.hang_s,
                        slow_body_s=self.slow_body_s)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HostBehaviour:
        links = data.get("soft_404")
        failure = data.get("failure")
        if failure is not None and failure not in FAILURES:
            raise ValueError(f"unknown host failure {failure!r} (known: {', '.join(FAILURES)})")
        return cls(
            soft_404=None if links is None else tuple(Link(url, anchor) for url, anchor in links),
            failure=failure,
            share=float(data.get("share", 0.0)),
            burst=int(data.get("burst", 0)),
            hang_s=float(data.get("hang_s", 0.0)),
            slow_body_s=float(data.get("slow_body_s", 0.0)),
        )


def host_behaviours(meta: dict[str, Any]) -> tuple[int, dict[str, HostBehaviour]]:
    """(the seed of failures, host name -> behaviour) of a web's meta; no hosts for a web that is not messy."""
    mess = meta.get("mess") or {}
    hosts = mess.get("hosts") or {}
    return int(mess.get("seed", 0)), {host: HostBehaviour.from_json(data) for host, data in sorted(hosts.items())}


def not_found_page(url: str) -> tuple[str, str]:
    """Title and text of a soft 404, the "page not found" page a host answers with status 200.

    It names the path asked for, as such pages do, so two of them differ by their URL only.
    """
    parts = urlsplit(url)
    path = unquote(parts.path or "/") + (f"?{unquote(parts.query)}" if parts.query else "")
    return NOT_FOUND_TITLE, (f"Sorry, the page {path} could not be found on this site. It may have moved, or "
                             "the address may be mistyped. Try the home page, or one of the pages below.")
