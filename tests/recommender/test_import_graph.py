"""The package's import graph: no module of ``recommender`` imports another in a cycle, and
the layers point one way (``matching`` never imports ``recommender``; neither imports the
faces).

Every ``import`` statement counts, also those inside functions: a lazy import hides a
cycle from the interpreter, not from a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _modules(package: str) -> dict[str, Path]:
    modules = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(path: Path, module: str, known: dict[str, Path]) -> set[str]:
    """Modules of ``known`` that ``path`` imports (``from a import b`` counts as ``a.b``
    when that is a module, else ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            if name in known:
                found.add(name)
                break
            parent = name.rpartition(".")[0]
            if parent in known:
                found.add(parent)
                break
    found.discard(module)
    return found


def _graph(package: str) -> dict[str, set[str]]:
    known = _modules(package)
    return {module: _imports(path, module, known) for module, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_recommender_has_no_import_cycle() -> None:
    graph = _graph("recommender")
    assert "recommender.affinity.model" in graph  # the walk found the package
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("matching", ("recommender", "api", "services", "cli")),
        ("recommender", ("api", "services", "cli")),
    ],
)
def test_lower_layers_never_import_higher_ones(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = []
    for module, path in _modules(package).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            offenders += [
                f"{module} imports {name}" for name in names if name.split(".")[0] in forbidden
            ]
    assert offenders == []
