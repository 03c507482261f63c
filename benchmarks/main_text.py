"""Main text against whole-page text on the WebKB HTML: parsing speed and relevance-classifier quality.

For every page of the raw WebKB crawl (``../shared/data/webkb``: HTTP responses of 1997 university pages),
three texts: ``whole`` (focuscrawl's text before main-text extraction: the body minus script, style and nav),
``trafilatura`` (``trafilatura.extract``) and ``resiliparse`` (``extract_plain_text(main_content=True)``);
an extractor that returns nothing (tiny pages, frames) falls back to the whole text, as the crawler does.
Printed: pages/s of each (parsing + extraction, one core), and for each WebKB class the TF-IDF + logistic
regression relevance model (the crawl's default reward model) trained on the Cornell pages and scored on
the other three universities' pages, as the benchmark protocol splits them: precision and recall at
P >= 0.5 (the reward threshold) and ranking AUC.

    python -m benchmarks.main_text ../shared/data/webkb [--limit N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from focuscrawl.html import decode_html, extract_main_text, parse_html
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.webs.webkb import _find_root, _sources, split_response

CLASSES = ("course", "faculty", "student", "project")


def extractors():
    import trafilatura
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return {
        "whole": lambda html: "",
        "trafilatura": lambda html: trafilatura.extract(html, include_comments=False, include_tables=True) or "",
        "resiliparse": lambda html: extract_plain_text(HTMLTree.parse(html), main_content=True),
        "focuscrawl": extract_main_text,  # what the crawler uses (one of the two above)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webkb", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="only the first N pages (a quick look)")
    args = parser.parse_args()

    pages = []  # (url, labels, html)
    for url, (path, labels) in _sources(_find_root(args.webkb)).items():
        headers, body = split_response(path.read_bytes())
        content_type = headers.get("content-type", "text/html")
        if not content_type.lower().startswith("text/html"):
            continue
        pages.append((url, labels, decode_html(body, content_type).replace("\x00", "")))
        if args.limit and len(pages) >= args.limit:
            break
    print(f"{len(pages)} HTML pages")
    texts: dict[str, list[str]] = {}
    for name, extract in extractors().items():
        started = time.process_time()
        out = []
        for url, _, html in pages:
            _, whole, _ = parse_html(html, url)
            main = extract(html)
            out.append(main if main and main.strip() else whole)
        seconds = time.process_time() - started
        texts[name] = out
        print(f"{name:12s} {len(pages) / seconds:7.0f} pages/s (parse + extract, CPU time)  "
              f"mean {np.mean([len(t) for t in out]):6.0f} characters")
    train = np.array([url.split("/")[2].endswith("cornell.edu") for url, _, _ in pages])
    print("\nclass     text          precision  recall  AUC   (trained on Cornell, scored on the other universities)")
    for label in CLASSES:
        y = np.array([label in labels for _, labels, _ in pages])
        for name, column in texts.items():
            column = np.array(column, dtype=object)
            model = TfidfRelevanceModel(seed=0).fit(list(column[train]), list(y[train].astype(int)))
            p = np.asarray(model.predict_proba(list(column[~train])))
            truth = y[~train]
            predicted = p >= 0.5
            precision = (predicted & truth).sum() / max(predicted.sum(), 1)
            recall = (predicted & truth).sum() / max(truth.sum(), 1)
            print(f"{label:9s} {name:12s} {precision:9.3f}  {recall:6.3f}  {roc_auc_score(truth, p):.3f}")


if __name__ == "__main__":
    main()
