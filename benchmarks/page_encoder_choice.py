"""How to combine the static vectors with the MiniLM transformer for a page: ranking AUC on a page sample.

    python -m benchmarks.page_encoder_choice webs [--pages 1200]

Per dev-suite topic, with its keywords only, over the same seeded sample of each web's pages: the ranking
AUC of the static-vector similarity (``KeywordRelevance.similarity``), of the transformer's cosine at 256
and 128 word pieces, of the mean of the two cosines (at 256 and 128), and of the sum of the two
standardised over the sample (which a crawl cannot compute: it needs the whole web's statistics). Labels
only score. Prints one line per topic and the mean over topics; CPU ms per page of each transformer length.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from focuscrawl.bench.protocol import label_matches, load_topic
from focuscrawl.bench.suite import find_suite, load_suite
from focuscrawl.topic.embeddings import load_sentence_encoder
from focuscrawl.topic.zeroshot import KeywordRelevance, topic_query
from focuscrawl.webs.store import OfflineWeb

COLUMNS = ("static", "minilm256", "minilm128", "mean256", "mean128", "standardised")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs", help="folder holding the suite's webs (webs/wikispeedia, webs/webkb)")
    parser.add_argument("--pages", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    encoder = load_sentence_encoder()
    samples: dict[str, tuple] = {}
    figures: dict[str, list[float]] = {c: [] for c in COLUMNS}
    seen: set[tuple[str, str]] = set()
    print("web/topic | relevant in sample | " + " | ".join(COLUMNS))
    for row in load_suite(find_suite("dev")).rows:
        if (row.web, row.topic) in seen:
            continue
        seen.add((row.web, row.topic))
        web = OfflineWeb(f"{args.webs}/{row.web}")
        topic = load_topic(web, row.topic, seed=args.seed)
        if row.web not in samples:
            urls = [r.url for r in web.records() if r.status == 200]
            urls = random.Random(args.seed).sample(urls, min(args.pages, len(urls)))
            texts = web.texts(urls)
            vectors = {}
            for tokens in (256, 128):
                encoder.model.max_seq_length = tokens
                encoder._memo.clear()
                started = time.process_time()
                vectors[tokens] = encoder.embed(texts)
                print(f"{row.web}: {tokens} word pieces, {1000 * (time.process_time() - started) / len(texts):.0f} "
                      "CPU ms a page")
            samples[row.web] = (urls, texts, vectors)
        urls, texts, vectors = samples[row.web]
        labels = web.labels()
        relevant = np.array([label_matches(labels.get(u, ""), row.topic) for u in urls])
        query = topic_query(topic.inputs)
        static = KeywordRelevance(query, seed=args.seed).similarity(texts)
        encoder.model.max_seq_length = 256
        q256 = encoder.model.encode([query], normalize_embeddings=True)[0]
        encoder.model.max_seq_length = 128
        q128 = encoder.model.encode([query], normalize_embeddings=True)[0]
        m256, m128 = vectors[256] @ q256, vectors[128] @ q128

        def z(v: np.ndarray) -> np.ndarray:
            return (v - v.mean()) / v.std()

        scores = {"static": static, "minilm256": m256, "minilm128": m128, "mean256": (static + m256) / 2,
                  "mean128": (static + m128) / 2, "standardised": z(static) + z(m256)}
        aucs = {c: roc_auc_score(relevant, scores[c]) for c in COLUMNS}
        for c in COLUMNS:
            figures[c].append(aucs[c])
        print(f"{row.web}/{row.topic} | {int(relevant.sum())} | " + " | ".join(f"{aucs[c]:.3f}" for c in COLUMNS))
    print("mean over topics | | " + " | ".join(f"{statistics.mean(figures[c]):.3f}" for c in COLUMNS))


if __name__ == "__main__":
    main()
