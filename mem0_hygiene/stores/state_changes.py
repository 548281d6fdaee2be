"""``confirm`` and ``invalidate`` as ledger writes: each call is one transaction, compare-and-set.

The rows are read inside the transaction (locked ``FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE``
already holds the writer lock), every memory is checked before any is changed, and each ``UPDATE`` repeats the
check in its ``WHERE``: a memory another writer (a replica, the app) superseded, invalidated or deleted in the
meantime is refused with its state, never overwritten. Nothing here touches the vector store or history.db,
so the same code serves the app's own Memory and a command run beside the app while it holds its store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..errors import HygieneError, MemoryNotFound, StateError
from ..timeutil import to_iso
from .ledger import COLUMNS, Ledger, LedgerRow, row_from

_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM memories WHERE memory_id = ?"

_STILL_OPEN = "deleted_at IS NULL AND superseded_by IS NULL AND invalid_at IS NULL"
"""The compare part of both sets: not deleted, superseded or invalidated (what both refuse)."""


def confirm_refusal(memory_id: str, row: LedgerRow, now: datetime) -> HygieneError | None:
    """Why ``row`` cannot be confirmed now (a deleted, superseded or invalidated memory), or None."""
    state = row.state(now)
    why = {
        "deleted": f"it was deleted on {row.deleted_at}",
        "superseded": f"it was superseded by {row.superseded_by}; confirm {row.superseded_by} instead "
        f"(`mem0-hygiene history {memory_id}` shows the chain)",
        "invalidated": f"it was invalidated on {row.invalid_at}; add the fact again if it is true",
    }.get(state)
    return StateError(f"cannot confirm {memory_id}: {why}") if why else None


def invalidate_refusal(memory_id: str, row: LedgerRow, now: datetime) -> HygieneError | None:
    """Why ``row`` cannot be invalidated now (a deleted, superseded or already invalidated memory), or None."""
    state = row.state(now)
    if state == "deleted":
        return MemoryNotFound(memory_id, f"it was deleted on {row.deleted_at}; there is nothing to invalidate")
    if state == "superseded":
        return StateError(
            f"cannot invalidate {memory_id}: it is superseded by {row.superseded_by} (hidden from reads since "
            f"{row.superseded_at}); if the fact that replaced it is untrue, invalidate {row.superseded_by} instead "
            f"(`mem0-hygiene history {memory_id}` shows the chain)"
        )
    if state == "invalidated":
        return StateError(
            f"cannot invalidate {memory_id}: it was already invalidated on {row.invalid_at}; its "
            f"reason is kept (`mem0-hygiene history {memory_id}` shows it)"
        )
    return None


def confirmed(row: LedgerRow, now: datetime) -> LedgerRow:
    """The row as a confirmation at ``now`` leaves it (for dry runs: what the write would give)."""
    return replace(row, confirmed_at=to_iso(now), quarantined=False)


def invalidated(row: LedgerRow, reason: str, now: datetime) -> LedgerRow:
    """The row as an invalidation at ``now`` leaves it."""
    return replace(row, invalid_at=to_iso(now), invalid_reason=reason)


def _locked_rows(ledger: Ledger, conn: Any, memory_ids: Sequence[str]) -> dict[str, LedgerRow]:
    sql = _SELECT + (" FOR UPDATE" if ledger.is_server else "")
    out = {}
    for mid in memory_ids:
        found = conn.execute(sql, (mid,)).fetchone()
        if found is None:
            raise MemoryNotFound(mid, "the ledger has no row of it (was it deleted and compacted meanwhile?)")
        out[mid] = row_from(found)
    return out


def confirm_rows(ledger: Ledger, memory_ids: Sequence[str], now: datetime) -> list[tuple[LedgerRow, LedgerRow]]:
    """Confirm these memories at ``now`` in one transaction: (row before, row after) per id, in order. The first
    memory that cannot be confirmed (see :func:`confirm_refusal`) raises, and none is changed."""
    ids = list(dict.fromkeys(memory_ids))
    stamp = to_iso(now)
    with ledger.transaction() as conn:
        before = _locked_rows(ledger, conn, ids)
        for mid in ids:
            refused = confirm_refusal(mid, before[mid], now)
            if refused is not None:
                raise refused
        for mid in ids:  # logged, and a released quarantine takes its topic key over (see Ledger.confirm_in)
            changed = ledger.confirm_in(conn, before[mid], stamp, where=_STILL_OPEN)
            if changed != 1:  # cannot happen under the row lock; never report a change that was not made
                raise StateError(f"cannot confirm {mid}: another writer changed it meanwhile; retry")
        after = {mid: row_from(conn.execute(_SELECT, (mid,)).fetchone()) for mid in ids}
    return [(before[mid], after[mid]) for mid in ids]


def invalidate_row(ledger: Ledger, memory_id: str, reason: str, now: datetime) -> tuple[LedgerRow, LedgerRow]:
    """Invalidate one memory at ``now`` with ``reason`` in one transaction: (row before, row after). A memory
    that cannot be invalidated (see :func:`invalidate_refusal`) raises, unchanged."""
    with ledger.transaction() as conn:
        before = _locked_rows(ledger, conn, [memory_id])[memory_id]
        refused = invalidate_refusal(memory_id, before, now)
        if refused is not None:
            raise refused
        changed = conn.execute(
            f"UPDATE memories SET invalid_at = ?, invalid_reason = ? WHERE memory_id = ? AND {_STILL_OPEN}",
            (to_iso(now), reason, memory_id),
        ).rowcount
        if changed != 1:
            raise StateError(f"cannot invalidate {memory_id}: another writer changed it meanwhile; retry")
        after = row_from(conn.execute(_SELECT, (memory_id,)).fetchone())
    return before, after


__all__ = [
    "confirm_refusal",
    "confirm_rows",
    "confirmed",
    "invalidate_refusal",
    "invalidate_row",
    "invalidated",
    "row_from",
]
