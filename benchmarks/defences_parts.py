"""What each part of the engine's defences costs a page, measured alone on a web's first pages.

    python -m benchmarks.defences_parts webs/wikispeedia --pages 1000

Each part runs over the same pages in turn, with the defences' default settings, and its CPU time
(``process_time``) per page is printed: reading a page into shingle hashes, its MinHash signature, the
near-duplicate lookup, the trap rule's seen-text filter (asked, then told), the link-farm reading and the
soft-404 defence's reading of a short page (what it compares with the host's other short pages).
``benchmarks.defences_cost`` gives what they cost a whole crawl; this says where it goes.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl.engine.defences import DefenceSettings
from focuscrawl.engine.defences.farms import short_word_share
from focuscrawl.engine.defences.soft404 import is_short
from focuscrawl.webs.store import OfflineWeb


def per_page_ms(items: Sequence[Any], part: Callable[[Any], Any]) -> tuple[float, list[Any]]:
    started = time.process_time()
    out = [part(item) for item in items]
    return 1000 * (time.process_time() - started) / len(items), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web")
    parser.add_argument("--pages", type=int, default=1000)
    args = parser.parse_args()
    web = OfflineWeb(args.web)
    records = itertools.islice((r for r in web.records() if r.status == 200), args.pages)
    pages = [web.fetch(record.url) for record in records]
    defences = DefenceSettings().build(seed=0, budget=len(pages))
    texts, traps, farms = defences.index, defences["traps"], defences["link_farms"]
    assert texts is not None
    ms, runs = per_page_ms(pages, defences.read)
    print(f"{web.name}, {len(pages)} pages, CPU ms a page:")
    print(f"  reading into shingle hashes  {ms:.3f}")
    ms, signatures = per_page_ms(runs, texts.signature)
    print(f"  MinHash signature            {ms:.3f}")
    ms, _ = per_page_ms(signatures, lambda sig: texts.find(sig) if sig is not None else None)
    print(f"  near-duplicate lookup        {ms:.3f}")
    asked, _ = per_page_ms(runs, traps.new_text)
    told, _ = per_page_ms(runs, traps.remember)
    print(f"  seen-text filter             {asked + told:.3f}")
    ms, _ = per_page_ms(pages, lambda page: short_word_share(page.text, farms.settings.min_words))
    print(f"  link-farm reading            {ms:.3f}")
    soft = defences["soft_404"]
    ms, _ = per_page_ms(pages, lambda page: soft._signature(page, page.url) if is_short(page) else None)
    print(f"  soft-404 short-page reading  {ms:.3f}")
    web.close()


if __name__ == "__main__":
    main()
