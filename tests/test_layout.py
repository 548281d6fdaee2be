"""The package layout keeps its rules: few top-level modules, one-way imports between the layers, no private
names crossing modules, click only in the CLI, and the documented import paths keep working."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mem0_hygiene"
LAYERS_ABOVE_STORES = ("actions", "auditing", "memory", "cli", "render", "target", "maintenance", "demo")


def modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(PACKAGE.rglob("*.py"))]


def imported(path: Path, tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(absolute module name, names) for every ``from X import names`` in the file, relative ones resolved."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if package[-1] == "__init__":
        package = package[:-1]
    else:
        package = package[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            out.append((name, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names)
    return out


def test_at_most_fifteen_modules_sit_directly_in_the_package():
    top = [p.name for p in PACKAGE.glob("*.py")]
    assert len(top) <= 15, sorted(top)


def test_every_module_and_package_starts_with_a_docstring():
    missing = [str(path.relative_to(PACKAGE)) for path, tree in modules() if not ast.get_docstring(tree)]
    assert missing == []


def test_the_stores_layer_imports_nothing_above_it():
    bad = []
    for path, tree in modules():
        if "stores" not in path.relative_to(PACKAGE).parts:
            continue
        for name, _names in imported(path, tree):
            parts = name.split(".")
            if parts[0] == "mem0_hygiene" and len(parts) > 1 and parts[1] in LAYERS_ABOVE_STORES:
                bad.append((path.name, name))
    assert bad == []


def test_the_scanners_import_nothing_else_of_the_package():
    bad = []
    for path, tree in modules():
        parts = path.relative_to(PACKAGE).parts
        if parts[0] != "scan":
            continue
        for name, _names in imported(path, tree):
            if name.startswith("mem0_hygiene") and not name.startswith("mem0_hygiene.scan"):
                bad.append((path.name, name))
    assert bad == []


def test_only_the_cli_imports_click():
    bad = [
        str(path.relative_to(PACKAGE))
        for path, tree in modules()
        if "cli" not in path.relative_to(PACKAGE).parts
        and any(name == "click" or name.startswith("click.") for name, _ in imported(path, tree))
    ]
    assert bad == []


def test_no_private_name_is_imported_from_another_module():
    bad = []
    for path, tree in modules():
        for name, names in imported(path, tree):
            if name.startswith("mem0_hygiene"):
                bad += [
                    (str(path.relative_to(PACKAGE)), name, n)
                    for n in names
                    if n.startswith("_") and not n.startswith("__")
                ]
    assert bad == []


def test_no_module_shares_a_public_function_name_of_the_package():
    import mem0_hygiene

    names = set(mem0_hygiene.__all__)
    clashes = [p.stem for p in PACKAGE.glob("*.py") if p.stem in names]
    clashes += [p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name in names]
    assert clashes == []


def test_the_documented_import_paths_still_work():
    from mem0_hygiene import maintenance
    from mem0_hygiene.render import JSON_SCHEMA

    assert callable(maintenance.prune) and callable(maintenance.digest) and JSON_SCHEMA["type"] == "object"
    for name, attr in (
        ("mem0_hygiene.local_models", "minilm_config"),
        ("mem0_hygiene.offline", "OfflineEmbedding"),
        ("mem0_hygiene.demo", "build_demo"),
    ):
        assert hasattr(importlib.import_module(name), attr), name


# ------------------------------------------------------------------------------------------- the import graph
#
# Every import between two modules of the package, resolved (relative imports, ``from package import module``),
# of one of three kinds: "module" (runs when the importing module is imported), "function" (inside a function or
# method: runs when it is called) and "type" (under ``if TYPE_CHECKING:``: never runs). Module-level and
# function-level imports both count for the cycle and layer tests below. Type-only imports do not: they never
# execute, and a renderer naming the result type it draws (``report: Report``) while the result's ``__rich__``
# imports that renderer is how "results render themselves through render/" reads with annotations.
# An import names the module it imports, not the packages above it (which Python also runs first): a package's
# ``__init__`` importing its own modules is not a circle.

PENDING: dict[tuple[str, str], str] = {}
"""Imports that still point up or close a circle, each with what removes it. The tests below fail on any other,
and on an entry here that no longer exists (remove it then)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement under ``node`` with its kind ("module", "function" or "type")."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, kind
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield from _imports(ast.Module(body=[stmt], type_ignores=[]), "type")
            for stmt in child.orelse:
                yield from _imports(ast.Module(body=[stmt], type_ignores=[]), kind)
        else:
            inner = (
                "function"
                if kind == "module" and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                else kind
            )
            yield from _imports(child, inner)


def import_graph() -> dict[tuple[str, str], set[str]]:
    """(importer, imported) -> the kinds of import between them, for every pair of modules of the package."""
    paths = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    edges: dict[tuple[str, str], set[str]] = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node, kind in _imports(ast.parse(path.read_text()), "module"):
            if isinstance(node, ast.ImportFrom):
                base = (
                    ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
                    if node.level
                    else (node.module or "")
                )
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target in paths and target != name:
                    edges.setdefault((name, target), set()).add(kind)
    return edges


def runtime_edges() -> set[tuple[str, str]]:
    """The imports that run (module- and function-level), without the :data:`PENDING` ones."""
    return {pair for pair, kinds in import_graph().items() if kinds & {"module", "function"}} - set(PENDING)


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (strongly connected components of two or more)."""
    graph: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = [stack.pop()]
            while group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_sees_the_kinds_of_import():
    edges = import_graph()
    assert "module" in edges[("mem0_hygiene.render.terminal", "mem0_hygiene.report.findings")]
    assert edges[("mem0_hygiene.report", "mem0_hygiene.render.terminal")] == {"function"}
    assert edges[("mem0_hygiene.render.terminal", "mem0_hygiene.report")] == {"type"}
    assert ("mem0_hygiene.cli", "mem0_hygiene.cli.audit") in edges  # ``from . import audit``: the module
    assert cycles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]


def test_no_modules_of_the_package_import_each_other_in_a_circle():
    assert cycles(runtime_edges()) == []


def test_every_pending_import_still_exists():
    edges = import_graph()
    assert [pair for pair in PENDING if pair not in edges] == []


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


UPWARD = {
    "display": {"*"},  # the text and table toolkit every layer shows results with: only scan/ below it
    "report": {"actions", "auditing", "cli", "memory", "stores", "target", "config"},
    "config": {"actions", "auditing", "cli", "memory", "render", "target", "stores"},
    "memory": {"actions", "auditing", "cli", "render", "target"},
    "render": {"actions", "auditing", "cli", "memory", "target"},
}
"""What each layer never imports (modules or packages directly in mem0_hygiene). ``render/`` draws what the layers
above it hand over (a Report, an Inspection) and imports none of them; ``memory/`` (the drop-in) sits below the
actions, the audit and the target that opens it; the settings below everything that reads them."""

ALLOWED_BELOW_DISPLAY = {"display", "scan"}


def test_no_layer_imports_one_above_it():
    bad = []
    for a, b in sorted(runtime_edges()):
        forbidden = UPWARD.get(_layer(a), set())
        if _layer(b) != _layer(a) and (
            _layer(b) in forbidden or ("*" in forbidden and _layer(b) not in ALLOWED_BELOW_DISPLAY)
        ):
            bad.append((a, b))
    assert bad == []


def test_nothing_in_the_package_imports_its_init():
    """``__version__`` and every other name a module needs come from the module that defines it; the package's
    ``__init__`` names the public objects of every layer."""
    assert sorted(a for a, b in import_graph() if b == "mem0_hygiene") == []


def test_the_known_upward_imports_are_gone():
    """The ones issue 31 named (the rest are in :data:`PENDING`), checked by name."""
    edges = runtime_edges()
    gone = [
        ("mem0_hygiene.memory.pruning", "mem0_hygiene.actions.compaction"),
        ("mem0_hygiene.render.plots", "mem0_hygiene.auditing.inspection"),
        ("mem0_hygiene.cli", "mem0_hygiene"),
        ("mem0_hygiene.actions.backup", "mem0_hygiene"),
    ]
    assert [pair for pair in gone if pair in edges] == []
    assert not [b for a, b in edges if a.startswith("mem0_hygiene.memory") and b.startswith("mem0_hygiene.render")]


def test_tests_import_their_helpers_as_a_package_never_by_editing_sys_path():
    tests = Path(__file__).resolve().parent
    offenders = [
        str(p.relative_to(tests))
        for p in sorted(tests.rglob("*.py"))
        if "sys.path.insert" in p.read_text() or "sys.path.append" in p.read_text()
    ]
    assert offenders == [p for p in offenders if p == "test_layout.py"]
