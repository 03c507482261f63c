"""The coordinator of a distributed crawl: it leases pages of the global budget to the shards."""

from __future__ import annotations

import math
import time


class Coordinator:
    """Hands out pages of the global budget. A shard's claim is what it has committed, has in flight and holds
    leased; the claims never add up to more than the budget, so neither do the pages fetched.

    Its state is the shards' claims, rebuilt by a resumed driver from the shards' stores (their committed
    pages): nothing of it needs to survive the driver. Those counts may be stale: a killed driver's shards
    can still commit the pages they held leased while they die. So in a resumed crawl each shard that has
    not asked yet (and so not reported its own count, read once its predecessor has let go of its store)
    is assumed to hold ``reserve`` more pages than the driver counted."""

    # Until every shard has asked once (or this long has passed), none may claim more than its share of
    # the budget: the first shard up must not take a small budget before the others have started.
    STARTUP_S = 30.0

    # A shard that has not asked for this long (its frontier is spent, or it is restarting) does not compete
    # for the budget's priority.
    ASKING_S = 2.0

    def __init__(self, budget: int, committed: dict[int, int], inputs: tuple | None = None, workers: int = 1,
                 priority: float = 0.0, reserve: int = 0):
        self.budget = budget
        self.claims = dict(committed)
        self.reserve = reserve if any(committed.values()) else 0  # a fresh crawl has no predecessors
        self._inputs = inputs
        self.workers = workers
        self.priority = priority
        self.outlooks: dict[int, tuple[float | None, float]] = {}  # shard -> (outlook, when it last asked)
        self.denied = 0
        self._asked: set[int] = set()
        self._created = time.monotonic()

    def inputs(self) -> tuple:
        """What every shard crawls with, made once by the driver: (topic, seeds, trained classifier, hosts map).

        Kept here rather than in the shards' constructor arguments, so that an actor Ray restarts fetches them
        again from a live actor."""
        return self._inputs

    def lease(self, shard: int, claim: int, want: int, outlook: float | None = None) -> int:
        """Shard ``shard`` now claims ``claim`` pages and asks for ``want`` more: how many it gets.

        ``outlook`` is how promising the shard's frontier looks (``Shard.outlook``; None before its first
        pages). With ``priority`` p > 0, a shard whose outlook lies in the lower p of the range from the worst
        to the best outlook among the shards asking gets nothing for now (the best is always served): the
        budget goes where the crawl expects relevant pages, as one process's frontier would send it, instead
        of in equal parts to shards with good and poor frontiers. A shard without an outlook yet is always
        served, so that every shard gets tried."""
        now = time.monotonic()
        self.claims[shard] = claim
        self._asked.add(shard)
        # a shard giving its lease back (want 0: its frontier is spent) stops competing at once
        self.outlooks[shard] = (outlook, now if want else -math.inf)
        unreported = self.reserve * sum(1 for k in self.claims if k not in self._asked)
        grant = max(0, min(want, self.budget - sum(self.claims.values()) - unreported))
        if self.priority and grant and outlook is not None:
            # Where the outlook lies between the worst and the best asking shard's: scores have no common
            # scale or sign (adaptive's predictions go below 0), so a ratio to the best would mean nothing.
            asking = [o for o, asked in self.outlooks.values() if o is not None and now - asked <= self.ASKING_S]
            worst, best = min(asking), max(asking)
            if outlook - worst < self.priority * (best - worst):
                self.denied += 1
                grant = 0
        if len(self._asked) < self.workers and time.monotonic() - self._created < self.STARTUP_S:
            grant = max(0, min(grant, -(-self.budget // self.workers) - claim))
        self.claims[shard] += grant
        return grant

    def claimed(self) -> int:
        return sum(self.claims.values())

