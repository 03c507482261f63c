"""What one server gets from a crawl under `--politeness host` and `--politeness ip`, when hosts share addresses.

    python -m benchmarks.politeness_ip --hosts 40 --addresses 4 --pages 4000 --budget 200 --concurrency 8 \
        [--latency-ms 20] [--modes host,ip] [-s fetch.min_delay=1] [--out /tmp/politeness-ip]

Builds the synthetic web (`focuscrawl web synth`, seed 0) of ``--hosts`` hosts and serves it on loopback in a
subprocess with ``--addresses`` addresses (`focuscrawl web serve --addresses`: the hosts share them in turn, as
virtual hosts share a server), its request log written as JSON lines, a fresh server per mode. Each mode crawls
the topic of the web's topic 0 (5 seeds, `best-first` unless told) into a fresh run folder with the default
politeness delay (1 s) unless ``-s`` says otherwise. Reported per mode, from the server's log (robots.txt requests
included: they are requests the server answers too): the most requests any one address got in any 1 s window and
the shortest gap between two requests to one address; and pages/s from the crawl's pages.jsonl (first to last
committed page).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.distributed_rate import add_crawl_arguments, crawl_command, synthetic_web
from benchmarks.served import serve_web


def busiest_window(times: list[float], window_s: float) -> int:
    """The most of ``times`` (sorted) in any half-open interval ``window_s`` long."""
    most, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= window_s:
            start += 1
        most = max(most, end - start + 1)
    return most


def address_load(log_file: Path, window_s: float = 1.0) -> dict:
    """Per-address figures of a served web's request log: the busiest address's requests in its busiest
    ``window_s`` window, the shortest gap between two requests to one address, requests and addresses seen."""
    times: dict[str, list[float]] = defaultdict(list)
    hosts: dict[str, set[str]] = defaultdict(set)
    for line in log_file.read_text().splitlines():
        entry = json.loads(line)
        times[entry["address"]].append(entry["time"])
        hosts[entry["address"]].add(entry["host"])
    gaps = [b - a for ts in times.values() for a, b in zip(sorted(ts), sorted(ts)[1:])]
    return {"addresses": len(times), "hosts_per_address": max(len(h) for h in hosts.values()),
            "requests": sum(len(ts) for ts in times.values()),
            f"max_requests_per_address_in_{window_s:g}s": max(busiest_window(sorted(ts), window_s)
                                                              for ts in times.values()),
            "min_gap_s_one_address": round(min(gaps), 3) if gaps else None}


def crawl_once(mode: str, web_dir: Path, topic_dir: Path, out: Path, args: argparse.Namespace) -> dict:
    """Serve the web afresh (its own request log), crawl it with ``--politeness mode``, and measure both."""
    log_file = out / f"requests-{args.strategy}-{mode}.jsonl"
    log_file.unlink(missing_ok=True)
    run = out / f"run-{args.strategy}-{mode}"
    shutil.rmtree(run, ignore_errors=True)  # a fresh crawl, not the resume of an earlier one
    extra = ("--addresses", str(args.addresses), "--latency-ms", str(args.latency_ms), "--log", str(log_file))
    with serve_web(args.python, str(web_dir), "127.0.21.1", extra=extra) as hosts:
        map_file = out / "hosts.json"
        map_file.write_text(json.dumps(hosts))
        command = crawl_command(["--hosts-map", str(map_file)], topic_dir, run, args, 0)
        command += ["--politeness", mode] + [a for setting in args.set for a in ("-s", setting)]
        started = time.monotonic()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        command_s = time.monotonic() - started
    fetched = [json.loads(line)["fetched_at"] for line in (run / "pages.jsonl").read_text().splitlines()]
    crawl_s = max(fetched) - min(fetched)
    return {"politeness": mode, "pages": len(fetched), "crawl_s": round(crawl_s, 1),
            "pages_per_s": round(len(fetched) / max(crawl_s, 1e-9), 2), **address_load(log_file),
            "command_s": round(command_s, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_crawl_arguments(parser, workers="0", budget=200, concurrency=8, strategy="best-first")
    parser.add_argument("--pages", type=int, default=4000)
    parser.add_argument("--hosts", type=int, default=40)
    parser.add_argument("--addresses", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--modes", default="host,ip")
    args = parser.parse_args()
    args.python = sys.executable
    out = Path(args.out or tempfile.mkdtemp(prefix="politeness-ip-"))
    out.mkdir(parents=True, exist_ok=True)
    web_dir, topic_dir = synthetic_web(out, args.pages, args.hosts)
    rows = []
    for mode in args.modes.split(","):
        row = crawl_once(mode, web_dir, topic_dir, out, args)
        rows.append(row)
        print(json.dumps(row), flush=True)
    (out / f"politeness_ip-{args.strategy}.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
