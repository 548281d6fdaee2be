"""Renderers of the audit :class:`~mem0_hygiene.report.Report`: terminal (rich), JSON and HTML.

Each format is a small module with one ``format_*(report) -> str``; none of them prints. The same
rich renderable backs the terminal text, ``Report.__rich__`` and therefore ``rich.print(report)``;
the HTML fragment backs ``Report._repr_html_`` in Jupyter.

- :func:`report_renderable`, :func:`format_text`, :func:`summary_line`: terminal output.
- :func:`format_json`, :data:`JSON_SCHEMA`: the stable, versioned JSON document and its schema.
- :func:`format_html`, :func:`report_html_fragment`: a standalone page and a notebook fragment.
- :func:`revealing_secrets`: every output redacts credentials; inside ``with revealing_secrets():`` they
  show in full (the CLI's ``--show-secrets``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "JSON_SCHEMA": ".json",
    "format_html": ".html",
    "format_json": ".json",
    "format_text": ".terminal",
    "report_html_fragment": ".html",
    "report_renderable": ".terminal",
    "revealing_secrets": "..display.text",
    "summary_line": ".terminal",
}


def __getattr__(name: str) -> Any:  # loaded on first use: the CLI's --help imports none of the renderers
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mem0_hygiene.render' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from ..display.text import revealing_secrets
    from .html import format_html, report_html_fragment
    from .json import JSON_SCHEMA, format_json
    from .terminal import format_text, report_renderable, summary_line

__all__ = [
    "JSON_SCHEMA",
    "format_html",
    "format_json",
    "format_text",
    "report_html_fragment",
    "report_renderable",
    "revealing_secrets",
    "summary_line",
]
