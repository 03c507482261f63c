"""How well does a topic given as a few words rank a web's pages? The ``keywords`` relevance model, measured.

For each (web, topic) of the development suite, with the topic's keywords only (what a keyword-only bench
run gives the agent, no example text):

* ``static AUC``: ranking AUC of the zero-shot similarity (static MiniLM vectors, ``KeywordRelevance``) over
  every page of the web that answers 200;
* ``MiniLM AUC`` (``--minilm``, needs the ``neural`` extra): the same with the full all-MiniLM-L6-v2
  sentence transformer, for the cost comparison, and ``blend AUC``: the sum of the two similarities, each
  standardised over the web's pages (a direction for broad topics, not what the crawler does);
* ``self-trained``: the model after ``learn_one`` on ``--pages`` pages in a seeded random order (a stand-in
  for a crawl's pages, less topical than a focused crawl's), its AUC and its precision / recall at P >= 0.5
  (the reward threshold), i.e. how well the mixture's calibration and the self-trained classifier do.

Labels only score, as everywhere.

    python -m benchmarks.zero_shot webs [--rows REGEX] [--pages 1000] [--minilm] [--description TEMPLATE]

``--description "Wikipedia articles about {keyword}"`` gives each topic that description besides its keywords
(``{keyword}``: its first keyword), to measure what such a sentence does to the ranking.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from dataclasses import replace

import numpy as np
from sklearn.metrics import roc_auc_score

from focuscrawl.bench.protocol import label_matches, load_topic
from focuscrawl.bench.suite import find_suite, load_suite
from focuscrawl.topic.zeroshot import KeywordRelevance, topic_query
from focuscrawl.webs.store import OfflineWeb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs", help="folder holding the suite's webs (webs/wikispeedia, webs/webkb)")
    parser.add_argument("--suite", default="dev")
    parser.add_argument("--rows", default="", help="only rows whose web/topic matches this regular expression")
    parser.add_argument("--pages", type=int, default=1000, help="pages the model learns from before it is scored")
    parser.add_argument("--minilm", action="store_true", help="also the full MiniLM transformer (slow)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--description", default="", help="a description for every topic; {keyword}: its first")
    args = parser.parse_args()
    try:
        args.description.format(keyword="")
    except (KeyError, IndexError, ValueError) as error:
        parser.error(f"--description may hold only {{keyword}}: {error!r} in {args.description!r}")

    suite = load_suite(find_suite(args.suite))
    seen: set[tuple[str, str]] = set()
    page_vectors: dict[str, np.ndarray] = {}  # the full MiniLM's page embeddings, once per web
    print("web/topic | pages (relevant) | keywords | static AUC | MiniLM AUC | blend AUC | self-trained AUC | P@0.5 "
          "| R@0.5 | learn ms/page")
    for row in suite.rows:
        key = (row.web, row.topic)
        if key in seen or not re.search(args.rows, f"{row.web}/{row.topic}"):
            continue
        seen.add(key)
        web = OfflineWeb(f"{args.webs}/{row.web}")
        topic = load_topic(web, row.topic, seed=args.seed)
        urls = [r.url for r in web.records() if r.status == 200]
        texts = web.texts(urls)
        labels = web.labels()  # every labelled page, example pages included: this scores a ranking, not a crawl
        relevant = np.array([label_matches(labels.get(u, ""), row.topic) for u in urls])
        inputs = topic.inputs
        if args.description:
            inputs = replace(inputs, description=args.description.format(keyword=inputs.keywords[0]))
        query = topic_query(inputs)
        model = KeywordRelevance(query, seed=args.seed)
        static = model.similarity(texts)
        static_auc = roc_auc_score(relevant, static)
        minilm_auc = blend_auc = float("nan")
        if args.minilm:
            from sentence_transformers import SentenceTransformer

            from focuscrawl.topic.embeddings import _teacher_dir

            encoder = SentenceTransformer(str(_teacher_dir()), device="cpu")
            if row.web not in page_vectors:
                page_vectors[row.web] = encoder.encode([t[:2000] for t in texts], normalize_embeddings=True,
                                                       batch_size=64)
            query_vector = encoder.encode([query], normalize_embeddings=True)[0]
            minilm = page_vectors[row.web] @ query_vector
            minilm_auc = roc_auc_score(relevant, minilm)
            blend_auc = roc_auc_score(relevant, (static - static.mean()) / static.std()
                                      + (minilm - minilm.mean()) / minilm.std())
        order = random.Random(args.seed).sample(range(len(texts)), min(args.pages, len(texts)))
        started = time.perf_counter()
        for i in order:
            model.learn_one(texts[i])
        learn_ms = 1000 * (time.perf_counter() - started) / max(len(order), 1)
        p = np.asarray(model.predict_proba(texts))
        predicted = p >= 0.5
        precision = float((predicted & relevant).sum()) / max(int(predicted.sum()), 1)
        recall = float((predicted & relevant).sum()) / max(int(relevant.sum()), 1)
        print(f"{row.web}/{row.topic} | {len(urls)} ({int(relevant.sum())}) | {query} | {static_auc:.3f} | "
              f"{minilm_auc:.3f} | {blend_auc:.3f} | {roc_auc_score(relevant, p):.3f} | {precision:.2f} | "
              f"{recall:.2f} | {learn_ms:.2f}",
              flush=True)
        web.close()


if __name__ == "__main__":
    main()
