"""The review queue and its answers from outside the app: ``review_queue``, ``confirm``, ``invalidate``,
``supersede``. Each takes a config dict, the app's drop-in Memory or a resolved Target, and returns a result
object that renders itself.

``confirm`` and ``invalidate`` change only the ledger (one compare-and-set transaction, see
:mod:`mem0_hygiene.stores.state_changes`), and from outside the app they open only the ledger and history.db when the
memories have ledger rows (:mod:`.ledger_session`); ``review_queue`` falls back to the ledger alone while the app holds
the store. ``supersede`` stores a new fact, so it needs the vector store and the app's embedder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from ..errors import ConfigError, StateError, StoreLocked
from ..memory.conflicts import open_conflicts
from ..memory.core import Memory
from ..memory.scope import SCOPE_KEYS
from ..stores.history import HistoryAndLedger
from ..stores.ledger import LedgerRow
from ..stores.state_changes import (
    confirm_refusal,
    confirm_rows,
    confirmed,
    invalidate_refusal,
    invalidate_row,
    invalidated,
)
from ..target import locked_error, resolve
from ..timeutil import duration_text, parse_duration, to_iso
from .ledger_session import last_text, ledger_now, ledger_session
from .prune import memory_text
from .results import Change, ChangeResult, ConflictItem, ReviewItem, ReviewQueue


def review_queue(
    target: Any, *, older_than: timedelta | str | None = None, limit: int = 20, filters: dict[str, Any] | None = None
) -> ReviewQueue:
    """The memories due for review (``Memory.review_queue``): live, non-expiring, last confirmed more
    than ``older_than`` ago (default ``hygiene.review_older_than``), oldest first, at most ``limit``;
    ``filters`` narrows to a scope (``{"user_id": "dana"}``).

    From a config while another process (the app) holds the local Qdrant folder, the queue comes from the
    ledger and history.db alone (:func:`queue_from_ledger`): the same items, except memories without a ledger
    row, which cannot be adopted from the held store until it is free."""
    tgt = resolve(target)
    try:
        with tgt.memory_for("review", readonly=True) as m:
            return _queue_of(m, older_than, limit, filters)
    except StoreLocked:  # refused before anything was opened
        if tgt.memory is not None:
            raise
        return queue_from_ledger(tgt, older_than=older_than, limit=limit, filters=filters)


def _queue_of(m: Memory, older_than: timedelta | str | None, limit: int, filters: dict[str, Any] | None) -> ReviewQueue:
    delta = (
        parse_duration(older_than, what="older_than")
        if older_than is not None
        else m.hygiene_settings.review_older_than
    )
    items = m.review_queue(older_than=delta, limit=limit, filters=filters)
    out = []
    for item in items:
        facts = item.get("hygiene") or {}
        out.append(
            _item(str(item["id"]), item.get("memory"), facts, {k: str(item[k]) for k in SCOPE_KEYS if item.get(k)})
        )
    m.flush()  # possible conflicts are read from the ledger
    conflicts = _conflicts(m.ledger, m.now(), limit, filters, lambda mid: memory_text(m, mid))
    return ReviewQueue(
        items=tuple(out),
        older_than=duration_text(older_than if older_than is not None else delta),
        limit=limit,
        at=to_iso(m.now()),
        conflicts=conflicts,
    )


def _conflicts(
    ledger: Any, now: Any, limit: int, filters: dict[str, Any] | None, text: Callable[[str], str | None]
) -> tuple[ConflictItem, ...]:
    """The open possible conflicts (:func:`~mem0_hygiene.memory.conflicts.open_conflicts`) in the scope of
    ``filters``, with both texts (``text(memory_id)``)."""
    scope = {k: v for k, v in (filters or {}).items() if k in SCOPE_KEYS and v}
    found = open_conflicts(ledger, now)
    rows = ledger.get_many([c.memory_id for c in found]) if scope and found else {}
    out = []
    for c in found:
        row = rows.get(c.memory_id)
        if scope and (row is None or any(row.scope.get(k) != v for k, v in scope.items())):
            continue
        out.append(
            ConflictItem(
                c.memory_id, text(c.memory_id), c.compared_id, text(c.compared_id), c.reason, c.found_at, c.similarity
            )
        )
        if len(out) >= limit:
            break
    return tuple(out)


def _item(memory_id: str, text: str | None, facts: dict[str, Any], scope: dict[str, str]) -> ReviewItem:
    return ReviewItem(
        memory_id=memory_id,
        text=text,
        source=facts.get("source"),
        source_kind=facts.get("source_kind") or "unknown",
        confirmed_at=facts.get("confirmed_at") or facts.get("created_at"),
        age_days=facts.get("age_days"),
        scope=scope,
    )


def queue_from_ledger(
    target: Any, *, older_than: timedelta | str | None = None, limit: int = 20, filters: dict[str, Any] | None = None
) -> ReviewQueue:
    """:func:`review_queue` read from the ledger and history.db only (never the vector store): the rows
    ``Memory.review_queue`` would pick, each with its text from history.db; a memory whose history ends in a
    DELETE (its point is gone) is left out, as the drop-in leaves out one missing from the store. Memories
    without a ledger row are not adopted, so they are not in it. Refused (:class:`StoreLocked`) when there
    is no ledger yet and another process holds the store: then every memory would need adopting."""
    tgt = resolve(target)
    scope = {k: v for k, v in (filters or {}).items() if k in SCOPE_KEYS and v}
    delta = parse_duration(older_than, what="older_than") if older_than is not None else tgt.settings.review_older_than
    with HistoryAndLedger.open(tgt.now(), tgt.history_path, tgt.ledger_path) as src:
        if src.ledger is None:
            holder = tgt.lock_holder()
            if holder:
                raise locked_error(holder, "review")
            return ReviewQueue(
                items=(),
                older_than=duration_text(older_than if older_than is not None else delta),
                limit=limit,
                at=to_iso(tgt.now()),
            )
        now = ledger_now(tgt, src.ledger)
        rows = src.ledger.review_candidates(now, delta, limit, scope)
        history = src.history_for([r.memory_id for r in rows])
        out = []
        for row in rows:
            events = history.get(row.memory_id, [])
            if events and str(events[-1][1]).upper() == "DELETE":
                continue  # deleted through mem0 behind the ledger's back: the audit reports it
            out.append(_item(row.memory_id, last_text(events), Memory.hygiene_facts(row, now), row.scope))

        def text(mid: str) -> str | None:
            return last_text(src.history_for([mid]).get(mid, []))

        conflicts = _conflicts(src.ledger, now, limit, filters, text)
        return ReviewQueue(
            items=tuple(out),
            older_than=duration_text(older_than if older_than is not None else delta),
            limit=limit,
            at=to_iso(now),
            conflicts=conflicts,
        )


def _state_of(m: Memory, memory_id: str) -> tuple[LedgerRow, str, str | None]:
    """(ledger row, state now, text) of a memory; adopts a memory only the store knows."""
    row = m.require_row(memory_id)
    return row, row.state(m.now()), memory_text(m, memory_id)


def confirm(target: Any, memory_ids: Sequence[str] | str, *, dry_run: bool = False) -> ChangeResult:
    """Mark memories as re-checked today (``Memory.confirm``; also releases a quarantined one).

    Every id is checked first and all are changed in one ledger transaction, so a typo or a stale memory
    changes nothing at all. Memories the ledger has rows of need only the ledger (and history.db for their
    text): from outside the app this works while the app holds its local Qdrant store (see
    :func:`~mem0_hygiene.actions.ledger_session.ledger_session`)."""
    ids = list(dict.fromkeys([memory_ids] if isinstance(memory_ids, str) else memory_ids))  # each once
    if not ids:
        raise ConfigError("confirm needs at least one memory id")
    with ledger_session(resolve(target), "confirm", ids, readonly=dry_run) as s:
        if dry_run:
            rows = s.rows(ids)
            pairs = []
            for mid in ids:
                refused = confirm_refusal(mid, rows[mid], s.now)
                if refused is not None:
                    raise refused
                pairs.append((rows[mid], confirmed(rows[mid], s.now)))
        else:
            pairs = confirm_rows(s.ledger, ids, s.now)
        changes = tuple(
            Change(mid, "confirm", s.text(mid), before.state(s.now), after.state(s.now))
            for mid, (before, after) in zip(ids, pairs)
        )
        return ChangeResult(changes, dry_run, to_iso(s.now))


def invalidate(target: Any, memory_id: str, reason: str, *, dry_run: bool = False) -> ChangeResult:
    """Declare a memory untrue (``Memory.invalidate``): hidden at once, kept for audit, deleted by a
    prune after ``hygiene.retain_superseded``. ``reason`` is required: it is what a later reader sees.

    One ledger transaction, compare-and-set: a memory that is deleted, superseded (already hidden; invalidate
    its replacement instead) or already invalidated is refused with its state. Like :func:`confirm`, it needs
    only the ledger when the memory has a row."""
    if not reason or not reason.strip():
        raise ConfigError("invalidate needs a reason (what is wrong with the memory), e.g. reason='moved to Rust'")
    why = reason.strip()
    with ledger_session(resolve(target), "invalidate", [memory_id], readonly=dry_run) as s:
        if dry_run:
            row = s.rows([memory_id])[memory_id]
            refused = invalidate_refusal(memory_id, row, s.now)
            if refused is not None:
                raise refused
            before, after = row, invalidated(row, why, s.now)
        else:
            before, after = invalidate_row(s.ledger, memory_id, why, s.now)
        change = Change(memory_id, "invalidate", s.text(memory_id), before.state(s.now), after.state(s.now), reason=why)
        return ChangeResult((change,), dry_run, to_iso(s.now))


def supersede(
    target: Any, memory_id: str, text: str, *, source: str | None = None, dry_run: bool = False
) -> ChangeResult:
    """Replace a memory by a new fact (``Memory.supersede``): the new one is stored in the old one's
    scope with the given ``source``, the old one is hidden and points at it. With a config target the
    app's real embedder is used for the new text (see :meth:`mem0_hygiene.target.Target.open_memory`)."""
    if not text or not text.strip():
        raise ConfigError("supersede needs the new fact's text")
    with resolve(target).memory_for("supersede", for_writing_text=not dry_run, readonly=dry_run) as m:
        row, state, old_text = _state_of(m, memory_id)
        if state in ("deleted", "invalidated"):
            raise StateError(f"cannot supersede {memory_id}: it is {state}; there is nothing live to replace")
        if state == "superseded":
            raise StateError(
                f"cannot supersede {memory_id}: it is already superseded by {row.superseded_by}; "
                f"supersede that one instead"
            )
        new_id = None if dry_run else m.supersede(memory_id, text.strip(), source=source)
        change = Change(
            memory_id, "supersede", old_text, state, "superseded", new_id=new_id, new_text=text.strip(), source=source
        )
        return ChangeResult((change,), dry_run, to_iso(m.now()))
