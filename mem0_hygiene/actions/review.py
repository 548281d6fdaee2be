"""The review queue and its answers from outside the app: ``review_queue``, ``confirm``, ``invalidate``,
``supersede``. Each takes a config dict, the app's drop-in Memory or a resolved Target, and returns a result
object that renders itself."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from ..errors import ConfigError, MemoryNotFound, StateError
from ..memory.core import Memory
from ..memory.scope import SCOPE_KEYS
from ..stores.ledger import LedgerRow
from ..target import resolve
from ..timeutil import duration_text, parse_duration, to_iso
from .prune import memory_text
from .results import Change, ChangeResult, ReviewItem, ReviewQueue


def review_queue(target: Any, *, older_than: timedelta | str | None = None, limit: int = 20,
                 filters: dict[str, Any] | None = None) -> ReviewQueue:
    """The memories due for review (``Memory.review_queue``): live, non-expiring, last confirmed more
    than ``older_than`` ago (default ``hygiene.review_older_than``), oldest first, at most ``limit``;
    ``filters`` narrows to a scope (``{"user_id": "dana"}``)."""
    with resolve(target).memory_for("review", readonly=True) as m:
        delta = parse_duration(older_than, what="older_than") if older_than is not None \
            else m.hygiene_settings.review_older_than
        items = m.review_queue(older_than=delta, limit=limit, filters=filters)
        out = []
        for item in items:
            facts = item.get("hygiene") or {}
            out.append(ReviewItem(
                memory_id=str(item["id"]),
                text=item.get("memory"),
                source=facts.get("source"),
                source_kind=facts.get("source_kind") or "unknown",
                confirmed_at=facts.get("confirmed_at") or facts.get("created_at"),
                age_days=facts.get("age_days"),
                scope={k: str(item[k]) for k in SCOPE_KEYS if item.get(k)},
            ))
        return ReviewQueue(items=tuple(out), older_than=duration_text(older_than if older_than is not None else delta),
                           limit=limit, at=to_iso(m.now()))


def _state_of(m: Memory, memory_id: str) -> tuple[LedgerRow, str, str | None]:
    """(ledger row, state now, text) of a memory; adopts a memory only the store knows."""
    row = m.require_row(memory_id)
    return row, row.state(m.now()), memory_text(m, memory_id)


_CONFIRM_REFUSED = {
    "deleted": "it was deleted",
    "superseded": "it was superseded; confirm its replacement instead (`mem0-hygiene history ID` shows the chain)",
    "invalidated": "it was invalidated; add the fact again if it is true",
}


def confirm(target: Any, memory_ids: Sequence[str] | str, *, dry_run: bool = False) -> ChangeResult:
    """Mark memories as re-checked today (``Memory.confirm``; also releases a quarantined one).

    Every id is checked first, so a typo or a stale memory changes nothing at all."""
    ids = [memory_ids] if isinstance(memory_ids, str) else list(memory_ids)
    if not ids:
        raise ConfigError("confirm needs at least one memory id")
    with resolve(target).memory_for("confirm", readonly=dry_run) as m:
        checked = []
        for mid in ids:
            row, state, text = _state_of(m, mid)
            if state in _CONFIRM_REFUSED:
                raise StateError(f"cannot confirm {mid}: {_CONFIRM_REFUSED[state]}")
            checked.append((mid, state, text))
        changes = []
        for mid, state, text in checked:
            if dry_run:
                after = "live" if state == "quarantined" else state
            else:
                m.confirm(mid)
                now_row = m.ledger.get(mid)
                after = now_row.state(m.now()) if now_row is not None else state
            changes.append(Change(mid, "confirm", text, state, after))
        return ChangeResult(tuple(changes), dry_run, to_iso(m.now()))


def invalidate(target: Any, memory_id: str, reason: str, *, dry_run: bool = False) -> ChangeResult:
    """Declare a memory untrue (``Memory.invalidate``): hidden at once, kept for audit, deleted by a
    prune after ``hygiene.retain_superseded``. ``reason`` is required: it is what a later reader sees."""
    if not reason or not reason.strip():
        raise ConfigError("invalidate needs a reason (what is wrong with the memory), e.g. reason='moved to Rust'")
    with resolve(target).memory_for("invalidate", readonly=dry_run) as m:
        row, state, text = _state_of(m, memory_id)
        if state == "deleted":
            raise MemoryNotFound(memory_id, f"it was deleted on {row.deleted_at}")
        if not dry_run:
            m.invalidate(memory_id, reason=reason.strip())
        after = "superseded" if state == "superseded" else "invalidated"
        return ChangeResult((Change(memory_id, "invalidate", text, state, after, reason=reason.strip()),),
                            dry_run, to_iso(m.now()))


def supersede(target: Any, memory_id: str, text: str, *, source: str | None = None,
              dry_run: bool = False) -> ChangeResult:
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
            raise StateError(f"cannot supersede {memory_id}: it is already superseded by {row.superseded_by}; "
                             f"supersede that one instead")
        new_id = None if dry_run else m.supersede(memory_id, text.strip(), source=source)
        change = Change(memory_id, "supersede", old_text, state, "superseded", new_id=new_id,
                        new_text=text.strip(), source=source)
        return ChangeResult((change,), dry_run, to_iso(m.now()))
