"""The ``focuscrawl`` command line. Thin: each command parses arguments, builds a config, calls the library.

One module per command group (``bench``, ``crawl``, ``topic``, ``web``); this one only assembles them.
"""

from __future__ import annotations

import sys

import typer

from focuscrawl.cli.bench import bench_cmd, bench_policy_cmd, demo_cmd, strategies_cmd
from focuscrawl.cli.crawl import crawl_cmd
from focuscrawl.cli.topic import topic_app
from focuscrawl.cli.web import web_app

app = typer.Typer(help="focuscrawl: a focused web crawler that learns where to go.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
app.command("crawl")(crawl_cmd)
app.command("bench")(bench_cmd)
app.command("demo")(demo_cmd)
app.command("bench-policy")(bench_policy_cmd)
app.command("strategies")(strategies_cmd)
app.add_typer(topic_app, name="topic")
app.add_typer(web_app, name="web")


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
