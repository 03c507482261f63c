"""A defence of one's own: one class and one settings entry (``defences.order``), through the public API only.

Two toy defences, one on URLs (refuses printed copies by their URL) and one on pages (refuses a page whose title
holds a word), crawl a small messy web into a run folder, whose ``pages.jsonl`` shows their verdicts next to the
built-in defences'; the same entry reaches a crawl from ``-s`` and from a config file.
"""

from __future__ import annotations

import json

import pytest
from test_defences import AsyncFetcher, Wrapped, _messy_web, _topic_dir

from focuscrawl.config import CrawlConfig, load_config
from focuscrawl.engine.defences import DEFAULT_ORDER, HOST_FAILING, TRAP_PATTERN, Defence, DefenceSettings
from focuscrawl.webs.store import OfflineWeb

PRINTED = "printed copy"
TITLED = "title says b3"


class NoPrintedCopies(Defence):
    """Refuses the URLs of a site's printed copies: they never enter the frontier."""

    name = "no_printed_copies"

    def refuse(self, url, host, crawl):
        return PRINTED if "print=1" in url else ""


class TitleWord(Defence):
    """Refuses a fetched page whose title holds a word: no reward, no links, the policy sees it empty."""

    name = "title_word"
    word = "b3"

    def __init__(self):
        self.seen = 0  # state of its own, checkpointed with the crawl

    def inspect(self, fetch, crawl):
        self.seen += 1
        if self.word in fetch.page.title.split():
            fetch.reject(TITLED)


OWN = {f"{__name__}:NoPrintedCopies": 150, f"{__name__}:TitleWord": 900}


def _crawl(tmp_path, **settings) -> list[dict]:
    import asyncio

    from focuscrawl.crawl import Crawler

    web = Wrapped(OfflineWeb(_messy_web(tmp_path)), failing=("down.test",))
    run = tmp_path / "run"

    async def go():
        crawler = Crawler(topic=_topic_dir(tmp_path / "topic", ["http://birds.test/"]), out=run, progress="none",
                          plot=False, fetcher=AsyncFetcher(web), strategy="bfs", budget=70, concurrency=1, **settings)
        async for _ in crawler.run():
            pass

    asyncio.run(go())
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def test_a_defence_of_ones_own_gives_its_verdicts_in_a_run_folder(tmp_path):
    # host_health: a small web's crawl lasts less than the 300 s of failures that close a host for good
    lines = _crawl(tmp_path, defences={"order": OWN, "host_health": {"close_after_s": 0}})
    verdicts = [line["verdict"] for line in lines]
    skipped = {url: why for line in lines for url, why in line["skipped"]}
    assert verdicts.count(TITLED) == 1
    assert next(line["url"] for line in lines if line["verdict"] == TITLED) == "http://birds.test/b3"
    # the printed copies were never fetched: refused where the hub's links met them, each listed once
    assert not any("print=1" in line["url"] for line in lines)
    assert sorted(url for url, why in skipped.items() if why == PRINTED) == [
        f"http://birds.test/b{i}?print=1" for i in range(5)]
    # the built-in defences still at work, around them
    assert HOST_FAILING in verdicts and TRAP_PATTERN in verdicts
    assert not any(v.startswith("duplicate of") for v in verdicts), "no printed copy fetched, so none caught"


def test_the_order_puts_a_defence_of_ones_own_among_the_built_in_ones():
    settings = DefenceSettings(order={f"{__name__}:TitleWord": 650})
    assert settings.order == {**DEFAULT_ORDER, f"{__name__}:TitleWord": 650}
    defences = settings.build(seed=0, budget=10)
    names = [d.name for d in defences.defences]
    assert names == ["url_hygiene", "host_health", "link_farms", "traps", "listings", "url_aliases", "near_duplicates",
                     "title_word", "canonical", "soft_404"]
    assert isinstance(defences["title_word"], TitleWord)
    # hooks on pages run from the highest position down: after canonical's, before near-duplicates'
    inspect = [hook.__self__.name for hook in defences._hooks["inspect"]]
    assert inspect == ["soft_404", "canonical", "title_word", "near_duplicates", "url_aliases"]
    # a built-in defence switched off is not built, whatever its position
    off = DefenceSettings(traps={"enabled": False}, order={"traps": 50}).build(seed=0, budget=10)
    assert "traps" not in off and "host_health" in off


def test_a_defence_of_ones_own_reaches_a_crawl_from_the_command_line_and_a_config_file(tmp_path):
    entry = f'defences.order={{"{__name__}:TitleWord": 900}}'
    config = load_config(CrawlConfig, overrides=[entry])
    assert config.defences.order[f"{__name__}:TitleWord"] == 900
    assert load_config(CrawlConfig, overrides=["defences.order.traps=450"]).defences.order["traps"] == 450
    file = tmp_path / "crawl.yml"
    file.write_text(f'defences:\n  order:\n    "{__name__}:NoPrintedCopies": 150\n')
    assert load_config(CrawlConfig, file).defences.order[f"{__name__}:NoPrintedCopies"] == 150
    for bad, said in (("defences.order.trapz=1", "no defence 'trapz'"),
                      ('defences.order={"nowhere.at.all:Thing": 1}', "cannot be imported")):
        with pytest.raises(ValueError, match=said):
            load_config(CrawlConfig, overrides=[bad])
