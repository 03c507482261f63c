"""The ``focuscrawl`` command line. Thin: each command parses arguments, builds a config, calls the library.

One module per command group (``bench``, ``crawl``, ``export``, ``topic``, ``web``); this one only assembles them.
"""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from focuscrawl.cli.bench import bench_cmd, bench_policy_cmd, demo_cmd, strategies_cmd
from focuscrawl.cli.common import console
from focuscrawl.cli.crawl import crawl_cmd
from focuscrawl.cli.dashboard import dashboard_cmd, with_dashboard_port
from focuscrawl.cli.export import export_cmd
from focuscrawl.cli.topic import topic_app
from focuscrawl.cli.web import web_app

try:  # typer 0.26+ vendors click; older ones use it
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover
    from click import exceptions as click_exceptions

app = typer.Typer(help="focuscrawl: a focused web crawler that learns where to go.", no_args_is_help=True,
                  pretty_exceptions_enable=False)
app.command("crawl")(crawl_cmd)
app.command("bench")(bench_cmd)
app.command("demo")(demo_cmd)
app.command("bench-policy")(bench_policy_cmd)
app.command("strategies")(strategies_cmd)
app.command("dashboard")(dashboard_cmd)
app.command("export")(export_cmd)
app.add_typer(topic_app, name="topic")
app.add_typer(web_app, name="web")


def main(args: list[str] | None = None) -> int:
    """The console entry point: a mistyped command line is one line naming the mistake and where to look,
    not click's usage box; every command's own user errors are one line too (``cli.common.fail``)."""
    args = with_dashboard_port(sys.argv[1:] if args is None else list(args))  # `crawl --dashboard` alone
    try:
        code = app(args, standalone_mode=False)  # a command's typer.Exit(n) comes back as n
    except click_exceptions.UsageError as exc:
        where = f"focuscrawl {exc.ctx.command_path.split(' ', 1)[1]} --help" if exc.ctx and " " in \
            exc.ctx.command_path else "focuscrawl --help"
        console.print(f"[bold red]error:[/] {escape(exc.format_message())} (see {where})", soft_wrap=True,
                      highlight=False)
        return 2
    except KeyboardInterrupt:
        return 130
    return code if isinstance(code, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
