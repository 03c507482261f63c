"""Whether the URL-alias and link-farm defences can act on a clean web at all, whatever a crawl fetches.

    python -m benchmarks.defences_on_clean webs/wikispeedia webs/webkb

Both defences count: a URL rule is used once ``url_aliases.min_support`` copy pairs have shown it, and a host is
closed as a link farm only with ``farm_share`` of at least ``min_pages`` judged pages stuffed, so at least
ceil(farm_share * min_pages) spam pages. Over every page of a web (each compared with all before it: every pair of
copies once, whichever a crawl would fetch first), this prints the most pairs any one URL rule has (in either
direction) and the most spam pages any host has (and how many pages show each sign of spam). Below those
thresholds, no crawl of the web, in any order, meets a rule in use or a farm: its crawls are those of the engine
without the two defences.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter

from focuscrawl.engine.defences import Defences, DefenceSettings
from focuscrawl.engine.defences.aliases import rule_of
from focuscrawl.engine.defences.duplicates import NearDuplicates
from focuscrawl.engine.defences.farms import spam_signs
from focuscrawl.urls import site_of
from focuscrawl.webs.store import OfflineWeb


def undirected(found: tuple[str, tuple]) -> tuple:
    kind, rule = found
    if kind == "host":
        return kind, tuple(sorted(rule))
    netloc, shape, copy_tail, original_tail = rule
    return kind, (netloc, shape, *sorted((copy_tail, original_tail)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("webs", nargs="+")
    args = parser.parse_args()
    settings = DefenceSettings()
    farms = settings.link_farms
    needed = math.ceil(farms.farm_share * farms.min_pages)
    print(f"a URL rule needs {settings.url_aliases.min_support} pairs; "
          f"a farm needs {needed} spam pages ({farms.min_signs} signs)")
    print("| web | pages | pages with a near-copy fetched before | most pairs of one URL rule | "
          "most spam pages of one host | pages showing each sign |")
    print("|---|---|---|---|---|---|")
    reader = Defences(reading=settings.near_duplicates)
    for path in args.webs:
        web = OfflineWeb(path)
        texts = NearDuplicates(settings.near_duplicates)
        rules: Counter[tuple] = Counter()
        stuffed: Counter[str] = Counter()
        shown: Counter[str] = Counter()  # pages showing each sign of spam
        pages = copies = 0
        for row in web.rows():
            if row.status != 200:
                continue
            page = web.fetch(row.url)
            pages += 1
            signs = spam_signs(farms, page.text, page.title, (link.anchor for link in page.outlinks))
            if signs is not None:
                shown.update(signs)
                if len(signs) >= farms.min_signs:
                    stuffed[site_of(row.url)] += 1
            signature = texts.signature(reader.read(page))
            if signature is None:
                continue
            found = texts.find_all(signature)  # every pair a crawl could meet, whatever it fetched first
            copies += bool(found)
            for original, _ in found:
                rule = rule_of(row.url, original)
                if rule is not None:
                    rules[undirected(rule)] += 1
            texts.add(row.url, signature)
        top_rule = rules.most_common(1)[0] if rules else (None, 0)
        top_host = stuffed.most_common(1)[0] if stuffed else (None, 0)
        print(f"| {web.name} | {pages:,} | {copies} | {top_rule[1]} ({top_rule[0]}) | {top_host[1]} ({top_host[0]}) | "
              f"{', '.join(f'{sign} {n}' for sign, n in sorted(shown.items()))} |")
        web.close()


if __name__ == "__main__":
    main()
