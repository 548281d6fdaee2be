"""Sphinx directives that write reference tables from the code's own definitions, so nothing is written twice
(the tables themselves are made by :mod:`reference_tables`):

- ``finding-codes``: every audit check of the registry (code, area, severity, what it means, the fix);
- ``hygiene-settings``: every key of the ``"hygiene"`` config section (key, default, what it does);
- ``public-api``: an autodoc entry for every name ``mem0_hygiene`` exports;
- ``diagram NAME``: one of :data:`diagrams.DIAGRAMS` (a memory's states, the data flow) as inline SVG.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import diagrams
import reference_tables
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _directive(make: Callable[[], list[str]]) -> type[SphinxDirective]:
    """A directive that parses the Markdown lines ``make()`` returns in its place."""

    class Generated(SphinxDirective):
        has_content = False

        def run(self) -> list[nodes.Node]:
            container = nodes.section()
            container.document = self.state.document
            self.state.nested_parse(StringList(make(), source="generated"), self.content_offset, container)
            return list(container.children)

    return Generated


class Diagram(SphinxDirective):
    """``diagram NAME``: the SVG :mod:`diagrams` draws from the code's names, inline in the HTML page."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        if name not in diagrams.DIAGRAMS:
            raise self.error(f"no diagram {name!r}; known: {', '.join(sorted(diagrams.DIAGRAMS))}")
        svg = diagrams.DIAGRAMS[name]()
        return [nodes.raw("", f'<figure class="m0h-diagram">{svg}</figure>', format="html")]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("finding-codes", _directive(reference_tables.finding_codes))
    app.add_directive("hygiene-settings", _directive(reference_tables.hygiene_settings))
    app.add_directive("public-api", _directive(reference_tables.public_api))
    app.add_directive("diagram", Diagram)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
