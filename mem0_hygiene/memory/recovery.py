"""Finishing what a process left under way when it died, from the ledger's ``pending`` journal (see
:mod:`mem0_hygiene.stores.ledger`): the drop-in ``Memory``'s :class:`RecoveryMixin`.

A delete spans the ledger and mem0's stores: the memories are tombstoned (the same statement journals
them as pending deletes), then mem0 deletes their points one by one. A crash midway leaves tombstoned
points in the vector store (hidden by the drop-in, served by plain mem0). :meth:`RecoveryMixin.finish_deletes`
deletes them through mem0's API, whatever the tombstones' age: the next ``delete`` (once per process), every
``prune`` and ``auto_prune`` call it.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mem0 import Memory as Mem0Memory

if TYPE_CHECKING:
    from ..stores.ledger import Ledger

# The drop-in Memory logs under one name, whichever of its modules writes the record.
logger = logging.getLogger("mem0_hygiene.memory.core")


class RecoveryMixin:
    """Mixin: pending deletes finished.

    Expects from the class it is mixed into: ``ledger``, mem0's ``vector_store``, ``now()`` and the buffer's
    ``settled_unwritten()`` (:class:`~mem0_hygiene.memory.buffer.LedgerBufferMixin`). Its
    ``__init__`` sets up its state, then passes the call on along the MRO.
    """

    ledger: Ledger
    vector_store: Any

    if TYPE_CHECKING:
        def now(self) -> datetime: ...
        def settled_unwritten(self) -> set[str]: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._deletes_checked = False  # the journal's pending deletes were looked at by this process
        self._deleting: set[str] = set()  # deletes of this process under way right now (other threads)
        self._recovery_lock = threading.RLock()
        super().__init__(*args, **kwargs)

    # -- deletes ------------------------------------------------------------------------------------
    def finish_deletes(self, limit: int | None = None, *, dry_run: bool = False) -> tuple[list[str], bool]:
        """Delete through mem0's API the points of journaled deletes that never got that far (at most
        ``limit`` entries), and close their entries. Returns (the ids whose points were still in the
        vector store: deleted now, or with ``dry_run`` that would be; True when ``limit`` left entries)."""
        with self._recovery_lock:
            busy = set(self._deleting) | self.settled_unwritten()  # under way, or done and closed at the next flush
        entries = [mid for mid, _action, _since in self.ledger.pending("delete") if mid not in busy]
        more = limit is not None and len(entries) > limit
        if limit is not None:
            entries = entries[:limit]
        rows = self.ledger.get_many(entries) if entries else {}
        leftovers: list[str] = []
        done: list[str] = []
        try:
            for mid in entries:
                row = rows.get(mid)
                if row is None or not row.deleted_at or self.vector_store.get(vector_id=mid) is None:
                    done.append(mid)  # compacted since, or its point is already gone: nothing left to do
                    continue
                leftovers.append(mid)
                if dry_run:
                    continue
                try:
                    Mem0Memory.delete(self, mid)  # type: ignore[arg-type]
                except ValueError:
                    pass  # gone meanwhile
                done.append(mid)
        finally:
            if done and not dry_run:
                self.ledger.settle(done, "delete")
        if leftovers and not dry_run:
            logger.info("finished %d interrupted delete(s): %s", len(leftovers), ", ".join(leftovers))
        return leftovers, more

    def finish_deletes_once(self) -> None:
        """:meth:`finish_deletes`, the first time this process deletes anything (later entries are this
        process's own, settled as they complete)."""
        if self._deletes_checked:
            return
        self.finish_deletes()
        self._deletes_checked = True

    def deletes_left_unfinished(self) -> None:
        """A delete of this process stopped midway (mem0 raised): the next delete finishes what it left."""
        self._deletes_checked = False

    def deleting(self, memory_ids: list[str], add: bool) -> None:
        """Mark (``add``) or unmark deletes of this process that are under way, so :meth:`finish_deletes`
        in another thread leaves them to their own call."""
        with self._recovery_lock:
            if add:
                self._deleting.update(memory_ids)
            else:
                self._deleting.difference_update(memory_ids)
