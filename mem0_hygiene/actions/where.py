"""``where``: every place a deployment keeps its data, with the filesystem behind each and what is at risk,
every copy of the stores the tool made (backup sets, stores a restore moved aside, relocation sources), and the
erasure receipts ``forget --user`` left (:mod:`mem0_hygiene.stores.erasures`).

:func:`where` returns a :class:`Where`, which renders itself: a rich table of the locations and one of the
copies, with the warnings under them (the CLI, ``rich.print``), HTML tables (Jupyter), and ``to_dict()`` for
JSON (``to_list()``: the locations alone).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Group
from rich.text import Text

from ..display.tables import html_table
from ..display.text import human_size, plural, printable, yes_no
from ..errors import BackupError
from ..stores.copies import StoreCopy, list_copies
from ..stores.erasures import ReceiptEntry, receipt_entries, receipts_folder
from ..stores.locations import StoreLocation
from ..target import resolve

AT_RISK_ROLES = ("vector_store", "history_db", "ledger")


@dataclass(frozen=True)
class Where:
    """Where a deployment's stores live.

    Fields:
        locations: vector store, history.db, ledger and mem0's folder, in that order.
        copies: every registered copy of the stores that is on disk, oldest first
            (:func:`mem0_hygiene.stores.copies.list_copies`).
        now: the time the copies' ages are counted to (the deployment's clock).
        copies_problem: why the copies could not be listed ("" when they could).
        receipts: the erasure receipts of the deployment, oldest first (scope as recorded, time, and the
            verification when the erasure ran; ``forget --verify RECEIPT`` and the audit check them again).
    """

    locations: tuple[StoreLocation, ...]
    copies: tuple[StoreCopy, ...] = ()
    now: datetime | None = None
    copies_problem: str = ""
    receipts: tuple[ReceiptEntry, ...] = ()

    def to_list(self) -> list[dict[str, Any]]:
        """The locations as JSON-ready dicts."""
        return [loc.to_dict() for loc in self.locations]

    def to_dict(self) -> dict[str, Any]:
        """What ``where --json`` prints: the locations, the copies (each with its age in days) and, when the
        copies could not be listed, why; the erasure receipts."""
        return {
            "locations": self.to_list(),
            "copies": [c.to_dict(self.now) for c in self.copies],
            "copies_problem": self.copies_problem or None,
            "receipts": [r.to_dict() for r in self.receipts],
        }

    def _receipt_rows(self) -> list[tuple[object, ...]]:
        return [
            (
                r.label,
                r.erased_at,
                "verified" if r.verified else "NOT verified",
                "kept" if r.keep_backups else "scrubbed",
                r.memories,
                r.path,
            )
            for r in self.receipts
        ]

    def _copy_rows(self) -> list[tuple[object, ...]]:
        rows: list[tuple[object, ...]] = []
        for c in self.copies:
            age = c.age(self.now) if self.now is not None else None
            rows.append(
                (
                    c.kind,
                    c.path,
                    ", ".join(c.roles),
                    _age_text(age.total_seconds() if age else None),
                    human_size(c.size_bytes),
                )
            )
        return rows

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
            rows.append(
                (
                    loc.role,
                    loc.provider,
                    where_,
                    fs,
                    "yes" if loc.volatile else "no",
                    "yes" if loc.under_tmp else "no",
                    yes_no(loc.exists if loc.is_local else None),
                    human_size(loc.size_bytes),
                )
            )
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
                out.append(
                    ("warning", "bold red", f"{loc.role} is on {fstype} (RAM): {loc.path} is lost at the next reboot")
                )
            elif loc.under_tmp:
                out.append(
                    (
                        "warning",
                        "yellow",
                        f"{loc.role} is under a temp folder: {loc.path} may be cleaned up by the system",
                    )
                )
        if any(loc.at_risk for loc in self.locations if loc.role in AT_RISK_ROLES):
            out.append(("fix", "", "mem0-hygiene relocate --to DIR [--with-sqlite], then use the printed config"))
        if self.copies_problem:
            out.append(("warning", "yellow", f"the copies of the stores cannot be listed: {self.copies_problem}"))
        elif self.copies:
            many = len(self.copies) > 1
            out.append(
                (
                    "note",
                    "",
                    f"{plural(len(self.copies), 'copy', 'copies')} of the stores "
                    f"{'hold' if many else 'holds'} the same memories; forget --scrub erases a "
                    f"memory from {'all of them' if many else 'it too'}",
                )
            )
        return out

    def __rich__(self) -> Group:
        from ..render.terminal import location_lines  # laid out for 80 columns, paths never broken

        parts: list[Any] = [Text("mem0 store locations", style="bold"), location_lines(self.to_list())]
        if self.copies:  # like the locations: the facts on one line, the path whole on its own
            parts.append(Text("copies of the stores (backups, replaced, relocated)", style="bold"))
            for kind, path, holds, age, size in self._copy_rows():
                aged = f"  {age} old" if age != "-" else ""
                parts.append(
                    Text.assemble(
                        (printable(str(kind)).ljust(13), "bold"), f" holds {printable(str(holds))}{aged}  {size}"
                    )
                )
                parts.append(Text("  " + printable(str(path)), no_wrap=True, overflow="ignore"))
        if self.receipts:  # the facts on one line, the path whole on its own
            parts.append(Text("erasure receipts (forget --user/--agent/--run)", style="bold"))
            for r in self.receipts:
                parts.append(
                    Text.assemble(
                        (printable(r.label), "bold"),
                        f"  erased {r.erased_at}  {plural(r.memories, 'memory', 'memories')}  ",
                        ("verified", "green") if r.verified else ("NOT verified", "bold red"),
                        "  backup sets kept" if r.keep_backups else "",
                    )
                )
                parts.append(Text("  " + printable(r.path), no_wrap=True, overflow="ignore"))
        lines = [Text.assemble((label, style), f": {printable(message)}") for label, style, message in self.notes()]
        return Group(*parts, *lines)

    def _repr_html_(self) -> str:
        headers = ("role", "provider", "path / remote", "filesystem", "volatile", "under /tmp", "exists", "size")
        notes = "".join(
            f"<p><strong>{html.escape(label)}</strong>: {html.escape(printable(message))}</p>"
            for label, _style, message in self.notes()
        )
        copies = (
            html_table("copies of the stores (backups, replaced, relocated)", _COPY_HEADERS, self._copy_rows())
            if self.copies
            else ""
        )
        receipts = html_table("erasure receipts", _RECEIPT_HEADERS, self._receipt_rows()) if self.receipts else ""
        return html_table("mem0 store locations", headers, self._rows()) + copies + receipts + notes


_COPY_HEADERS = ("kind", "path", "holds", "age", "size")
_RECEIPT_HEADERS = ("scope", "erased at", "verified then", "backup sets", "memories", "receipt")


def _age_text(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    return f"{seconds / 3600:.1f} hours"


def where(target: Any = None) -> Where:
    """Where the deployment's stores live (a config dict, a live Memory or a Target), and every registered
    copy of them, and the erasure receipts. Opens no store; reads the registry of copies, the backup record and
    the receipts folder."""
    tgt = resolve(target)
    try:
        copies, problem = list_copies(tgt.ledger_path, tgt.history_path), ""
    except BackupError as exc:
        copies, problem = (), str(exc)
    receipts = tuple(receipt_entries(receipts_folder(tgt.ledger_path, tgt.history_path)))
    return Where(locations=tgt.every_location, copies=copies, now=tgt.now(), copies_problem=problem, receipts=receipts)
