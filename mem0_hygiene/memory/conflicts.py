"""Possible conflicts: pairs of memories that look related, where a guard of the write-time decision
(:mod:`.decision_guards`) would not let a likeness alone drop the new one or hide the old one. Both stay live; the
pair waits for a person (``review``, the digest) or the agent to settle it.

They are kept in the ledger's ``write_decisions`` table (both dialects since schema version 4, no new column):
``judge`` is ``"guard"``, ``memory_id`` the new memory, ``compared_id`` the old one, ``label`` what was applied
(an add), ``reason`` why the pair may conflict. A conflict is open while both memories are live and neither was
confirmed after it was found.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..timeutil import to_iso

GUARD = "guard"
CONFLICT_EVENT = "CONFLICT"


def record_conflict(
    ledger: Any, memory_id: str, compared_id: str, label: str, reason: str, similarity: float | None, when: datetime
) -> None:
    """Keep one possible conflict: ``memory_id`` (new) against ``compared_id`` (old), ``label`` applied."""
    with ledger.transaction() as conn:
        conn.execute(
            "INSERT INTO write_decisions (memory_id, compared_id, label, judge, event, reason, similarity, "
            "decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, compared_id, label, GUARD, CONFLICT_EVENT, reason, similarity, to_iso(when)),
        )


@dataclass(frozen=True)
class PossibleConflict:
    """One open possible conflict.

    Fields:
        memory_id: the newer memory; compared_id: the older one it may conflict with.
        reason: why (the guard's words); similarity: their cosine similarity (None: not measured).
        found_at: when it was found (UTC ISO).
        text, compared_text: the two texts, when the caller could read them (None otherwise).
    """

    memory_id: str
    compared_id: str
    reason: str
    similarity: float | None
    found_at: str
    text: str | None = None
    compared_text: str | None = None


def open_conflicts(ledger: Any, now: datetime, limit: int | None = None) -> list[PossibleConflict]:
    """The possible conflicts still open (both memories live, neither confirmed since), newest first."""
    if not ledger.has_table("write_decisions"):
        return []
    found = ledger.query(
        "SELECT memory_id, compared_id, reason, similarity, decided_at FROM write_decisions "
        "WHERE judge = ? AND compared_id IS NOT NULL ORDER BY id DESC",
        (GUARD,),
    )
    rows = ledger.get_many(list({i for r in found for i in (str(r[0]), str(r[1]))}))
    out: list[PossibleConflict] = []
    seen: set[tuple[str, str]] = set()
    for mid, other, reason, sim, at in found:
        a, b = rows.get(str(mid)), rows.get(str(other))
        pair = (str(mid), str(other))
        if a is None or b is None or pair in seen or a.state(now) != "live" or b.state(now) != "live":
            continue
        if max(a.confirmed_at or "", b.confirmed_at or "") > str(at):
            continue  # confirmed after it was found: settled
        seen.add(pair)
        out.append(PossibleConflict(str(mid), str(other), str(reason), sim, str(at)))
        if limit is not None and len(out) >= limit:
            break
    return out
