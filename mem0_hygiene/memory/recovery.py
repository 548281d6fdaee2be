"""Finishing what a process left under way when it died, from the ledger's ``pending`` journal (see
:mod:`mem0_hygiene.stores.ledger`): the drop-in ``Memory``'s :class:`RecoveryMixin`.

Two kinds of operation span the ledger and mem0's stores, and each is journaled before its first step
outside the ledger:

- a delete: the memories are tombstoned and journaled in one transaction, then mem0 deletes their points
  one by one. A crash midway leaves tombstoned points in the vector store (hidden by the drop-in, served by
  plain mem0). :meth:`RecoveryMixin.finish_deletes` deletes them through mem0's API, whatever the
  tombstones' age: the drop-in calls it when it starts (over its own ledger), and every ``prune`` and
  ``auto_prune`` call it (the first ``delete`` of a process, when the start could not).
- a replacement (``supersede(old, "text")``, or a write-time decision): the old memory is journaled, mem0
  stores the new one with "replaces old" in its birth facts (:func:`~.birth.replaces_facts`, a flat payload
  key), then one ledger transaction records the new row and links the two. A crash in between would leave
  both live; :meth:`RecoveryMixin.recover_replacements`, run when the drop-in starts, finds the new memory by that
  birth fact and links it (roll forward), or, when mem0 never stored it, closes the entry (the old memory
  simply stays live). Readers of the next process therefore see the old fact or the new one, never both.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mem0 import Memory as Mem0Memory

from ..errors import SupersedeError
from ..stores.ledger import LedgerRow
from ..timeutil import parse_time
from .birth import BIRTH_REPLACES, LEGACY_HOLDER, adoption_row, point_item, replaced_by_birth

if TYPE_CHECKING:
    from ..stores.ledger import Ledger

# The drop-in Memory logs under one name, whichever of its modules writes the record.
logger = logging.getLogger("mem0_hygiene.memory.core")

REPLACING = ("supersede", "invalidate")


def invalidation_reason(new_id: str, reason: str) -> str:
    """The ledger's ``invalid_reason`` of a memory a newer one contradicts."""
    return f"contradicted by {new_id} ({reason})"


class RecoveryMixin:
    """Mixin: pending deletes and replacements finished or undone.

    Expects from the class it is mixed into: ``ledger``, mem0's ``vector_store``, ``now()`` and the buffer's
    ``settled_unwritten()`` (:class:`~mem0_hygiene.memory.buffer.LedgerBufferMixin`). Its
    ``__init__`` sets up its state, then passes the call on along the MRO; the drop-in calls
    :meth:`recover_replacements` and :meth:`finish_deletes_once` once mem0's own ``__init__`` is done.
    """

    ledger: Ledger
    vector_store: Any
    config: Any

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
                    Mem0Memory.delete(self, mid)
                except ValueError:
                    pass  # gone meanwhile
                done.append(mid)
        finally:
            if done and not dry_run:
                self.ledger.settle(done, "delete")
        if leftovers and not dry_run:
            logger.info("finished %d interrupted delete(s): %s", len(leftovers), ", ".join(leftovers))
        return leftovers, more

    def finish_deletes_once(self, leaving: Sequence[str] = ()) -> None:
        """:meth:`finish_deletes`, the first time this process deletes anything (later entries are this
        process's own, settled as they complete). ``leaving``: ids whose deletes the caller is about to make
        itself, left to it (marked only while that first recovery runs)."""
        if self._deletes_checked:
            return
        ids = list(leaving)
        self.deleting(ids, add=True)
        try:
            self.finish_deletes()
        finally:
            self.deleting(ids, add=False)
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

    # -- replacements -------------------------------------------------------------------------------
    def find_replacement(self, old_id: str, action: str) -> dict[str, Any] | None:
        """The stored memory whose birth facts say it replaces ``old_id`` by ``action`` (the earliest, if a
        crash ever left more than one), as an item for :func:`~.birth.adoption_row`; None when there is none."""
        found: list[dict[str, Any]] = []
        # the flat key every provider filters on by equality; a replacement stored by an earlier version on
        # Qdrant kept it in a mapping under the legacy holder, found by Qdrant's dotted key
        keys = [BIRTH_REPLACES]
        if self.config.vector_store.provider == "qdrant":
            keys.append(f"{LEGACY_HOLDER}.{BIRTH_REPLACES}")
        for key in keys:
            listed = self.vector_store.list(filters={key: old_id}, top_k=16)
            points = (
                listed[0] if isinstance(listed, (list, tuple)) and listed and isinstance(listed[0], list) else listed
            )
            found.extend(point_item(p) for p in (points or []))
        found = [f for f in found if (replaced_by_birth(f["payload"]) or ("", "", ""))[:2] == (old_id, action)]
        if not found:
            return None
        return min(found, key=lambda f: (str(f["created_at"] or ""), f["id"]))

    def resolve_replacement(self, old_id: str, action: str, since: str) -> str | None:
        """Finish a journaled replacement of ``old_id``: link the new memory mem0 stored (returns its id), or
        close the entry when mem0 never stored one (returns None; the old memory stays as it was)."""
        found = self.find_replacement(old_id, action)
        if found is None:
            self.ledger.settle([old_id], action)
            return None
        new_id = found["id"]
        row: LedgerRow = self.ledger.get(new_id) or adoption_row(found, self.now)
        birth = replaced_by_birth(found["payload"])
        reason = invalidation_reason(new_id, birth[2] if birth else "")
        old = self.ledger.get(old_id)
        if old is None or old.deleted_at or (old.superseded_by and old.superseded_by != new_id):
            # the old memory went its own way meanwhile: keep the new one as it is
            self.ledger.insert([row], ignore_existing=True)
            self.ledger.settle([old_id], action)
            return new_id
        try:
            self.ledger.add_linked(row, old_id, parse_time(since), action, reason)
        except SupersedeError as exc:
            logger.warning(
                "could not link %s to %s after an interrupted %s (%s); both are kept as they are",
                old_id,
                new_id,
                action,
                exc,
            )
            self.ledger.insert([row], ignore_existing=True)
            self.ledger.settle([old_id], action)
        return new_id

    def recover_replacements(self) -> list[str]:
        """Resolve every journaled replacement (see :meth:`resolve_replacement`); returns the old ids whose
        replacement was found and linked. Run when the drop-in starts."""
        linked = []
        for old_id, action, since in self.ledger.pending():
            if action in REPLACING and self.resolve_replacement(old_id, action, since) is not None:
                linked.append(old_id)
        if linked:
            logger.info(
                "linked %d replacement(s) an interrupted process had stored: %s", len(linked), ", ".join(linked)
            )
        return linked
