"""The fast lane (``pytest -m "not slow"``, docs/interfaces.md, "Tests") leaves out every test that starts or kills
processes or drives a browser: a test that reaches such code, itself or through its module's helpers and
fixtures, is marked ``slow`` (by a decorator or the module's ``pytestmark``). Processes the product starts
(``bench --jobs 2``, a render) are not seen here; such tests are marked by hand."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# names whose use means another process (or a browser, or Ray's workers) is started or killed
SPAWNING_NAMES = {"subprocess", "multiprocessing", "ProcessPoolExecutor", "ray", "DistributedCrawler", "CHROMIUM",
                  "Renderer", "Popen"}
SPAWNING_ATTRIBUTES = {("os", "fork"), ("os", "kill"), ("os", "killpg"), ("signal", "SIGKILL"),
                       ("sys", "executable")}


def _is_slow_mark(node: ast.expr) -> bool:
    """``pytest.mark.slow``, or a ``pytest.param(..., marks=...)``'s or a list's element that is."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_is_slow_mark(e) for e in node.elts)
    return isinstance(node, ast.Attribute) and node.attr == "slow" and ast.unparse(node) == "pytest.mark.slow"


def _uses(node: ast.AST) -> tuple[bool, set[str]]:
    """Whether ``node`` uses a spawning name itself, and the bare names it mentions (helpers it may call)."""
    spawning, names = False, set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
            spawning |= sub.id in SPAWNING_NAMES
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
            spawning |= (sub.value.id, sub.attr) in SPAWNING_ATTRIBUTES or sub.value.id in SPAWNING_NAMES
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)  # a fixture by its parameter's name
    return spawning, names


def unmarked_spawning_tests(source: str) -> list[str]:
    tree = ast.parse(source)
    if any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)
           and _is_slow_mark(n.value) for n in tree.body):
        return []
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    direct = {name: _uses(node) for name, node in defs.items()}
    spawning = {name for name, (uses, _) in direct.items() if uses}
    grew = True
    while grew:  # through the module's helpers, fixtures and classes, however deep
        before = len(spawning)
        spawning |= {name for name, (_, names) in direct.items() if names & spawning}
        grew = len(spawning) > before
    found = []
    for name, node in defs.items():
        if not name.startswith("test") or name not in spawning or isinstance(node, ast.ClassDef):
            continue
        if not any(_is_slow_mark(d) for d in node.decorator_list):
            found.append(name)
    return found


def test_tests_that_start_or_kill_processes_are_marked_slow():
    unmarked = {path.name: names for path in sorted(TESTS.glob("test_*.py"))
                if (names := unmarked_spawning_tests(path.read_text()))}
    assert not unmarked, f"mark these @pytest.mark.slow (they start processes or a browser): {unmarked}"


def test_the_rule_bites():
    source = '''
import subprocess
import pytest

def _run():
    return subprocess.run(["true"])

@pytest.fixture()
def served():
    return _run()

def test_plain():
    assert 1

def test_through_a_fixture(served):
    pass

@pytest.mark.slow
def test_marked(served):
    pass
'''
    assert unmarked_spawning_tests(source) == ["test_through_a_fixture"]
    assert unmarked_spawning_tests("import pytest\npytestmark = pytest.mark.slow\n" + source) == []
