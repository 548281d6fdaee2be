"""The read log in the ledger (``reads``, schema version 5; written only with ``hygiene.read_log: true``): which
memory each read served, when, to which scope and caller, so that "which answers could this memory have
influenced, and when" has an answer.

:class:`Read` is one row; :func:`record_reads` writes a batch of them (the drop-in buffers them like its other
ledger writes); :func:`reads_of` and :func:`reads_in_scope` read them back; :func:`served_counts` says how often
each memory was served since a time (the audit's findings about a memory say it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Ledger

READ_OPS = ("search", "get_all", "get")
_COLUMNS = ("read_at", "op", "memory_id", "user_id", "agent_id", "run_id", "caller")


@dataclass(frozen=True)
class Read:
    """One memory served by one read.

    Fields:
        read_at: when (UTC ISO).
        op: "search", "get_all" or "get".
        memory_id: the memory served.
        user_id, agent_id, run_id: the scope the read asked for (None: not given).
        caller: the app's ``source`` label of the read (None: not given).
    """

    read_at: str
    op: str
    memory_id: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    caller: str | None = None

    def as_tuple(self) -> tuple[Any, ...]:
        return (self.read_at, self.op, self.memory_id, self.user_id, self.agent_id, self.run_id, self.caller)

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(_COLUMNS, self.as_tuple(), strict=True))


def _ready(ledger: Ledger) -> bool:
    return ledger.has_table("reads")


def record_reads(ledger: Ledger, reads: Sequence[Read]) -> int:
    """Write a batch of reads (one transaction); returns how many."""
    if not reads:
        return 0
    marks = ", ".join("?" * len(_COLUMNS))
    ledger._write(
        f"INSERT INTO reads ({', '.join(_COLUMNS)}) VALUES ({marks})", [r.as_tuple() for r in reads], many=True
    )
    return len(reads)


def _select(ledger: Ledger, where: str, params: Sequence[Any], limit: int) -> list[Read]:
    if not _ready(ledger):
        return []
    rows = ledger.query(
        f"SELECT {', '.join(_COLUMNS)} FROM reads WHERE {where} ORDER BY read_at, id LIMIT ?", [*params, limit]
    )
    return [Read(*(str(v) if v is not None else None for v in r)) for r in rows]  # type: ignore[arg-type]


def reads_of(ledger: Ledger, memory_id: str, *, since: str | None = None, limit: int = 10_000) -> list[Read]:
    """Every read that served this memory (since ``since``), oldest first."""
    where, params = "memory_id = ?", [memory_id]
    if since:
        where, params = where + " AND read_at >= ?", [*params, since]
    return _select(ledger, where, params, limit)


def reads_in_scope(
    ledger: Ledger, scope: dict[str, str], *, since: str | None = None, limit: int = 10_000
) -> list[Read]:
    """Every memory served to reads of this scope (each given key equal), oldest first."""
    keys = [k for k in ("user_id", "agent_id", "run_id") if scope.get(k)]
    if not keys:
        raise ValueError("a scope needs a user_id, agent_id or run_id")
    where = " AND ".join(f"{k} = ?" for k in keys)
    params: list[Any] = [scope[k] for k in keys]
    if since:
        where, params = where + " AND read_at >= ?", [*params, since]
    return _select(ledger, where, params, limit)


def served_counts(ledger: Ledger, since: dict[str, str]) -> dict[str, int]:
    """How many times each memory was served since its own time (``since``: memory id -> UTC ISO, e.g. when it
    was written); memories never served are left out."""
    if not since or not _ready(ledger):
        return {}
    out: dict[str, int] = {}
    ids = list(since)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for mid, read_at in ledger.query(f"SELECT memory_id, read_at FROM reads WHERE memory_id IN ({marks})", chunk):
            if str(read_at) >= since[str(mid)]:
                out[str(mid)] = out.get(str(mid), 0) + 1
    return out


def forget_reads(ledger: Ledger, memory_ids: Iterable[str], scope: dict[str, str] | None = None) -> int:
    """Remove the read log's rows of these memories, and with ``scope`` every row of reads of that scope (an
    erasure leaves no trace of whom was served what)."""
    if not _ready(ledger):
        return 0
    removed = 0
    ids = list(memory_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        removed += ledger._write(f"DELETE FROM reads WHERE memory_id IN ({','.join('?' * len(chunk))})", chunk)
    keys = [k for k in ("user_id", "agent_id", "run_id") if (scope or {}).get(k)]
    if scope and keys:
        where = " AND ".join(f"{k} = ?" for k in keys)
        removed += ledger._write(f"DELETE FROM reads WHERE {where}", [scope[k] for k in keys])
    return removed


__all__ = ["READ_OPS", "Read", "forget_reads", "reads_in_scope", "reads_of", "record_reads", "served_counts"]
