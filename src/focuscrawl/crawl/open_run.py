"""Opening a crawl in its run folder: the one set-up a single-process ``Crawler`` and a distributed crawl's ``Shard``
share.

In this order: the state store (a new one records what the crawl is, an existing one must be the same crawl), the
engine built fresh and brought to the store's last commit (``resume``), ``config.yml``, the files derived from the
store brought in line with it, and the fetcher. A shard differs only in what it hands in: its place in the
identity, which URLs it owns, how a replayed message from another shard is applied, and its classifier, trained
once by the driver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.config import CrawlConfig
from focuscrawl.crawl.driver import Fetcher
from focuscrawl.crawl.inputs import CrawlInputs, make_fetcher
from focuscrawl.crawl.resume import resume
from focuscrawl.crawl.run_folder import Outputs, RunFolder
from focuscrawl.engine import CrawlEngine
from focuscrawl.storage import StateStore
from focuscrawl.types import RelevanceModel


@dataclass
class OpenRun:
    """A crawl ready to go on: its store, its engine at the store's last commit, its derived files, its fetcher."""

    store: StateStore
    engine: CrawlEngine
    outputs: Outputs
    fetcher: Fetcher


def open_run(
    folder: RunFolder,
    config: CrawlConfig,
    inputs: CrawlInputs,
    *,
    fetcher: Fetcher | None = None,
    classifier: RelevanceModel | None = None,
    identity: dict[str, Any] | None = None,
    owns: Callable[[str], bool] | None = None,
    on_message: Callable[[CrawlEngine, str, bytes], int] | None = None,
    on_store: Callable[[StateStore], None] | None = None,
) -> OpenRun:
    """Open (or resume) ``config``'s crawl in ``folder`` (locked), from ``inputs`` (``read_inputs``).

    ``fetcher``: one to crawl with (None: ``make_fetcher``'s); ``classifier``: the relevance model, trained already
    (None: the run folder's, trained once and kept); ``identity``: more of what makes this the same crawl on
    resume; ``owns``, ``on_message``: a shard's (``build_crawl``'s and ``resume``'s); ``on_store``: called with
    the store once it is open. What was opened is closed again if a later part fails."""
    store = folder.open_store({**config.identity(), "seeds": inputs.seeds, **(identity or {})},
                              strategy=config.strategy, context_budget=config.budget)
    outputs = None
    try:
        if on_store is not None:
            on_store(store)
        engine = _engine(folder, store, config, inputs, classifier, owns, on_message)
        folder.write_config(config)
        outputs = folder.open_outputs(store, config.strategy, config.warc)
        return OpenRun(store, engine, outputs, fetcher if fetcher is not None else make_fetcher(config, inputs.hosts))
    except BaseException:
        if outputs is not None:
            outputs.close()
        store.close()
        raise


def _engine(folder: RunFolder, store: StateStore, config: CrawlConfig, inputs: CrawlInputs,
            classifier: RelevanceModel | None, owns: Callable[[str], bool] | None,
            on_message: Callable[[CrawlEngine, str, bytes], int] | None) -> CrawlEngine:
    """A fresh engine for this crawl, brought to the store's last commit."""
    topic, plan = inputs.topic, inputs.strategy
    reward_model = plan.reward_model(topic)
    if classifier is None:  # a user's judge is theirs to keep: never copied into the run folder's model.pkl
        classifier = inputs.judge or folder.classifier(reward_model, topic, config.seed, config.page_encoder)
    classifiers = Classifiers(topic, config.seed, trained={reward_model: classifier})
    # The policy is told the first run's budget: it may plan with it, and the replay must match.
    context_budget = store.get_meta("context_budget", config.budget)

    def fresh() -> CrawlEngine:
        return build_crawl(config, plan, topic, inputs.seeds, classifiers=classifiers, context_budget=context_budget,
                           owns=owns).engine

    return resume(fresh, store, use_checkpoint=config.checkpoint_every > 0, on_message=on_message)
