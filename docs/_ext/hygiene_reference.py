"""Sphinx directives that write reference tables from the code's own definitions, so nothing is written twice:

- ``finding-codes``: every audit check of the registry (code, area, severity, what it means, the fix);
- ``hygiene-settings``: every key of the ``"hygiene"`` config section (key, default, what it does);
- ``public-api``: an autodoc entry for every name ``mem0_hygiene`` exports.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown (MyST) pipe table; ``|`` inside a cell is escaped."""
    out = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return out


def _rst_literals(text: str) -> str:
    """RST ``double backtick`` literals (as docstrings write them) as Markdown single-backtick code."""
    return text.replace("``", "`")


class _Generated(SphinxDirective):
    has_content = False

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        self.state.nested_parse(StringList(self.lines(), source="generated"), self.content_offset, container)
        return list(container.children)


class FindingCodes(_Generated):
    """The audit's finding codes, from ``mem0_hygiene.auditing.checks.REGISTRY``."""

    def lines(self) -> list[str]:
        from mem0_hygiene.auditing.checks import REGISTRY

        rows = [[f"`{c.code}`", c.area, c.severity, c.means, c.fix] for c in REGISTRY]
        return _table(["code", "area", "severity", "what it means", "the fix"], rows)


class HygieneSettingsTable(_Generated):
    """The ``"hygiene"`` section's keys, from ``mem0_hygiene.config.settings_reference()``."""

    def lines(self) -> list[str]:
        from mem0_hygiene.config import settings_reference

        rows = [[f"`{s.key}`", f"`{s.default}`", _rst_literals(s.doc)] for s in settings_reference()]
        return _table(["key", "default", "what it does"], rows)


class PublicApi(_Generated):
    """An autodoc entry per public name of ``mem0_hygiene`` (``__all__``), functions and classes alike (in an
    ``eval-rst`` block: autodoc writes reStructuredText)."""

    def lines(self) -> list[str]:
        package = importlib.import_module("mem0_hygiene")
        out: list[str] = ["```{eval-rst}"]
        for name in sorted(n for n in package.__all__ if n != "__version__"):
            obj: Any = getattr(package, name)
            kind = "autoclass" if inspect.isclass(obj) else "autofunction"
            out += [f".. {kind}:: mem0_hygiene.{name}", ""]
        return [*out, "```"]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("finding-codes", FindingCodes)
    app.add_directive("hygiene-settings", HygieneSettingsTable)
    app.add_directive("public-api", PublicApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
