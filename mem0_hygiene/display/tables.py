"""Small tables for the maintenance results (prune, review queue, changes, digest, history).

Each result object's ``__rich__`` returns :func:`rich_table` and its ``_repr_html_`` returns
:func:`html_table`, so the CLI, ``rich.print(result)`` and a notebook show the same rows. The style
follows the audit renderers: every value that comes from a store goes through
:func:`~mem0_hygiene.display.text.printable` (control characters made visible) into ``Text``
cells, never into console markup, and is escaped in HTML; colours are inline in HTML.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from .text import printable

CELL_STYLE = "border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top"
"""Inline style of a table cell in the result objects' HTML tables (:func:`html_table`)."""
TABLE_STYLE = "border-collapse:collapse;margin:0.5em 0 1em 0"
"""Inline style of those tables."""

TEXT_CHARS = 120
"""Longest memory text shown in a table cell before it is shortened with an ellipsis."""

STATE_STYLES: dict[str, str] = {
    "live": "green",
    "expired": "yellow",
    "superseded": "magenta",
    "invalidated": "red",
    "quarantined": "bold yellow",
    "deleted": "dim",
    "untracked": "yellow",
}
"""Colour of each memory state (and of prune reasons with the same name)."""

NO_WRAP = frozenset({"when", "written"})
"""Columns kept on one line (times); other columns fold, memory texts get at least :data:`TEXT_MIN` columns."""

TEXT_MIN = 16

_HTML_COLOURS = {
    "green": "#2e7d32",
    "yellow": "#b26a00",
    "bold yellow": "#b26a00",
    "magenta": "#6a1b9a",
    "red": "#c62828",
    "dim": "#777777",
}

_ROWS_SHOWN: ContextVar[int | None] = ContextVar("mem0_hygiene_rows_shown", default=None)


@contextlib.contextmanager
def rows_shown(limit: int | None) -> Iterator[None]:
    """Within the block, terminal tables show their first ``limit`` rows and say how many they left out
    (``None``: every row, the default; the CLI's ``--all``). HTML and JSON always hold every row."""
    token = _ROWS_SHOWN.set(limit)
    try:
        yield
    finally:
        _ROWS_SHOWN.reset(token)


def short(value: object, limit: int = TEXT_CHARS) -> str:
    """A value as one printable line, cut to ``limit`` characters ("-" for None)."""
    if value is None:
        return "-"
    return printable(value, limit)


def _split(cell: object) -> tuple[str, str]:
    if isinstance(cell, tuple):
        return str(cell[0]), str(cell[1] or "")
    return ("-" if cell is None else str(cell)), ""


def rich_table(
    title: str, headers: Sequence[str], rows: Iterable[Sequence[object]], *, caption: str | None = None
) -> Table:
    """A rich Table; each cell is text or ``(text, style)`` with a style from :data:`STATE_STYLES`.
    Texts are shown literally (no markup)."""
    table = Table(
        title=Text(printable(title), style="bold"),
        caption=Text(printable(caption)) if caption else None,
        box=box.SIMPLE_HEAD,
        title_justify="left",
        caption_justify="left",
        show_lines=False,
    )
    for header in headers:
        table.add_column(
            header, overflow="fold", no_wrap=header in NO_WRAP, min_width=TEXT_MIN if header == "text" else None
        )
    limit = _ROWS_SHOWN.get()
    rows = list(rows)
    for row in rows if limit is None else rows[:limit]:
        cells = []
        for cell in row:
            text, style = _split(cell)
            cells.append(Text(printable(text), style=style))
        table.add_row(*cells)
    if limit is not None and len(rows) > limit:
        more = Text(f"(first {limit} of {len(rows)} rows; --all shows every row)", style="dim")
        table.caption = Text.assemble(table.caption, "\n", more) if table.caption else more
    return table


def html_table(
    title: str,
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    caption: str | None = None,
    cls: str = "m0h-result",
) -> str:
    """The same rows as an HTML fragment: a heading, a table with inline styles, an optional note."""
    head = "".join(f'<th style="{CELL_STYLE}">{html.escape(h)}</th>' for h in headers)
    body = []
    for row in rows:
        cells = []
        for cell in row:
            text, style = _split(cell)
            escaped = html.escape(printable(text), quote=True)
            colour = _HTML_COLOURS.get(style)
            if colour:
                escaped = f'<span style="color:{colour}">{escaped}</span>'
            cells.append(f'<td style="{CELL_STYLE}">{escaped}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    parts = [
        f'<div class="{html.escape(cls)}"><strong>{html.escape(printable(title))}</strong>',
        f'<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>',
    ]
    if caption:
        parts.append(f"<p>{html.escape(printable(caption))}</p>")
    parts.append("</div>")
    return "".join(parts)


def state_cell(state: str | None) -> tuple[str, str]:
    """A memory state as a coloured cell."""
    value = state or "-"
    return value, STATE_STYLES.get(value, "")


class TableView:
    """Mixin for a result that shows itself as one table: ``_table_args()`` gives (title, headers, rows,
    caption), and the same rows render as a rich Table (terminal, CLI) and as HTML (Jupyter)."""

    def _table_args(self) -> tuple[str, tuple[str, ...], list[tuple[Any, ...]], str]:
        raise NotImplementedError

    def __rich__(self) -> Table:
        title, headers, rows, caption = self._table_args()
        return rich_table(title, headers, rows, caption=caption)

    def _repr_html_(self) -> str:
        title, headers, rows, caption = self._table_args()
        return html_table(title, headers, rows, caption=caption)


Line = Sequence[tuple[object, str]]
"""One line of a result's summary: (text, style) pieces, styles from :data:`STATE_STYLES`' palette or ""."""


def counts_text(counts: dict[str, int]) -> str:
    """``"mem0=12, other=3"`` ("empty" for none): rows or points per table or collection."""
    return ", ".join(f"{k}={v}" for k, v in counts.items()) or "empty"


class LinesView:
    """Mixin for a result that shows itself as a few lines of summary: ``_lines()`` gives each line as
    (text, style) pieces; the same lines render as rich Text (terminal, CLI) and as HTML (Jupyter). Every
    value goes through :func:`~mem0_hygiene.display.text.printable`, so store text cannot move the cursor."""

    def _lines(self) -> list[Line]:
        raise NotImplementedError

    def __rich__(self) -> Group:
        return Group(*(Text.assemble(*((printable(text), style) for text, style in line)) for line in self._lines()))

    def _repr_html_(self) -> str:
        out = []
        for line in self._lines():
            parts = []
            for text, style in line:
                escaped = html.escape(printable(text), quote=True)
                colour = _HTML_COLOURS.get(style) or ("#2e7d32" if style == "bold green" else None)
                if style.startswith("bold"):
                    escaped = f"<strong>{escaped}</strong>"
                parts.append(f'<span style="color:{colour}">{escaped}</span>' if colour else escaped)
            out.append(f"<div>{''.join(parts)}</div>")
        return f'<div class="m0h-result" style="font-family:monospace;white-space:pre-wrap">{"".join(out)}</div>'
