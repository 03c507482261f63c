"""Distributed crawls on Ray: host-partitioned shards, a budget coordinator, links sent shard to shard.

    crawler = DistributedCrawler(topic="topics/birds", seeds_file="seeds.txt", out="runs/birds",
                                 budget=100_000, workers=8)                  # or ray_address="head:6379"
    summary = crawler.crawl()

Each shard (``shard.Shard``) is a Ray actor running an ordinary crawl (the builder's engine and policy, the
async driver, a state store, resume) in ``RUN/shards/K/`` over the hosts it owns: those with
``shard_of(host, N) == K``, a stable hash. So the closure, frontier, politeness and per-domain cap of a host live
in one shard and are never shared. A link to a host owned elsewhere is committed to the finding shard's
``outbox`` with the step that found it and sent from there, batched, straight to its owner (an actor call
between shards, found by name), which stores it in its ``inbox`` (logged as an operation, so its replay re-adopts
it) before the sender forgets it: neither side's death loses it, and a re-sent message is recognised by its id
(``messages``). The driver (``crawler.DistributedCrawler``) only polls the shards' status, pools what they learn
and merges their files at the end. The
coordinator (``coordinator.Coordinator``) leases pages of the global budget (``lease_pages`` at a time) against
each shard's claim (pages committed + in flight + leased), so the budget is exceeded by nothing: a shard only
fetches pages it holds a lease for. ``cluster`` imports Ray and starts or joins a runtime.

docs/distributed.md has the picture, the guarantees and the limits.
"""

from focuscrawl.crawl.distributed.cluster import INSTALL_HINT, ClusterUnreachable, check_reachable, require_ray
from focuscrawl.crawl.distributed.coordinator import Coordinator
from focuscrawl.crawl.distributed.crawler import DistributedCrawler, DistributedStats
from focuscrawl.crawl.distributed.messages import (
    PARAMETERS_PREFIX,
    apply_message,
    decode_links,
    encode_links,
    shard_of,
)
from focuscrawl.crawl.distributed.shard import Outlook, Shard

__all__ = ["INSTALL_HINT", "PARAMETERS_PREFIX", "ClusterUnreachable", "Coordinator", "DistributedCrawler",
           "DistributedStats", "Outlook", "Shard", "apply_message", "check_reachable", "decode_links",
           "encode_links", "require_ray", "shard_of"]
