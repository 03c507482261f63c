"""Can the judge be recalibrated on the web it crawls without labels? Four label-free maps, scored against labels.

For each chosen suite row, one crawl (``adaptive``, protocol run 0) gives the judge's probability on every fetched
page; each map below turns those into new probabilities, which are scored as ``judge_calibration`` scores the judge
(ECE, precision and recall at 0.5; labels only score):

- ``mixture``: two Gaussians over the pages' logits, fitted by EM (as ``keywords`` topics calibrate similarities);
- ``platt``: Platt scaling fitted on the examples' out-of-fold probabilities (5 folds of the topic's examples);
- ``platt+prior``: that, then the class prior re-estimated on the crawl's pages by EM (Saerens et al. 2002);
- ``anchored``: the mixture with the examples' out-of-fold logits as labelled points (weight 5 each);
- ``self-trained``: the judge retrained on its examples and the crawl's confident pages, as ``keywords`` topics
  self-train, online: at 25, 50, 100, 200, 400, 800 and 1,600 pages the raw judge's scores of the pages so far are
  mapped by the mixture, pages at a posterior of 0.9 or more (0.1 or less) join the examples as relevant (not),
  and the retrained judge scores the pages after that point (each page by the model the crawl would have had).

Two judges of another kind are scored beside them, to see whether the compression is the features' fault:

- ``vectors``: ``focuscrawl.topic.vector_judge.VectorRelevanceModel``, logistic regression (balanced classes) on
  the examples' static sentence vectors (the packaged all-MiniLM-L6-v2 distilled; each text's first 2,000
  characters);
- ``tfidf+vectors``: the mean of the raw judge's probability and that (the relevance model ``tfidf+vectors``);
- ``stacked``: the two weighted by their out-of-fold logits on the examples (``tfidf+vectors-stacked``, ``adaptive``'s
  judge), and that judge with its combined logit Platt-scaled to the examples' prior (``stacked+platt``, a trial's),
  all scored on the pages of a crawl judged by TF-IDF (``reward_model=tfidf`` unless ``-s`` names a judge).

Besides ECE and precision/recall at 0.5, each map's ROC AUC over the crawl's pages says whether it ranks them
better, which is what a crawl's order depends on (a monotone map such as the mixture leaves it as it is).

    python -m benchmarks.judge_recalibration webs --rows . [--cache DIR] [--maps stacked,stacked+platt]

``--cache DIR`` keeps each row's crawl (URLs, the judge's scores, labels) there, so a second reading costs no crawl.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from benchmarks.judge_calibration import calibration, crawl_pages
from focuscrawl.bench.runner import bench_topic
from focuscrawl.bench.suite import find_suite, load_suite, plan_rows
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.topic.vector_judge import VectorRelevanceModel, logit, tfidf_and_vectors_stacked
from focuscrawl.webs.store import OfflineWeb

Mixture = tuple[float, float, float, float, float]  # weight of the relevant component, its mean and sd, the other's


def out_of_fold(texts: list[str], labels: np.ndarray, folds: int = 5, seed: int = 0) -> np.ndarray:
    order = np.random.default_rng(seed).permutation(len(texts))
    out = np.zeros(len(texts))
    for fold in range(folds):
        test = order[fold::folds]
        train = np.setdiff1d(order, test)
        model = TfidfRelevanceModel(seed=seed).fit([texts[i] for i in train], labels[train])
        out[test] = model.predict_proba([texts[i] for i in test])
    return out


def _log_densities(z: np.ndarray, mixture: Mixture) -> tuple[np.ndarray, np.ndarray]:
    w, m1, s1, m0, s0 = mixture
    return (math.log(w) - math.log(s1) - 0.5 * ((z - m1) / s1) ** 2,
            math.log(1 - w) - math.log(s0) - 0.5 * ((z - m0) / s0) ** 2)


def fit_mixture(z: np.ndarray, labelled: np.ndarray | None = None, labels: np.ndarray | None = None,
                weight: float = 5.0) -> Mixture:
    """EM over the crawl's logits ``z``; ``labelled`` points (with ``labels``) keep their responsibilities."""
    if labelled is not None:
        m1, m0 = float(labelled[labels == 1].mean()), float(labelled[labels == 0].mean())
        s1 = s0 = max(0.3, float(labelled.std()))
    else:
        m1, m0, s1 = float(np.percentile(z, 75)), float(np.percentile(z, 25)), float(z.std())
        s0 = s1
    w = 0.5
    for _ in range(100):
        log1, log0 = _log_densities(z, (w, m1, s1, m0, s0))
        r = 1 / (1 + np.exp(np.clip(log0 - log1, -50, 50)))
        w = min(1 - 1e-3, max(1e-3, float(r.mean())))
        points, resp, weights = z, r, np.ones(len(z))
        if labelled is not None:
            points = np.concatenate([z, labelled])
            resp = np.concatenate([r, labels.astype(float)])
            weights = np.concatenate([weights, np.full(len(labelled), weight)])
        n1, n0 = float(weights @ resp), float(weights @ (1 - resp))
        m1, m0 = float((weights * resp) @ points / n1), float((weights * (1 - resp)) @ points / n0)
        s1 = max(0.05, math.sqrt(float((weights * resp) @ (points - m1) ** 2 / n1)))
        s0 = max(0.05, math.sqrt(float((weights * (1 - resp)) @ (points - m0) ** 2 / n0)))
    return w, m1, s1, m0, s0


def posterior(z: np.ndarray, mixture: Mixture) -> np.ndarray:
    """P(relevant | z), held monotone past the log-odds' vertex (as ``KeywordRelevance._posterior``)."""
    _, m1, s1, m0, s0 = mixture
    curvature = 1 / s0**2 - 1 / s1**2
    if curvature:
        vertex = (m0 / s0**2 - m1 / s1**2) / curvature
        z = np.maximum(z, vertex) if curvature > 0 else np.minimum(z, vertex)
    log1, log0 = _log_densities(z, mixture)
    return 1 / (1 + np.exp(np.clip(log0 - log1, -50, 50)))


def prior_adjusted(p: np.ndarray, prior: float) -> np.ndarray:
    """Saerens et al.'s EM: calibrated posteriors at training prior ``prior``, re-weighted to the crawl's prior."""
    pi = prior
    for _ in range(200):
        q = (pi / prior) * p / ((pi / prior) * p + ((1 - pi) / (1 - prior)) * (1 - p))
        pi = float(q.mean())
    return q


RETRAIN_AT = (25, 50, 100, 200, 400, 800, 1600)
CONFIDENT = 0.9


def self_trained(texts: list[str], p: np.ndarray, example_texts: list[str], example_labels: np.ndarray,
                 seed: int) -> np.ndarray:
    """Each page's probability from the judge retrained, at the last of ``RETRAIN_AT`` before it, on the examples
    and the confident pages before that point (the raw judge's scores mapped by a mixture fitted on those pages);
    before the first point, the raw judge's."""
    out = p.copy()
    for start, end in zip(RETRAIN_AT, (*RETRAIN_AT[1:], len(p))):
        if start >= len(p):
            break
        z = logit(p[:start])
        confidence = posterior(z, fit_mixture(z))
        chosen = np.flatnonzero((confidence >= CONFIDENT) | (confidence <= 1 - CONFIDENT))
        model = TfidfRelevanceModel(seed=seed).fit(
            [*example_texts, *(texts[i] for i in chosen)],
            np.concatenate([example_labels, (confidence[chosen] >= CONFIDENT).astype(int)]))
        out[start:end] = model.predict_proba(texts[start:end])
    return out


def cached_crawl(config, cache: Path | None, name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``crawl_pages`` of the row's run 0 with ``adaptive``, read from ``cache`` when it holds them."""
    path = cache / f"{name.replace('/', '_')}.json" if cache else None
    if path is not None and path.exists():
        kept = json.loads(path.read_text())
        return kept["urls"], np.array(kept["p"], dtype=float), np.array(kept["y"], dtype=bool)
    urls, p, y, _ = crawl_pages(config, "adaptive", [0])
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"urls": urls, "p": p.tolist(), "y": y.tolist()}))
    return urls, p, y


MAPS = ("raw", "mixture", "platt", "platt+prior", "anchored", "self-trained", "vectors", "tfidf+vectors", "stacked",
        "stacked+platt")


def judged_by_tfidf(overrides: list[str]) -> list[str]:
    """The settings, with the crawl judged by TF-IDF unless they name a judge: the maps here read its scores."""
    return overrides if any(o.startswith(("reward_model=", "judge=")) for o in overrides) else \
        ["reward_model=tfidf", *overrides]


def ranking(q: np.ndarray, y: np.ndarray) -> float:
    return float(roc_auc_score(y, q)) if 0 < y.sum() < len(y) else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("webs", type=Path)
    parser.add_argument("--suite", default="dev")
    parser.add_argument("--rows", default=None)
    parser.add_argument("-s", "--set", action="append", default=[])
    parser.add_argument("--cache", type=Path, default=None, help="keep (and reuse) each row's crawl here")
    parser.add_argument("--maps", type=lambda text: text.split(","), default=None,
                        help="comma-separated maps to score (default: all); the raw judge is always scored")
    args = parser.parse_args()
    unknown = sorted(set(args.maps or ()) - set(MAPS))
    if unknown:
        parser.error(f"--maps: no map {', '.join(unknown)}; the maps are {', '.join(MAPS)}")
    suite = load_suite(find_suite(args.suite))
    planned = plan_rows(suite, webs=args.webs, out=Path("/tmp/judge-recalibration"), pattern=args.rows,
                        overrides=judged_by_tfidf(args.set), given={"runs": 1})
    ece: dict[str, list[float]] = {}
    auc: dict[str, list[float]] = {}
    for row in planned:
        web = OfflineWeb(row.config.web)
        topic = bench_topic(web, row.config)
        web.close()
        urls, p, y = cached_crawl(row.config, args.cache, row.row.label)
        web = OfflineWeb(row.config.web)
        pages = [web.fetch(url) for url in urls]
        web.close()
        crawled = [f"{page.title}\n{page.text}" for page in pages]  # what the engine gives the judge
        texts, labels = topic.inputs.example_texts, np.asarray(topic.inputs.example_labels)
        seed = row.config.seed

        def platt() -> np.ndarray:
            oof = logit(out_of_fold(texts, labels, seed=seed))
            return LogisticRegression(C=1e6).fit(oof[:, None], labels).predict_proba(logit(p)[:, None])[:, 1]

        def anchored() -> np.ndarray:
            return posterior(logit(p), fit_mixture(logit(p), logit(out_of_fold(texts, labels, seed=seed)), labels))

        def vectors() -> np.ndarray:
            return VectorRelevanceModel(seed).fit(texts, labels).predict_proba(crawled)

        makers = {"raw": lambda: p, "mixture": lambda: posterior(logit(p), fit_mixture(logit(p))), "platt": platt,
                  "platt+prior": lambda: prior_adjusted(platt(), float(labels.mean())), "anchored": anchored,
                  "self-trained": lambda: self_trained(crawled, p, list(texts), labels, seed),
                  "vectors": vectors, "tfidf+vectors": lambda: (p + vectors()) / 2,
                  "stacked": lambda: tfidf_and_vectors_stacked(seed, calibrated=False).fit(texts, labels).predict_proba(
                      crawled),
                  "stacked+platt": lambda: tfidf_and_vectors_stacked(seed, calibrated=True).fit(
                      texts, labels).predict_proba(crawled)}
        assert tuple(makers) == MAPS
        maps = {name: makers[name]() for name in makers if name == "raw" or not args.maps or name in args.maps}
        cells = []
        for name, q in maps.items():
            figures = calibration(q, y)
            ece.setdefault(name, []).append(figures["ece"])
            auc.setdefault(name, []).append(ranking(q, y))
            cells.append(f"{name} {figures['ece']:.3f} {figures['precision']:.2f} {figures['recall']:.2f} "
                         f"{auc[name][-1]:.3f}")
        print(f"{row.row.label[:40]:40s} " + " | ".join(cells), flush=True)
    print("median ECE: " + ", ".join(f"{name} {np.median(v):.3f}" for name, v in ece.items()))
    print("median ROC AUC: " + ", ".join(f"{name} {np.nanmedian(v):.3f}" for name, v in auc.items()))
    print("(each cell: ECE, precision at 0.5, recall at 0.5, ROC AUC)")


if __name__ == "__main__":
    main()
