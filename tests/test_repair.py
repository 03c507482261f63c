"""A damaged state store: one clear line, then --repair keeps the readable prefix and the crawl resumes."""

from __future__ import annotations

import json
import os

import pytest

from focuscrawl.bench.protocol import init_from_web
from focuscrawl.cli.main import main
from focuscrawl.crawl import Crawler
from focuscrawl.storage.failures import StoreDamagedError
from focuscrawl.storage.repair import repair_run_folder
from focuscrawl.webs import embedded_web_dir


@pytest.mark.slow
def test_damaged_store_is_refused_then_repaired_and_resumed(tmp_path):
    init_from_web(tmp_path / "topic", embedded_web_dir(), "subject.Science.Biology", seeds=1)
    settings = dict(topic=tmp_path / "topic", out=tmp_path / "run", web="embedded", strategy="bfs", progress="none",
                    plot=False, checkpoint_every=0)
    Crawler(budget=60, **settings).crawl()
    store = tmp_path / "run" / "state.sqlite"
    with open(store, "r+b") as fh:  # a disk error in the middle of the file
        fh.seek(int(store.stat().st_size * 0.6))
        fh.write(os.urandom(8192))
    with pytest.raises(StoreDamagedError, match="--repair"):
        Crawler(budget=80, **settings).crawl()
    report = repair_run_folder(tmp_path / "run")
    assert 0 < report.steps_kept < 60 and report.steps_kept + report.steps_lost <= 60
    assert (tmp_path / "run" / report.set_aside.split("/")[-1] / "state.sqlite").exists()
    summary = Crawler(budget=80, **settings).crawl()
    assert summary.steps == 80 and summary.resumed_steps == report.steps_kept
    pages = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    assert [p["step"] for p in pages] == list(range(80)) and len({p["url"] for p in pages}) == 80


def test_repair_of_a_folder_without_a_crawl_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing to repair"):
        repair_run_folder(tmp_path)


@pytest.mark.slow
def test_crawl_repair_flag_salvages_and_resumes(tmp_path, capsys):
    init_from_web(tmp_path / "topic", embedded_web_dir(), "subject.Science.Biology", seeds=1)
    args = ["crawl", "-o", str(tmp_path / "run"), "--topic", str(tmp_path / "topic"), "--web", "embedded",
            "--strategy", "bfs", "--progress", "none", "-s", "plot=false", "-s", "checkpoint_every=0"]
    assert main([*args, "--budget", "60"]) == 0
    store = tmp_path / "run" / "state.sqlite"
    with open(store, "r+b") as fh:
        fh.seek(int(store.stat().st_size * 0.6))
        fh.write(os.urandom(8192))
    capsys.readouterr()
    assert main([*args, "--budget", "80"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--repair" in err and "Traceback" not in err
    assert main([*args, "--budget", "80", "--repair"]) == 0
    assert "step(s) kept" in capsys.readouterr().err
    pages = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    assert [p["step"] for p in pages] == list(range(80))
    # a healthy folder: nothing to repair, the crawl just resumes
    assert main([*args, "--budget", "90", "--repair"]) == 0
    assert "nothing to repair" in capsys.readouterr().err
