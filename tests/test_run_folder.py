"""Run folders: the state store, pages.jsonl repair, WARC truncation, config overrides, topic directories."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from focuscrawl.bench.protocol import init_from_web
from focuscrawl.config import (
    CrawlConfig,
    load_config,
    parse_override,
    read_effective_config,
    write_effective_config,
)
from focuscrawl.crawl import Crawler, ResumeError, RunFolder
from focuscrawl.storage import PagesWriter, StateStore, StepRecord, WarcOutput, repair_pages
from focuscrawl.storage.pages import valid_prefix
from focuscrawl.storage.state import StoreVersionError
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import Link, Page


def _record(step: int, url: str | None = None) -> StepRecord:
    url = url or f"http://a.test/{step}"
    return StepRecord(step=step, url=url, final_url=url, host="a.test", status=200, content_type="text/html",
                      title=f"t{step}", error="", text=f"text {step} é",
                      outlinks=[Link(f"http://a.test/{step + 1}", "next")],
                      fetched_at=1000.0 + step, fetch_s=0.01, relevance=0.7, reward=1.0, depth=step, parent=None,
                      score=None, frontier_size=3)


def _store_with_steps(path: Path, n: int) -> StateStore:
    store = StateStore(path)
    store.initialise(identity={})
    for step in range(n):
        store.log_select(f"http://a.test/{step}")
        store.commit_step(_record(step))
    return store


def test_state_store_round_trip_and_closure(tmp_path):
    store = _store_with_steps(tmp_path / "s.sqlite", 4)
    assert store.step_count() == 4
    got = store.step(2)
    assert got is not None and got.text == "text 2 é" and got.outlinks == [Link("http://a.test/3", "next")]
    assert got.page().outlinks == got.outlinks
    assert [(k, u) for _, k, u in store.ops()] == [x for s in range(4) for x in
                                                   (("S", f"http://a.test/{s}"), ("R", f"http://a.test/{s}"))]
    assert store.closure() == {f"http://a.test/{s}" for s in range(4)}
    assert store.last_frontier_size() == 3
    store.close()
    # Reopening sees exactly the committed state.
    again = StateStore(tmp_path / "s.sqlite")
    assert not again.is_new and again.step_count() == 4
    # A store of another format version is refused with a way out, not misread.
    again.set_meta(schema_version=1)
    again.close()
    with pytest.raises(StoreVersionError, match="another focuscrawl version"):
        StateStore(tmp_path / "s.sqlite")


def test_a_step_is_one_transaction(tmp_path):
    store = _store_with_steps(tmp_path / "s.sqlite", 2)
    store.log_select("http://a.test/0")
    with pytest.raises(sqlite3.IntegrityError):  # the same URL recorded twice: refused as a whole
        store.commit_step(_record(2, "http://a.test/0"))
    assert store.step_count() == 2
    assert sum(1 for _ in store.ops()) == 4


def test_checkpoints_keep_the_latest_two(tmp_path):
    store = StateStore(tmp_path / "s.sqlite")
    store.initialise()
    for step in range(5):
        store.commit_step(_record(step), checkpoint=f"blob{step}".encode())
    seq, step, blob = store.latest_checkpoint()
    assert (step, blob) == (4, b"blob4")
    assert store.db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 2


def test_pages_jsonl_repair(tmp_path):
    store = _store_with_steps(tmp_path / "s.sqlite", 6)
    path = tmp_path / "pages.jsonl"
    with PagesWriter(path, "bfs") as writer:
        writer.write_all(list(store.steps())[:3])
    with open(path, "a") as fh:
        fh.write('{"step": 3, "url": "http://a.te')  # killed mid-line
    assert valid_prefix(path) == (3, len(path.read_bytes()) - len('{"step": 3, "url": "http://a.te'))
    assert repair_pages(path, store, "bfs") == (0, 3)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["step"] for r in lines] == list(range(6)) and lines[4]["text"] == "text 4 é"
    assert lines[0]["strategy"] == "bfs" and lines[0]["relevance"] == 0.7 and lines[0]["depth"] == 0
    # A file ahead of the store (power cut after the write, before the commit reached the disk) is cut back.
    with open(path, "a") as fh:
        fh.write(json.dumps({"step": 6, "url": "http://a.test/6"}) + "\n")
    assert repair_pages(path, store, "bfs") == (1, 0)
    assert len(path.read_text().splitlines()) == 6
    # Garbage in the middle: everything from there on is rewritten from the store.
    text = path.read_text().splitlines(keepends=True)
    path.write_text("".join(text[:2]) + "not json\n" + "".join(text[3:]))
    assert repair_pages(path, store, "bfs") == (4, 4)
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == list(range(6))


def test_warc_truncation_keeps_a_valid_archive(tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    path = tmp_path / "crawl.warc.gz"
    warc = WarcOutput(path)
    ends = [warc.write(f"http://a.test/{i}", Page(url=f"http://a.test/{i}", final_url=f"http://a.test/{i}",
                                                   status=200, content_type="text/html", title="t", text="x",
                                                   html=f"<p>{i}</p>")) for i in range(3)]
    warc.write("http://a.test/down", Page(url="http://a.test/down", final_url="http://a.test/down", status=0,
                                          error="refused"))
    warc.close()
    with open(path, "ab") as fh:
        fh.write(b"\x1f\x8b partial gzip member")
    assert WarcOutput.truncate_to(path, ends[1]) > 0
    with open(path, "rb") as fh:
        records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                   for r in ArchiveIterator(fh)]
    assert [r[0] for r in records] == ["warcinfo", "request", "response", "request", "response"]
    assert records[4][1:] == ("http://a.test/1", b"<p>1</p>")


def test_config_precedence_and_overrides(tmp_path):
    file = tmp_path / "c.yml"
    file.write_text(yaml.safe_dump({"budget": 50, "strategy": "bfs", "fetch": {"min_delay": 2.0}}))
    cfg = load_config(CrawlConfig, file, ["budget=70", "fetch.min_delay=0.5",
                                          "fetch.resolve_overrides={a.test: '127.0.0.2:80'}", "warc=true",
                                          "options.best-first.retrain_every=10"], strategy="random", out=tmp_path)
    assert (cfg.budget, cfg.strategy, cfg.warc) == (70, "random", True)
    assert cfg.fetch.model_dump(exclude_unset=True) == {"min_delay": 0.5,
                                                         "resolve_overrides": {"a.test": "127.0.0.2:80"}}
    assert (cfg.fetch.min_delay, cfg.fetch.politeness) == (0.5, "host")  # typed, the rest the fetcher's defaults
    assert cfg.options == {"best-first": {"retrain_every": 10}}
    assert parse_override("max-per-domain=5-2") == (["max_per_domain"], "5-2")
    assert load_config(CrawlConfig, overrides=["max_per_domain=10"]).max_per_domain == "10"
    with pytest.raises(ValueError):
        load_config(CrawlConfig, overrides=["no_such_setting=1"])
    with pytest.raises(ValueError):
        load_config(CrawlConfig, overrides=["budget=-3"])
    # The effective config round-trips through YAML.
    assert CrawlConfig.model_validate(yaml.safe_load(cfg.to_yaml())) == cfg


@pytest.mark.parametrize("fetch", [{}, {"min_delay": 2, "politeness": "domain", "content_types": ["Text/HTML "]}])
def test_a_run_folders_recorded_fetch_settings_load_and_stay_as_given(tmp_path, fetch):
    # config.yml of a run folder written when fetch was a plain mapping: it loads, typed, and is written back with
    # the settings it gave only (the fetcher's defaults stay its own, and a loopback crawl fills in the rest)
    (tmp_path / "config.yml").write_text(yaml.safe_dump({"budget": 50, "strategy": "bfs", "fetch": fetch}))
    cfg = read_effective_config(tmp_path)
    assert cfg.fetch.min_delay == fetch.get("min_delay", 1.0)
    assert cfg.fetch.content_types == (("text/html",) if fetch else None)
    write_effective_config(tmp_path, cfg)
    written = yaml.safe_load((tmp_path / "config.yml").read_text())["fetch"]
    assert written == ({**fetch, "content_types": ["text/html"]} if fetch else {})
    resumed = load_config(CrawlConfig, base=read_effective_config(tmp_path), fetch={"politeness": None})
    assert resumed.fetch.model_fields_set == set(fetch)


def test_topic_init_from_html_folders(tmp_path):
    from focuscrawl.cli.main import app

    pos, neg = tmp_path / "pos", tmp_path / "neg"
    pos.mkdir()
    neg.mkdir()
    (pos / "a.html").write_text("<html><title>Robins</title><body><p>birds nest and sing</p>"
                                "<script>x()</script></body></html>")
    (pos / "b.txt").write_text("feathers and wings")
    (neg / "c.htm").write_text("<html><body>railway timetables</body></html>")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://birds.test/b0\n# comment\n")
    result = CliRunner().invoke(app, ["topic", "init", str(tmp_path / "birds"), "--positive", str(pos), "--negative",
                                      str(neg), "--keywords", "bird, nest", "--seeds", str(seeds)])
    assert result.exit_code == 0, result.output
    topic = load_topic_dir(tmp_path / "birds")
    assert topic.name == "birds" and topic.keywords == ["bird", "nest"] and topic.seeds == ["http://birds.test/b0"]
    assert topic.example_labels == [1, 1, 0]
    assert "Robins" in topic.example_texts[0] and "x()" not in topic.example_texts[0]
    again = CliRunner().invoke(app, ["topic", "init", str(tmp_path / "birds"), "--positive", str(pos),
                                     "--negative", str(neg)])
    assert again.exit_code != 0  # will not overwrite without --overwrite


def test_topic_init_from_web_and_crawl_guards(tiny_web, tmp_path):
    topic = init_from_web(tmp_path / "topic", tiny_web, "topic.birds", seeds=1)
    loaded = load_topic_dir(tmp_path / "topic")
    assert loaded.name == "topic.birds" and loaded.seeds == topic.seeds and len(loaded.seeds) == 1
    assert sorted(loaded.example_labels) == sorted(topic.example_labels)
    run = tmp_path / "run"
    settings = dict(topic=tmp_path / "topic", out=run, web=str(tiny_web), strategy="bfs", progress="none", plot=False,
                    seeds=["http://birds.test/b0"])
    summary = Crawler(budget=5, **settings).crawl()
    assert (summary.steps, summary.stopped) == (5, "budget")
    assert (run / "config.yml").exists() and (run / "harvest.csv").exists()
    # Same folder, different crawl: refused rather than silently mixed, and the folder left as it was.
    report = (run / "summary.json").read_text()
    with pytest.raises(ResumeError, match="strategy"):
        Crawler(budget=10, **{**settings, "strategy": "random"}).crawl()
    assert (run / "summary.json").read_text() == report
    # A larger budget continues the crawl.
    assert Crawler(budget=12, **settings).crawl().steps == 12
    assert Crawler.resume(run, budget=14).crawl().steps == 14


def test_folder_lock(tiny_web, tmp_path):
    init_from_web(tmp_path / "topic", tiny_web, "topic.birds", seeds=1)
    with RunFolder(tmp_path / "run"):
        with pytest.raises(ResumeError, match="another crawl"):
            Crawler(topic=tmp_path / "topic", out=tmp_path / "run", web=str(tiny_web), progress="none").crawl()


def test_pages_jsonl_carries_the_strategy_score(tiny_web, tmp_path):
    init_from_web(tmp_path / "topic", tiny_web, "topic.birds", seeds=1)
    run = tmp_path / "run"
    Crawler(budget=8, topic=tmp_path / "topic", out=run, web=str(tiny_web), strategy="best-first", progress="none",
            plot=False).crawl()
    import json

    records = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
    scored = [r["score"] for r in records if r["score"] is not None]
    # Seeds are fetched before any link is scored; every page after them was chosen for its priority.
    assert len(scored) >= len(records) - 1 and all(0.0 <= s <= 1.0 for s in scored)
