"""Pruning: what a prune did (or would do), as typed results that the CLI and notebooks render, and
the drop-in ``Memory``'s ``prune`` and ``hygiene.auto_prune`` (:class:`PruneMixin`).

Importing this module does not import mem0 (``from mem0_hygiene import PruneResult`` stays light).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..progress import counted
from ..timeutil import to_iso
from .compaction import compact_ledger
from .metrics import record_pruned

if TYPE_CHECKING:
    from ..config import HygieneSettings
    from ..stores.ledger import Ledger

# The drop-in Memory logs under one name, whichever of its modules writes the record.
logger = logging.getLogger("mem0_hygiene.memory.core")


@dataclass(frozen=True)
class PrunedMemory:
    """One memory prune deleted or would delete.

    Fields:
        memory_id: mem0's id.
        reason: "expired", "superseded" or "invalidated".
        text: the memory's text when it was still in the store (None if already gone).
        scope: user_id / agent_id / run_id it belonged to.
    """

    memory_id: str
    reason: str
    text: str | None
    scope: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PruneResult:
    """The outcome of ``Memory.prune``.

    Fields:
        memories: what was (or, with dry_run, would be) deleted, with the reason.
        dry_run: True when nothing was deleted.
        at: when the prune ran (UTC ISO).
        cascaded: memories deleted only because a memory they had been superseded by was pruned.
        unused: with ``unused=`` (``mem0_hygiene.maintenance.prune``): live memories neither used nor
            confirmed for that long (reason "unused"), listed, and deleted only with ``delete_unused``.
        unused_older_than: the ``unused`` window as given ("180d"); None when not asked.
        unused_deleted: True when the ``unused`` memories were deleted.
        delete_unused: True when asked to delete them (``--yes``): a dry run says it would.
        tombstones_purged: ledger rows of long-deleted memories removed by the compaction afterwards
            (with dry_run: that would be removed).
        leftovers: tombstoned memories whose points were still in the vector store (a delete that a crash
            interrupted, or a compacted tombstone's point), deleted through mem0's API (with dry_run: would be).
        adopted: memories plain mem0 wrote that the prune gave a ledger row first (source "unknown", mem0's own
            ``expiration_date`` as their expiry), so what mem0 itself considers expired is pruned too.
        ledger_created: the ledger file this prune created (with dry_run: would create), because the store had
            none yet; None when it was there.
    """

    memories: tuple[PrunedMemory, ...]
    dry_run: bool
    at: str
    cascaded: tuple[str, ...] = ()
    unused: tuple[PrunedMemory, ...] = ()
    unused_older_than: str | None = None
    unused_deleted: bool = False
    delete_unused: bool = False
    tombstones_purged: int = 0
    leftovers: tuple[str, ...] = ()
    adopted: int = 0
    ledger_created: str | None = None

    @property
    def count(self) -> int:
        return len(self.memories) + len(self.cascaded)

    def by_reason(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for m in self.memories:
            out[m.reason] = out.get(m.reason, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, plus ``count`` and ``by_reason`` (credentials in texts
        redacted, as in every output; see :func:`mem0_hygiene.render.text.revealing_secrets`)."""
        from ..display.text import redacted_data

        return redacted_data(
            {
                "dry_run": self.dry_run,
                "at": self.at,
                "count": self.count,
                "by_reason": self.by_reason(),
                "memories": [_memory_dict(m) for m in self.memories],
                "cascaded": list(self.cascaded),
                "unused_older_than": self.unused_older_than,
                "unused": [_memory_dict(m) for m in self.unused],
                "unused_deleted": self.unused_deleted,
                "tombstones_purged": self.tombstones_purged,
                "leftovers": list(self.leftovers),
                "adopted": self.adopted,
                "ledger_created": self.ledger_created,
            }
        )

    def summary(self) -> str:
        """One line: what was (or would be) deleted and compacted."""
        verb = "would delete" if self.dry_run else "deleted"
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.by_reason().items()))
        parts = [
            f"{verb} {len(self.memories)} memor{'y' if len(self.memories) == 1 else 'ies'}"
            + (f" ({reasons})" if reasons else "")
        ]
        if self.cascaded:
            parts.append(f"{len(self.cascaded)} superseded with them")
        if self.unused_older_than is not None:
            done = (
                "deleted"
                if self.unused_deleted
                else ("would delete" if self.dry_run and self.delete_unused else "listed, not deleted")
            )
            parts.append(f"{len(self.unused)} unused for {self.unused_older_than} ({done})")
        if self.leftovers:
            parts.append(f"{len(self.leftovers)} leftover point(s) of deleted memories")
        parts.append(f"{self.tombstones_purged} old tombstone row(s) {'to compact' if self.dry_run else 'compacted'}")
        if self.adopted:
            parts.append(
                f"{self.adopted} memor{'y' if self.adopted == 1 else 'ies'} written by plain mem0 "
                f"{'would be' if self.dry_run else 'were'} adopted first (mem0's expiration_date counts)"
            )
        if self.ledger_created:
            parts.append(f"{'would create' if self.dry_run else 'created'} the ledger at {self.ledger_created}")
        return "; ".join(parts)

    def _rows(self) -> list[tuple[Any, ...]]:
        from ..display.tables import short, state_cell

        rows: list[tuple[Any, ...]] = []
        for m in self.memories:
            rows.append((m.memory_id, state_cell(m.reason), short(m.text), _scope_text(m.scope)))
        for mid in self.cascaded:
            rows.append((mid, state_cell("superseded"), "(superseded by a pruned memory)", "-"))
        for m in self.unused:
            fate = (
                "" if self.unused_deleted else (" (would delete)" if self.dry_run and self.delete_unused else " (kept)")
            )
            rows.append((m.memory_id, ("unused" + fate, "yellow"), short(m.text), _scope_text(m.scope)))
        for mid in self.leftovers:
            rows.append((mid, state_cell("deleted"), "(point of a deleted memory, still in the store)", "-"))
        return rows

    def __rich__(self) -> Any:
        from ..display.tables import rich_table
        from ..display.text import heading_time

        title = "prune (dry run)" if self.dry_run else "prune"
        return rich_table(
            f"{title} at {heading_time(self.at)}",
            ("memory", "reason", "text", "scope"),
            self._rows(),
            caption=self.summary(),
        )

    def _repr_html_(self) -> str:
        from ..display.tables import html_table
        from ..display.text import heading_time

        title = "prune (dry run)" if self.dry_run else "prune"
        return html_table(
            f"{title} at {heading_time(self.at)}",
            ("memory", "reason", "text", "scope"),
            self._rows(),
            caption=self.summary(),
        )


def _memory_dict(m: PrunedMemory) -> dict[str, Any]:
    return {"memory_id": m.memory_id, "reason": m.reason, "text": m.text, "scope": dict(m.scope)}


def _scope_text(scope: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in scope.items()) or "-"


class PruneMixin:
    """Mixin: ``prune`` and ``hygiene.auto_prune``.

    Expects from the class it is mixed into: ``ledger``, ``hygiene_settings``, ``now()``, ``flush()``,
    ``delete_ids()`` (tombstone, then delete through mem0, with the chains), ``adopt()`` and ``finish_deletes()``
    (:class:`~mem0_hygiene.memory.recovery.RecoveryMixin`). Its ``__init__`` sets up the auto-prune
    state, then passes the call on along the MRO.
    """

    ledger: Ledger
    hygiene_settings: HygieneSettings

    if TYPE_CHECKING:

        def now(self) -> datetime: ...
        def flush(self) -> None: ...
        def delete_ids(self, memory_ids: Sequence[str]) -> list[str]: ...
        def finish_deletes(self, limit: int | None = None, *, dry_run: bool = False) -> tuple[list[str], bool]: ...
        def adopt(self) -> int: ...

    AUTO_PRUNE_STEP = 1
    """How many prunable memories (each with the chain it superseded) one add/search call deletes at
    most while an auto_prune run has work left."""

    AUTO_PRUNE_TOMBSTONES = 64
    """How many old tombstones one call looks at once the memories are done (a lookup each, cheap)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._last_prune: datetime | None = None  # when the current (or last) prune run started
        self._prune_pending = False  # an auto_prune run has work left for the next calls
        self._auto_prune_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def prune(self, dry_run: bool = False) -> PruneResult:
        """Delete (through mem0's API) expired memories and those superseded or invalidated more than
        ``hygiene.retain_superseded`` ago, after finishing deletes a crash interrupted (tombstoned memories
        whose points are still in the vector store, whatever their age: ``leftovers``). ``dry_run=True``
        only lists them. One replica at a time on a shared ledger: a second waits, then finds only what is
        left (``Ledger.exclusive``)."""
        with self.ledger.exclusive("prune"):
            return self._prune(dry_run)

    def _prune(self, dry_run: bool) -> PruneResult:
        from mem0 import Memory as Mem0Memory  # imported by then (this is mixed into a mem0 Memory)

        self.flush()
        leftovers, _more = self.finish_deletes(dry_run=dry_run)
        adopted = self.adopt()  # memories plain mem0 wrote: their own expiration_date is expiry too
        now = self.now()
        pruned: list[PrunedMemory] = []
        candidates = list(self.ledger.prune_candidates(now, self.hygiene_settings.retain_superseded))
        for row, reason in counted("reading what to prune", candidates):
            item = Mem0Memory.get(self, row.memory_id)
            pruned.append(PrunedMemory(row.memory_id, reason, item["memory"] if item else None, row.scope))
        cascaded: list[str] = []
        if not dry_run and pruned:
            targets = {p.memory_id for p in pruned}
            for p in pruned:
                cascaded += [c for c in self.ledger.predecessors(p.memory_id) if c not in targets]
            self.delete_ids([p.memory_id for p in pruned])
        self._last_prune = now
        self._prune_pending = False
        if not dry_run:
            record_pruned(m.reason for m in pruned)
        return PruneResult(
            memories=tuple(pruned),
            dry_run=dry_run,
            at=to_iso(now),
            cascaded=tuple(cascaded),
            leftovers=tuple(leftovers),
            adopted=adopted,
        )

    def maybe_auto_prune(self, now: datetime) -> None:
        """``hygiene.auto_prune``: a prune spread thinly over the app's own add/search calls.

        A run starts at most once per interval (the first call after start-up starts one). While it
        has work left, each add/search call does one bounded step after its own work is done: finish at
        most :attr:`AUTO_PRUNE_TOMBSTONES` deletes a crash interrupted, then delete at most
        :attr:`AUTO_PRUNE_STEP` prunable memories, then, once none are left, compact at most
        :attr:`AUTO_PRUNE_TOMBSTONES` old tombstones; a step that finds nothing ends the run. Outside a
        run the cost is one time comparison. A failure is logged and never reaches the app's call; the
        run is then retried after the interval. A non-blocking lock keeps two threads (or a re-entered
        call) from stepping at once: the second simply skips.

        Synchronous on purpose, not a background thread: local Qdrant, the store that most needs
        in-process pruning (no second process can open it), is not thread-safe. Its client keeps each
        collection in numpy arrays that ``add`` replaces (``np.append``) without a lock, so a delete
        from another thread can be lost or a concurrent search can see arrays of different lengths;
        with SQLite builds where ``THREADSAFE=2`` (macOS) its storage connection even refuses other
        threads; and mem0's entity store shares the same client. mem0's own history.db connection
        would be fine (``check_same_thread=False`` and a lock), and so is the ledger. Making a thread
        safe would mean a lock around every store call of the app, which would then wait for the
        deletion anyway; one small step per call costs about the same and stays deterministic.
        A large backlog is better cleared in one go with ``mem0_hygiene.maintenance.prune(m)``.
        """
        interval = self.hygiene_settings.auto_prune
        if interval is None:
            return
        if not self._prune_pending and self._last_prune is not None and now - self._last_prune < interval:
            return
        if not self._auto_prune_lock.acquire(blocking=False):
            return
        try:
            if not self._prune_pending:
                self._last_prune = now
            self._prune_pending = self._auto_prune_step(now)
        except Exception as exc:  # maintenance must never break the app's own call
            self._prune_pending = False
            logger.warning("auto_prune failed (will retry after the interval): %s", exc)
        finally:
            self._auto_prune_lock.release()

    def _auto_prune_step(self, now: datetime) -> bool:
        """One bounded piece of an auto_prune run. True when it did something (more may be left). Skipped
        (the run ends) while another replica sharing the ledger prunes."""
        with self.ledger.exclusive("prune", wait=False) as held:
            return self._auto_prune_piece(now) if held else False

    def _auto_prune_piece(self, now: datetime) -> bool:
        leftovers, more = self.finish_deletes(limit=self.AUTO_PRUNE_TOMBSTONES)
        if leftovers or more:
            return True  # interrupted deletes first: their points are still served by plain mem0
        retain = self.hygiene_settings.retain_superseded
        found = self.ledger.prune_candidates(now, retain, limit=self.AUTO_PRUNE_STEP)
        if found:
            self.delete_ids([row.memory_id for row, _reason in found])
            logger.info("auto_prune deleted %s", ", ".join(f"{row.memory_id} ({why})" for row, why in found))
            return True
        done = compact_ledger(self, now - retain, limit=self.AUTO_PRUNE_TOMBSTONES)
        if done.purged or done.leftovers:
            logger.info("auto_prune compacted the ledger: %d old tombstone row(s) removed", done.purged)
        # a batch that was all kept (points that cannot be deleted, deletes history.db never recorded) would
        # come back first every time: the run ends there, and maintenance.prune() goes through all of them
        return done.more and bool(done.purged or done.leftovers)
