"""Per-link cost of ``adaptive``'s evidence for a page's new links: link by link (the definitions) or per page.

On ``bench-policy``'s synthetic pages (20 new links each, as its timed steps), the evidence ``observe`` computes
for each new link: its hashed words and the link model's probability on them, its topic words (tf-idf cosine
of URL and anchor), and the reward classifier's probability on its context. Link by link is how ``observe``
computed them before (``hashed_words`` and ``predict`` per link, ``TopicSimilarity._cosine`` over
``term_counts``); per page is how it computes them now (``hashed_words_many``, ``predict_many``,
``TopicSimilarity.links``), with the same numbers (tests/test_adaptive_batched.py). Process CPU time, the best
of REPEATS interleaved repetitions, so that a busy machine's stalls are set aside; each on pages of its own, so
that the word caches meet new URLs' words as in a crawl.

    python -m benchmarks.link_evidence_speed [--pages 1000] [--repeats 5] [--hosts 2000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from focuscrawl.bench.policy_speed import SyntheticLoad
from focuscrawl.strategies.adaptive import OnlineLogistic, hashed_words, hashed_words_many
from focuscrawl.topic.similarity import TopicSimilarity, term_counts
from focuscrawl.topic.text import url_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--links", type=int, default=20, help="new links per page (bench-policy's timed steps: 20)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--hosts", type=int, default=2000, help="bench-policy's load has size/50 (20,000 at 1M)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    load = SyntheticLoad(args.seed, hosts=args.hosts)
    context = load.context(args.seed, "tfidf")
    topic, classifier = context.topic, context.classifier
    similarity = TopicSimilarity(topic.example_texts, topic.example_labels, topic.keywords)
    model = OnlineLogistic()
    model.w = np.random.default_rng(args.seed).normal(size=model.w.shape)  # the cost does not depend on them
    model.trained = 1

    def new_pages() -> list[tuple[list[str], list[str], list[str]]]:
        """Pages never seen before: each repetition gets its own, as a crawl's links are new (a word cache must
        not answer from an earlier repetition)."""
        pages = []
        for _ in range(args.pages):
            links = load.page(args.links)[1]
            urls, anchors = [link.url for link in links], [link.anchor for link in links]
            pages.append((urls, anchors, [f"{url_text(u)} {a}" for u, a in zip(urls, anchors)]))
        return pages

    def link_by_link_words(urls, anchors, texts):
        return [model.predict(hashed_words(u, a)) for u, a in zip(urls, anchors)]

    def per_page_words(urls, anchors, texts):
        words, lengths = hashed_words_many(urls, anchors)
        ends = np.cumsum(lengths).tolist()
        return model.predict_many(words, lengths), [words[s:e] for s, e in zip([0, *ends], ends)]

    parts: dict[str, Callable] = {
        "hashed words + link model, link by link": link_by_link_words,
        "hashed words + link model, per page": per_page_words,
        "topic words, link by link": lambda u, a, texts: similarity._cosine([term_counts(t) for t in texts],
                                                                            unknown_in_norm=False),
        "topic words, per page": lambda u, a, texts: similarity.links(texts),
        "reward classifier (TF-IDF) on the contexts": lambda u, anchors, t: classifier.predict_proba(anchors),
    }
    best = {name: np.inf for name in parts}
    for _ in range(args.repeats):
        for name, part in parts.items():
            pages = new_pages()
            started = time.process_time()
            for page in pages:
                part(*page)
            best[name] = min(best[name], time.process_time() - started)
    links = args.pages * args.links
    print(f"{args.pages} pages of {args.links} new links, best of {args.repeats} (process CPU time):")
    for name, seconds in best.items():
        print(f"  {name:45s} {1e6 * seconds / links:6.2f} us/link")


if __name__ == "__main__":
    main()
