"""``focuscrawl web ...``: build, inspect, generate and serve offline webs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from focuscrawl.cli.common import console, fail, out, run
from focuscrawl.web import resolve_web_dir
from focuscrawl.web.serve import serve_web
from focuscrawl.web.store import OfflineWeb
from focuscrawl.web.synth import synthesize
from focuscrawl.web.warc_import import import_warc
from focuscrawl.web.webkb import build_webkb
from focuscrawl.web.wikispeedia import build_embedded, build_wikispeedia

web_app = typer.Typer(help="Build, inspect, generate and serve offline webs.", no_args_is_help=True)
build_app = typer.Typer(help="Build an offline web from a published dataset.", no_args_is_help=True)
web_app.add_typer(build_app, name="build")


def _build_command(build: Callable[..., Path], description: str) -> Callable[..., None]:
    """A ``web build NAME SRC OUT`` command for one dataset's builder."""

    def command(src: Annotated[Path, typer.Argument(metavar="SRC", help="the published dataset's folder")],
                out_dir: Annotated[Path, typer.Argument(metavar="OUT")], overwrite: bool = False) -> None:
        run(lambda: build(src, out_dir, overwrite=overwrite))
        print_info(out_dir)

    command.__doc__ = description
    return command


build_app.command("wikispeedia")(_build_command(
    build_wikispeedia, "Wikispeedia (SNAP) -> offline web: headers that leak labels stripped, links with anchor text."))
build_app.command("webkb")(_build_command(
    build_webkb, "WebKB 4-universities raw crawl -> offline web with real URLs; links leaving the set answer 404."))
build_app.command("embedded")(_build_command(
    build_embedded, "Regenerate the small demo web shipped in the package from Wikispeedia."))


@web_app.command("import-warc")
def import_warc_cmd(warc: Path, labels: Path, out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
                    overwrite: bool = False) -> None:
    """A WARC of responses plus a TSV of url<TAB>label[,label...] -> offline web."""
    report = run(lambda: import_warc(warc, labels, out_dir, overwrite=overwrite))
    console.print(report)
    print_info(out_dir)


@web_app.command("synth")
def synth_cmd(out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
              pages: Annotated[int, typer.Option(help="number of pages")] = 10_000,
              seed: int = 0, topics: int = 10, overwrite: bool = False) -> None:
    """Synthetic web for scale tests only (never for quality claims)."""
    run(lambda: synthesize(out_dir, pages, seed=seed, topics=topics, overwrite=overwrite))
    print_info(out_dir)


@web_app.command("info")
def info_cmd(directory: Annotated[str, typer.Argument(metavar="DIR", help="web directory or 'embedded'")],
             json_output: Annotated[bool, typer.Option("--json")] = False,
             labels: Annotated[int, typer.Option(help="show the N most frequent labels")] = 20) -> None:
    """Pages, hosts, links, dead links and label counts of an offline web."""
    print_info(resolve_web_dir(directory), json_output, labels)


def print_info(directory: Path, json_output: bool = False, top_labels: int = 20) -> None:
    web = run(lambda: OfflineWeb(directory))
    stats = web.stats()
    web.close()
    if json_output:
        out.print_json(json.dumps(stats))
        return
    out.print(f"[bold]{stats['name']}[/] ({directory})")
    for key in ("pages", "redirects", "dead_urls", "hosts", "links", "dead_links"):
        out.print(f"  {key:<11} {stats[key]:>10,}")
    by_count = sorted(stats["labels"].items(), key=lambda kv: -kv[1])
    out.print(f"  labels      {len(by_count):>10,}")
    for label, count in by_count[:top_labels]:
        out.print(f"    {count:>8,}  {label}")


@web_app.command("serve")
def serve_cmd(
    directory: Annotated[str, typer.Argument(metavar="DIR", help="web directory or 'embedded'")],
    base_ip: Annotated[str, typer.Option(help="first loopback address; hosts get the following ones")] = "127.0.1.1",
    port: Annotated[int, typer.Option(min=0, max=65535,
                                      help="port on every address (0: a free port per address)")] = 80,
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

    async def serve() -> None:
        server = run(lambda: serve_web(resolve_web_dir(directory), base_ip=base_ip, port=port,
                                       latency_ms=latency_ms, error_rate=error_rate, error_status=error_status,
                                       seed=seed, disallow=disallow or (), crawl_delay=crawl_delay))
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
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
