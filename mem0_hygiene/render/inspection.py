"""The summary of an :class:`~mem0_hygiene.auditing.inspection.Inspection` as text, a rich renderable and HTML.

One list of (label, value) rows, :func:`summary_rows`, backs all three: ``repr(inspection)``,
``rich.print(inspection)`` and the card Jupyter shows (the audit report's stylesheet and look, from
:mod:`.html`). The DataFrames themselves are pandas' to show.
Store texts never reach the summary; paths and reasons in the note are escaped in HTML and made
printable everywhere.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from .html import e
from .html_style import REPORT_CSS
from .terminal import printable

if TYPE_CHECKING:
    from ..auditing.inspection import Inspection

FRAMES = ".memories, .history, .chains"
PLOTS = (
    ".plot_confirmation_age(), .plot_expiries(), .plot_events_per_day(), .plot_live_vs_stale(), .plot_by_source_kind()"
)


def _breakdown(total: int, parts: dict[str, int]) -> str:
    if not parts:
        return str(total)
    return f"{total}: " + ", ".join(f"{k} {v}" for k, v in parts.items())


def summary_rows(insp: Inspection) -> list[tuple[str, str]]:
    """The summary as (label, plain text) rows, in display order."""
    counts = insp.counts()
    days = insp.review_older_than.total_seconds() / 86400.0
    chains = insp.chains
    broken = int(chains["broken"].sum()) if len(chains) else 0
    read = [name for name in ("vector store", "history.db", "ledger") if name not in insp.missing]
    rows = [
        ("Target", insp.target or "-"),
        ("As of", insp.now.isoformat(timespec="seconds")),
        ("Memories", _breakdown(len(insp.memories), counts)),
        ("Review due", f"{len(insp.review_due())} live memories last confirmed more than {days:g} days ago"),
        (
            "History events",
            _breakdown(len(insp.history), insp.events()) if "history.db" not in insp.missing else "history.db not read",
        ),
        ("Supersede links", f"{len(chains)}" + (f" ({broken} broken)" if broken else "")),
        ("Read", ", ".join(read) or "nothing"),
    ]
    if insp.missing:
        rows.append(("Note", insp.note))
    rows += [("Frames", FRAMES), ("Plots", PLOTS)]
    return rows


def inspection_text(insp: Inspection) -> str:
    """Plain multi-line text (``repr``)."""
    rows = summary_rows(insp)
    width = max(len(label) for label, _ in rows)
    return "\n".join(["<Inspection>"] + [f"  {label:<{width}}  {printable(value)}" for label, value in rows])


def inspection_renderable(insp: Inspection) -> Any:
    """A rich table (``Inspection.__rich__``)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title="mem0-hygiene inspection", show_header=False, box=box.SIMPLE, title_justify="left")
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for label, value in summary_rows(insp):
        table.add_row(label, Text(printable(value), style="yellow" if label == "Note" else ""))
    return table


def _code_list(value: str) -> str:
    """``".memories, .history"`` as code pieces that wrap between the items, never inside one."""
    parts = [html.escape(part.strip(), quote=True) for part in value.split(",")]
    return " ".join(
        f'<span class="m0h-tok"><code>{part}</code>{"," if i < len(parts) - 1 else ""}</span>'
        for i, part in enumerate(parts)
    )


def inspection_html(insp: Inspection) -> str:
    """The summary as a card in the audit report's style (``Inspection._repr_html_``): label/value rows, the note
    about what could not be read in amber."""
    rows, note = [], ""
    for label, value in summary_rows(insp):
        if label == "Note":
            note = f'<p class="m0h-why" style="color:#8a4b00"><strong>Note:</strong> {e(value)}</p>'
            continue
        shown = _code_list(value) if label in ("Frames", "Plots") else e(value)
        rows.append(f"<dt>{html.escape(label)}</dt><dd>{shown}</dd>")
    state = "m0h-sev-skipped" if insp.missing else "m0h-sev-ok"
    return (
        '<div class="mem0-hygiene-inspection"><div class="mem0-hygiene-report">'
        f'<style>{REPORT_CSS}</style><div class="m0h"><header class="m0h-head {state}">'
        '<p class="m0h-kicker">mem0-hygiene inspection</p>'
        f'<dl class="m0h-meta">{"".join(rows)}</dl>{note}</header></div></div></div>'
    )
