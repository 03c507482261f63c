"""A crawl's cProfile statistics as CPU per page by component: fetch, parse, defences, policy, store, WARC, ...

    python -m benchmarks.crawl_profile PROFILE.pstats PAGES [--top 25]

Each function's own time (cProfile's tottime) goes to the component of the file it is in (``COMPONENTS``, first
match wins); what no rule names is ``other``. ``benchmarks.full_crawl_vs_scrapy --profile KIND`` writes the file
(the crawl's span only, start-up left out) and prints this table. cProfile's own overhead inflates Python-heavy
parts more than C-heavy ones, so the shares are indicative; the unprofiled runs give the total.
"""

from __future__ import annotations

import argparse
import pstats
from collections import defaultdict

# (component, substrings of a file path); the first component whose substring occurs in the path wins.
COMPONENTS: list[tuple[str, tuple[str, ...]]] = [
    ("defences", ("focuscrawl/engine/defences/",)),
    ("policy", ("focuscrawl/strategies/", "focuscrawl/topic/", "focuscrawl/policy.py", "sklearn/", "numpy/",
                "scipy/")),
    ("engine", ("focuscrawl/engine/",)),
    ("parse", ("focuscrawl/web/html.py", "selectolax", "resiliparse", "lxml", "parsel", "linkextractors",
               "w3lib", "focuscrawl/urls.py", "urllib/parse.py", "cssselect", "html5", "/encodings/",
               "scrapy/http/response", "scrapy/selector")),
    ("WARC", ("focuscrawl/storage/warc.py", "fastwarc", "warcio", "gzip.py", "zlib")),
    ("state store", ("focuscrawl/storage/state.py", "sqlite3", "pickle", "queuelib", "scrapy/squeues",
                     "scrapy/core/scheduler", "scrapy/dupefilters", "scrapy/utils/request")),
    ("pages, harvest, feed", ("focuscrawl/storage/", "json/", "scrapy/extensions/feedexport", "scrapy/exporters",
                              "csv")),
    ("driver, crawl", ("focuscrawl/crawl/",)),
    ("fetch", ("focuscrawl/web/http.py", "focuscrawl/web/robots.py", "focuscrawl/web/safety.py", "aiohttp",
               "yarl", "multidict", "asyncio", "selectors", "socket", "ssl", "twisted", "scrapy/core/downloader",
               "scrapy/downloadermiddlewares", "scrapy/core/http2", "h2", "protego", "scrapy/robotstxt",
               "focuscrawl/scrapy.py")),
    ("Scrapy's engine, middlewares, signals", ("scrapy/",)),
]


def component(path: str, function: str) -> str:
    path = path.replace("\\", "/")
    if path == "~":  # a built-in: cProfile names it by its function, e.g. <method 'execute' of 'sqlite3.Cursor'>
        path = function
    for name, needles in COMPONENTS:
        if any(needle in path for needle in needles):
            return name
    return "other"


def by_component(stats_file: str) -> tuple[dict[str, float], list[tuple[float, str]]]:
    stats = pstats.Stats(str(stats_file)).stats  # (file, line, function) -> (cc, nc, tottime, cumtime, callers)
    totals: dict[str, float] = defaultdict(float)
    functions = []
    for (path, line, function), (_, _, tottime, _, _) in stats.items():
        totals[component(path, function)] += tottime
        functions.append((tottime, f"{path}:{line}({function})"))
    return dict(totals), sorted(functions, reverse=True)


def print_components(stats_file: str, pages: int, top: int = 25) -> None:
    totals, functions = by_component(stats_file)
    whole = sum(totals.values())
    print(f"\nCPU per page by component under cProfile ({pages} pages, {1000 * whole / pages:.2f} ms a page "
          "profiled):\n\n| component | ms/page | share |\n|---|---|---|")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"| {name} | {1000 * seconds / pages:.3f} | {seconds / whole:.0%} |")
    print(f"\nthe {top} functions with the most own time:")
    for seconds, where in functions[:top]:
        print(f"  {1000 * seconds / pages:7.3f} ms/page  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stats_file")
    parser.add_argument("pages", type=int)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print_components(args.stats_file, args.pages, args.top)


if __name__ == "__main__":
    main()
