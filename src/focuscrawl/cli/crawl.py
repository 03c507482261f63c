"""``focuscrawl crawl`` and ``focuscrawl topic init``: crawl into a resumable run folder; make a topic."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

COMMAND_ERRORS: tuple[type[BaseException], ...] = ()


def _errors() -> tuple[type[BaseException], ...]:
    from focuscrawl.cli.main import USER_ERRORS
    from focuscrawl.crawl.driver import ResumeError

    return (*USER_ERRORS, ResumeError, RuntimeError)


def _fail(message: str) -> None:
    from focuscrawl.cli.main import fail

    fail(message)


def crawl_cmd(
    seeds: Annotated[Optional[Path], typer.Option("--seeds", help="file of seed URLs, one per line")] = None,
    topic: Annotated[Optional[Path], typer.Option("--topic", help="topic directory (focuscrawl topic init)")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="run folder; an existing one is resumed")] = ...,
    strategy: Annotated[Optional[str], typer.Option(help="crawling strategy (focuscrawl strategies)")] = None,
    budget: Annotated[Optional[int], typer.Option(help="pages to fetch in total, across resumes")] = None,
    config: Annotated[Optional[Path], typer.Option("-c", "--config", help="YAML crawl config")] = None,
    set_: Annotated[Optional[list[str]], typer.Option("-s", "--set", help="override a setting: key=value")] = None,
    web: Annotated[Optional[str], typer.Option(help="crawl an offline web directory or 'embedded', not HTTP")] = None,
    hosts_map: Annotated[Optional[Path], typer.Option("--hosts-map", help="host -> ip:port JSON of "
                                                      "`focuscrawl web serve --map`: crawl that loopback web")] = None,
    concurrency: Annotated[Optional[int], typer.Option(help="fetches in flight")] = None,
    warc: Annotated[Optional[bool], typer.Option("--warc/--no-warc", help="also write crawl.warc.gz")] = None,
    seed: Annotated[Optional[int], typer.Option(help="seed of every random choice")] = None,
    max_per_domain: Annotated[Optional[str], typer.Option(help="per-domain cap: inf, N or A-B")] = None,
    progress: Annotated[Optional[str], typer.Option(help="auto, live, log or none")] = None,
) -> None:
    """Crawl from seeds towards a topic into a run folder. Re-run the same command to resume it."""
    from focuscrawl.crawl.api import Crawler
    from focuscrawl.crawl.config import load_config, read_effective_config
    from focuscrawl.crawl.progress import Progress

    try:
        stored = read_effective_config(out)
        cfg = load_config(config, set_ or (), base=stored, seeds_file=seeds, topic=topic, out=out, strategy=strategy,
                          budget=budget, web=web, hosts_map=hosts_map, concurrency=concurrency, warc=warc, seed=seed,
                          max_per_domain=max_per_domain, progress=progress)
        crawler = Crawler(cfg)
    except _errors() as exc:
        _fail(str(exc).strip("'\""))
        return
    display = Progress(crawler, cfg.progress, every_s=cfg.log_every_s) if cfg.progress != "none" else None
    try:
        summary = crawler.crawl(on_page=display.update if display else None)
    except KeyboardInterrupt:
        if display:
            display.close()
        typer.echo(f"stopped at once; run the same command to resume the crawl in {out}", err=True)
        raise typer.Exit(130) from None
    except _errors() as exc:
        if display:
            display.close()
        _fail(str(exc).strip("'\""))
        return
    if display:
        display.close()
        display.report(summary)
    if summary.stopped == "interrupted":
        raise typer.Exit(130)


def topic_init_cmd(
    out_dir: Annotated[Path, typer.Argument(metavar="TOPIC_DIR", help="topic directory to create")],
    positive: Annotated[Optional[Path], typer.Option(help="folder of on-topic pages (HTML or .txt)")] = None,
    negative: Annotated[Optional[Path], typer.Option(help="folder of off-topic pages (HTML or .txt)")] = None,
    keywords: Annotated[Optional[str], typer.Option(help="comma-separated keywords")] = None,
    seeds: Annotated[Optional[Path], typer.Option("--seeds", help="file of seed URLs to store with the topic")] = None,
    from_web: Annotated[Optional[str], typer.Option("--from-web", help="labelled offline web dir or 'embedded'")] = None,
    label: Annotated[Optional[str], typer.Option("--topic", help="with --from-web: the topic label")] = None,
    seed: Annotated[int, typer.Option(help="with --from-web: sampling seed, as in focuscrawl bench")] = 0,
    seeds_per_run: Annotated[int, typer.Option(help="with --from-web: seed URLs to pick")] = 1,
    run: Annotated[int, typer.Option(help="with --from-web: take the seeds of benchmark run i")] = 0,
    name: Annotated[Optional[str], typer.Option(help="topic name (default: the directory name)")] = None,
    overwrite: bool = False,
) -> None:
    """Make a topic directory from positive/negative example pages, or from a labelled offline web."""
    from focuscrawl.cli.main import out, resolve_web
    from focuscrawl.topic.topic_dir import init_from_html, init_from_web

    try:
        if from_web is not None:
            if label is None:
                raise ValueError("--from-web needs --topic LABEL")
            topic = init_from_web(out_dir, resolve_web(from_web), label, seed=seed, seeds=seeds_per_run, run=run,
                                  overwrite=overwrite)
        else:
            if positive is None or negative is None:
                raise ValueError("give --positive and --negative folders, or --from-web DIR --topic LABEL")
            seed_urls = []
            if seeds is not None:
                seed_urls = [s.split("#", 1)[0].strip() for s in seeds.read_text().splitlines()]
            topic = init_from_html(out_dir, positive, negative, name=name,
                                   keywords=[k.strip() for k in (keywords or "").split(",") if k.strip()],
                                   seeds=[s for s in seed_urls if s], overwrite=overwrite)
    except _errors() as exc:
        _fail(str(exc).strip("'\""))
        return
    positives = sum(topic.example_labels)
    out.print(f"topic {topic.name!r} in {out_dir}: {positives} positive and {len(topic.example_labels) - positives} "
              f"negative examples, {len(topic.keywords)} keywords, {len(topic.seeds)} seeds", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("crawl")(crawl_cmd)
    # `topic` is owned by focuscrawl.cli.topic (registered after or before us): attach `init` to its group
    # rather than shadow it with a second group of the same name.
    import sys

    try:
        from focuscrawl.cli.topic import topic_app
    except ImportError:
        topic_app = None
    if topic_app is not None:
        topic_app.command("init")(topic_init_cmd)
        main = sys.modules.get("focuscrawl.cli.main")
        registered = any(group.typer_instance is topic_app for group in app.registered_groups)
        if not registered and "focuscrawl.cli.topic" not in getattr(main, "_COMMAND_MODULES", ()):
            app.add_typer(topic_app, name="topic")
        return
    for group in app.registered_groups:
        if group.name == "topic" and group.typer_instance is not None:
            group.typer_instance.command("init")(topic_init_cmd)
            return
    own = typer.Typer(help="Make topic directories.", no_args_is_help=True)
    own.command("init")(topic_init_cmd)
    app.add_typer(own, name="topic")
