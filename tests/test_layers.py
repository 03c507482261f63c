"""Imports point downwards only (docs/interfaces.md, "Layers"), no strategy family imports another, and no
import dodges a cycle.

Every ``import`` of a focuscrawl module is read from the source, wherever it stands (module level, inside a
function, under TYPE_CHECKING), so a late import cannot hide an upward dependency. Late imports are fine
for a reason of their own (torch and matplotlib load only when used), so the test does not forbid them;
it forbids what a late import would be hiding: the module graph, late imports included, has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import focuscrawl

SRC = Path(focuscrawl.__file__).parent

# Bottom to top. Packages in one tuple are a layer; those in an INDEPENDENT pair never import each other.
LAYERS = [
    ("focuscrawl", "focuscrawl.types", "focuscrawl.urls", "focuscrawl.policy", "focuscrawl.user_files"),  # the core
    ("focuscrawl.html",),  # the one HTML reader and writer: the HTTP client's pages and the offline webs' alike
    ("focuscrawl.http", "focuscrawl.webs"),  # the HTTP client | the offline webs, their builders and their server
    ("focuscrawl.topic",),
    ("focuscrawl.engine", "focuscrawl.strategies"),
    ("focuscrawl.config", "focuscrawl.builder", "focuscrawl.storage"),
    ("focuscrawl.bench", "focuscrawl.crawl", "focuscrawl.scrapy"),  # scrapy: the scheduler of the scrapy extra
    ("focuscrawl.gym",),  # the Gymnasium environment builds its topics as bench does; only its entry point names it
    ("focuscrawl.dashboard",),  # reads run folders and bench outputs; the CLI starts it
    ("focuscrawl.cli",),
]
INDEPENDENT = [("focuscrawl.http", "focuscrawl.webs"), ("focuscrawl.engine", "focuscrawl.strategies"),
               ("focuscrawl.bench", "focuscrawl.crawl"),
               ("focuscrawl.storage", "focuscrawl.builder"), ("focuscrawl.bench", "focuscrawl.scrapy")]
# Inside strategies/, each module or package directly under it is a family (adaptive, gouriten, tres, ...) that
# imports no other family: what two families share lives in one of these, below every family.
STRATEGIES = "focuscrawl.strategies"
SHARED_BY_FAMILIES = ("focuscrawl.strategies.registry", "focuscrawl.strategies.frontier")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def home(module: str) -> str:
    """The LAYERS entry a module belongs to (longest matching prefix)."""
    best = ""
    for layer in LAYERS:
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best = prefix
    return best


def level(module: str) -> int:
    prefix = home(module)
    return next(i for i, layer in enumerate(LAYERS) if prefix in layer)


def imports(module: str) -> set[str]:
    """The focuscrawl modules ``module`` imports anywhere in its source (``from a import b`` counts a.b when
    b is a module)."""
    tree = ast.parse(MODULES[module].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module
                     for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "focuscrawl" and name != module)
    return found


def test_every_module_has_a_layer():
    assert all(home(m) for m in MODULES), [m for m in MODULES if not home(m)]


def test_imports_point_downwards():
    upward = []
    for module in MODULES:
        for target in imports(module):
            if level(target) > level(module):
                upward.append(f"{module} -> {target}")
            for a, b in INDEPENDENT:
                if {home(module), home(target)} == {a, b}:
                    upward.append(f"{module} -> {target} ({a} and {b} are independent)")
    assert not upward, "\n".join(upward)


def family(module: str) -> str | None:
    """The strategy family ``module`` belongs to (``focuscrawl.strategies.gouriten`` for its estimators), or None
    outside the families: another layer, the strategies package itself, the registry, the shared frontier code."""
    if not module.startswith(STRATEGIES + "."):
        return None
    top = ".".join(module.split(".")[:3])
    return None if top in SHARED_BY_FAMILIES else top


def cross_family_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports from one strategy family, or from the code shared by families, into another family's modules."""
    crossing = []
    for module, targets in graph.items():
        shared = any(module == s or module.startswith(s + ".") for s in SHARED_BY_FAMILIES)
        for target in targets:
            if family(target) is not None and (shared or family(module) not in (None, family(target))):
                crossing.append(f"{module} -> {target}")
    return sorted(crossing)


def test_no_strategy_family_reads_another():
    graph = {m: imports(m) for m in MODULES}
    assert not cross_family_imports(graph), "\n".join(cross_family_imports(graph))
    # the rule bites: adaptive reading gouriten's estimators, or the shared graph reading gouriten, would fail
    s = STRATEGIES
    wrong = {f"{s}.adaptive": {f"{s}.gouriten.estimators"}, f"{s}.frontier.graph": {f"{s}.gouriten"},
             f"{s}.tres.agent": {f"{s}.tres.ddqn", f"{s}.registry", f"{s}.frontier.ranking"},
             s: {f"{s}.tres", f"{s}.adaptive"}}
    assert cross_family_imports(wrong) == [f"{s}.adaptive -> {s}.gouriten.estimators",
                                           f"{s}.frontier.graph -> {s}.gouriten"]


def test_no_import_cycle_even_through_late_imports():
    graph = {m: {t for t in imports(m) if t in MODULES} for m in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)
