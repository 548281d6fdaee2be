"""``where``: every place a deployment keeps its data, with the filesystem behind each and what is at risk.

:func:`where` returns a :class:`Where`, which renders itself: a rich table with the warnings under it (the CLI,
``rich.print``), an HTML table (Jupyter), and ``to_list()`` for JSON.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..render.tables import html_table
from ..render.text import human_size, printable, yes_no
from ..stores.locations import StoreLocation
from ..target import resolve

AT_RISK_ROLES = ("vector_store", "history_db", "ledger")


@dataclass(frozen=True)
class Where:
    """Where a deployment's stores live.

    Fields:
        locations: vector store, history.db, ledger and mem0's folder, in that order.
    """

    locations: tuple[StoreLocation, ...]

    def to_list(self) -> list[dict[str, Any]]:
        """The locations as JSON-ready dicts (what ``where --json`` prints)."""
        return [loc.to_dict() for loc in self.locations]

    def _rows(self) -> list[tuple[object, ...]]:
        rows: list[tuple[object, ...]] = []
        for loc in self.locations:
            where_ = loc.path or loc.remote or "-"
            if loc.defaulted:
                where_ += " (default)"
            if loc.collection:
                where_ += f" [collection {loc.collection}]"
            fs = "-"
            if loc.filesystem is not None:
                fs = loc.filesystem.fstype
                if loc.filesystem.target:
                    fs += f" on {loc.filesystem.target}"
            rows.append((loc.role, loc.provider, where_, fs, "yes" if loc.volatile else "no",
                         "yes" if loc.under_tmp else "no", yes_no(loc.exists if loc.is_local else None),
                         human_size(loc.size_bytes)))
        return rows

    def notes(self) -> list[tuple[str, str, str]]:
        """(label, style, message) for every note and risk, in order; the last one names the fix."""
        out: list[tuple[str, str, str]] = []
        for loc in self.locations:
            if loc.note:
                out.append(("note", "", f"{loc.role}: {loc.note}"))
            if loc.role == "mem0_dir" or not loc.is_local:
                continue
            if loc.volatile:
                fstype = loc.filesystem.fstype if loc.filesystem else "?"
                out.append(("warning", "bold red", f"{loc.role} is on {fstype} (RAM): {loc.path} is lost at the "
                                                   "next reboot"))
            elif loc.under_tmp:
                out.append(("warning", "yellow", f"{loc.role} is under a temp folder: {loc.path} may be cleaned "
                                                 "up by the system"))
        if any(loc.at_risk for loc in self.locations if loc.role in AT_RISK_ROLES):
            out.append(("fix", "", "mem0-hygiene relocate --to DIR [--with-sqlite], then use the printed config"))
        return out

    def __rich__(self) -> Group:
        table = Table(title="mem0 store locations")
        for column in ("role", "provider", "path / remote", "filesystem", "volatile", "under /tmp", "exists", "size"):
            table.add_column(column, overflow="fold")
        for row in self._rows():
            role, provider, where_, fs, volatile, under_tmp, exists, size = (str(c) for c in row)
            table.add_row(role, provider, Text(printable(where_)), Text(printable(fs)),
                          Text(volatile, style="bold red" if volatile == "yes" else ""),
                          Text(under_tmp, style="yellow" if under_tmp == "yes" else ""), exists, size)
        lines = [Text.assemble((label, style), f": {printable(message)}") for label, style, message in self.notes()]
        return Group(table, *lines)

    def _repr_html_(self) -> str:
        headers = ("role", "provider", "path / remote", "filesystem", "volatile", "under /tmp", "exists", "size")
        notes = "".join(f"<p><strong>{html.escape(label)}</strong>: {html.escape(printable(message))}</p>"
                        for label, _style, message in self.notes())
        return html_table("mem0 store locations", headers, self._rows()) + notes


def where(target: Any = None) -> Where:
    """Where the deployment's stores live (a config dict, a live Memory or a Target). Opens nothing."""
    return Where(locations=resolve(target).locations)
