"""The package layout keeps its rules: few top-level modules, one-way imports between the layers, no private
names crossing modules, click only in the CLI, and the documented import paths keep working."""

from __future__ import annotations

import ast
import importlib
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
    bad = [str(path.relative_to(PACKAGE)) for path, tree in modules()
           if "cli" not in path.relative_to(PACKAGE).parts
           and any(name == "click" or name.startswith("click.") for name, _ in imported(path, tree))]
    assert bad == []


def test_no_private_name_is_imported_from_another_module():
    bad = []
    for path, tree in modules():
        for name, names in imported(path, tree):
            if name.startswith("mem0_hygiene"):
                bad += [(str(path.relative_to(PACKAGE)), name, n) for n in names
                        if n.startswith("_") and not n.startswith("__")]
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
    for name, attr in (("mem0_hygiene.local_models", "minilm_config"), ("mem0_hygiene.offline", "OfflineEmbedding"),
                       ("mem0_hygiene.demo", "build_demo")):
        assert hasattr(importlib.import_module(name), attr), name
