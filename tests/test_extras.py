"""Without the neural extra (no torch), lexical strategies crawl and TRES says which extra it needs."""

from __future__ import annotations

import importlib

import pytest
from typer.testing import CliRunner

from focuscrawl import extras
from focuscrawl.cli.main import app


def without(monkeypatch, *packages: str) -> None:
    """``packages`` cannot be imported through ``focuscrawl.extras`` for the rest of the test."""
    real = importlib.import_module

    def import_module(name, *args, **kwargs):
        if name.split(".")[0] in packages:
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(extras.importlib, "import_module", import_module)


@pytest.fixture()
def no_torch(monkeypatch):
    without(monkeypatch, "torch", "model2vec")


@pytest.mark.slow
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


def test_without_the_export_extra_export_names_it(monkeypatch, tmp_path):
    from focuscrawl.storage import StateStore

    without(monkeypatch, "pyarrow", "trafilatura", "py3langid")
    store = StateStore(tmp_path / "state.sqlite")  # a run folder whose crawl has just begun
    store.initialise(identity={})
    store.close()
    result = CliRunner().invoke(app, ["export", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "needs the 'export' extra (pip install 'focuscrawl[export]')" in result.output
    assert len(result.output.strip().splitlines()) == 1
