"""Nothing the user can call or set goes undocumented: every command and option has help text (the CLI reference
is generated from it), every public name has a docstring (the API reference), every finding code its severity,
meaning and fix (the finding codes page) and every ``"hygiene"`` key its description (the configuration page)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import click

import mem0_hygiene
from mem0_hygiene.auditing.checks import REGISTRY
from mem0_hygiene.cli import cli
from mem0_hygiene.config import SETTINGS_SECTIONS, settings_reference

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"


def reference_tables() -> ModuleType:
    """docs/_ext/reference_tables.py, which writes the generated pages' tables (the Sphinx extension puts them in
    place), loaded by path: it needs no Sphinx."""
    spec = importlib.util.spec_from_file_location("reference_tables", DOCS / "_ext" / "reference_tables.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands(group: click.Command, prefix: str = "mem0-hygiene") -> Iterator[tuple[str, click.Command]]:
    yield prefix, group
    if isinstance(group, click.Group):
        for name, sub in group.commands.items():
            yield from commands(sub, f"{prefix} {name}")


def test_every_command_and_every_option_has_help_text() -> None:
    undocumented = []
    for name, command in commands(cli):
        if not (command.help or "").strip():
            undocumented.append(name)
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip():
                undocumented.append(f"{name} {param.opts[0]}")
    assert undocumented == []


def test_the_cli_reference_page_is_generated_from_the_whole_command_group() -> None:
    page = (DOCS / "reference" / "cli.md").read_text()
    assert ".. click:: mem0_hygiene.cli:cli" in page and ":nested: full" in page


def test_every_public_name_has_a_docstring_and_a_place_in_the_api_reference() -> None:
    names = [n for n in mem0_hygiene.__all__ if n != "__version__"]
    assert [n for n in names if not (getattr(mem0_hygiene, n).__doc__ or "").strip()] == []
    generated = "\n".join(reference_tables().public_api())
    assert [n for n in names if f"mem0_hygiene.{n}\n" not in generated + "\n"] == []


def test_every_finding_code_has_its_severity_meaning_and_fix_on_the_generated_page() -> None:
    page = "\n".join(reference_tables().finding_codes())
    assert len(REGISTRY) >= 33
    for chk in REGISTRY:
        assert chk.severity and chk.means.strip() and chk.fix.strip(), chk.code
        assert f"| `{chk.code}` | {chk.area} | {chk.severity} |" in page


def test_every_hygiene_setting_is_documented_by_its_class() -> None:
    keys = settings_reference()
    assert {k.key.rsplit(".", 1)[0] for k in keys} == {section for section, _cls in SETTINGS_SECTIONS}
    assert [k.key for k in keys if not k.doc.strip()] == []
    assert "hygiene.write_decision.judge" in {k.key for k in keys}
    page = "\n".join(reference_tables().hygiene_settings())
    assert [k.key for k in keys if f"| `{k.key}` |" not in page] == []
