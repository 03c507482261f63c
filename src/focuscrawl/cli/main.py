"""The ``focuscrawl`` command line. Thin: parses arguments, calls the library, prints results."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from focuscrawl.bench.protocol import EXAMPLES_IRRELEVANT, TopicError
from focuscrawl.web.store import WebFormatError

app = typer.Typer(help="focuscrawl: a focused web crawler that learns where to go.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
web_app = typer.Typer(help="Build, inspect and generate offline webs.", no_args_is_help=True)
build_app = typer.Typer(help="Build an offline web from a published dataset.", no_args_is_help=True)
app.add_typer(web_app, name="web")
web_app.add_typer(build_app, name="build")
console = Console(stderr=True)
# Piped output gets a wide console so tables are not truncated in logs and CI.
out = Console(width=None if Console().is_terminal else 140)

USER_ERRORS = (TopicError, WebFormatError, FileExistsError, FileNotFoundError, KeyError, ValueError)


def fail(message: str) -> None:
    console.print(f"[bold red]error:[/] {message}", soft_wrap=True, highlight=False)
    raise typer.Exit(2)


def resolve_web(web: str) -> Path:
    if web in ("embedded", "demo"):
        from focuscrawl.web import embedded_web_dir

        return embedded_web_dir()
    return Path(web)


@build_app.command("wikispeedia")
def build_wikispeedia_cmd(src: Path, out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
                          overwrite: bool = False) -> None:
    """Wikispeedia (SNAP) -> offline web: headers that leak labels stripped, links with anchor text."""
    from focuscrawl.web.wikispeedia import build_wikispeedia

    _build(lambda: build_wikispeedia(src, out_dir, overwrite=overwrite), out_dir)


@build_app.command("webkb")
def build_webkb_cmd(src: Path, out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
                    overwrite: bool = False) -> None:
    """WebKB 4-universities raw crawl -> offline web with real URLs; links leaving the set answer 404."""
    from focuscrawl.web.webkb import build_webkb

    _build(lambda: build_webkb(src, out_dir, overwrite=overwrite), out_dir)


@build_app.command("embedded")
def build_embedded_cmd(src: Path, out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
                       overwrite: bool = False) -> None:
    """Regenerate the small demo web shipped in the package from Wikispeedia."""
    from focuscrawl.web.wikispeedia import build_embedded

    _build(lambda: build_embedded(src, out_dir, overwrite=overwrite), out_dir)


@web_app.command("import-warc")
def import_warc_cmd(warc: Path, labels: Path, out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
                    overwrite: bool = False) -> None:
    """A WARC of responses plus a TSV of url<TAB>label[,label...] -> offline web."""
    from focuscrawl.web.warc_import import import_warc

    report = _run(lambda: import_warc(warc, labels, out_dir, overwrite=overwrite))
    console.print(report)
    _print_info(out_dir)


@web_app.command("synth")
def synth_cmd(out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
              pages: Annotated[int, typer.Option(help="number of pages")] = 10_000,
              seed: int = 0, topics: int = 10, overwrite: bool = False) -> None:
    """Synthetic web for scale tests only (never for quality claims)."""
    from focuscrawl.web.synth import synthesize

    _build(lambda: synthesize(out_dir, pages, seed=seed, topics=topics, overwrite=overwrite), out_dir)


@web_app.command("info")
def info_cmd(directory: Annotated[str, typer.Argument(metavar="DIR", help="web directory or 'embedded'")],
             json_output: Annotated[bool, typer.Option("--json")] = False,
             labels: Annotated[int, typer.Option(help="show the N most frequent labels")] = 20) -> None:
    """Pages, hosts, links, dead links and label counts of an offline web."""
    _print_info(resolve_web(directory), json_output, labels)


def _run(action):
    from warcio.exceptions import ArchiveLoadFailed

    try:
        return action()
    except (*USER_ERRORS, ArchiveLoadFailed) as exc:
        fail(str(exc).strip("'\""))


def _build(action, out_dir: Path) -> None:
    _run(action)
    _print_info(out_dir)


def _print_info(directory: Path, json_output: bool = False, top_labels: int = 20) -> None:
    from focuscrawl.web.store import OfflineWeb

    web = _run(lambda: OfflineWeb(directory))
    stats = web.stats()
    if json_output:
        out.print_json(json.dumps(stats))
        return
    out.print(f"[bold]{stats['name']}[/] ({directory})")
    for key in ("pages", "redirects", "dead_urls", "hosts", "links", "dead_links"):
        out.print(f"  {key:<11} {stats[key]:>10,}")
    labels = sorted(stats["labels"].items(), key=lambda kv: -kv[1])
    out.print(f"  labels      {len(labels):>10,}")
    for label, count in labels[:top_labels]:
        out.print(f"    {count:>8,}  {label}")


@app.command()
def strategies() -> None:
    """List the available crawling strategies."""
    from focuscrawl.strategies import STRATEGIES

    for spec in STRATEGIES.values():
        out.print(f"  [bold]{spec.name:<14}[/] {spec.description}")


def _print_summary(summary: dict) -> None:
    table = Table(title=f"{summary['web']} / {summary['topic']}  (budget {summary['budget']}, "
                        f"{summary['runs']} runs, MAX {summary['max_per_domain']}, "
                        f"{summary['relevant_total']} relevant in web)")
    for title in ("strategy", "AUC/oracle", "pages/oracle", "harvest", "rel. pages", "rel. domains", "ms/step"):
        table.add_column(title, justify="left" if title == "strategy" else "right")
    for row in summary["strategies"]:
        table.add_row(row["strategy"], f"{row['auc_ratio_mean']:.3f}", f"{row['oracle_ratio_mean']:.3f}",
                      f"{row['harvest_rate_mean']:.3f}", f"{row['relevant_pages_mean']:.1f}",
                      f"{row['relevant_domains_mean']:.1f}", f"{row['decision_ms_mean']:.3f}")
    out.print(table)


@app.command()
def bench(
    web: Annotated[str, typer.Option(help="offline web directory, or 'embedded' (with --global: comma-separated)")] = "embedded",
    topic: Annotated[str, typer.Option(help="label of the topic, e.g. subject.Science.Biology "
                                            "(with --global: comma-separated, paired with --web)")] = "subject.Science.Biology",
    strategy: Annotated[str, typer.Option(help="comma-separated strategies (the oracle always runs)")] = "random,bfs,best-first",
    budget: Annotated[int, typer.Option(help="pages fetched per crawl (T)")] = 1000,
    runs: Annotated[int, typer.Option(help="crawls per strategy (K); run i uses seeds chosen by i")] = 5,
    seeds_per_run: Annotated[str, typer.Option(help="relevant seed pages per run (N); with --global, one per web")] = "1",
    max_per_domain: Annotated[str, typer.Option(help="per-domain cap MAX: inf, an integer, or 5-2")] = "inf",
    seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
    out_dir: Annotated[Path, typer.Option("--out", help="output folder")] = Path("bench-results"),
    global_score: Annotated[bool, typer.Option("--global", help="benchmark several webs (comma-separated --web and "
                                                                "--topic, paired) and print Gouriten et al.'s global "
                                                                "score: geometric mean of per-web oracle ratios")] = False,
    options: Annotated[list[str] | None, typer.Option("--set", "-s", help="strategy hyper-parameter: "
                                                      "STRATEGY.KEY=VALUE, e.g. tres.gamma=0 (repeatable)")] = None,
    examples_irrelevant: Annotated[int, typer.Option(help="irrelevant example texts the topic's classifiers train on "
                                                          "(all strategies alike)")] = EXAMPLES_IRRELEVANT,
    quiet: bool = False,
) -> None:
    """Run strategies K times on one topic and write summary.json, summary.md and harvest.png."""
    names = [s.strip() for s in strategy.split(",") if s.strip()]
    strategy_options = _run(lambda: parse_strategy_options(options or []))
    progress = None if quiet else console.print
    if global_score:
        from focuscrawl.bench.global_score import parse_targets, run_global

        targets = _run(lambda: parse_targets(web, topic, seeds_per_run))
        result = _run(lambda: run_global(targets, names, budget=budget, runs=runs, out=out_dir,
                                         max_per_domain=max_per_domain, seed=seed, resolve=resolve_web,
                                         progress=progress, strategy_options=strategy_options,
                                         examples_irrelevant=examples_irrelevant))
        _print_global(result)
        out.print(f"results in {out_dir}/ (global.json, global.md, one folder per web)")
        return
    from focuscrawl.bench.runner import run_benchmark

    if not seeds_per_run.strip().isdigit():
        fail(f"--seeds-per-run must be a positive integer, got {seeds_per_run!r}")
    summary = _run(lambda: run_benchmark(
        resolve_web(web), topic, names, budget=budget, runs=runs, out=out_dir, seeds_per_run=int(seeds_per_run),
        max_per_domain=max_per_domain, seed=seed, progress=progress, strategy_options=strategy_options,
        examples_irrelevant=examples_irrelevant))
    _print_summary(summary)
    out.print(f"results in {out_dir}/ (summary.json, summary.md, harvest.png)")


def parse_strategy_options(pairs: list[str]) -> dict[str, dict]:
    """["tres.gamma=0", "tres.explore_steps=0"] -> {"tres": {"gamma": 0, "explore_steps": 0}} (YAML values)."""
    import yaml

    options: dict[str, dict] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        name, dot, parameter = key.strip().rpartition(".")
        if not sep or not dot or not name or not parameter:
            raise ValueError(f"--set expects STRATEGY.KEY=VALUE, got {pair!r}")
        options.setdefault(name, {})[parameter] = yaml.safe_load(value)
    return options


def _print_global(result: dict) -> None:
    webs = [f"{w['web']}/{w['topic'].split('.')[-1]}" for w in result["webs"]]
    table = Table(title=f"global score over {len(webs)} webs (budget {result['budget']}, {result['runs']} runs)")
    for title in ("strategy", "global score", "global AUC", *webs, "harvest", "rel. domains", "ms/step"):
        table.add_column(title, justify="left" if title == "strategy" else "right")
    for row in sorted(result["strategies"], key=lambda r: -(r["global_score"] if r["global_score"] == r["global_score"] else -1)):
        table.add_row(row["strategy"], f"{row['global_score']:.3f}", f"{row['global_auc']:.3f}",
                      *(f"{v:.3f}" for v in row["per_web_score"]), f"{row['harvest_rate_mean']:.3f}",
                      f"{row['relevant_domains_mean']:.1f}", f"{row['decision_ms_mean']:.3f}")
    out.print(table)


@app.command()
def demo(out_dir: Annotated[Path, typer.Option("--out")] = Path("demo-results"),
         budget: int = 200, runs: int = 3) -> None:
    """A short benchmark on the embedded web: random, bfs, best-first and TRES against the oracle."""
    bench(web="embedded", topic="subject.Science.Biology", strategy="random,bfs,best-first,tres", budget=budget,
          runs=runs, seeds_per_run="1", global_score=False, options=None, max_per_domain="inf", seed=0,
          out_dir=out_dir, examples_irrelevant=EXAMPLES_IRRELEVANT, quiet=False)


# Command groups that live in their own modules register themselves here (each defines register(app)).
_COMMAND_MODULES: list[str] = ["focuscrawl.cli.crawl", "focuscrawl.cli.serve", "focuscrawl.cli.bench_policy",
                               "focuscrawl.cli.topic"]
for _module in _COMMAND_MODULES:
    importlib.import_module(_module).register(app)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
