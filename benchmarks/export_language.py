"""Which language identifier the corpus export uses: Resiliparse's against py3langid on a run folder's pages.

    python -m benchmarks.export_language runs/webkb-course

The run's pages (status 2xx with text, as the export takes them), their title and main text, to each identifier:
on the text's first ``LANGUAGE_CHARS`` characters (as the export does) and on the whole text. Printed: the
languages each says most often, how often the prefix and the whole text get the same answer, and the CPU
milliseconds a page.
"""

from __future__ import annotations

import argparse
import json
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import py3langid
from resiliparse.parse.lang import detect_fast

from focuscrawl.storage import PAGES_FILE
from focuscrawl.storage.export import LANGUAGE_CHARS

IDENTIFIERS: dict[str, Callable[[str], str]] = {
    # NFC: what detect_fast expects (it normalises nothing itself)
    "resiliparse detect_fast": lambda text: detect_fast(unicodedata.normalize("NFC", text))[0],
    "py3langid": lambda text: py3langid.classify(text)[0],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    args = parser.parse_args()
    texts = []
    with open(args.run / PAGES_FILE, encoding="utf-8") as fh:
        for line in fh:
            page = json.loads(line)
            if 200 <= page["status"] < 300 and (page["text"] or page["title"]):
                texts.append(f"{page['title']}\n{page['text']}")
    print(f"{args.run}: {len(texts):,} pages, {sum(map(len, texts)) / len(texts):,.0f} characters on average\n")
    print(f"| identifier | most often said (first {LANGUAGE_CHARS:,} characters) | same as on the whole text | "
          f"CPU ms a page, first {LANGUAGE_CHARS:,} | CPU ms a page, whole |")
    print("|---|---|---|---|---|")
    for name, identify in IDENTIFIERS.items():
        identify("a sentence, so that a model is loaded before the clock starts")
        answers = {}
        cost = {}
        for part, cut in (("prefix", LANGUAGE_CHARS), ("whole", None)):
            started = time.process_time()
            answers[part] = [identify(text[:cut]) for text in texts]
            cost[part] = 1000 * (time.process_time() - started) / len(texts)
        said = ", ".join(f"{lang} {n / len(texts):.1%}" for lang, n in Counter(answers["prefix"]).most_common(4))
        same = sum(a == b for a, b in zip(answers["prefix"], answers["whole"])) / len(texts)
        print(f"| {name} | {said} | {same:.1%} | {cost['prefix']:.3f} | {cost['whole']:.3f} |")


if __name__ == "__main__":
    main()
