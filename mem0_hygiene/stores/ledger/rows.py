"""A ledger row: :class:`LedgerRow` (one memory's facts), :data:`COLUMNS` (the ``memories`` columns in the order
every query reads and writes them) and the conversions between the two."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from typing import Any

from ...timeutil import parse_time, to_iso
from ..states import state_of
from .schema import MEMORY_COLUMNS

SOURCE_KINDS = ("user", "assistant", "tool", "system", "import", "unknown")

PENDING_ACTIONS = ("delete", "supersede", "invalidate")

COLUMNS: tuple[str, ...] = tuple(c.name for c in MEMORY_COLUMNS)


@dataclass(frozen=True)
class LedgerRow:
    """One memory's ledger facts.

    Fields:
        memory_id: mem0's id for the memory.
        user_id, agent_id, run_id: the scope the memory was stored in.
        source: free text saying where it came from ("chat 2026-08-08", "tool:web_fetch https://...").
        source_kind: one of user, assistant, tool, system, import, unknown.
        created_at, confirmed_at, expires_at: UTC ISO strings (expires_at None = drifts, review instead).
        superseded_by, superseded_at: the replacement memory and when it replaced this one.
        invalid_at, invalid_reason: when and why it was declared untrue (soft delete).
        quarantined: from tool output or web content; not served until confirmed.
        last_used_at, use_count: read bookkeeping.
        topic_key: optional identity key (same key in the same scope = same fact).
        deleted_at: tombstone for memories deleted through the wrapper.
        adopted: the row was created for a memory written without the wrapper.
        redacted: the kinds of credential the write guard replaced in its text (comma-separated), or None.
        flag: the standing-order label the write guard gave its text ("imperative_order", ...), or None.
    """

    memory_id: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    source: str | None = None
    source_kind: str = "unknown"
    created_at: str = ""
    confirmed_at: str | None = None
    expires_at: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    invalid_at: str | None = None
    invalid_reason: str | None = None
    quarantined: bool = False
    last_used_at: str | None = None
    use_count: int = 0
    topic_key: str | None = None
    deleted_at: str | None = None
    adopted: bool = False
    redacted: str | None = None
    flag: str | None = None

    @classmethod
    def of(cls, **fields: Any) -> LedgerRow:
        """``LedgerRow(**fields)`` without the frozen dataclass's one ``object.__setattr__`` per field (a row per
        add is built on the hot path); the fields are the same, unnamed ones take their defaults."""
        values = {**_ROW_DEFAULTS, **fields}
        if len(values) != len(_ROW_DEFAULTS):
            raise TypeError(f"LedgerRow has no field {sorted(fields.keys() - _ROW_DEFAULTS.keys())[0]!r}")
        if values["memory_id"] is MISSING:
            raise TypeError("LedgerRow needs a memory_id")
        return _row_of(values)

    def with_id(self, memory_id: str) -> LedgerRow:
        """This row's facts under another memory id (``dataclasses.replace`` without its per-field checks)."""
        return _row_of({**self.__dict__, "memory_id": memory_id})

    def state(self, now: datetime) -> str:
        """deleted > superseded > invalidated > quarantined > expired > live (see :mod:`..states`)."""
        return state_of(self, to_iso(now))

    def as_tuple(self) -> tuple[Any, ...]:
        return ROW_VALUES(self)

    @property
    def scope(self) -> dict[str, str]:
        return {k: v for k, v in (("user_id", self.user_id), ("agent_id", self.agent_id), ("run_id", self.run_id)) if v}


ROW_VALUES = operator.attrgetter(*COLUMNS)
"""A row's values in :data:`COLUMNS` order (a tuple)."""
DELETED_AT = COLUMNS.index("deleted_at")
_ROW_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(LedgerRow)}
if tuple(_ROW_DEFAULTS) != COLUMNS:  # pragma: no cover - the schema and the row are one list
    raise AssertionError("LedgerRow's fields and the memories table's columns differ")


def _row_of(values: dict[str, Any]) -> LedgerRow:
    """A row holding ``values`` (every field, by name) as they are, with no per-field ``object.__setattr__``."""
    row = object.__new__(LedgerRow)
    object.__setattr__(row, "__dict__", values)
    return row


def row_from(r: Sequence[Any]) -> LedgerRow:
    """A ledger row from its values in :data:`COLUMNS` order."""
    values = dict(zip(COLUMNS, tuple(r)))
    values["quarantined"] = bool(values["quarantined"])
    values["adopted"] = bool(values["adopted"])
    return _row_of(values)  # every field is there: no per-field ``object.__setattr__`` (a read builds one per item)


def parse_stamp(value: str | None) -> datetime | None:
    """A ledger time string back to a datetime (None stays None)."""
    return parse_time(value) if value else None
