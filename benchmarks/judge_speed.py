"""What a judge costs a page: CPU milliseconds to score one fetched page, as the engine scores it.

Trains each named relevance model on a topic's default examples (as a crawl does), then scores pages of the
web one call at a time, each as the engine reads it (``title + "\\n" + text``), and prints the CPU time per page,
the best of ``--repeats`` passes over the same pages (the least disturbed by other work on the machine). Run it
on two trees to compare them:

    PYTHONPATH=TREE/src python -m benchmarks.judge_speed webs/wikispeedia subject.Science.Physics \\
        [--models tfidf,tfidf+vectors-stacked] [--pages 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import itertools
import time


def main() -> None:
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.topic.models import train_relevance_model
    from focuscrawl.webs.store import OfflineWeb

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web")
    parser.add_argument("topic")
    parser.add_argument("--models", default="tfidf,tfidf+vectors-stacked")
    parser.add_argument("--pages", type=int, default=200, help="pages scored, spread evenly over the web's records")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    web = OfflineWeb(args.web)
    topic = load_topic(web, args.topic)
    records = list(web.records())
    stride = max(1, len(records) // args.pages)
    pages = [web.fetch(r.url) for r in itertools.islice(records, 0, None, stride)][:args.pages]
    texts = [f"{p.title}\n{p.text}" for p in pages if p.status == 200]
    chars = sum(map(len, texts)) / max(1, len(texts))
    print(f"{len(texts)} pages of {args.web}, {chars:,.0f} characters on average")
    for name in args.models.split(","):
        model = train_relevance_model(name, topic.inputs, 0)
        model.predict_proba(texts[:5])  # first-call work (compiling, caches) left out
        best = float("inf")
        for _ in range(args.repeats):
            started = time.process_time()
            for text in texts:
                model.predict_proba([text])
            best = min(best, time.process_time() - started)
        print(f"{name:28s} {1000 * best / len(texts):7.3f} CPU ms a page (best of {args.repeats})")


if __name__ == "__main__":
    main()
