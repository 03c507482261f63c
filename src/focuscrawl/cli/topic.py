"""``focuscrawl topic ...``: topic directories, word vectors, TRES keyword expansion, relevance classifiers.

- ``init``      make a topic directory (from example pages, or from a labelled offline web);
- ``vectors``   build (or check) the static word vectors in the user cache;
- ``expand``    Algorithm 1 on a topic's agent inputs, with the journal's Table 2 figures;
- ``train``     fit a named relevance model on a topic's example texts and save it;
- ``evaluate``  stratified 5-fold cross-validation of svm, bilstm, kwbilstm (Table 1's shape).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer
from rich.table import Table

from focuscrawl.bench.classifiers import cross_validate, evaluation_sample
from focuscrawl.bench.protocol import DEFAULT_BUDGET, init_from_web, load_topic
from focuscrawl.cli.common import console, fail, out, run
from focuscrawl.config import SEED_REACH_SHARE, BenchConfig
from focuscrawl.topic.embeddings import build_word_vectors, default_dir, load_word_vectors, packaged_dir
from focuscrawl.topic.keywords import expand_keywords, keyword_table
from focuscrawl.topic.models import train_relevance_model
from focuscrawl.topic.topic_dir import init_from_html, init_from_words
from focuscrawl.types import TopicInputs, decision_point
from focuscrawl.user_files import read_lines
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.store import OfflineWeb

topic_app = typer.Typer(help="Topics: topic directories, word vectors, keyword expansion, relevance classifiers.",
                        no_args_is_help=True)

WebOpt = Annotated[str, typer.Option(help="offline web directory, or 'embedded'")]
TopicOpt = Annotated[str, typer.Option(help="topic label, e.g. subject.Science.Biology")]
SeedOpt = Annotated[int, typer.Option(help="seed of every random choice")]
EVAL_MODELS = ("svm", "bilstm", "kwbilstm")


def _load(web: str, topic: str, seed: int):
    offline = run(lambda: OfflineWeb(resolve_web_dir(web)))
    return offline, run(lambda: load_topic(offline, topic, seed))


@topic_app.command("init")
def init_cmd(
    out_dir: Annotated[Path, typer.Argument(metavar="TOPIC_DIR", help="topic directory to create")],
    positive: Annotated[Optional[Path], typer.Option(help="folder of on-topic pages (HTML or .txt)")] = None,
    negative: Annotated[Optional[Path], typer.Option(help="folder of off-topic pages (HTML or .txt)")] = None,
    keywords: Annotated[Optional[str], typer.Option(help="comma-separated keywords")] = None,
    description: Annotated[Optional[str], typer.Option(help="a sentence saying what the topic is")] = None,
    example_url: Annotated[Optional[list[str]], typer.Option("--example-url", help="URL of an on-topic page you "
                                                             "know (repeatable): crawled first")] = None,
    seeds: Annotated[Optional[Path], typer.Option("--seeds", help="file of seed URLs to store with the topic")] = None,
    from_web: Annotated[Optional[str], typer.Option("--from-web",
                                                    help="labelled offline web dir or 'embedded'")] = None,
    label: Annotated[Optional[str], typer.Option("--topic", help="with --from-web: the topic label")] = None,
    seed: Annotated[int, typer.Option(help="with --from-web: sampling seed, as in focuscrawl bench")] = 0,
    seeds_per_run: Annotated[int, typer.Option(help="with --from-web: seed URLs to pick")] = 1,
    run_index: Annotated[int, typer.Option("--run", help="with --from-web: take the seeds of benchmark run i")] = 0,
    budget: Annotated[int, typer.Option(help="with --from-web: the crawl's budget; each seed can reach this many "
                                             "pages (or the share below of the web's, if fewer), as in "
                                             "focuscrawl bench")] = DEFAULT_BUDGET,
    seed_reach_share: Annotated[float, typer.Option(help="with --from-web: the share of the web's pages a seed may "
                                                         "reach instead of the budget")] = SEED_REACH_SHARE,
    name: Annotated[Optional[str], typer.Option(help="topic name (default: the directory name)")] = None,
    overwrite: bool = False,
) -> None:
    """Make a topic directory: from a few words (--keywords, --description), from positive/negative example
    pages, or from a labelled offline web."""

    def make() -> TopicInputs:
        if from_web is not None:
            if label is None:
                raise ValueError("--from-web needs --topic LABEL")
            settings = BenchConfig(budget=budget, seed_reach_share=seed_reach_share)  # checked as bench checks them
            return init_from_web(out_dir, resolve_web_dir(from_web), label, seed=seed, seeds=seeds_per_run,
                                 run=run_index, budget=settings.budget, reach_share=settings.seed_reach_share,
                                 overwrite=overwrite)
        seed_urls = read_lines(seeds) if seeds else []
        words = [k.strip() for k in (keywords or "").split(",") if k.strip()]
        if positive is None and negative is None:
            if not words and not description:
                raise ValueError("give --keywords and/or --description (a topic from a few words), --positive and "
                                 "--negative folders, or --from-web DIR --topic LABEL")
            return init_from_words(out_dir, keywords=words, description=description or "",
                                   example_urls=example_url or (), seeds=seed_urls, name=name,
                                   overwrite=overwrite)
        if positive is None or negative is None:
            raise ValueError("give both --positive and --negative folders (or neither, with --keywords)")
        return init_from_html(out_dir, positive, negative, name=name,
                              keywords=[k.strip() for k in (keywords or "").split(",") if k.strip()],
                              seeds=seed_urls, overwrite=overwrite)

    topic = run(make)
    positives = sum(topic.example_labels)
    if topic.example_texts:
        what = f"{positives} positive and {len(topic.example_labels) - positives} negative examples"
    else:
        what = "no example pages (relevance starts from the topic's words)"
    out.print(f"topic {topic.name!r} in {out_dir}: {what}, {len(topic.keywords)} keywords, {len(topic.seeds)} seeds",
              highlight=False)


@topic_app.command("vectors")
def vectors_cmd(force: Annotated[bool, typer.Option(help="distil them again into the cache, offline, and say "
                                                         "whether they are the shipped ones")] = False) -> None:
    """The static word vectors (distilled offline from the packaged all-MiniLM-L6-v2): where they are, and with
    --force, distilled again into the cache and compared with the ones the package ships."""
    start = time.perf_counter()
    directory = build_word_vectors(force=True, log=console.print) if force else default_dir()
    vectors = load_word_vectors(directory)
    out.print(f"word vectors: {directory} ({len(vectors.vocabulary):,} words, {vectors.dim} dims, "
              f"{time.perf_counter() - start:.1f} s)")
    out.print(f"  football~soccer {vectors.similarity('football', 'soccer'):.3f}   "
              f"football~violin {vectors.similarity('football', 'violin'):.3f}")
    shipped = packaged_dir()
    if force and (shipped / "model.safetensors").exists():
        same = load_word_vectors(shipped).fingerprint == vectors.fingerprint
        out.print("  the same as the vectors the package ships" if same else
                  f"  not the same as the vectors the package ships ({shipped}): this CPU rounds the distillation "
                  "differently; crawls use the shipped ones")


@topic_app.command("expand")
def expand_cmd(web: WebOpt = "embedded", topic: TopicOpt = "subject.Science.Biology", seed: SeedOpt = 0,
               threshold: Annotated[float | None, typer.Option(help="override equation 2's b")] = None) -> None:
    """TRES keyword expansion (Algorithm 1): KS, K', and Table 2's mean keyword counts."""
    _, bench_topic = _load(web, topic, seed)
    inputs = bench_topic.inputs
    keywords = expand_keywords(inputs, threshold=threshold)
    figures = keyword_table(keywords, inputs.example_texts, inputs.example_labels)
    out.print(f"[bold]{topic}[/]  threshold b = {keywords.threshold:.3f}")
    out.print(f"KS ({len(keywords.initial)}): {', '.join(keywords.initial)}")
    out.print(f"K' ({len(keywords.discovered)}): "
              + ", ".join(f"{k} ({keywords.scores[k]:.2f})" for k in keywords.discovered))
    table = Table(title=f"Table 2: mean keyword count per example text ({figures['relevant_texts']} relevant, "
                        f"{figures['irrelevant_texts']} irrelevant)")
    for column in ("", "C (K')", "C' (K')", "C (K)", "C' (K)", "# KS", "# K'"):
        table.add_column(column, justify="right")
    table.add_row(topic, f"{figures['mean_discovered_relevant']:.2f}", f"{figures['mean_discovered_irrelevant']:.2f}",
                  f"{figures['mean_all_relevant']:.2f}", f"{figures['mean_all_irrelevant']:.2f}",
                  str(figures["initial"]), str(figures["discovered"]))
    out.print(table)


@topic_app.command("train")
def train_cmd(web: WebOpt = "embedded", topic: TopicOpt = "subject.Science.Biology",
              model: Annotated[str, typer.Option(help="svm, bilstm, kwbilstm (or any registered model)")] = "kwbilstm",
              out_file: Annotated[Path, typer.Option("--out", help="where to save the model")] = Path("model.pt"),
              seed: SeedOpt = 0) -> None:
    """Fit a relevance model on the topic's example texts and save it (load with load_relevance_model)."""
    _, bench_topic = _load(web, topic, seed)
    inputs = bench_topic.inputs
    start = time.perf_counter()
    fitted = run(lambda: train_relevance_model(model, inputs, seed))
    seconds = time.perf_counter() - start
    if not hasattr(fitted, "save"):
        fail(f"model {model!r} cannot be saved")
    out_file.parent.mkdir(parents=True, exist_ok=True)
    fitted.save(out_file)
    probs = fitted.predict_proba(inputs.example_texts)
    # at the model's own decision point (types.decision_point), where a crawl rewards its pages
    accuracy = float(np.mean((probs >= decision_point(fitted)) == np.asarray(inputs.example_labels, dtype=bool)))
    out.print(f"{model} trained on {len(inputs.example_texts)} example texts in {seconds:.1f} s "
              f"(training accuracy {accuracy:.3f}); saved to {out_file}")


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
        fail(f"too few pages for {folds}-fold CV ({n_pos} relevant, {len(labels) - n_pos} irrelevant)")
    table = Table(title=f"Table 1: {topic}, {folds}-fold CV on {n_pos} relevant + {len(labels) - n_pos} "
                        f"irrelevant pages (%)")
    for column in ("classifier", "P", "R", "F-m", "train s/fold", "ms/page"):
        table.add_column(column, justify="left" if column == "classifier" else "right")
    for name in [m.strip() for m in models.split(",") if m.strip()]:
        console.print(f"cross-validating {name} ...")
        r = run(lambda name=name: cross_validate(name, bench_topic.inputs.keywords, texts, labels, seed, folds))
        table.add_row(name, f"{100 * r['precision']:.1f}", f"{100 * r['recall']:.1f}", f"{100 * r['f_macro']:.1f}",
                      f"{r['train_s']:.1f}", f"{r['predict_ms']:.2f}")
    out.print(table)
