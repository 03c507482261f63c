"""The central costs of a distributed crawl, measured, for the "toward 100 machines" estimate.

    python -m benchmarks.distributed_costs WEB [--pages 2000] [--workers 4,16,100] [--calls 2000]

WEB is an offline web directory; a seeded sample of its pages stands for the pages a crawl fetches. Measured:

1. **Messages per page at N shards**: for each sampled page, the distinct shards other than its own
   that its outlinks' hosts belong to (``shard_of``), for each N; each is one message the driver relays.
   Also the size of one message (``encode_links`` of the page's links to one shard) and the CPU time to
   encode and decode it.
2. **Ray round trips from the driver**: a local Ray runtime, 4 actors with an async method that returns a
   small status and an empty outbox (what ``Shard.poll`` returns when nothing is pending), called in rounds
   of one call per actor as the driver does; CPU time of the driver per call, and wall time per round.
   Then relaying: a stand-in shard's poll returns 200 messages of the measured size, the driver hands them
   to another stand-in's ``receive`` and acknowledges them to the sender; the driver's CPU per message.
3. **The coordinator's lease**: ``Coordinator.lease`` as a Ray actor (priority on), calls per second from
   one caller, and its own CPU time per call.

Prints one JSON object; docs/distributed.md, "Toward 100 machines", does the arithmetic with it.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path


class Echo:
    """A stand-in shard: ``poll`` answers a status and ``messages`` outbox messages of ``size`` bytes each;
    ``receive`` and ``acknowledge`` take them as a shard does (without storing)."""

    def __init__(self, messages: int = 0, size: int = 0):
        self.outbox = [(f"0:{k}:1", 1, bytes(size)) for k in range(messages)]

    async def poll(self) -> tuple[dict, list]:
        return {"shard": 0, "state": "crawling", "committed": 0, "in_flight": 0, "held": 0, "frontier": 0,
                "outbox": 0, "idle": False, "rate": 0.0, "relevant": 0, "relevant_domains": 0, "errors": 0,
                "starts": 1, "pid": 0, "outlook": None}, self.outbox

    async def receive(self, messages: list[tuple[str, bytes]]) -> list[str]:
        return [message_id for message_id, _ in messages]

    async def acknowledge(self, message_ids: list[str]) -> None:
        return None


def message_costs(web_dir: Path, sample: int, workers: list[int]) -> dict:
    from focuscrawl.crawl.distributed import decode_links, encode_links, shard_of
    from focuscrawl.types import ForeignLinks
    from focuscrawl.web.store import OfflineWeb

    web = OfflineWeb(web_dir)
    urls = [r.url for r in web.records() if 200 <= r.status < 300 and r.outdegree > 0]
    pages = [web.fetch(url) for url in random.Random(0).sample(urls, min(sample, len(urls)))]
    result: dict = {"pages": len(pages), "outlinks_per_page": statistics.mean(len(p.outlinks) for p in pages)}
    for n in workers:
        per_page = []
        for page in pages:
            own = shard_of(page.final_url, n)
            per_page.append(len({shard_of(link.url, n) for link in page.outlinks} - {own}))
        result[f"messages_per_page_n{n}"] = statistics.mean(per_page)
    blobs, encode_s = [], 0.0
    for page in pages:
        message = ForeignLinks(page.url, page, 0.5, 0.0, 1, [(link.url, link.anchor) for link in page.outlinks[:3]])
        started = time.process_time()
        blobs.append(encode_links(message))
        encode_s += time.process_time() - started
    started = time.process_time()
    for blob in blobs:
        decode_links(blob)
    decode_s = time.process_time() - started
    result.update(message_bytes=statistics.mean(len(b) for b in blobs), encode_ms=1000 * encode_s / len(blobs),
                  decode_ms=1000 * decode_s / len(blobs))
    return result


def ray_costs(calls: int, message_bytes: int) -> dict:
    import ray

    from focuscrawl.crawl.distributed import Coordinator

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        actors = [ray.remote(num_cpus=0)(Echo).remote() for _ in range(4)]
        ray.get([a.poll.remote() for a in actors])
        rounds = max(1, calls // len(actors))
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(rounds):
            refs = [a.poll.remote() for a in actors]
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=10.0)
            ray.get(ready)
        driver_cpu_ms = 1000 * (time.process_time() - cpu) / (rounds * len(actors))
        round_ms = 1000 * (time.perf_counter() - wall) / rounds

        # relaying: one sender with 200 messages pending (the most a poll takes), one receiver; the driver's
        # CPU per message for the poll, the receive call and the acknowledgement, as DistributedCrawler._route
        sender, receiver = (ray.remote(num_cpus=0)(Echo).remote(200, message_bytes) for _ in range(2))
        ray.get(sender.poll.remote())
        relay_rounds = max(1, calls // 200)
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(relay_rounds):
            _, messages = ray.get(sender.poll.remote())
            stored = set(ray.get(receiver.receive.remote([(i, b) for i, _, b in messages])))
            ray.get(sender.acknowledge.remote([i for i, _, _ in messages if i in stored]))
        relay_cpu_ms = 1000 * (time.process_time() - cpu) / (relay_rounds * 200)
        relay_wall_ms = 1000 * (time.perf_counter() - wall) / (relay_rounds * 200)

        coordinator = ray.remote(num_cpus=0)(Coordinator).remote(10**9, {k: 0 for k in range(100)}, None, 100, 0.9)
        ray.get(coordinator.lease.remote(0, 0, 16, None))
        started = time.perf_counter()
        claims = [0] * 100
        for k in range(calls):
            shard = k % 100
            claims[shard] += ray.get(coordinator.lease.remote(shard, claims[shard], 16, (shard % 7) / 7))
        lease_ms = 1000 * (time.perf_counter() - started) / calls
        # the coordinator's own cost: the same calls in-process
        local = Coordinator(10**9, {k: 0 for k in range(100)}, None, 100, 0.9)
        claims = [0] * 100
        cpu = time.process_time()
        for k in range(calls):
            shard = k % 100
            claims[shard] += local.lease(shard, claims[shard], 16, (shard % 7) / 7)
        lease_cpu_ms = 1000 * (time.process_time() - cpu) / calls
    finally:
        ray.shutdown()
    return {"driver_cpu_ms_per_poll": driver_cpu_ms, "poll_round_ms_4_actors": round_ms,
            "driver_cpu_ms_per_relayed_message": relay_cpu_ms, "relay_wall_ms_per_message": relay_wall_ms,
            "lease_round_trip_ms": lease_ms, "lease_cpu_ms_in_coordinator": lease_cpu_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("web", type=Path)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--workers", default="4,16,100")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    result = message_costs(args.web, args.pages, [int(n) for n in args.workers.split(",")])
    result.update(ray_costs(args.calls, int(result["message_bytes"])))
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()}, indent=1))


if __name__ == "__main__":
    main()
