"""The wording of a restore's result: the lines :class:`~mem0_hygiene.actions.restore_result.RestoreResult` shows
(terminal, CLI, Jupyter). The result itself is data; nothing here decides what a restore does."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..display.tables import Line, counts_text
from ..stores.database_url import is_database_url as is_postgres_url

if TYPE_CHECKING:
    from .restore_result import RestoreResult


def restore_lines(result: RestoreResult) -> list[Line]:
    """The summary of a restore (or its dry run): what went where, what was moved aside and kept, the notes."""
    head = "dry run: would restore" if result.dry_run else "restored"
    out: list[Line] = [
        [
            (
                f"{head} the backup taken {result.backup_created_at} from {result.src} "
                f"({result.checked_files} files checked against their sha256)",
                "",
            )
        ]
    ]
    for s in result.stores:
        line = f"  {s.role}: {s.source or '(none in the backup)'} -> {s.target} ({counts_text(s.counts)})"
        if s.replaced_to and (is_postgres_url(s.target) or not os.path.isabs(s.target)):  # a table, not a file
            line += (
                f"; {'its rows would be' if result.dry_run else 'its rows were'} replaced in one verified "
                f"transaction, the replaced rows {'kept' if result.dry_run else 'are kept'} in {s.replaced_to}"
            )
        elif s.replaced_to:
            line += f"; the current one {'would be' if result.dry_run else 'was'} moved to {s.replaced_to}"
        out.append([(line, "")])
    for old in result.leftovers:
        out.append(
            [
                (
                    f"  {'would remove' if result.dry_run else 'removed'} the staging copy of an interrupted "
                    f"restore: {old}",
                    "",
                )
            ]
        )
    if result.copies_path and not result.dry_run and any(s.replaced_to for s in result.stores):
        out.append(
            [
                (
                    f"  the replaced stores are listed as copies in {result.copies_path} (where, the audit and "
                    "forget --scrub read it)",
                    "",
                )
            ]
        )
    for r in result.reapplied:
        label = " ".join(f"{k.removesuffix('_id')}={v}" for k, v in r.scope.items())
        if result.dry_run:
            out.append([(f"  would erase {label} again (receipt {r.receipt}) before anything opens the stores", "")])
            continue
        state = ("something came back", "bold red") if r.came_back else ("its receipt checks out", "green")
        out.append([(f"  erased {label} again ({r.memories} memory(ies)): ", ""), state])
        out.append([(f"    receipt: {r.receipt}", "")])
        if r.new_receipt:
            out.append([(f"    new receipt: {r.new_receipt}", "")])
    out += [[("  ", ""), ("note", "yellow"), (f": {note}", "")] for note in result.notes]
    return out
