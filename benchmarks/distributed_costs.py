"""The central costs of a distributed crawl, measured, for the "toward 100 machines" estimate.

    python -m benchmarks.distributed_costs WEB [--pages 2000] [--workers 4,16,100] [--calls 2000]

WEB is an offline web directory; a seeded sample of its pages stands for the pages a crawl fetches. Measured:

1. **Messages per page at N shards**: for each sampled page, the distinct shards other than its own
   that its outlinks' hosts belong to (``shard_of``), for each N; each is one message a shard sends.
   Also the size of one message (``encode_links`` of the page's links to one shard) and the CPU time to
   encode and decode it.
2. **Ray round trips from the driver**: a local Ray runtime, 4 actors with an async method that returns a
   small status (what ``Shard.poll`` returns), called in rounds of one call per actor as the driver does; CPU
   time of the driver per call, and wall time per round.
3. **Direct sends**: a stand-in shard calls another's ``receive`` (which answers the ids, without storing),
   one call at a time as ``Shard`` sends to one destination, with batches of 1 and of 20 messages of the
   measured size; each actor's own CPU time (``time.process_time`` in its process) per call, sender and
   receiver.
4. **The coordinator's lease**: ``Coordinator.lease`` as a Ray actor (priority on), calls per second from
   one caller, its Python's CPU time per call (the same calls in-process), and its actor process's whole CPU
   time per call (Ray's call handling included).

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
    """A stand-in shard: ``poll`` answers a status; ``receive`` takes messages as a shard does (without storing);
    ``send`` calls another's ``receive`` as a shard sends to one destination; ``cpu`` is its process's CPU time."""

    async def poll(self) -> dict:
        return {"shard": 0, "state": "crawling", "committed": 0, "in_flight": 0, "held": 0, "frontier": 0,
                "outbox": 0, "idle": False, "rate": 0.0, "relevant": 0, "relevant_domains": 0, "errors": 0,
                "starts": 1, "pid": 0, "sent": 0, "send_calls": 0, "received": 0, "outlook": None}

    async def receive(self, messages: list[tuple[str, bytes]]) -> list[str]:
        return [message_id for message_id, _ in messages]

    async def send(self, peer, calls: int, batch: int, size: int) -> float:
        """``calls`` receive calls of ``batch`` messages to ``peer``, one at a time; the CPU time they took here."""
        blob = bytes(size)
        cpu = time.process_time()
        for call in range(calls):
            await peer.receive.remote([(f"0:{call}:{k}", blob) for k in range(batch)])
        return time.process_time() - cpu

    def cpu(self) -> float:
        return time.process_time()


def message_costs(web_dir: Path, sample: int, workers: list[int]) -> dict:
    from focuscrawl.crawl.distributed import decode_links, encode_links, shard_of
    from focuscrawl.types import ForeignLinks
    from focuscrawl.webs.store import OfflineWeb

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

        # direct sends: one stand-in shard calling another's receive, one call at a time
        sender, receiver = (ray.remote(num_cpus=0)(Echo).remote() for _ in range(2))
        ray.get(sender.send.remote(receiver, 20, 1, message_bytes))  # warm up
        sends = {}
        for batch in (1, 20):
            receiver_cpu = ray.get(receiver.cpu.remote())
            sender_cpu = ray.get(sender.send.remote(receiver, calls, batch, message_bytes))
            receiver_cpu = ray.get(receiver.cpu.remote()) - receiver_cpu
            sends[f"send_cpu_ms_per_call_batch{batch}"] = 1000 * sender_cpu / calls
            sends[f"receive_cpu_ms_per_call_batch{batch}"] = 1000 * receiver_cpu / calls

        class TimedCoordinator(Coordinator):
            def cpu(self) -> float:
                return time.process_time()

        coordinator = ray.remote(num_cpus=0)(TimedCoordinator).remote(10**9, {k: 0 for k in range(100)}, None, 100, 0.9)
        ray.get(coordinator.lease.remote(0, 0, 16, None))
        actor_cpu = ray.get(coordinator.cpu.remote())
        started = time.perf_counter()
        claims = [0] * 100
        for k in range(calls):
            shard = k % 100
            claims[shard] += ray.get(coordinator.lease.remote(shard, claims[shard], 16, (shard % 7) / 7))
        lease_ms = 1000 * (time.perf_counter() - started) / calls
        lease_actor_cpu_ms = 1000 * (ray.get(coordinator.cpu.remote()) - actor_cpu) / calls
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
    return {"driver_cpu_ms_per_poll": driver_cpu_ms, "poll_round_ms_4_actors": round_ms, **sends,
            "lease_round_trip_ms": lease_ms, "lease_cpu_ms_in_coordinator": lease_cpu_ms,
            "lease_cpu_ms_in_coordinator_actor": lease_actor_cpu_ms}


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
