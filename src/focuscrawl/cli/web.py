"""``focuscrawl web ...``: build, inspect, generate, mess up and serve offline webs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Optional

import typer

from focuscrawl.cli.common import console, fail, out, run
from focuscrawl.cli.testbed import testbed_app
from focuscrawl.config import parse_override
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.debian import DEFAULT_SUITE, build_debian, download_index
from focuscrawl.webs.debian_docs import (
    DEFAULT_MAX_DOWNLOAD_MB,
    DEFAULT_MAX_PAGES_PER_SITE,
    build_debian_docs,
    download_docs,
)
from focuscrawl.webs.debian_reference_sites import DEFAULT_MAX_PAGES_PER_REFERENCE_SITE, REFERENCE_SITES
from focuscrawl.webs.mess import PROFILES, MessReport, make_profile, mess_web
from focuscrawl.webs.serve import serve_web
from focuscrawl.webs.store import OfflineWeb
from focuscrawl.webs.synth import synthesize
from focuscrawl.webs.warc_import import import_warc
from focuscrawl.webs.webkb import build_webkb
from focuscrawl.webs.wikispeedia import build_embedded, build_wikispeedia

web_app = typer.Typer(help="Build, inspect, generate, mess up and serve offline webs.", no_args_is_help=True)
build_app = typer.Typer(help="Build an offline web from a published dataset.", no_args_is_help=True)
web_app.add_typer(build_app, name="build")
web_app.add_typer(testbed_app, name="testbed")


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


@build_app.command("debian")
def debian_cmd(
    src: Annotated[Path, typer.Argument(metavar="SRC",
                                        help="folder with Packages(.xz) and Translation-en(.xz) of main")],
    out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
    overwrite: bool = False,
    download: Annotated[Optional[str], typer.Option(
        metavar="SUITE", help=f"first fetch SUITE's index ({DEFAULT_SUITE}, trixie, ...) from deb.debian.org into SRC"),
    ] = None,
    reverse_links: Annotated[int, typer.Option(min=0, help="'used by' links a page keeps at most")] = 20,
    hubs: Annotated[bool, typer.Option(help="add a site per maintainer listing its projects (a strong topic "
                                            "directory for team-maintained topics: check rows are not won by one)"),
    ] = False,
    split_code_hosts: Annotated[bool, typer.Option(help="github.com/OWNER -> OWNER.github.io etc.")] = True,
) -> None:
    """Debian's package index -> many-site web: a page per upstream project, relation links, debtags/Blends labels."""
    if download is not None:
        run(lambda: download_index(download, src))
    run(lambda: build_debian(src, out_dir, overwrite=overwrite, reverse_links=reverse_links, hubs=hubs,
                             split_code_hosts=split_code_hosts))
    print_info(out_dir)


@build_app.command("debian-docs")
def debian_docs_cmd(
    src: Annotated[Path, typer.Argument(metavar="SRC", help="folder with Debian's index of main and debs/*.deb "
                                                            "(documentation packages)")],
    out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
    overwrite: bool = False,
    download: Annotated[Optional[str], typer.Option(
        metavar="SUITE", help=f"first fetch SUITE's index ({DEFAULT_SUITE}, ...) and the chosen documentation "
                              "packages from deb.debian.org into SRC (a .deb already there with the right SHA256 "
                              "is kept)")] = None,
    max_download_mb: Annotated[float, typer.Option(
        min=1, help="stop adding documentation packages at this many MB of .deb files")] = DEFAULT_MAX_DOWNLOAD_MB,
    max_pages_per_site: Annotated[int, typer.Option(
        min=1, help="pages a documentation site keeps at most (breadth-first from its index)")
    ] = DEFAULT_MAX_PAGES_PER_SITE,
    reverse_links: Annotated[int, typer.Option(min=0, help="'used by' links a project page keeps at most")] = 20,
    entry_links: Annotated[bool, typer.Option(
        help="enter the documentation sites as the real data says: their pages' links to projects' home pages "
             "and to other sites' upstream pages go to the web's pages for them, and project pages of packages "
             "Debian relates to a -doc package link to its site (--no-entry-links: from its project page only)")
    ] = True,
    reference_sites: Annotated[bool, typer.Option(
        help="add the large reference sites the documentation links to (Java SE API, cppreference, Python's "
             "docs) at the upstream roots those links use (--no-reference-sites: the webs built before them)")
    ] = True,
    max_pages_per_reference_site: Annotated[int, typer.Option(
        min=1, help="pages a reference site keeps at most (breadth-first from its index)")
    ] = DEFAULT_MAX_PAGES_PER_REFERENCE_SITE,
) -> None:
    """The Debian web plus large documentation sites (API/reference pages, labelled by kind) from Debian's -doc
    packages: a many-site web with large self-similar sites that carry a topic's words."""
    if download is not None:
        run(lambda: download_index(download, src))
        run(lambda: download_docs(src, max_mb=max_download_mb, say=console.print, reference_sites=reference_sites))
    run(lambda: build_debian_docs(src, out_dir, overwrite=overwrite, max_pages_per_site=max_pages_per_site,
                                  reverse_links=reverse_links, entry_links=entry_links,
                                  reference_sites=REFERENCE_SITES if reference_sites else (),
                                  max_pages_per_reference_site=max_pages_per_reference_site))
    print_info(out_dir)


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


@web_app.command("mess")
def mess_cmd(
    web_dir: Annotated[str, typer.Argument(metavar="WEB", help="the offline web to start from, or 'embedded'")],
    out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
    profile: Annotated[str, typer.Option(help=f"named option set: {', '.join(PROFILES)} (none: a faithful "
                                              "copy)")] = "default",
    seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
    set_: Annotated[Optional[list[str]], typer.Option(
        "-s", "--set", metavar="KIND.OPTION=VALUE",
        help="set one option of the profile, e.g. calendar.pages=5000 or farm.enabled=false (repeatable)")] = None,
    overwrite: bool = False,
) -> None:
    """WEB plus the real web's pathologies, each URL's kind in the ground truth: a new web OUT.

    Traps (calendars, pagination, facets), copies (session ids, tracking parameters, mirrors, twins,
    near-duplicates), redirect chains and loops, link farms, script-only links, soft-404 and failing hosts;
    WEB's pages, labels and bodies are kept (docs/web-format.md, "Messy webs").
    """
    settings = run(lambda: {".".join(path): value for path, value in map(parse_override, set_ or [])})
    chosen = run(lambda: make_profile(profile, settings))
    report = run(lambda: mess_web(resolve_web_dir(web_dir), out_dir, chosen, seed=seed, profile_name=profile,
                                  overwrite=overwrite))
    print_mess_report(report)
    print_info(out_dir)


def print_mess_report(report: MessReport) -> None:
    out.print(f"[bold]profile {report.profile_name}[/], seed {report.seed}")
    for name, options in report.profile.model_dump().items():
        enabled = options.pop("enabled")
        values = " ".join(f"{key}={value}" for key, value in options.items())
        out.print(f"  {name:<15} {'on ' if enabled else 'off'} {values if enabled else ''}", highlight=False)
    out.print("injected URLs")
    for kind, count in report.injected.items():
        out.print(f"  {kind:<15} {count:>10,}")
    out.print(f"  {'(all)':<15} {sum(report.injected.values()):>10,}")
    out.print(f"links moved into scripts {report.moved_links:,}; pages whose stored HTML could not be kept "
              f"(served rendered) {report.html_dropped:,}")
    for host, behaviour in report.hosts.items():
        what = []
        if "soft_404" in behaviour:
            what.append("soft 404")
        if "failure" in behaviour:
            share = f" {behaviour['share']:.0%}" if behaviour["failure"] != "slow" else ""
            what.append(f"{behaviour['failure']}{share}")
        out.print(f"  host {host}: {', '.join(what)}", highlight=False)
    out.print(f"built in {report.seconds:.1f} s")


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
    for key in ("script_links", "canonicals"):
        if key in stats:
            out.print(f"  {key:<11} {stats[key]:>10,}")
    if "injected" in stats:  # a messy web: its ground truth, per kind
        out.print(f"  injected    {sum(stats['injected'].values()):>10,}")
        for kind, count in sorted(stats["injected"].items(), key=lambda kv: -kv[1]):
            out.print(f"    {count:>8,}  {kind}")


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
    hang_s: Annotated[Optional[float], typer.Option(
        min=0, help="a messy web: how long its timeout hosts hang (default: the web's own)")] = None,
    slow_body_s: Annotated[Optional[float], typer.Option(
        min=0, help="a messy web: how long its slow hosts take per body (default: the web's own)")] = None,
    disallow: Annotated[list[str] | None,
                        typer.Option(help="robots.txt Disallow path for every host (repeatable)")] = None,
    crawl_delay: Annotated[float | None, typer.Option(help="robots.txt Crawl-delay for every host")] = None,
    addresses: Annotated[int, typer.Option(min=1, help="loopback addresses at most: more hosts share them in turn, "
                                           "as virtual hosts share a server")] = 4096,
    map_file: Annotated[Path | None,
                        typer.Option("--map", help="write the host -> ip:port mapping (JSON) here")] = None,
    log_file: Annotated[Path | None, typer.Option("--log", help="append every request to this file as a JSON line "
                                                  "(time, host, path, status, address, user_agent, url)")] = None,
) -> None:
    """Serve DIR on loopback until interrupted; prints the host -> ip:port mapping as JSON.

    A crawler resolves the web's host names with that mapping (FetchConfig.resolve_overrides) and keeps
    the web's own URLs, so its crawl can be compared with the in-process one.
    """

    async def serve() -> None:
        server = run(lambda: serve_web(resolve_web_dir(directory), base_ip=base_ip, port=port,
                                       latency_ms=latency_ms, error_rate=error_rate, error_status=error_status,
                                       seed=seed, disallow=disallow or (), crawl_delay=crawl_delay,
                                       hang_s=hang_s, slow_body_s=slow_body_s, log_file=log_file,
                                       max_addresses=addresses))
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
