"""A memory's state, decided in one place for Python and for SQL.

The rules are data (:data:`RULES`): each names a state and the ledger column that puts a memory in it, in
precedence order (a deleted memory that was also superseded is "deleted"). :func:`state_of` applies them to a
ledger row in Python; :func:`live_sql` writes the same rules as a SQL condition for "served by reads" (live),
so the ledger's queries, its ``live_memories`` view and the audit's checks cannot drift apart.
"""

from __future__ import annotations

from typing import Any

STATE_ORDER = ("live", "expired", "quarantined", "invalidated", "superseded", "deleted")
"""Every state, from the one reads serve to the most final; the precedence of :data:`RULES` is the reverse."""

UNTRACKED = "untracked"
"""Not a ledger state: a memory in the store with no ledger row (written by plain mem0 or before adoption)."""

RULES: tuple[tuple[str, str, str], ...] = (
    ("deleted", "deleted_at", "set"),
    ("superseded", "superseded_by", "set"),
    ("invalidated", "invalid_at", "set"),
    ("quarantined", "quarantined", "flag"),
    ("expired", "expires_at", "past"),
)
"""(state, column, test) in precedence order: "set" = the column holds a value, "flag" = a true integer,
"past" = a UTC ISO time at or before now. A row none of them holds for is live."""


def state_of(row: Any, now_iso: str) -> str:
    """The state of a ledger row (any object with the ledger's column names as attributes) at ``now_iso``."""
    for state, column, test in RULES:
        value = getattr(row, column)
        if test == "past":
            if value and value <= now_iso:
                return state
        elif value:
            return state
    return "live"


def live_sql(alias: str = "", now: str = "?", *, expiry: bool = True) -> str:
    """The SQL condition a ledger row (``alias.`` columns when given) meets when it is live at ``now`` (a
    placeholder or an expression). ``expiry=False`` leaves the expiry out (for callers that add their own)."""
    prefix = f"{alias}." if alias else ""
    parts = []
    for _state, column, test in RULES:
        if test == "set":
            parts.append(f"{prefix}{column} IS NULL")
        elif test == "flag":
            parts.append(f"{prefix}{column} = 0")
        elif expiry:
            parts.append(f"({prefix}{column} IS NULL OR {prefix}{column} > {now})")
    return " AND ".join(parts)
