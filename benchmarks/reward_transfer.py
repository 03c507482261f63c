"""Does a reward classifier trained on one university's pages recognise the topic at the others?

WebKB's protocol trains the agent's classifier on Cornell's pages (the example texts) and crawls the other
universities. This trains, on exactly the agent's example texts, the project's tfidf model and a logistic
regression (standardised inputs, sklearn's defaults) on two page embeddings of the packaged MiniLM: its
distilled static vectors (about 1 ms a page) and the transformer itself (about 45 ms). It reports, on every
page of the web off the training hosts, recall and precision at the reward threshold P >= 0.5 and the
ranking AUC. Labels only score, as everywhere.

    python -m benchmarks.reward_transfer webs/webkb faculty student course project [--no-transformer]
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from focuscrawl.bench.protocol import load_topic
from focuscrawl.topic.models import train_relevance_model
from focuscrawl.webs.store import OfflineWeb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web")
    parser.add_argument("topics", nargs="+")
    parser.add_argument("--no-transformer", action="store_true", help="skip the transformer (45 ms a page)")
    args = parser.parse_args()

    from focuscrawl.topic.embeddings import load_sentence_encoder, load_word_vectors

    web = OfflineWeb(args.web)
    train_host = re.compile((web.meta.get("topic_defaults") or {}).get("train_host_pattern") or "$^")
    records = [r for r in web.records() if r.status == 200 and not train_host.search(r.host)]
    urls = [r.url for r in records]
    texts = web.texts(urls)
    encoders = {"static vectors": load_word_vectors().embed}
    if not args.no_transformer:
        encoders["transformer"] = load_sentence_encoder().embed
    pages = {}
    for name, embed in encoders.items():
        started = time.perf_counter()
        pages[name] = embed(texts)
        print(f"{name}: {len(texts)} pages embedded in {time.perf_counter() - started:.0f} s")
    print(f"{web.name}: {len(urls)} pages off the training hosts")
    print("topic     relevant  model           recall  precision  AUC")
    for topic_name in args.topics:
        topic = load_topic(web, topic_name)
        relevant = np.array([u in topic.truth.relevant for u in urls])
        labels = np.asarray(topic.inputs.example_labels)
        scores = {"tfidf": np.asarray(train_relevance_model("tfidf", topic.inputs, 0).predict_proba(texts))}
        for name, embed in encoders.items():
            # standardised: unit-length embeddings give a plain logistic regression logits near zero
            model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
            model.fit(embed(topic.inputs.example_texts), labels)
            scores[name] = model.predict_proba(pages[name])[:, 1]
        for name, p in scores.items():
            predicted = p >= 0.5
            recall = (predicted & relevant).sum() / max(relevant.sum(), 1)
            precision = (predicted & relevant).sum() / max(predicted.sum(), 1)
            print(f"{topic_name:<9} {int(relevant.sum()):8d}  {name:<14} {recall:7.3f}  {precision:9.3f}  "
                  f"{roc_auc_score(relevant, p):.3f}")
    web.close()


if __name__ == "__main__":
    main()
