"""What watching a crawl costs it: pages/s of the same crawl with and without a polled dashboard.

usage: python -m benchmarks.dashboard_overhead [--web DIR] [--budget 3000] [--latency 0.02] [--reps 5]

The crawl runs as ``focuscrawl crawl --dashboard`` runs it: the dashboard serves from a daemon thread of the
crawl's own process and reads the store beside the crawl. A separate process plays the browser: it loads the
page once, then polls /api/run?fragments=1 every --poll seconds (the page polls every 1.5 s; 1 s is harsher),
with If-None-Match as the page does; --pollers of them play several open tabs. The web is offline with a
simulated response time (``offline_latency_s``), so the crawl is paced like one over a network while the
measurement stays free of network noise; --latency 0 makes the crawl CPU-bound, the worst case for a
dashboard that shares its interpreter. Without --web a synthetic web of 20,000 pages is made once (a speed
test, so a synthetic web is fine). Runs alternate (without, with, without, ...) after one warm-up run, each
in a fresh run folder; pages/s is counted from the store's fetch times (first to last page), so the
classifier's training at the start is not in it.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from focuscrawl.bench.protocol import init_from_web
from focuscrawl.crawl import Crawler
from focuscrawl.dashboard import serve_dashboard
from focuscrawl.webs.synth import synthesize

POLLER = r"""
import sys, time, urllib.request, urllib.error
base, every = sys.argv[1], float(sys.argv[2])
urllib.request.urlopen(base, timeout=30).read()
etag, counts = None, {200: 0, 304: 0, "error": 0}
while True:
    started = time.monotonic()
    request = urllib.request.Request(base + "api/run?fragments=1", headers={"If-None-Match": etag} if etag else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            etag = response.headers.get("ETag")
            counts[200] += 1
    except urllib.error.HTTPError as exc:
        counts[304 if exc.code == 304 else "error"] += 1
    except OSError:
        counts["error"] += 1
    print(counts, flush=True)
    time.sleep(max(0.0, every - (time.monotonic() - started)))
"""


def topic_of(web_dir: Path, out: Path, label: str) -> Path:
    """A topic directory from the web's labels, as `focuscrawl topic init --from-web` makes one."""
    init_from_web(out, web_dir, label)
    return out


def pages_per_s(run: Path) -> tuple[int, float]:
    db = sqlite3.connect(f"file:{run / 'state.sqlite'}?mode=ro", uri=True)
    try:
        n, first, last = db.execute("SELECT COUNT(*), MIN(fetched_at), MAX(fetched_at) FROM steps").fetchone()
    finally:
        db.close()
    return n, (n - 1) / (last - first)


def crawl(args, web: Path, topic: Path, run: Path, dashboard: bool) -> dict:
    settings = dict(topic=topic, out=run, web=str(web), budget=args.budget, progress="none", plot=False,
                    concurrency=args.concurrency, offline_latency_s=args.latency, strategy=args.strategy)
    pollers: list[subprocess.Popen] = []
    server = None
    if dashboard:
        server = serve_dashboard(run, port=0, kind="crawl").start()
        pollers = [subprocess.Popen([sys.executable, "-c", POLLER, server.url, str(args.poll)],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                   for _ in range(args.pollers)]
    try:
        started = time.perf_counter()
        summary = Crawler(**settings).crawl()
        wall = time.perf_counter() - started
    finally:
        polls = []
        for poller in pollers:
            poller.terminate()
            out, _ = poller.communicate(timeout=30)
            polls.append(out.strip().splitlines()[-1] if out.strip() else "{}")
        if server is not None:
            server.stop()
    steps, rate = pages_per_s(run)
    assert steps == summary.steps
    return {"steps": steps, "pages_per_s": rate, "wall_s": wall, "polls": polls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--web", type=Path, help="offline web directory (default: a synthetic one)")
    parser.add_argument("--topic", default=None, help="topic label of the web (default: the first synth topic)")
    parser.add_argument("--budget", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=0.02, help="simulated response time, seconds")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between a poller's requests")
    parser.add_argument("--pollers", type=int, default=1, help="browser tabs polling at once")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="dashboard-overhead-"))
    try:
        measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, work: Path) -> None:
    web = args.web
    if web is None:
        web = work / "web"
        synthesize(web, pages=20_000, seed=0)
    topic = topic_of(web, work / "topic", args.topic or "synth.topic0")
    print(f"web {web}, budget {args.budget}, {args.strategy}, concurrency {args.concurrency}, simulated latency "
          f"{args.latency * 1000:g} ms; dashboard polled by {args.pollers} process(es) every {args.poll:g} s; "
          f"{args.reps} runs each, alternating after a warm-up", flush=True)
    crawl(args, web, topic, work / "warm-up", dashboard=False)
    results: dict[bool, list[dict]] = {False: [], True: []}
    for rep in range(args.reps):
        for dashboard in ((False, True) if rep % 2 == 0 else (True, False)):
            result = crawl(args, web, topic, work / f"run-{rep}-{int(dashboard)}", dashboard)
            results[dashboard].append(result)
            print(f"  run {rep + 1} {'with   ' if dashboard else 'without'} dashboard: {result['steps']} pages, "
                  f"{result['pages_per_s']:7.1f} pages/s, crawl {result['wall_s']:.1f} s"
                  + (f", polls {'; '.join(result['polls'])}" if dashboard else ""), flush=True)
    without = [r["pages_per_s"] for r in results[False]]
    with_ = [r["pages_per_s"] for r in results[True]]
    mean_without, mean_with = statistics.mean(without), statistics.mean(with_)
    overhead = 1.0 - mean_with / mean_without

    def line(values: list[float]) -> str:
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):7.1f} pages/s (sd {sd:.1f}; runs {', '.join(f'{x:.1f}' for x in values)})"

    print(f"without dashboard: {line(without)}")
    print(f"with dashboard:    {line(with_)}")
    print(f"overhead: {overhead * 100:+.1f}% of pages/s (target: under 5%)")


if __name__ == "__main__":
    main()
