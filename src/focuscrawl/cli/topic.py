"""``focuscrawl topic ...``: word vectors, TRES keyword expansion, and the relevance classifiers.

- ``vectors``   build (or check) the static word vectors in the user cache;
- ``expand``    Algorithm 1 on a topic's agent inputs, with the journal's Table 2 figures;
- ``train``     fit a named relevance model on a topic's example texts and save it;
- ``evaluate``  stratified 5-fold cross-validation of svm, bilstm, kwbilstm (Table 1's shape).

Evaluation sample: the agent's inputs hold only 50 relevant + 200 irrelevant texts, too few to compare
classifiers, so ``evaluate`` draws its own seeded sample of up to 300 relevant and 600 irrelevant pages
with text from the whole web (all hosts, WebKB's train/crawl host split ignored: this measures the
classifier, not a crawl). Each fold trains on its own 4/5 only, KwBiLSTM's keyword expansion included.
Figures are means over the 5 folds.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

topic_app = typer.Typer(help="Topic side: word vectors, keyword expansion, relevance classifiers.",
                        no_args_is_help=True)

WebOpt = Annotated[str, typer.Option(help="offline web directory, or 'embedded'")]
TopicOpt = Annotated[str, typer.Option(help="topic label, e.g. subject.Science.Biology")]
SeedOpt = Annotated[int, typer.Option(help="seed of every random choice")]
EVAL_MODELS = ("svm", "bilstm", "kwbilstm")


def _cli():
    # Imported late: focuscrawl.cli.main imports this module while it is itself being imported.
    from focuscrawl.cli import main

    return main


def register(app: typer.Typer) -> None:
    app.add_typer(topic_app, name="topic")


def _load(web: str, topic: str, seed: int):
    from focuscrawl.bench.protocol import load_topic
    from focuscrawl.web.store import OfflineWeb

    offline = _cli()._run(lambda: OfflineWeb(_cli().resolve_web(web)))
    return offline, _cli()._run(lambda: load_topic(offline, topic, seed))


@topic_app.command("vectors")
def vectors_cmd(force: Annotated[bool, typer.Option(help="rebuild even if cached")] = False) -> None:
    """Build the static word vectors (distilled offline from the packaged all-MiniLM-L6-v2) into the cache."""
    from focuscrawl.topic.embeddings import build_word_vectors, load_word_vectors

    start = time.perf_counter()
    directory = build_word_vectors(force=force, log=_cli().console.print)
    vectors = load_word_vectors(directory)
    _cli().out.print(f"word vectors: {directory} ({len(vectors.vocabulary):,} words, {vectors.dim} dims, "
              f"{time.perf_counter() - start:.1f} s)")
    _cli().out.print(f"  football~soccer {vectors.similarity('football', 'soccer'):.3f}   "
              f"football~violin {vectors.similarity('football', 'violin'):.3f}")


@topic_app.command("expand")
def expand_cmd(web: WebOpt = "embedded", topic: TopicOpt = "subject.Science.Biology", seed: SeedOpt = 0,
               threshold: Annotated[float | None, typer.Option(help="override equation 2's b")] = None) -> None:
    """TRES keyword expansion (Algorithm 1): KS, K', and Table 2's mean keyword counts."""
    from focuscrawl.topic.keywords import expand_keywords, keyword_table

    _, bench_topic = _load(web, topic, seed)
    inputs = bench_topic.inputs
    keywords = expand_keywords(inputs, threshold=threshold)
    figures = keyword_table(keywords, inputs.example_texts, inputs.example_labels)
    _cli().out.print(f"[bold]{topic}[/]  threshold b = {keywords.threshold:.3f}")
    _cli().out.print(f"KS ({len(keywords.initial)}): {', '.join(keywords.initial)}")
    _cli().out.print(f"K' ({len(keywords.discovered)}): "
              + ", ".join(f"{k} ({keywords.scores[k]:.2f})" for k in keywords.discovered))
    table = Table(title=f"Table 2: mean keyword count per example text ({figures['relevant_texts']} relevant, "
                        f"{figures['irrelevant_texts']} irrelevant)")
    for column in ("", "C (K')", "C' (K')", "C (K)", "C' (K)", "# KS", "# K'"):
        table.add_column(column, justify="right")
    table.add_row(topic, f"{figures['mean_discovered_relevant']:.2f}", f"{figures['mean_discovered_irrelevant']:.2f}",
                  f"{figures['mean_all_relevant']:.2f}", f"{figures['mean_all_irrelevant']:.2f}",
                  str(figures["initial"]), str(figures["discovered"]))
    _cli().out.print(table)


@topic_app.command("train")
def train_cmd(web: WebOpt = "embedded", topic: TopicOpt = "subject.Science.Biology",
              model: Annotated[str, typer.Option(help="svm, bilstm, kwbilstm (or any registered model)")] = "kwbilstm",
              out_file: Annotated[Path, typer.Option("--out", help="where to save the model")] = Path("model.pt"),
              seed: SeedOpt = 0) -> None:
    """Fit a relevance model on the topic's example texts and save it (load with load_relevance_model)."""
    from focuscrawl.topic.models import train_relevance_model

    _, bench_topic = _load(web, topic, seed)
    inputs = bench_topic.inputs
    start = time.perf_counter()
    fitted = _cli()._run(lambda: train_relevance_model(model, inputs, seed))
    seconds = time.perf_counter() - start
    if not hasattr(fitted, "save"):
        _cli().fail(f"model {model!r} cannot be saved")
    out_file.parent.mkdir(parents=True, exist_ok=True)
    fitted.save(out_file)
    probs = fitted.predict_proba(inputs.example_texts)
    accuracy = float(np.mean((probs >= 0.5) == np.asarray(inputs.example_labels, dtype=bool)))
    _cli().out.print(f"{model} trained on {len(inputs.example_texts)} example texts in {seconds:.1f} s "
              f"(training accuracy {accuracy:.3f}); saved to {out_file}")


def evaluation_sample(web, topic: str, seed: int, relevant: int, irrelevant: int) -> tuple[list[str], list[int]]:
    """A seeded sample of labelled page texts from the whole web (see the module docstring)."""
    from focuscrawl.web.store import label_matches

    positives, negatives = [], []
    for record in web.records():
        if 200 <= record.status < 300 and record.labels:
            (positives if label_matches(record.labels, topic) else negatives).append(record.url)
    rng = random.Random(f"{seed}:{topic}:evaluation")
    texts, labels = [], []
    for urls, label, n in ((positives, 1, relevant), (negatives, 0, irrelevant)):
        for text in web.texts(rng.sample(urls, min(n, len(urls)))):
            if text.strip():
                texts.append(text)
                labels.append(label)
    return texts, labels


def cross_validate(name: str, keywords: list[str], texts: list[str], labels: list[int], seed: int,
                   folds: int = 5) -> dict:
    """Stratified k-fold CV of a registered model: mean precision/recall (relevant class) and macro F1."""
    from sklearn.metrics import f1_score, precision_score, recall_score
    from sklearn.model_selection import StratifiedKFold

    from focuscrawl.topic.inputs import TopicInputs
    from focuscrawl.topic.models import train_relevance_model

    y = np.asarray(labels)
    scores: dict[str, list[float]] = {"precision": [], "recall": [], "f_macro": [], "train_s": [], "predict_ms": []}
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(texts, y):
        inputs = TopicInputs("cv", keywords, [texts[i] for i in train], y[train].tolist())
        start = time.perf_counter()
        model = train_relevance_model(name, inputs, seed)
        scores["train_s"].append(time.perf_counter() - start)
        start = time.perf_counter()
        predicted = (model.predict_proba([texts[i] for i in test]) >= 0.5).astype(int)
        scores["predict_ms"].append(1000 * (time.perf_counter() - start) / len(test))
        scores["precision"].append(precision_score(y[test], predicted, zero_division=0))
        scores["recall"].append(recall_score(y[test], predicted, zero_division=0))
        scores["f_macro"].append(f1_score(y[test], predicted, average="macro", zero_division=0))
    return {key: float(np.mean(values)) for key, values in scores.items()}


@topic_app.command("evaluate")
def evaluate_cmd(web: WebOpt = "embedded", topic: TopicOpt = "subject.Science.Biology", seed: SeedOpt = 0,
                 models: Annotated[str, typer.Option(help="comma-separated models")] = ",".join(EVAL_MODELS),
                 relevant: Annotated[int, typer.Option(help="max relevant pages sampled")] = 300,
                 irrelevant: Annotated[int, typer.Option(help="max irrelevant pages sampled")] = 600,
                 folds: int = 5) -> None:
    """Stratified k-fold CV: precision and recall of the relevant class and macro F1 (Table 1's shape)."""
    offline, bench_topic = _load(web, topic, seed)
    texts, labels = evaluation_sample(offline, topic, seed, relevant, irrelevant)
    n_pos = sum(labels)
    if min(n_pos, len(labels) - n_pos) < folds:
        _cli().fail(f"too few pages for {folds}-fold CV ({n_pos} relevant, {len(labels) - n_pos} irrelevant)")
    table = Table(title=f"Table 1: {topic}, {folds}-fold CV on {n_pos} relevant + {len(labels) - n_pos} "
                        f"irrelevant pages (%)")
    for column in ("classifier", "P", "R", "F-m", "train s/fold", "ms/page"):
        table.add_column(column, justify="left" if column == "classifier" else "right")
    for name in [m.strip() for m in models.split(",") if m.strip()]:
        _cli().console.print(f"cross-validating {name} ...")
        r = _cli()._run(lambda name=name: cross_validate(name, bench_topic.inputs.keywords, texts, labels, seed, folds))
        table.add_row(name, f"{100 * r['precision']:.1f}", f"{100 * r['recall']:.1f}", f"{100 * r['f_macro']:.1f}",
                      f"{r['train_s']:.1f}", f"{r['predict_ms']:.2f}")
    _cli().out.print(table)
