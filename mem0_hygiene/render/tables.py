"""The earlier import path of the result tables, now :mod:`mem0_hygiene.display.tables` (below every layer that
shows something)."""

from ..display.tables import (
    CELL_STYLE,
    NO_WRAP,
    STATE_STYLES,
    TABLE_STYLE,
    TEXT_CHARS,
    TEXT_MIN,
    Line,
    LinesView,
    TableView,
    counts_text,
    html_table,
    rich_table,
    rows_shown,
    short,
    state_cell,
)

__all__ = [
    "CELL_STYLE",
    "NO_WRAP",
    "STATE_STYLES",
    "TABLE_STYLE",
    "TEXT_CHARS",
    "TEXT_MIN",
    "Line",
    "LinesView",
    "TableView",
    "counts_text",
    "html_table",
    "rich_table",
    "rows_shown",
    "short",
    "state_cell",
]
