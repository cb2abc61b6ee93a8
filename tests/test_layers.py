"""The layers of the code point one way, and the faces stay thin.

- ``matching`` imports nothing of ``recommender``, ``reviewer_recommender`` or ``api``;
  ``recommender`` nothing of ``reviewer_recommender`` or ``api``;
- inside ``reviewer_recommender`` only ``cli/server.py`` (which starts the server) imports
  ``api``; nothing below the faces imports FastAPI or Starlette, or the command line;
- a router imports neither SQLAlchemy nor another router (queries live in the services and
  storage); ``api`` neither scores nor builds or solves a matching problem itself, and stays
  small;
- the project installs no top-level package beyond its four;
- no package has an import cycle.

Every import counts, also one inside a function, under ``TYPE_CHECKING``, through
``importlib.import_module("...")``, or reached as an attribute of an imported module
(``import matching`` then ``matching.solvers``): a name re-exported by a package is followed
to the module that defines it. Each rule is checked on a small made-up tree first, so that a
checker that finds nothing is seen to be able to find something.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from setuptools import find_namespace_packages, find_packages

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("recommender", "matching", "reviewer_recommender", "api")
WEB_FRAMEWORKS = ("fastapi", "starlette")
API_MAX_LINES = 7_000


# ---- reading the imports -------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    name: str  # what it names, dotted: a module, or a module and an attribute
    bound: str = ""  # the name a ``from ... import`` statement binds (its re-exports)
    target: str = ""  # ``name`` followed to the module that defines it (filled by resolve)

    def __str__(self) -> str:
        seen = self.target if self.target and self.target != self.name else ""
        return f"{self.module}:{self.line} imports {self.name}" + (f" ({seen})" if seen else "")


class Tree:
    """The Python modules of some top-level packages under ``root``, and their imports."""

    def __init__(self, root: Path, packages: Iterable[str]):
        self.root = root
        self.files: dict[str, Path] = {}
        for package in packages:
            for path in sorted((root / package).rglob("*.py")):
                parts = list(path.relative_to(root).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                self.files[".".join(parts)] = path
        self._parsed: dict[str, list[Import]] = {}

    def modules(self, prefix: str) -> list[str]:
        return [m for m in self.files if m == prefix or m.startswith(prefix + ".")]

    def raw_imports(self, module: str) -> list[Import]:
        """What ``module`` names in import statements, ``import_module`` calls and attribute
        chains on imported modules, with relative imports made absolute."""
        if module not in self.files:
            return []
        if module not in self._parsed:
            self._parsed[module] = list(self._read(module))
        return self._parsed[module]

    def _read(self, module: str) -> Iterator[Import]:
        path = self.files[module]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        aliases: dict[str, str] = {}  # local name -> module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(module, node.lineno, alias.name)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        aliases[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    if alias.name == "*":
                        yield Import(module, node.lineno, base)
                        continue
                    name = f"{base}.{alias.name}"
                    yield Import(module, node.lineno, name, bound=alias.asname or alias.name)
                    if name in self.files:
                        aliases[alias.asname or alias.name] = name
            elif (
                isinstance(node, ast.Call)
                and _called_name(node.func) in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield Import(module, node.lineno, node.args[0].value)
        inner = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                chain = _attribute_chain(node)
                if len(chain) > 1 and chain[0] in aliases:
                    yield Import(module, node.lineno, ".".join([aliases[chain[0]], *chain[1:]]))

    def home(self, name: str) -> str:
        """The longest prefix of ``name`` that is a module of the tree ("" if none)."""
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in self.files:
                return candidate
        return ""

    def resolve(self, name: str, depth: int = 0) -> str:
        """``name`` with a re-exported attribute followed to its defining module:
        ``recommender.affinity.AffinityModel`` -> ``recommender.affinity.model.AffinityModel``.
        Names outside the tree are returned as they are."""
        home = self.home(name)
        if not home or home == name or depth > 20:
            return name
        rest = name[len(home) + 1 :]
        attribute, _, tail = rest.partition(".")
        for item in self.raw_imports(home):
            if item.bound == attribute and self.home(item.name) != home:
                followed = self.resolve(item.name, depth + 1)
                return f"{followed}.{tail}" if tail else followed
        return name

    def imports(self, module: str) -> list[Import]:
        return [
            Import(item.module, item.line, item.name, item.bound, self.resolve(item.name))
            for item in self.raw_imports(module)
        ]


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _attribute_chain(node: ast.Attribute) -> list[str]:
    chain: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        chain.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return []
    chain.append(current.id)
    return chain[::-1]


def _listing(found: Iterable[Import]) -> list[str]:
    return [str(i) for i in sorted(set(found), key=lambda i: (i.module, i.line, i.name))]


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


# ---- the rules -----------------------------------------------------------------------------


def forbidden_imports(
    tree: Tree,
    scope: str,
    forbidden: Iterable[str],
    *,
    except_modules: Iterable[str] = (),
) -> list[str]:
    """Imports of modules under ``scope`` (but not under ``except_modules``) that name, or
    resolve to, anything under ``forbidden``."""
    forbidden = tuple(forbidden)
    exempt = tuple(except_modules)
    offenders: list[Import] = []
    for module in tree.modules(scope):
        if _within(module, exempt):
            continue
        for item in tree.imports(module):
            if _within(item.name, forbidden) or _within(item.target, forbidden):
                offenders.append(item)
    return _listing(offenders)


def routers_importing_routers(tree: Tree, routers: str = "api.routers") -> list[str]:
    offenders: list[Import] = []
    for module in tree.modules(routers):
        if module == routers:
            continue
        for item in tree.imports(module):
            for name in (item.name, item.target):
                home = tree.home(name)
                if _within(home, (routers,)) and home not in (routers, module):
                    offenders.append(item)
                    break
    return _listing(offenders)


def import_graph(tree: Tree, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (as the interpreter would load them:
    ``from a import b`` is ``a.b`` when that is a module, else ``a``)."""
    graph: dict[str, set[str]] = {}
    for module in tree.modules(package):
        targets = set()
        for item in tree.raw_imports(module):
            home = tree.home(item.name)
            if home and _within(home, (package,)):
                targets.add(home)
        targets.discard(module)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
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


def python_lines(tree: Tree, package: str) -> int:
    return sum(
        len(tree.files[m].read_text(encoding="utf-8").splitlines()) for m in tree.modules(package)
    )


def installed_top_level(root: Path) -> set[str]:
    """Top-level names ``pyproject.toml`` installs (packages and single modules)."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config.get("tool", {}).get("setuptools", {})
    names = {m.split(".")[0] for m in setuptools.get("py-modules", [])}
    packages = setuptools.get("packages", {"find": {}})
    if isinstance(packages, list):
        return names | {p.split(".")[0] for p in packages}
    find = packages.get("find", {})
    finder = find_namespace_packages if find.get("namespaces", True) else find_packages
    found = finder(
        where=str(root / find.get("where", ["."])[0]),
        include=find.get("include", ["*"]),
        exclude=find.get("exclude", []),
    )
    return names | {p.split(".")[0] for p in found}


# ---- the project ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project() -> Tree:
    tree = Tree(ROOT, PACKAGES)
    for module in ("matching.problem", "recommender.affinity.model", "api.routers.jobs"):
        assert module in tree.files  # the walk found the packages
    return tree


LAYERS = [
    ("matching", ("recommender", "reviewer_recommender", "api", *WEB_FRAMEWORKS), ()),
    ("recommender", ("reviewer_recommender", "api", *WEB_FRAMEWORKS), ()),
    ("reviewer_recommender", ("api",), ("reviewer_recommender.cli.server",)),
    (
        "reviewer_recommender",
        (*WEB_FRAMEWORKS, "reviewer_recommender.cli"),
        ("reviewer_recommender.cli",),
    ),
]


@pytest.mark.parametrize(
    ("scope", "forbidden", "allowed_in"), LAYERS, ids=[f"{s}-{f[0]}" for s, f, _ in LAYERS]
)
def test_lower_layers_never_import_higher_ones(
    project: Tree, scope: str, forbidden: tuple[str, ...], allowed_in: tuple[str, ...]
) -> None:
    found = forbidden_imports(project, scope, forbidden, except_modules=allowed_in)
    assert not found, "\n".join(found)


def test_only_the_server_command_imports_the_http_face(project: Tree) -> None:
    # the exemption above is used, so it is still needed: the CLI starts the server
    found = forbidden_imports(project, "reviewer_recommender.cli.server", ("api",))
    assert found, "reviewer_recommender.cli.server no longer imports api: drop its exemption"


def test_routers_build_no_queries(project: Tree) -> None:
    found = forbidden_imports(project, "api.routers", ("sqlalchemy",))
    assert not found, "\n".join(found)


def test_routers_never_import_each_other(project: Tree) -> None:
    found = routers_importing_routers(project)
    assert not found, "\n".join(found)


SCORING_AND_SOLVING = (
    "recommender.affinity.model",
    "recommender.affinity.blockwise",
    "recommender.affinity.block_plan",
    "recommender.affinity.block_scoring",
    "recommender.profiles",
    "matching.problem",
    "matching.solvers",
    "matching.solve",
)


def test_the_http_face_neither_scores_nor_solves(project: Tree) -> None:
    found = forbidden_imports(project, "api", SCORING_AND_SOLVING)
    assert not found, "\n".join(found)


def test_the_http_face_stays_small(project: Tree) -> None:
    lines = python_lines(project, "api")
    assert 1_000 < lines <= API_MAX_LINES, f"api/ holds {lines} lines of Python"


def test_only_the_projects_packages_are_installed() -> None:
    assert installed_top_level(ROOT) == set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(project: Tree, package: str) -> None:
    graph = import_graph(project, package)
    assert len(graph) > 3
    assert cycles(graph) == []


# ---- the checkers find what they look for --------------------------------------------------


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def bad_tree(tmp_path: Path) -> Tree:
    """A made-up project that breaks every rule once."""
    _write(
        tmp_path,
        {
            "low/__init__.py": "from low.model import Model\n",
            "low/model.py": "class Model: ...\n",
            "low/quiet.py": "def f():\n    import high.face  # lazy, still an import\n",
            "low/tricky.py": (
                "import importlib\nimportlib.import_module('high')\n"
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import fastapi\n"
            ),
            "high/__init__.py": "",
            "high/face.py": "import low\nx = low.model.Model\n",
            "high/reexport.py": "from low import Model\n",
            "high/routers/__init__.py": "",
            "high/routers/a.py": "from sqlalchemy import select\nfrom . import b\n",
            "high/routers/b.py": "from high.routers.a import x\n",
            "high/routers/c.py": "import high.routers\nhigh.routers.a.x\n",
            "pkg/__init__.py": "from pkg import one\n",
            "pkg/one.py": "from pkg.two import y\n",
            "pkg/two.py": "from .one import z\n",
        },
    )
    return Tree(tmp_path, ("low", "high", "pkg"))


def test_the_layer_check_finds_every_kind_of_import(bad_tree: Tree) -> None:
    found = forbidden_imports(bad_tree, "low", ("high", "fastapi"))
    assert found == [
        "low.quiet:2 imports high.face",
        "low.tricky:2 imports high",
        "low.tricky:5 imports fastapi",
    ]
    assert forbidden_imports(bad_tree, "low", ("high",), except_modules=("low.quiet",)) == [
        "low.tricky:2 imports high"
    ]


def test_the_layer_check_follows_attributes_and_re_exports(bad_tree: Tree) -> None:
    assert forbidden_imports(bad_tree, "high", ("low.model",)) == [
        "high.face:2 imports low.model.Model",
        "high.reexport:1 imports low.Model (low.model.Model)",
    ]


def test_the_router_checks_find_queries_and_router_imports(bad_tree: Tree) -> None:
    assert forbidden_imports(bad_tree, "high.routers", ("sqlalchemy",)) == [
        "high.routers.a:1 imports sqlalchemy.select"
    ]
    assert routers_importing_routers(bad_tree, "high.routers") == [
        "high.routers.a:2 imports high.routers.b",
        "high.routers.b:1 imports high.routers.a.x",
        "high.routers.c:2 imports high.routers.a.x",
    ]


def test_the_graph_sees_relative_and_package_imports(bad_tree: Tree) -> None:
    graph = import_graph(bad_tree, "pkg")
    assert graph == {"pkg": {"pkg.one"}, "pkg.one": {"pkg.two"}, "pkg.two": {"pkg.one"}}
    assert cycles(graph) == [["pkg.one", "pkg.two"]]


def test_the_size_check_counts_lines(bad_tree: Tree) -> None:
    assert python_lines(bad_tree, "high.routers") == 0 + 2 + 1 + 2


def test_the_install_check_sees_a_generic_top_level_package(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pyproject.toml": (
                '[tool.setuptools.packages.find]\ninclude = ["mine*", "services*"]\n'
            ),
            "mine/__init__.py": "",
            "mine/sub/__init__.py": "",
            "services/__init__.py": "",
            "tests/__init__.py": "",
        },
    )
    assert installed_top_level(tmp_path) == {"mine", "services"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools]\npy-modules = ["cli"]\npackages = ["mine"]\n', encoding="utf-8"
    )
    assert installed_top_level(tmp_path) == {"mine", "cli"}
