"""``focuscrawl web serve``: an offline web on loopback HTTP, one 127.x.y.z address per host."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer


def serve_cmd(
    directory: Annotated[str, typer.Argument(metavar="DIR", help="web directory or 'embedded'")],
    base_ip: Annotated[str, typer.Option(help="first loopback address; hosts get the following ones")] = "127.0.1.1",
    port: Annotated[int, typer.Option(help="port on every address (0: a free port per address)")] = 80,
    latency_ms: Annotated[float, typer.Option(help="delay added to every response")] = 0.0,
    error_rate: Annotated[float, typer.Option(help="probability of answering with --error-status instead")] = 0.0,
    error_status: int = 503,
    seed: Annotated[int, typer.Option(help="seed of the error injection")] = 0,
    disallow: Annotated[list[str] | None,
                        typer.Option(help="robots.txt Disallow path for every host (repeatable)")] = None,
    crawl_delay: Annotated[float | None, typer.Option(help="robots.txt Crawl-delay for every host")] = None,
    map_file: Annotated[Path | None,
                        typer.Option("--map", help="write the host -> ip:port mapping (JSON) here")] = None,
) -> None:
    """Serve DIR on loopback until interrupted; prints the host -> ip:port mapping as JSON.

    A crawler resolves the web's host names with that mapping (FetchConfig.resolve_overrides) and keeps
    the web's own URLs, so its crawl can be compared with the in-process one.
    """
    from focuscrawl.cli.main import console, fail, resolve_web
    from focuscrawl.web.serve import serve_web
    from focuscrawl.web.store import WebFormatError

    async def run() -> None:
        try:
            server = serve_web(resolve_web(directory), base_ip=base_ip, port=port, latency_ms=latency_ms,
                               error_rate=error_rate, error_status=error_status, seed=seed,
                               disallow=disallow or (), crawl_delay=crawl_delay)
        except (WebFormatError, ValueError) as exc:
            fail(str(exc))
        try:
            await server.start()
        except OSError as exc:
            fail(f"cannot bind: {exc} (ports below 1024 need root; try --port 8080)")
        mapping = json.dumps(server.hosts, indent=1, sort_keys=True)
        if map_file is not None:
            map_file.write_text(mapping + "\n")
        print(mapping, flush=True)
        console.print(f"serving {server.web.name}: {len(server.hosts)} hosts on "
                      f"{len(set(server.hosts.values()))} addresses; Ctrl-C stops")
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass


def register(app: typer.Typer) -> None:
    """Attach ``serve`` to the ``web`` sub-command group of ``app``."""
    for group in app.registered_groups:
        if group.name == "web" and group.typer_instance is not None:
            group.typer_instance.command("serve")(serve_cmd)
            return
    raise RuntimeError("the focuscrawl app has no 'web' command group")
