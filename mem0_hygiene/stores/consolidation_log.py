"""The record of consolidation runs, in the ledger (its SQLite file, or its PostgreSQL database with
``hygiene.ledger_url``): table ``consolidation``, one row per step of a plan.

A run writes its whole plan here in one transaction before it changes anything, then marks each step as it
is applied. So a run killed midway leaves its unfinished steps behind, and the next run applies exactly
those first (a step whose change is already in the ledger is only marked): nothing is applied twice,
nothing planned is forgotten. The rows also explain afterwards why a memory was merged, superseded or
invalidated (``mem0-hygiene history ID``).

Columns: ``plan_id`` and ``step`` (the order of application), ``action`` ("merge", "supersede",
"invalidate"), ``memory_id`` (the memory hidden), ``into_id`` (the one kept, or the newer fact),
``similarity``, ``reason`` (the sentence shown: "consolidate: duplicate of X (similarity 0.93)"),
``planned_at``, ``done_at`` and ``outcome`` (NULL while unfinished; "applied", "already applied" or
"skipped: WHY"). No memory text is kept here (erasure has nothing to do in this table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .ledger import Ledger

_COLUMNS = "plan_id, step, action, memory_id, into_id, similarity, reason, planned_at, done_at, outcome"


@dataclass(frozen=True)
class LoggedStep:
    """One row of the record (see the module docstring for the fields)."""

    plan_id: str
    step: int
    action: str
    memory_id: str
    into_id: str
    similarity: float | None
    reason: str
    planned_at: str
    done_at: str | None = None
    outcome: str | None = None


def has_log(ledger: Ledger) -> bool:
    """Whether this ledger holds the record (every ledger at schema version 4 does; one older than that, opened
    read-only, holds it once a run applied a plan)."""
    return ledger.has_table("consolidation")


def write_plan(ledger: Ledger, steps: Sequence[LoggedStep]) -> None:
    """Write a whole plan, in one transaction (the table is the ledger's own, created by its migration)."""
    with ledger.transaction() as conn:
        conn.executemany(
            f"INSERT INTO consolidation ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    s.plan_id,
                    s.step,
                    s.action,
                    s.memory_id,
                    s.into_id,
                    s.similarity,
                    s.reason,
                    s.planned_at,
                    s.done_at,
                    s.outcome,
                )
                for s in steps
            ],
        )


def unfinished(ledger: Ledger) -> list[LoggedStep]:
    """The steps a run planned and did not finish (it was interrupted), in the order they are applied."""
    if not has_log(ledger):
        return []
    rows = ledger.query(
        f"SELECT {_COLUMNS} FROM consolidation WHERE outcome IS NULL ORDER BY planned_at, plan_id, step"
    )
    return [_step(r) for r in rows]


def mark(ledger: Ledger, step: LoggedStep, outcome: str, when: str) -> None:
    """Record how a step ended."""
    with ledger.transaction() as conn:
        conn.execute(
            "UPDATE consolidation SET outcome = ?, done_at = ? WHERE plan_id = ? AND step = ?",
            (outcome, when, step.plan_id, step.step),
        )


def applied_reasons(ledger: Any, memory_ids: Sequence[str]) -> dict[str, str]:
    """memory id -> the reason of the consolidation step that hid it (applied steps only); {} when the ledger
    has no record (or cannot be read here)."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids or ledger is None:
        return {}
    try:
        if not has_log(ledger):
            return {}
        marks = ",".join("?" * len(ids))
        rows = ledger.query(
            f"SELECT memory_id, reason FROM consolidation WHERE memory_id IN ({marks}) "
            "AND outcome LIKE '%applied' ORDER BY done_at",
            ids,
        )
    except Exception:  # an older or damaged ledger: the story is told without the reasons
        return {}
    return {str(mid): str(reason) for mid, reason in rows}


def _step(r: Sequence[Any]) -> LoggedStep:
    return LoggedStep(
        str(r[0]),
        int(r[1]),
        str(r[2]),
        str(r[3]),
        str(r[4]),
        None if r[5] is None else float(r[5]),
        str(r[6]),
        str(r[7]),
        r[8],
        r[9],
    )
