"""The generated reference tables, as MyST Markdown lines, from the code's own definitions (no Sphinx needed, so
the tests can check them without the docs extra): the audit's finding codes, the ``"hygiene"`` settings, and an
autodoc entry for every public name."""

from __future__ import annotations

import importlib
import inspect
from typing import Any


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown (MyST) pipe table; ``|`` inside a cell is escaped."""
    out = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return out


def _rst_literals(text: str) -> str:
    """RST ``double backtick`` literals (as docstrings write them) as Markdown single-backtick code."""
    return text.replace("``", "`")


def finding_codes() -> list[str]:
    """Every audit check of ``mem0_hygiene.auditing.checks.REGISTRY``: code, area, severity, meaning, fix."""
    from mem0_hygiene.auditing.checks import REGISTRY

    rows = [[f"`{c.code}`", c.area, c.severity, c.means, c.fix] for c in REGISTRY]
    return _table(["code", "area", "severity", "what it means", "the fix"], rows)


def hygiene_settings() -> list[str]:
    """Every key of the ``"hygiene"`` section, from ``mem0_hygiene.config.settings_reference()``."""
    from mem0_hygiene.config import settings_reference

    rows = [[f"`{s.key}`", f"`{s.default}`", _rst_literals(s.doc)] for s in settings_reference()]
    return _table(["key", "default", "what it does"], rows)


def public_api() -> list[str]:
    """An autodoc entry per public name of ``mem0_hygiene`` (``__all__``), in an ``eval-rst`` block (autodoc
    writes reStructuredText)."""
    package = importlib.import_module("mem0_hygiene")
    out: list[str] = ["```{eval-rst}"]
    for name in sorted(n for n in package.__all__ if n != "__version__"):
        obj: Any = getattr(package, name)
        kind = "autoclass" if inspect.isclass(obj) else "autofunction"
        out += [f".. {kind}:: mem0_hygiene.{name}", ""]
    return [*out, "```"]
