"""``prune`` from outside the app (or in it, given the app's Memory): expired and long-superseded memories,
optionally long-unused ones, then ledger compaction. Every deletion goes through mem0's API."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta
from typing import Any

from mem0 import Memory as Mem0Memory

from ..errors import ConfigError
from ..memory.compaction import compact_ledger
from ..memory.core import Memory
from ..memory.pruning import PrunedMemory, PruneResult
from ..target import Target, resolve
from ..timeutil import duration_text, parse_duration


def prune(
    target: Any, *, dry_run: bool = False, unused: timedelta | str | None = None, delete_unused: bool = False
) -> PruneResult:
    """Prune a deployment: everything ``Memory.prune`` deletes (expired memories; superseded and
    invalidated ones older than ``hygiene.retain_superseded``), then compact the ledger.

    ``unused="180d"`` also lists live memories neither used (``last_used_at``) nor confirmed
    (``confirmed_at``) for that long (a never-used one counts from its creation); they are deleted
    only with ``delete_unused=True``. Compaction removes tombstones older than ``retain_superseded``
    once their points are certainly gone (a point still there is deleted through mem0's API first),
    on a connection with ``secure_delete`` on. ``dry_run`` deletes nothing and says what would go.
    Every deletion goes through mem0's API, so history.db records a DELETE for each.
    """
    if delete_unused and unused is None:
        raise ConfigError("delete_unused needs unused='180d' (how long unused and unconfirmed)")
    window = parse_duration(unused, what="unused") if unused is not None else None
    tgt = resolve(target)
    new_ledger = _ledger_file_missing(tgt)
    with tgt.memory_for("prune", readonly=dry_run) as m, m.ledger.exclusive("prune"):  # one replica
        result = m.prune(dry_run=dry_run)
        now = m.now()
        listed: tuple[PrunedMemory, ...] = ()
        deleted_unused = False
        if window is not None:
            m.flush()
            rows = m.ledger.unused_candidates(now, window)
            listed = tuple(PrunedMemory(r.memory_id, "unused", memory_text(m, r.memory_id), r.scope) for r in rows)
            if delete_unused and not dry_run and listed:
                m.delete_ids([p.memory_id for p in listed])
                deleted_unused = True
        compaction = compact_ledger(m, now - m.hygiene_settings.retain_superseded, dry_run=dry_run)
        return replace(
            result,
            unused=listed,
            unused_older_than=duration_text(unused) if unused is not None else None,
            unused_deleted=deleted_unused,
            delete_unused=delete_unused,
            tombstones_purged=compaction.purged,
            leftovers=tuple(dict.fromkeys([*result.leftovers, *compaction.leftovers])),
            ledger_created=new_ledger,
        )


def _ledger_file_missing(target: Target) -> str | None:
    """The SQLite ledger file a prune of ``target`` creates (a store plain mem0 wrote has none), else None."""
    path = target.ledger_path
    if target.in_process or target.settings.ledger_url or path == ":memory:" or os.path.exists(path):
        return None
    return path


def memory_text(m: Memory, memory_id: str) -> str | None:
    """The memory's current text in the vector store (any state), or None when its point is gone."""
    item = Mem0Memory.get(m, memory_id)
    return item.get("memory") if item else None
