"""Buffered ledger writes of the drop-in ``Memory``: rows of memories just added, adoption rows,
last-use counts, the read log (``hygiene.read_log``) and the closing of finished deletes' journal entries, written
in batches (when the buffers fill up, by one writer thread shared by the process, so the call that filled them does
not wait; within ``hygiene.flush_after`` by a timer; on :meth:`~LedgerBufferMixin.flush`; and at interpreter exit
when the app never called ``close()``).

A buffered row stays readable in its buffer until the ledger holds it (a write takes a snapshot, writes it
outside the buffer lock, then takes out what it wrote), and one flush writes at a time.

A new row that holds a ``topic_key`` supersedes the older row of that key and scope when it is written
(:mod:`mem0_hygiene.stores.topic_keys`). Until then reads in this process see that supersede already
(:meth:`~LedgerBufferMixin.overlaid`: the newest buffered holder of each key hides the older rows of its key),
and the writer thread is asked for the write at once, so other replicas see it from their next read after that
commit, milliseconds later, while rows without a key keep their batch.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import functools
import logging
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import LedgerError
from ..stores.ledger import LedgerRow
from ..stores.ledger.reads import Read, record_reads
from ..stores.topic_keys import holds_key
from .birth import adoption_row, point_item, strip_birth
from .metrics import record_flush

if TYPE_CHECKING:
    from ..config import HygieneSettings
    from ..stores.ledger import Ledger

# The drop-in Memory logs under one name, whichever of its modules writes the record.
logger = logging.getLogger("mem0_hygiene.memory.core")

BEHIND_LIMIT = 4
"""A flush that finds this many times ``use_flush_every`` writes waiting is done by the caller itself (the
writer thread fell behind, or its writes fail)."""
_writer: concurrent.futures.ThreadPoolExecutor | None = None
_writer_lock = threading.Lock()


_SCOPE_KEYS = ("user_id", "agent_id", "run_id")

KeyScope = tuple[str, str, str, str]
"""A topic key and the scope it holds in (``""`` for a scope id not given), as the ledger's unique index sees it."""


def key_scope(row: LedgerRow) -> KeyScope:
    """The (topic key, user, agent, run) a row would hold."""
    return (str(row.topic_key), row.user_id or "", row.agent_id or "", row.run_id or "")


def _submit(job: Any) -> None:
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem0-hygiene-ledger")
        _writer.submit(job)


class LedgerBufferMixin:
    """Mixin: the ledger rows and use counts waiting to be written, and the writing.

    Expects from the class it is mixed into: ``ledger`` (:class:`~mem0_hygiene.stores.ledger.Ledger`),
    ``hygiene_settings`` (:class:`~mem0_hygiene.config.HygieneSettings`, set before ``__init__`` reaches
    this class) and ``now()`` (the clock, UTC). Its ``__init__`` sets up the buffers, then passes the
    call on along the MRO (to mem0's ``Memory``).
    """

    ledger: Ledger
    hygiene_settings: HygieneSettings
    vector_store: Any

    if TYPE_CHECKING:

        def now(self) -> datetime: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        settings = self.hygiene_settings
        self._uses: dict[str, tuple[int, datetime]] = {}
        self._pending_adopt: dict[str, LedgerRow] = {}
        self._pending_new: dict[str, LedgerRow] = {}  # rows of memories just added, written in batches
        self._keyed: dict[KeyScope, LedgerRow] = {}  # the newest buffered new row holding each topic key
        self._settled: set[str] = set()  # journaled deletes that are done; their entries are closed in batches
        self._reads: list[Read] = []  # the read log's rows (hygiene.read_log), written in batches
        self._read_log = bool(settings.read_log)
        self._buffer_lock = threading.RLock()
        self._flush_lock = threading.Lock()  # one flush writes at a time; taken before the buffer lock
        self._flush_timer: threading.Timer | None = None
        self._behind = False  # a flush is queued on the writer thread
        self._stopped = False
        # write-time decisions, ranking and auto_prune read the ledger on the hot path: no buffering then
        self._eager_ledger = bool(settings.write_decision or settings.rank or settings.auto_prune)
        # an app that exits without close() still gets its buffered ledger rows written
        self._exit_hook = functools.partial(_flush_at_exit, weakref.ref(self))
        atexit.register(self._exit_hook)
        super().__init__(*args, **kwargs)

    def buffer_new(self, rows: Iterable[LedgerRow]) -> None:
        """Queue the ledger rows of memories just added (written by the next flush)."""
        with self._buffer_lock:
            for row in rows:
                self._pending_new[row.memory_id] = row
                if holds_key(row):
                    key = key_scope(row)
                    held = self._keyed.get(key)
                    if held is None or held.created_at <= row.created_at:  # a tie: the one written last wins
                        self._keyed[key] = row

    def unbuffer_new(self, memory_id: str) -> LedgerRow | None:
        """Take a just-added memory's row back out of the queue (None when it is not queued)."""
        with self._buffer_lock:
            row = self._pending_new.pop(memory_id, None)
            if row is not None and holds_key(row) and self._keyed.get(key := key_scope(row)) is row:
                del self._keyed[key]
                for other in self._pending_new.values():  # the next newest buffered holder, if any
                    held = self._keyed.get(key)
                    if (
                        holds_key(other)
                        and key_scope(other) == key
                        and (held is None or held.created_at <= other.created_at)
                    ):
                        self._keyed[key] = other
            return row

    def overlaid(self, row: LedgerRow) -> LedgerRow:
        """``row`` as the ledger will hold it once the buffered rows are written: superseded by the newest
        buffered new row that holds its topic key in its scope (when that one is not older), else as it is."""
        if not self._keyed or row.topic_key is None:
            return row
        held = self._keyed.get(key_scope(row))
        if held is None or held.memory_id == row.memory_id or not holds_key(row) or row.created_at > held.created_at:
            return row
        return replace(row, superseded_by=held.memory_id, superseded_at=held.created_at)

    def settle_later(self, memory_ids: Iterable[str]) -> None:
        """Queue the closing of these finished deletes' journal entries (written by the next flush). Safe to
        lose: an entry left open only makes the next recovery look the point up again and find it gone."""
        with self._buffer_lock:
            self._settled.update(memory_ids)
        self.flush_soon()

    def settled_unwritten(self) -> set[str]:
        """Deletes known done whose journal entries are not closed in the ledger yet."""
        with self._buffer_lock:
            return set(self._settled)

    def row_for(self, item: dict[str, Any], rows: dict[str, LedgerRow]) -> LedgerRow:
        """The ledger row of a mem0 item (or vector-store point): from ``rows`` (the ledger's, looked up
        by the caller), else from the buffers, else a new adoption row, queued. Also takes the birth
        facts out of the item's ``metadata``."""
        mid = str(item["id"])
        row = rows.get(mid) or self._pending_new.get(mid) or self._pending_adopt.get(mid)
        if row is None:
            # mem0's items never show the birth facts (see memory/birth.py): read them from the point itself
            point = self.vector_store.get(vector_id=mid) if "payload" not in item else None
            raw = (
                point_item(point, mid)
                if point is not None and isinstance(getattr(point, "payload", None), dict)
                else item
            )
            row = adoption_row(raw, self.now)
            with self._buffer_lock:
                self._pending_adopt[mid] = row
        strip_birth(item)
        return self.overlaid(row)

    def note_uses(self, items: Iterable[dict[str, Any]], now: datetime) -> None:
        """Count one use of each item (returned by a read, or reinforced by a duplicate) at ``now``."""
        with self._buffer_lock:
            for item in items:
                mid = str(item["id"])
                count, _ = self._uses.get(mid, (0, now))
                self._uses[mid] = (count + 1, now)
        self.flush_soon()

    def note_reads(
        self, op: str, items: Iterable[dict[str, Any]], filters: dict[str, Any] | None, caller: str | None, at: str
    ) -> None:
        """With ``hygiene.read_log`` on: log that a read (``op``) served these items to this scope and caller at
        ``at`` (UTC ISO); written by the next flush. Nothing when it is off."""
        if not self._read_log:
            return
        scope = filters or {}
        user, agent, run = (scope.get(k) if isinstance(scope.get(k), str) else None for k in _SCOPE_KEYS)
        rows = [Read(at, op, str(item["id"]), user, agent, run, caller) for item in items]
        if rows:
            with self._buffer_lock:
                self._reads.extend(rows)
            self.flush_soon()

    def last_uses(self) -> dict[str, datetime]:
        """The last use of each memory used since the last flush (older uses are in the ledger)."""
        return {mid: when for mid, (_count, when) in self._uses.items()}

    def flush_soon(self) -> None:
        """Flush now when the buffers are full, have the writer thread flush when they fill up or hold a row
        with a topic key, else make sure a timer writes them within ``flush_after``."""
        pending = len(self._uses) + len(self._pending_adopt) + len(self._pending_new) + len(self._settled)
        pending += len(self._reads) // 8  # a read logs up to top_k rows: one batch holds several reads
        if not pending:
            return
        every = self.hygiene_settings.use_flush_every
        if self.hygiene_settings.flush_after <= 0 or self._eager_ledger or pending >= every * BEHIND_LIMIT:
            self.flush()
            return
        if pending >= every or self._keyed:  # a buffered supersede by topic key: other replicas wait for it
            with self._buffer_lock:
                if self._stopped:
                    return
                queue = not self._behind
                self._behind = True
            if queue:
                _submit(self._flush_behind)
                return
            # a write already queued may have taken its snapshot before the newest rows: the timer follows
        if (self._pending_new or self._reads) and self._flush_timer is None:
            with self._buffer_lock:
                if self._flush_timer is None:
                    timer = threading.Timer(self.hygiene_settings.flush_after, self._timer_flush)
                    timer.daemon = True
                    self._flush_timer = timer
                    timer.start()

    def _flush_behind(self) -> None:
        try:
            if not self._stopped:
                self.flush()
        except Exception as exc:  # never let the writer thread die noisily; the next flush retries
            logger.warning("background ledger flush failed (kept for the next flush): %s", exc)
        finally:
            with self._buffer_lock:
                self._behind = False

    def _timer_flush(self) -> None:
        with self._buffer_lock:
            self._flush_timer = None
        try:
            self.flush()
        except Exception as exc:  # never let the timer thread die noisily; the next flush retries
            logger.warning("background ledger flush failed (kept for the next flush): %s", exc)

    def flush_adoption(self, memory_id: str) -> None:
        """Flush when this memory's adoption row is still buffered (a change of its state needs its row in
        the ledger first); else leave the buffers to their batch."""
        if memory_id in self._pending_adopt:
            self.flush()

    def flush_keyed(self, memory_id: str) -> None:
        """Flush when this memory's row is buffered holding a topic key (it supersedes what held the key, and
        reads already say so: a change of its state needs that chain in the ledger first)."""
        row = self._pending_new.get(memory_id)
        if row is not None and holds_key(row):
            self.flush()

    def flush(self) -> None:
        """Write buffered ledger rows: new memories' rows, adoption rows and last-use counts.

        New rows are buffered because their facts are already safe in the memory's payload (see
        :data:`mem0_hygiene.memory.birth.BIRTH_KEYS`): if the process dies first, the next read
        rebuilds the row from there."""
        with self._flush_lock:
            with self._buffer_lock:
                new, adopt = list(self._pending_new.values()), list(self._pending_adopt.values())
                uses, settled = dict(self._uses), list(self._settled)
                reads = list(self._reads)
            if not new and not adopt and not uses and not settled and not reads:
                return
            started = time.perf_counter()
            try:  # outside the buffer lock: adds and reads go on meanwhile and still find these rows buffered
                self.ledger.insert(new, keep_state=True)  # never undoes what a replica did meanwhile
                self.ledger.insert(adopt, ignore_existing=True)
                self.ledger.record_uses(uses)
                self.ledger.settle(settled, "delete")
                record_reads(self.ledger, reads)
            except LedgerError as exc:
                logger.warning("could not write to the ledger (kept for the next flush): %s", exc)
                return
            record_flush(time.perf_counter() - started)
            with self._buffer_lock:  # take out what was written (not a row queued again meanwhile)
                for row in new:
                    if self._pending_new.get(row.memory_id) is row:
                        del self._pending_new[row.memory_id]
                    if row.topic_key is not None and self._keyed.get(key := key_scope(row)) is row:
                        del self._keyed[key]
                for row in adopt:
                    if self._pending_adopt.get(row.memory_id) is row:
                        del self._pending_adopt[row.memory_id]
                for mid, (count, when) in uses.items():
                    now_count, now_when = self._uses.get(mid, (0, when))
                    if now_count <= count:
                        self._uses.pop(mid, None)
                    else:  # read again meanwhile: those uses are for the next flush
                        self._uses[mid] = (now_count - count, now_when)
                self._settled.difference_update(settled)
                del self._reads[: len(reads)]  # the reads logged meanwhile stay for the next flush

    def stop_deferred_flushes(self) -> None:
        """Unregister the exit hook and cancel the flush timer (``close()`` then flushes itself)."""
        atexit.unregister(self._exit_hook)
        with self._buffer_lock:
            self._stopped = True  # a flush still queued on the writer thread does nothing
        timer = self._flush_timer
        if timer is not None:
            timer.cancel()


def _flush_at_exit(ref: weakref.ReferenceType[LedgerBufferMixin]) -> None:
    memory = ref()
    if memory is not None:
        try:
            memory.flush()
        except Exception:  # the interpreter is going away; the payload still holds the birth facts
            pass
