"""The code keeps the project's style (pyproject.toml, ``[tool.ruff]``): ruff, run over the source, the tests and
the benchmarks, finds nothing. A lint step of its own in CI would be a second command next to the README's; here it
is part of the one test command."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_ruff_finds_nothing():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is not installed: it comes with the test extra (pip install -e '.[test]')"
    found = subprocess.run([ruff, "check", "--output-format", "concise", "src", "tests", "benchmarks"], cwd=ROOT,
                           capture_output=True, text=True)
    assert found.returncode == 0, found.stdout + found.stderr
