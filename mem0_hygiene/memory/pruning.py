"""What a prune did (or would do): typed results that the CLI and notebooks render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PrunedMemory:
    """One memory prune deleted or would delete.

    Fields:
        memory_id: mem0's id.
        reason: "expired", "superseded" or "invalidated".
        text: the memory's text when it was still in the store (None if already gone).
        scope: user_id / agent_id / run_id it belonged to.
    """

    memory_id: str
    reason: str
    text: str | None
    scope: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PruneResult:
    """The outcome of ``Memory.prune``.

    Fields:
        memories: what was (or, with dry_run, would be) deleted, with the reason.
        dry_run: True when nothing was deleted.
        at: when the prune ran (UTC ISO).
        cascaded: memories deleted only because a memory they had been superseded by was pruned.
        unused: with ``unused=`` (``mem0_hygiene.maintenance.prune``): live memories neither used nor
            confirmed for that long (reason "unused"), listed, and deleted only with ``delete_unused``.
        unused_older_than: the ``unused`` window as given ("180d"); None when not asked.
        unused_deleted: True when the ``unused`` memories were deleted.
        tombstones_purged: ledger rows of long-deleted memories removed by the compaction afterwards
            (with dry_run: that would be removed).
        leftovers: tombstoned memories whose points were still in the vector store, deleted through
            mem0's API before their tombstones went (with dry_run: would be).
    """

    memories: tuple[PrunedMemory, ...]
    dry_run: bool
    at: str
    cascaded: tuple[str, ...] = ()
    unused: tuple[PrunedMemory, ...] = ()
    unused_older_than: str | None = None
    unused_deleted: bool = False
    tombstones_purged: int = 0
    leftovers: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.memories) + len(self.cascaded)

    def by_reason(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for m in self.memories:
            out[m.reason] = out.get(m.reason, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, plus ``count`` and ``by_reason``."""
        return {
            "dry_run": self.dry_run,
            "at": self.at,
            "count": self.count,
            "by_reason": self.by_reason(),
            "memories": [_memory_dict(m) for m in self.memories],
            "cascaded": list(self.cascaded),
            "unused_older_than": self.unused_older_than,
            "unused": [_memory_dict(m) for m in self.unused],
            "unused_deleted": self.unused_deleted,
            "tombstones_purged": self.tombstones_purged,
            "leftovers": list(self.leftovers),
        }

    def summary(self) -> str:
        """One line: what was (or would be) deleted and compacted."""
        verb = "would delete" if self.dry_run else "deleted"
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.by_reason().items()))
        parts = [f"{verb} {len(self.memories)} memor{'y' if len(self.memories) == 1 else 'ies'}"
                 + (f" ({reasons})" if reasons else "")]
        if self.cascaded:
            parts.append(f"{len(self.cascaded)} superseded with them")
        if self.unused_older_than is not None:
            done = "deleted" if self.unused_deleted else ("would delete" if self.dry_run else "listed, not deleted")
            parts.append(f"{len(self.unused)} unused for {self.unused_older_than} ({done})")
        if self.leftovers:
            parts.append(f"{len(self.leftovers)} leftover point(s) of deleted memories")
        parts.append(f"{self.tombstones_purged} old tombstone row(s) {'to compact' if self.dry_run else 'compacted'}")
        return "; ".join(parts)

    def _rows(self) -> list[tuple[Any, ...]]:
        from ..render.tables import short, state_cell

        rows: list[tuple[Any, ...]] = []
        for m in self.memories:
            rows.append((m.memory_id, state_cell(m.reason), short(m.text), _scope_text(m.scope)))
        for mid in self.cascaded:
            rows.append((mid, state_cell("superseded"), "(superseded by a pruned memory)", "-"))
        for m in self.unused:
            rows.append((m.memory_id, ("unused" + ("" if self.unused_deleted else " (kept)"), "yellow"),
                         short(m.text), _scope_text(m.scope)))
        for mid in self.leftovers:
            rows.append((mid, state_cell("deleted"), "(point of a deleted memory, still in the store)", "-"))
        return rows

    def __rich__(self) -> Any:
        from ..render.tables import rich_table

        title = "prune (dry run)" if self.dry_run else "prune"
        return rich_table(f"{title} at {self.at}", ("memory", "reason", "text", "scope"), self._rows(),
                          caption=self.summary())

    def _repr_html_(self) -> str:
        from ..render.tables import html_table

        title = "prune (dry run)" if self.dry_run else "prune"
        return html_table(f"{title} at {self.at}", ("memory", "reason", "text", "scope"), self._rows(),
                          caption=self.summary())


def _memory_dict(m: PrunedMemory) -> dict[str, Any]:
    return {"memory_id": m.memory_id, "reason": m.reason, "text": m.text, "scope": dict(m.scope)}


def _scope_text(scope: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in scope.items()) or "-"
