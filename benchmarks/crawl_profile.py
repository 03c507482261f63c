"""A crawl's cProfile statistics as CPU per page by component: fetch, parse, defences, policy, store, WARC, ...

    python -m benchmarks.crawl_profile PROFILE.pstats PAGES [--top 25]

``benchmarks.full_crawl_vs_scrapy --profile KIND`` writes the file (CPU time, the crawl's span only: start-up left
out) and prints this table. A component is the inclusive time of its entry points (``ENTRY_POINTS``: the
functions through which the crawl calls it, e.g. focuscrawl's ``page_from_body`` for parsing, Scrapy's
``Scheduler.enqueue_request`` and ``next_request`` for its queues), less the time of other components' entry points
called inside them (the engine's record calls the policy and the defences: those are counted as theirs). What no
entry point covers, the event loop, the sockets and the HTTP client, is ``fetch, event loop`` (with Scrapy: Twisted,
the downloader and the engine). cProfile's overhead inflates Python-heavy parts more than C-heavy ones, so the
shares are indicative; the unprofiled runs give the total CPU per page.
"""

from __future__ import annotations

import argparse
import pstats

REST = "fetch, event loop"
# component -> (file path ending, function name) of its entry points; nested ones are subtracted from their caller.
ENTRY_POINTS: dict[str, tuple[tuple[str, str], ...]] = {
    "parse": (("focuscrawl/http/response.py", "page_from_body"),
              ("scrapy/linkextractors/lxmlhtml.py", "extract_links"), ("parsel/selector.py", "xpath"),
              ("parsel/selector.py", "css"), ("parsel/selector.py", "getall"), ("parsel/selector.py", "get"),
              ("scrapy/http/response/text.py", "text"), ("scrapy/http/response/text.py", "selector")),
    "engine (closure, reward)": (("focuscrawl/engine/engine.py", "record"),
                                 ("focuscrawl/engine/engine.py", "next_selection")),
    "defences": (("focuscrawl/engine/defences/__init__.py", "read"),
                 ("focuscrawl/engine/defences/__init__.py", "copy_verdict"),
                 ("focuscrawl/engine/defences/__init__.py", "shut"), ("focuscrawl/engine/defences/__init__.py", "url"),
                 ("focuscrawl/engine/defences/hosts.py", "record"), ("focuscrawl/engine/defences/farms.py", "record")),
    "policy": (("focuscrawl/strategies/", "select"), ("focuscrawl/strategies/", "observe"),
               ("focuscrawl/topic/relevance.py", "__call__"), ("focuscrawl/engine/engine.py", "relevance")),
    "checkpoint": (("focuscrawl/engine/engine.py", "snapshot"),),
    "state store": (("focuscrawl/storage/state.py", "commit_step"), ("focuscrawl/storage/state.py", "log_select"),
                    ("scrapy/core/scheduler.py", "enqueue_request"), ("scrapy/core/scheduler.py", "next_request"),
                    ("scrapy/dupefilters.py", "request_seen")),
    "WARC": (("focuscrawl/storage/warc.py", "write"),),
    "pages.jsonl, harvest.csv, feed": (("focuscrawl/storage/pages.py", "write"),
                                       ("focuscrawl/storage/harvest.py", "append"),
                                       ("scrapy/extensions/feedexport.py", "item_scraped")),
}


def _component(key: tuple[str, int, str]) -> str | None:
    path, _, function = key
    path = path.replace("\\", "/")
    for name, entries in ENTRY_POINTS.items():
        for ending, entry in entries:
            if function == entry and (path.endswith(ending) or (ending.endswith("/") and ending in path)):
                return name
    return None


def by_component(stats_file: str) -> tuple[dict[str, float], float]:
    """Seconds per component (``REST``: the remainder of the whole profile) and the profile's total."""
    stats = pstats.Stats(str(stats_file)).stats  # key -> (cc, nc, tottime, cumtime, callers)
    whole = sum(entry[2] for entry in stats.values())
    owner = {key: _component(key) for key in stats}
    totals: dict[str, float] = {}
    for key, name in owner.items():
        if name is None:
            continue
        totals[name] = totals.get(name, 0.0) + stats[key][3]
    # An entry point called from another component's entry point is counted once, as its own: the caller's
    # inclusive time loses what the callee took when called from it (cProfile keeps per-caller times).
    for key, name in owner.items():
        if name is None:
            continue
        for caller, (_, _, _, cumtime) in stats[key][4].items():
            parent = owner.get(caller)
            if parent is not None:
                totals[parent] -= cumtime
    totals[REST] = whole - sum(totals.values())
    return totals, whole


def print_components(stats_file: str, pages: int, top: int = 25) -> None:
    totals, whole = by_component(stats_file)
    print(f"\nCPU per page by component under cProfile ({pages} pages, {1000 * whole / pages:.2f} ms a page "
          "profiled):\n\n| component | ms/page | share |\n|---|---|---|")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"| {name} | {1000 * seconds / pages:.3f} | {seconds / whole:.0%} |")
    stats = pstats.Stats(str(stats_file)).stats
    print(f"\nthe {top} functions with the most own time:")
    for (path, line, function), entry in sorted(stats.items(), key=lambda item: -item[1][2])[:top]:
        print(f"  {1000 * entry[2] / pages:7.3f} ms/page  {path}:{line}({function})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stats_file")
    parser.add_argument("pages", type=int)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print_components(args.stats_file, args.pages, args.top)


if __name__ == "__main__":
    main()
