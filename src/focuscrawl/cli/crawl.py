"""``focuscrawl crawl``: crawl from seeds towards a topic into a resumable run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from focuscrawl.cli.common import run
from focuscrawl.cli.dashboard import DEFAULT_PORT, start_dashboard
from focuscrawl.config import CrawlConfig, load_config, read_effective_config
from focuscrawl.crawl import BaseCrawler, open_crawler
from focuscrawl.crawl.progress import Progress
from focuscrawl.crawl.run_folder import RunFolder
from focuscrawl.storage.layout import SHARDS_DIR


def crawl_cmd(
    seeds: Annotated[Optional[Path], typer.Option("--seeds", help="file of seed URLs, one per line")] = None,
    seeds_from_sitemap: Annotated[Optional[list[str]], typer.Option(
        "--seeds-from-sitemap", metavar="URL", help="seeds read from a sitemap, a sitemap index (gzipped or not) or "
        "a site's robots.txt Sitemap: lines, else its /sitemap.xml (repeatable, or a comma list)")] = None,
    topic: Annotated[Optional[Path], typer.Option("--topic", help="topic directory (focuscrawl topic init)")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="run folder; an existing one is resumed")] = ...,
    strategy: Annotated[Optional[str], typer.Option(help="crawling strategy (focuscrawl strategies)")] = None,
    budget: Annotated[Optional[int], typer.Option(help="pages to fetch in total, across resumes")] = None,
    config: Annotated[Optional[Path], typer.Option("-c", "--config", help="YAML crawl config")] = None,
    set_: Annotated[Optional[list[str]], typer.Option("-s", "--set", help="override a setting: KEY=VALUE, e.g. "
                                                      "fetch.min_delay=2 or options.tres.gamma=0")] = None,
    web: Annotated[Optional[str], typer.Option(help="crawl an offline web directory or 'embedded', not HTTP")] = None,
    hosts_map: Annotated[Optional[Path], typer.Option("--hosts-map", help="host -> ip:port JSON of "
                                                      "`focuscrawl web serve --map`: crawl that loopback web")] = None,
    concurrency: Annotated[Optional[int], typer.Option(help="fetches in flight")] = None,
    warc: Annotated[Optional[bool], typer.Option("--warc/--no-warc", help="also write crawl.warc.gz")] = None,
    seed: Annotated[Optional[int], typer.Option(help="seed of every random choice")] = None,
    judge: Annotated[Optional[str], typer.Option(help="your own relevance judge in place of the topic's classifier: "
                                             "module:callable (predict_proba(texts) or score(page)) or a "
                                             "scikit-learn model file (.joblib; trusted code)")] = None,
    max_per_domain: Annotated[Optional[str], typer.Option(help="per-domain cap: inf, N or A-B")] = None,
    progress: Annotated[Optional[str], typer.Option(help="auto, live, log or none")] = None,
    allow_domain: Annotated[Optional[list[str]], typer.Option("--allow-domain", help="crawl only this registered "
                                                          "domain or host and hosts under it (repeatable)")] = None,
    deny_domain: Annotated[Optional[list[str]], typer.Option("--deny-domain", help="never this domain or host "
                                                         "(repeatable)")] = None,
    include: Annotated[Optional[list[str]], typer.Option("--include", help="URL regular expression a URL must "
                                                     "match (repeatable: any of them)")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option("--exclude", help="URL regular expression a URL must not "
                                                     "match (repeatable)")] = None,
    max_depth: Annotated[Optional[int], typer.Option("--max-depth", min=0, help="links from the seeds, at "
                                                 "most")] = None,
    content_type: Annotated[Optional[list[str]], typer.Option("--content-type", help="accepted media type, e.g. "
                                                          "text/html (repeatable; default: any)")] = None,
    politeness: Annotated[Optional[str], typer.Option(help="host (default): one request schedule per host; domain: "
                                                  "one per registered domain; ip: one per resolved address (every "
                                                  "name of one server)")] = None,
    render: Annotated[Optional[str], typer.Option(help="run pages' JavaScript in Chromium (the render extra): never "
                                              "(default), auto (pages whose inline scripts write links) or always; "
                                              "a render sends no request")] = None,
    render_no_sandbox: Annotated[bool, typer.Option("--render-no-sandbox", help="run --render's browser without "
                                                    "Chromium's sandbox, where it cannot run (page scripts are "
                                                    "untrusted: at your own risk)")] = False,
    workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="distributed: N shards (Ray actors) "
                                                   "owning a partition of the hosts each; starts a local Ray "
                                                   "runtime unless --ray-address is given")] = None,
    ray_address: Annotated[Optional[str], typer.Option("--ray-address", help="distributed: join this Ray "
                                                       "cluster (`ray start --head` prints it)")] = None,
    repair: Annotated[bool, typer.Option("--repair", help="first salvage a damaged state store in the run folder "
                                         "(says what was lost), then resume")] = False,
    dashboard: Annotated[Optional[int], typer.Option("--dashboard", min=0, max=65535, metavar="[PORT]",
                                                     help="serve a live dashboard of the crawl on 127.0.0.1:PORT "
                                                     f"(default {DEFAULT_PORT}; 0: any free port)")] = None,
) -> None:
    """Crawl from seeds towards a topic into a run folder. Re-run the same command to resume it."""

    def prepare() -> BaseCrawler:
        stored = read_effective_config(out)
        cfg = load_config(CrawlConfig, config, set_ or (), base=stored, seeds_file=seeds,
                          seeds_from_sitemap=seeds_from_sitemap, topic=topic, out=out,
                          strategy=strategy, budget=budget, web=web, hosts_map=hosts_map, concurrency=concurrency,
                          warc=warc, seed=seed, judge=judge, max_per_domain=max_per_domain, progress=progress,
                          scope={"allowed_domains": allow_domain or None, "denied_domains": deny_domain or None,
                                 "include": include or None, "exclude": exclude or None, "max_depth": max_depth,
                                 "content_types": content_type or None},
                          fetch={"politeness": politeness, "render": render,
                                 "render_sandbox": False if render_no_sandbox else None},
                          workers=workers, ray_address=ray_address)
        return open_crawler(cfg)

    if repair:
        def salvage() -> None:
            shards = sorted(p for p in (out / SHARDS_DIR).glob("*") if p.is_dir())
            for path in shards or [out]:  # a distributed crawl: each shard's store
                with RunFolder(path) as folder:
                    report = folder.repair()
                typer.echo(f"{report}; resuming the crawl" if report else f"{path}: the crawl state is readable, "
                           "nothing to repair; resuming the crawl", err=True)
        run(salvage)
    crawler = run(prepare)
    if dashboard is not None:
        start_dashboard(out, dashboard)  # a daemon thread: it reads the store, and ends with the crawl
    cfg = crawler.config
    display = Progress(crawler, cfg.progress, every_s=cfg.log_every_s) if cfg.progress != "none" else None
    try:
        summary = run(lambda: crawler.crawl(on_progress=display.update if display else None))
    except KeyboardInterrupt:
        typer.echo(f"stopped at once; run the same command to resume the crawl in {out}", err=True)
        raise typer.Exit(130) from None
    finally:
        if display:
            display.close()
    if display:
        display.report(summary)
    if summary.stopped == "interrupted":
        raise typer.Exit(130)
