"""``focuscrawl export RUN``: a crawl's pages as a corpus (Parquet, JSON Lines or Markdown files)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from focuscrawl.cli.common import run
from focuscrawl.storage.export import DEFAULT_OUT, ExportFormat, export_corpus


def export_cmd(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="a crawl's run folder (of `focuscrawl crawl`, "
                                            "with or without --workers)")],
    format_: Annotated[ExportFormat, typer.Option("--format", help="parquet (pandas, DuckDB, Hugging Face "
                                                  "datasets), jsonl, or markdown: a folder of one .md file a "
                                                  "page")] = ExportFormat.PARQUET,
    out: Annotated[Optional[Path], typer.Option("-o", "--out", help="where to write (default: RUN/" +
                                                ", RUN/".join(DEFAULT_OUT.values()) + "/)")] = None,
    min_relevance: Annotated[float, typer.Option("--min-relevance", help="only pages the crawl judged at least "
                                                 "this relevant (0 to 1)")] = 0.0,
) -> None:
    """Export RUN's pages: URL, title, main text as Markdown, language, relevance, near-duplicate cluster, fetch
    time and why the crawl fetched it (docs/crawl.md, "Exporting a corpus")."""
    report = run(lambda: export_corpus(run_dir, out, format_, min_relevance))
    typer.echo(f"exported {report}", err=True)
