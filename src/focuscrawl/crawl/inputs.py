"""What a crawl reads before it starts, checked in one place and cheaply, before anything is written or trained.

``read_inputs`` is the first thing both crawlers do: the topic directory and its files, the seeds, the
strategy and its options (``StrategyPlan``), the offline web of ``--web``, the hosts map of ``--hosts-map``, for
``--render``, the browser, and the judge of ``--judge``.
A mistake in any of them is one clear error in a second, not after the classifier was trained or the word
vectors were built (minutes on a fresh machine), and it leaves no run folder behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.builder import StrategyPlan
from focuscrawl.config import CrawlConfig
from focuscrawl.crawl.driver import Fetcher
from focuscrawl.crawl.offline import OfflineFetcher
from focuscrawl.http.fetcher import HttpFetcher
from focuscrawl.http.render import check_renderer
from focuscrawl.http.settings import FetchConfig
from focuscrawl.topic.models import ModelOptions, train_relevance_model
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import RelevanceModel, TopicInputs
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.store import OfflineWeb


@dataclass
class CrawlInputs:
    """A crawl's inputs, read and checked: its topic, seeds, strategy plan and loopback hosts map (if any), and the
    user's judge (``--judge``), resolved once, here."""

    topic: TopicInputs
    seeds: list[str]
    strategy: StrategyPlan
    hosts: dict[str, str] | None
    judge: RelevanceModel | None = None


def read_inputs(config: CrawlConfig) -> CrawlInputs:
    """Read and check what ``config`` names; raises the first mistake found (one line each)."""
    if config.topic is None or not Path(config.topic).is_dir():
        raise FileNotFoundError(f"topic directory {config.topic} not found" if config.topic else
                                "a crawl needs a topic directory (see `focuscrawl topic init`)")
    strategy = StrategyPlan(config, config.strategy)
    topic = load_topic_dir(config.topic)
    # seeds from sitemaps are given seeds: read when the crawl starts (crawl.sitemaps), they replace seeds.txt's
    seeds = config.all_seeds() or ([] if config.seeds_from_sitemap else list(topic.seeds))
    if not seeds and not config.seeds_from_sitemap:
        raise ValueError("no seeds: give --seeds FILE or put seeds.txt in the topic directory")
    if config.web:
        OfflineWeb(resolve_web_dir(config.web)).close()  # a directory that is not an offline web says so here
    if config.fetch.render != "never":
        fetch = config.fetch  # the render extra, a Chromium and its sandbox, or one line
        check_renderer(fetch.render_browser, sandbox=fetch.render_sandbox, user=fetch.render_user)
    hosts = read_hosts_map(Path(config.hosts_map)) if config.hosts_map is not None else None
    judge = None
    if config.judge is not None:  # a module that does not import, a model file that does not load: one line now
        judge = train_relevance_model(config.judge, topic, config.seed, ModelOptions(config.page_encoder))
    return CrawlInputs(topic, seeds, strategy, hosts, judge)


def read_hosts_map(path: Path) -> dict[str, str]:
    try:
        hosts = json.loads(path.read_text())
    except json.JSONDecodeError:
        hosts = None
    if not isinstance(hosts, dict):
        raise ValueError(f"{path} is not a hosts map (a JSON object host -> ip:port, as `focuscrawl web serve "
                         "--map` writes)")
    return hosts


def make_fetcher(config: CrawlConfig, hosts: dict[str, str] | None) -> Fetcher:
    """The fetcher a crawl's settings ask for: an offline web's, or HTTP (a loopback web's with ``hosts``, the
    hosts map ``read_inputs`` read)."""
    if config.web:
        return OfflineFetcher(resolve_web_dir(config.web), latency_s=config.offline_latency_s)
    filled_in = {}  # what the crawl gives where its fetch settings say nothing
    if config.scope.content_types is not None:
        filled_in["content_types"] = config.scope.content_types
    if hosts is not None:
        filled_in["allow_loopback"] = True  # a web served on loopback
    settings = {**filled_in, **config.fetch.model_dump(exclude_unset=True)}
    if hosts is not None:  # its host names resolve through the server's mapping
        settings["resolve_overrides"] = {**hosts, **config.fetch.resolve_overrides}
    return HttpFetcher(FetchConfig(**settings))
