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
    """

    memories: tuple[PrunedMemory, ...]
    dry_run: bool
    at: str
    cascaded: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.memories) + len(self.cascaded)

    def by_reason(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for m in self.memories:
            out[m.reason] = out.get(m.reason, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "at": self.at,
            "count": self.count,
            "by_reason": self.by_reason(),
            "memories": [
                {"memory_id": m.memory_id, "reason": m.reason, "text": m.text, "scope": dict(m.scope)}
                for m in self.memories
            ],
            "cascaded": list(self.cascaded),
        }
