"""Ledger compaction: remove old tombstones for good, safely.

A tombstone (``deleted_at``) keeps a memory the wrapper deleted hidden even if its point comes back
(an old vector-store snapshot restored). Removing the tombstone is only safe once the point is really
gone: a point without a ledger row is adopted as a live memory with source "unknown". So before a
tombstone is purged, its memory (and every memory it superseded, which the foreign key's cascade
removes with it) is looked up in the vector store; a point still there is deleted first, through
mem0's API, and only then is the row removed, with ``secure_delete`` on the deleting connection (see
:meth:`mem0_hygiene.stores.ledger.Ledger.purge_rows`).

A tombstone is also kept while mem0's history.db still says its memory exists (it has events for it and
no DELETE): mem0 deletes the point first and writes the DELETE row second, so a crash in between leaves the
tombstone as the only record that the memory was deleted on purpose, and the audit reads it to tell
that apart from a memory the vector store lost.

Used by :func:`mem0_hygiene.maintenance.prune` (all of them) and by ``hygiene.auto_prune`` (a few per
call). Never prints; takes the drop-in ``Memory``; imports nothing of the package.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mem0 import Memory as Mem0Memory

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Compaction:
    """What a compaction removed (or, with dry_run, would remove).

    Fields:
        purged: ledger rows removed (tombstones and the tombstoned rows they cascade to).
        leftovers: tombstoned memories whose points were still in the vector store and were deleted
            through mem0's API first (with dry_run: would be).
        kept: tombstones left in place because a point could not be deleted, a row they cascade to is not
            tombstoned, or history.db lacks the memory's DELETE (a crash between mem0's two writes).
        more: True when ``limit`` stopped it before every old tombstone was looked at.
    """

    purged: int = 0
    leftovers: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    more: bool = False


def history_says_present(memory: Any, memory_id: str) -> bool:
    """mem0's history.db has events for the memory and no DELETE among them."""
    try:
        events = [str(e.get("event") or "").upper() for e in memory.db.get_history(memory_id)]
    except Exception:  # no history to read: nothing to contradict
        return False
    return bool(events) and "DELETE" not in events


def compact_ledger(memory: Any, older_than: datetime, *, limit: int | None = None, dry_run: bool = False) -> Compaction:
    """Purge tombstones written before ``older_than`` from ``memory``'s ledger (at most ``limit``).

    ``memory`` is the drop-in :class:`~mem0_hygiene.memory.core.Memory`. With ``dry_run`` nothing is
    deleted and ``purged`` counts the rows that would go.
    """
    ledger = memory.ledger
    ids = ledger.purgeable_tombstones(older_than, None if limit is None else limit + 1)
    more = limit is not None and len(ids) > limit
    if more:
        ids = ids[:limit]
    accepted: list[str] = []
    leftovers: list[str] = []
    kept: list[str] = []
    covered: set[str] = set()
    for mid in ids:
        if mid in covered:
            continue
        closure = [mid, *ledger.predecessors(mid)]
        rows = ledger.get_many(closure)
        if any(c not in rows or not rows[c].deleted_at for c in closure):
            kept.append(mid)
            continue
        if any(history_says_present(memory, c) for c in closure):
            kept.append(mid)  # the tombstone is the only record of this deletion
            continue
        ok = True
        for cid in closure:
            try:
                present = memory.vector_store.get(vector_id=cid) is not None
            except Exception as exc:  # a store that cannot answer: keep the tombstone
                logger.warning("kept tombstone %s: could not look up its point (%s)", cid, exc)
                ok = False
                break
            if not present:
                continue
            leftovers.append(cid)
            if dry_run:
                continue
            try:
                Mem0Memory.delete(memory, cid)
            except ValueError:
                pass  # gone meanwhile
            except Exception as exc:
                logger.warning("kept tombstone %s: its point could not be deleted (%s)", cid, exc)
                ok = False
                break
        if not ok:
            kept.append(mid)
            continue
        accepted.append(mid)
        covered.update(closure)
    if dry_run:
        purged = len({c for mid in accepted for c in [mid, *ledger.predecessors(mid)]})
    else:
        purged = ledger.purge_rows(accepted)
    return Compaction(purged=purged, leftovers=tuple(leftovers), kept=tuple(kept), more=more)
