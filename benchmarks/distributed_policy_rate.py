"""Pages/s of `focuscrawl crawl --workers N` when the policy, not the fetcher, bounds the crawl: a 1M-URL frontier.

    python -m benchmarks.distributed_policy_rate --workers 1,2 --pages 3000000 --budget 80000 \
        -s lease_priority=0 --out runs/policy-rate-3m

(Re-running a command on its finished run folder only reports again.)

The crawl is offline (`crawl --web`: no server, no politeness wait, a fetch is a lookup in the web's
SQLite file), so what is left per page is the policy's decision and learning, the store's commit and, for
N > 0, Ray's messages. A frontier of a million URLs needs a web of more than a million URLs and a crawl
that has fetched enough of it: the synthetic web here has ``--pages`` pages on 2,000 hosts with
``--out-degree`` links each (few dead links) and 2 topics (with the usual 10, a focused crawl stays among
its topic's tenth of the web and its frontier grows by ~4 URLs a page), and the crawl of the benchmark
protocol's topic synth.topic0 (5 seed pages) runs until ``--budget`` pages. Seeding the frontier with a
million URLs instead does not work for TRES: Algorithm 4 stores every seed as an experience sample of its
tree, and a leaf of a million samples is re-sorted at every split attempt.

Reported per N, from the run's harvest.csv (time and frontier after each page): pages and pages/s over the
pages fetched while the frontier held at least each of ``--at`` URLs, over the last ``--tail`` pages, per
100,000-URL band of the frontier, and over the whole crawl; the largest frontier reached; and the whole
command's time (start-up, Ray and the final merge included).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.distributed_rate import add_crawl_arguments, crawl_command, make_topic


def rate(rows: list[dict], at: int) -> tuple[int, float]:
    """(pages, pages/s) over the pages fetched with at least ``at`` URLs in the frontier."""
    window = [row for row in rows if int(row["frontier_size"]) >= at]
    if len(window) < 2:
        return len(window), 0.0
    seconds = float(window[-1]["time_s"]) - float(window[0]["time_s"])
    return len(window), (len(window) - 1) / max(seconds, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_crawl_arguments(parser, workers="1,2", budget=80_000, concurrency=1, strategy="tres")
    parser.add_argument("--pages", type=int, default=3_000_000,
                        help="web size; with 1.5M the topic is mostly met before the frontier holds 1M URLs")
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--topics", type=int, default=2)
    parser.add_argument("--out-degree", type=float, default=30.0)
    parser.add_argument("--at", default="500000,800000,900000,1000000",
                        help="frontier sizes from which pages are timed (comma-separated)")
    parser.add_argument("--tail", type=int, default=30_000, help="also time the last this many pages")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="distributed-policy-rate-"))
    web_dir = out / "bigweb"
    if not (web_dir / "web.sqlite").exists():
        from focuscrawl.webs.synth import synthesize

        synthesize(web_dir, args.pages, hosts=args.hosts, topics=args.topics, out_degree=args.out_degree, seed=0)
    topic_dir = out / "topic"
    if not topic_dir.exists():
        make_topic(web_dir, topic_dir)
    results = []
    for n in [int(x) for x in args.workers.split(",")]:
        run = out / f"run-{args.strategy}-n{n}{'-' + '-'.join(args.set) if n and args.set else ''}"
        command = crawl_command(["--web", str(web_dir), "--no-warc"], topic_dir, run, args, n)
        started = time.monotonic()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        total_s = time.monotonic() - started
        with open(run / "harvest.csv") as f:
            rows = list(csv.DictReader(f))
        bands = {}
        for low in range(0, max(int(r["frontier_size"]) for r in rows), 100_000):
            band = [r for r in rows if low <= int(r["frontier_size"]) < low + 100_000]
            if len(band) >= 2:
                bands[f"{low // 1000}k-{(low + 100_000) // 1000}k"] = round(rate(band, 0)[1], 1)
        row = {"workers": n, "pages": len(rows), "pages_per_s_whole": round(rate(rows, 0)[1], 1),
               "frontier_max": max(int(r["frontier_size"]) for r in rows), "command_s": round(total_s, 1),
               "at": {f">={at}": [pages, round(pps, 1)]
                      for at in (int(x) for x in args.at.split(",")) for pages, pps in [rate(rows, at)]},
               f"last_{args.tail}": round(rate(rows[-args.tail:], 0)[1], 1), "bands": bands}
        results.append(row)
        print(json.dumps(row), flush=True)
    (out / "rates.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
