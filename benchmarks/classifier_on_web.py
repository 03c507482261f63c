"""How good is each reward classifier on a whole offline web, not just in cross-validation?

Trains each named relevance model on the topic's default example texts (exactly what an agent gets) and
reports, on every page of the web that answers 200, precision, recall and false positives at P >= 0.5 (the reward
threshold) and the ranking AUC; then the AUC of the same model applied to anchor texts of a sample of
links, for predicting whether the link's target is relevant (TRES's anchor feature), and the share of
relevant targets among the 200 best-scored anchors (the top of the ranking is what a crawler follows). Labels are used
here only to score, as everywhere.

    python -m benchmarks.classifier_on_web webs/wikispeedia subject.Science.Physics [--models kwbilstm,svm,tfidf]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from focuscrawl.bench.protocol import load_topic
from focuscrawl.topic.models import train_relevance_model
from focuscrawl.webs.store import OfflineWeb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web")
    parser.add_argument("topic")
    parser.add_argument("--models", default="kwbilstm,svm,tfidf")
    parser.add_argument("--link-pages", type=int, default=600, help="pages whose links are sampled for the anchor AUC")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--irrelevant", type=int, default=None,
                        help="irrelevant example texts (default: the protocol's)")
    args = parser.parse_args()

    web = OfflineWeb(args.web)
    extra = {} if args.irrelevant is None else {"examples_irrelevant": args.irrelevant}
    topic = load_topic(web, args.topic, seed=args.seed, **extra)
    urls = [r.url for r in web.records() if r.status == 200]
    texts = web.texts(urls)
    relevant = np.array([u in topic.truth.relevant for u in urls])
    anchors, anchor_relevant = [], []
    for url in random.Random(args.seed).sample(urls, min(args.link_pages, len(urls))):
        for link in web.fetch(url).outlinks:
            anchors.append(link.anchor)
            anchor_relevant.append(link.url in topic.truth.relevant)
    print(f"{web.name} / {args.topic}: {len(urls)} pages ({int(relevant.sum())} relevant), "
          f"{len(anchors)} sampled links ({sum(anchor_relevant)} to relevant pages)")
    print("model      train s  precision  recall  false pos  page AUC  anchor AUC  anchor P@200")
    for name in args.models.split(","):
        started = time.perf_counter()
        model = train_relevance_model(name, topic.inputs, args.seed)
        train_s = time.perf_counter() - started
        p = np.asarray(model.predict_proba(texts))
        predicted = p >= 0.5
        tp = int((predicted & relevant).sum())
        fp = int((predicted & ~relevant).sum())
        precision = tp / max(tp + fp, 1)
        recall = tp / max(int(relevant.sum()), 1)
        anchor_p = np.asarray(model.predict_proba(anchors))
        anchor_auc = roc_auc_score(anchor_relevant, anchor_p)
        # what a greedy crawler follows: how many of the 200 best-scored links lead to relevant pages
        top = np.argsort(-anchor_p, kind="stable")[:200]
        anchor_top = float(np.mean(np.asarray(anchor_relevant)[top]))
        print(f"{name:<10} {train_s:7.1f}  {precision:9.3f}  {recall:6.3f}  {fp:9d}  {roc_auc_score(relevant, p):8.3f}"
              f"  {anchor_auc:10.3f}  {anchor_top:12.2f}")
    web.close()


if __name__ == "__main__":
    main()
