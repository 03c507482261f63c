"""Resume: bring a freshly built engine to the last commit of a run folder's store.

The one resume mechanism: the latest checkpoint (``CrawlEngine.snapshot``, taken every ``checkpoint_every`` steps
inside a step's transaction) is restored, then the operation log after it is replayed: each logged selection must be
selected again by the (deterministic) policy (told, if it takes the polite hint, that only the selected URL's host
is ready: ``_only_host_of``), each logged record feeds the stored page back to the engine (with the wall clock it was
recorded at, in a crawl that keeps one: the host breaker's decisions replay too), and each adopted message
(links another shard found, in a distributed crawl; a site's sitemap offered on entering it,
``focuscrawl.crawl.sitemaps``) is adopted again. Without a usable checkpoint the whole log is replayed, which gives
the same state, only slower: ``resume`` does that when the checkpoint cannot be read (one of another format, written
by another version of focuscrawl, among them: it says so in one line), and when the log diverges after it (a
checkpoint that does not hold all of the policy's state, as `tres`'s once did: its networks' weight views came back
from pickle as copies), so that only the log itself can make a run folder unresumable.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

from focuscrawl.engine import CheckpointFormatError, CrawlEngine
from focuscrawl.storage.state import StateStore
from focuscrawl.urls import site_of

logger = logging.getLogger(__name__)


# The store's meta key naming the crawl's clock: "wall" (the HTTP fetcher's crawls: each step's ``fetched_at`` is the
# engine's ``record(at=)``, and replay gives it again) or "steps" (offline webs; run folders from before it existed).
CLOCK = "clock"


def wall_clock(store: StateStore) -> bool:
    """Whether the crawl of ``store`` keeps the wall clock (``CrawlEngine.record``'s ``at``)."""
    return store.get_meta(CLOCK) == "wall"


def _only_host_of(url: str) -> Callable[[str], bool]:
    """The polite hint of a replayed selection: only the logged URL's host is ready. A polite crawl chose among the
    hosts ready at the time (``Policy.select_ready``), which the clock decided; the logged URL was the policy's best
    on a ready host, or its best of all, and told that only its host is ready the policy chooses it again. A
    selection made without the hint was the best of all, which that hint leaves the same."""
    host = site_of(url)
    return lambda candidate: candidate == host


class ResumeError(RuntimeError):
    """The run folder cannot be resumed as it is (replay diverged, a different crawl, ...)."""


def replay(engine: CrawlEngine, store: StateStore, *, use_checkpoint: bool = True,
           on_message: Callable[[CrawlEngine, str, bytes], None] | None = None) -> int:
    """Restore the latest checkpoint (if asked and present) and replay the log after it; returns steps replayed.

    Afterwards the URLs the crashed process was fetching (selected, never recorded) are in
    ``engine.in_flight``, in selection order: the driver fetches them first. Raises ``ResumeError`` when the
    policy does not select what the log says, and whatever unpickling raises for a bad checkpoint (the
    caller then replays the whole log into a fresh engine). ``on_message(engine, id, blob)`` applies a message
    from another shard or the driver again (distributed crawls); links the replayed steps found for other shards
    are dropped, being in the store's outbox already.
    """
    after, first_step = 0, 0
    checkpoint = store.latest_checkpoint() if use_checkpoint else None
    if checkpoint is not None:
        seq, step, blob = checkpoint
        engine.restore(blob)
        after, first_step = seq, step + 1
    sinks, engine.sinks = engine.sinks, []
    steps = store.steps(start=first_step)
    wall = wall_clock(store)
    replayed = 0
    try:
        for seq, kind, url in store.ops(after=after):
            if kind == "S":
                selection = engine.next_selection(_only_host_of(url))
                if selection is None or selection.url != url:
                    got = None if selection is None else selection.url
                    raise ResumeError(
                        f"replay diverged at op {seq}: the policy selected {got!r} where the log has {url!r}; "
                        "the strategy, its options or the topic changed, or the strategy is not deterministic")
            elif kind == "A":
                if on_message is None:
                    raise ResumeError(f"op {seq} is a message from another shard: a distributed crawl's store")
                on_message(engine, url, store.message(url))
            else:
                record = next(steps, None)
                if record is None or record.url != url:
                    raise ResumeError(f"state store is inconsistent at op {seq} ({url})")
                engine.record(url, record.page(), record.fetch_s, at=record.fetched_at if wall else None)
                replayed += 1
    finally:
        engine.sinks = sinks
        engine.take_outgoing()
    return replayed


def resume(fresh: Callable[[], CrawlEngine], store: StateStore, *, use_checkpoint: bool = True,
           on_message: Callable[[CrawlEngine, str, bytes], None] | None = None) -> CrawlEngine:
    """An engine from ``fresh()`` brought to the store's last commit: from the latest checkpoint if asked, and
    by the whole log when that fails. A damaged store (``sqlite3.DatabaseError``) and a whole-log replay that
    diverges (``ResumeError``) are raised."""
    engine = fresh()
    if use_checkpoint and store.latest_checkpoint() is not None:
        try:
            replay(engine, store, use_checkpoint=True, on_message=on_message)
            return engine
        except sqlite3.DatabaseError:
            raise
        except CheckpointFormatError as exc:  # another version's checkpoint: its log is as good, only slower
            logger.warning("%s", exc)
            engine = fresh()
        except Exception:  # noqa: BLE001 - an unreadable checkpoint, or one the log diverges from: the whole log
            engine = fresh()
    replay(engine, store, use_checkpoint=False, on_message=on_message)
    return engine
