"""Without the neural extra (no torch), lexical strategies crawl and TRES says which extra it needs."""

from __future__ import annotations

import importlib

import pytest
from typer.testing import CliRunner

from focuscrawl.cli.main import app
from focuscrawl import extras


@pytest.fixture()
def no_torch(monkeypatch):
    real = importlib.import_module

    def without_neural(name, *args, **kwargs):
        if name.split(".")[0] in ("torch", "model2vec"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(extras.importlib, "import_module", without_neural)


def test_without_torch_a_lexical_strategy_benches_and_tres_names_the_extra(no_torch, tmp_path):
    runner = CliRunner()
    ok = runner.invoke(app, ["bench", "--strategy", "adaptive,best-first", "--budget", "20", "--runs", "1",
                             "--out", str(tmp_path / "a"), "--quiet"])
    assert ok.exit_code == 0, ok.output
    needs = runner.invoke(app, ["bench", "--strategy", "tres", "--budget", "20", "--runs", "1",
                                "--out", str(tmp_path / "b"), "--quiet"])
    assert needs.exit_code == 2
    assert "needs the 'neural' extra (pip install 'focuscrawl[neural]')" in needs.output
    assert len(needs.output.strip().splitlines()) == 1 and "Traceback" not in needs.output
