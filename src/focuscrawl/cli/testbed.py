"""``focuscrawl web testbed ...``: build and serve a test bed of real web applications beside an offline web."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from focuscrawl.cli.common import console, fail, out, run
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.testbed import build_testbed, serve_testbed
from focuscrawl.webs.testbed.translations import LANGUAGES

testbed_app = typer.Typer(help="Real web applications (Trac, Datasette, Pelican, django-scheduler) filled with an "
                               "offline web's texts, served beside it.", no_args_is_help=True)


@testbed_app.command("build")
def build_cmd(
    web_dir: Annotated[str, typer.Argument(metavar="WEB", help="a clean offline web, or 'embedded'")],
    out_dir: Annotated[Path, typer.Argument(metavar="OUT")],
    topic: Annotated[str, typer.Option(metavar="LABEL", help="the topic whose texts make relevant pages")],
    seed: Annotated[int, typer.Option(help="seed of every random choice")] = 0,
    apps_dir: Annotated[Optional[Path], typer.Option(
        help="the applications' virtualenv (made when missing; default: ~/.cache/focuscrawl/testbed-apps)")] = None,
    overwrite: bool = False,
    languages: Annotated[str, typer.Option(
        help="languages of a third of the texts (Debian's translated package descriptions, downloaded once); "
             "'none': all English")] = ",".join(LANGUAGES),
    debian_index: Annotated[Optional[Path], typer.Option(
        help="where Debian's index and translations are cached (default: ~/.cache/focuscrawl/debian/bookworm; "
             "a folder `web build debian --download` filled is reused)")] = None,
) -> None:
    """Fill Trac, Datasette, Pelican and a django-scheduler calendar with WEB's texts (half of the TOPIC; a
    third in German, French and Spanish) and write OUT: the web with links into them, the applications' data,
    manifest.json, labels.json (each URL's kind) and relevant.txt."""
    chosen = () if languages.strip().lower() in ("", "none") else tuple(
        code.strip() for code in languages.split(",") if code.strip())
    if any(not code.isalpha() or code == "en" for code in chosen):
        fail(f"--languages {languages!r}: give language codes other than en, e.g. de,fr,es (or 'none')")
    manifest = run(lambda: checked(lambda: build_testbed(resolve_web_dir(web_dir), out_dir, topic, seed=seed,
                                                         apps_dir=apps_dir, overwrite=overwrite, languages=chosen,
                                                         debian_index=debian_index, log=console.print)))
    for app, entry in manifest["apps"].items():
        languages = ", ".join(f"{code} {count}" for code, count in entry["languages"].items())
        out.print(f"  {app:<10} {entry['host']:<22} {entry['content_pages']:>5} content pages "
                  f"({entry['relevant_pages']} of the topic{'; ' + languages if languages else ''}): "
                  f"{entry['what']}", highlight=False)
    out.print(f"{manifest['links_into_apps']} links from the web into them; built in {manifest['built_s']:.0f} s")


@testbed_app.command("serve")
def serve_cmd(
    testbed_dir: Annotated[Path, typer.Argument(metavar="OUT", help="a test bed `build` wrote")],
    map_file: Annotated[Optional[Path], typer.Option("--map", help="write the host -> ip:port map (JSON) here")
                        ] = None,
) -> None:
    """Serve the test bed's web and applications on loopback until interrupted; prints the hosts map."""
    started = time.monotonic()
    # A polite stop (kill, a timeout) stops the applications too: as Ctrl-C does, through the block's exit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with run(lambda: checked(lambda: serve_testbed(testbed_dir))) as hosts:
            mapping = json.dumps(hosts, indent=1, sort_keys=True)
            if map_file is not None:
                map_file.write_text(mapping + "\n")
            print(mapping, flush=True)
            console.print(f"serving {testbed_dir} ({time.monotonic() - started:.1f} s to start); Ctrl-C stops")
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    except RuntimeError as exc:
        fail(str(exc))


def checked(action):
    """``action()`` with an application's failure (a RuntimeError naming it) as a user error line."""
    try:
        return action()
    except RuntimeError as exc:
        fail(str(exc))
