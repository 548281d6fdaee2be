"""What :func:`~mem0_hygiene.actions.restore.restore` returns: the restored stores and the result, as data.

Frozen dataclasses with ``to_dict()`` (JSON-ready); their wording (the summary lines the terminal, the CLI and
Jupyter show) is :func:`~mem0_hygiene.actions.restore_text.restore_lines`. Importable from
:mod:`mem0_hygiene.actions.restore` as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..display.tables import Line, LinesView
from .restore_text import restore_lines

if TYPE_CHECKING:
    from .restore_erasures import ReappliedErasure


@dataclass(frozen=True)
class RestoredStore:
    """One store put back by :func:`restore`.

    Fields:
        role: "vector_store", "history_db" or "ledger".
        target: where it now lives (the config's path).
        source: the file or folder in the backup it came from (None: the backup had none, so the
            current one was only moved aside).
        replaced_to: where the store it replaced was moved (None when there was nothing there).
        counts: points per collection or rows per table, as verified after the restore (in a dry
            run: as the manifest says).
    """

    role: str
    target: str
    source: str | None
    replaced_to: str | None
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "target": self.target,
            "source": self.source,
            "replaced_to": self.replaced_to,
            "counts": dict(self.counts),
        }


@dataclass(frozen=True)
class RestoreResult(LinesView):
    """What :func:`restore` did (or, with ``dry_run``, would do).

    Fields:
        src: the backup folder.
        dry_run: the set was checked and the plan made; nothing was moved.
        restored_at: when (UTC ISO).
        backup_created_at: when the backup was taken.
        checked_files: how many files of the set were checked against their sha256.
        stores: each store restored (or to be restored), where it went and what it replaced.
        leftovers: staging copies of an earlier, interrupted restore that were removed at the start (in a
            dry run: that would be removed).
        copies_path: the registry of copies the replaced stores are listed in.
        notes: anything else worth saying.
        resumed: "finished" when this run finished a restore of the same set that a crash had interrupted
            (in a dry run: would finish), else "".
        reapplied: the erasures the set predates, applied again to what was restored before anything opened it
            (``reapply_erasures``; in a dry run: would be).
    """

    src: str
    dry_run: bool
    restored_at: str
    backup_created_at: str
    checked_files: int
    stores: tuple[RestoredStore, ...]
    leftovers: tuple[str, ...] = ()
    copies_path: str | None = None
    notes: tuple[str, ...] = ()
    resumed: str = ""
    reapplied: tuple[ReappliedErasure, ...] = ()

    def store(self, role: str) -> RestoredStore | None:
        for s in self.stores:
            if s.role == role:
                return s
        return None

    def _lines(self) -> list[Line]:
        return restore_lines(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dry_run": self.dry_run,
            "restored_at": self.restored_at,
            "backup_created_at": self.backup_created_at,
            "checked_files": self.checked_files,
            "stores": [s.to_dict() for s in self.stores],
            "leftovers": list(self.leftovers),
            "copies_path": self.copies_path,
            "notes": list(self.notes),
            "resumed": self.resumed,
            "reapplied": [r.to_dict() for r in self.reapplied],
        }
