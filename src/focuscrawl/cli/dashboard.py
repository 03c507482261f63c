"""``focuscrawl dashboard FOLDER``: a local web page for a crawl run folder (live), a bench or a suite folder;
and what ``focuscrawl crawl --dashboard [PORT]`` uses to start one beside the crawl."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from focuscrawl.cli.common import fail
from focuscrawl.dashboard import DEFAULT_PORT, DashboardError, DashboardServer, is_loopback

DASHBOARD_FLAG = "--dashboard"


def dashboard_cmd(
    folder: Annotated[Path, typer.Argument(metavar="FOLDER", help="a crawl run folder (live while the crawl runs), "
                                           "a bench folder or a suite folder")],
    port: Annotated[int, typer.Option(min=0, max=65535, help="port to serve on (0: any free port)")] = DEFAULT_PORT,
    host: Annotated[str, typer.Option(help="address to listen on; anything but loopback needs a token (one is "
                                      "generated and printed unless --token gives it)")] = "127.0.0.1",
    token: Annotated[Optional[str], typer.Option(help="require this token (?token= or the X-Dashboard-Token "
                                                 "header) on every request")] = None,
) -> None:
    """Serve a read-only web page of FOLDER until Ctrl+C: a crawl's progress, harvest, hosts, errors and latest
    pages with why they were chosen (updated live while it runs), or a benchmark's harvest curves and tables."""
    server = _bind(folder, host=host, port=port, token=token)
    typer.echo(f"dashboard of {folder} ({server.dashboard.kind} folder): {server.url}")
    if server.token and not is_loopback(host):
        typer.echo("listening beyond loopback: every request needs the token in that URL", err=True)
    typer.echo("Ctrl+C stops it", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()


def _bind(folder: Path, *, host: str, port: int, token: str | None, kind: str | None = None) -> DashboardServer:
    if token is not None and not token.strip():
        fail("--token must not be empty")
    try:
        return DashboardServer(folder, host=host, port=port, token=token, kind=kind)
    except DashboardError as exc:
        fail(str(exc))


def start_dashboard(out: Path, port: int) -> DashboardServer:
    """For ``crawl --dashboard``: serve the run folder on loopback in a daemon thread of the crawl process
    (it reads the store like any other reader) and print its URL. A port in use is one error line."""
    server = _bind(out, host="127.0.0.1", port=port, token=None, kind="crawl").start()
    typer.echo(f"dashboard: {server.url}", err=True)
    return server


def with_dashboard_port(args: list[str]) -> list[str]:
    """``crawl --dashboard`` with no port after it gets the default port (a typer option always takes a value).

    ``--dashboard 9000`` and ``--dashboard=9000`` are left as they are; anything but a number after the flag
    (another option, or the end of the line) means the default port."""
    out = list(args)
    words = [a for a in out if not a.startswith("-")]
    if not words or words[0] != "crawl":
        return out
    for i, arg in enumerate(out):
        if arg == DASHBOARD_FLAG and (i + 1 == len(out) or not out[i + 1].isdigit()):
            out[i] = f"{DASHBOARD_FLAG}={DEFAULT_PORT}"
    return out
