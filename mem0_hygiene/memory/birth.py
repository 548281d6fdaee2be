"""A memory's birth facts in its payload: the keys, the payload the drop-in writes, and the ledger rows
rebuilt from a payload (or made up for a memory the ledger never knew).

The birth facts are written into the payload by the same mem0 ``add`` that stores the memory, so a
crash before its ledger row is written loses nothing: the next read rebuilds the row from them. They
are kept under one payload key, :data:`BIRTH_HOLDER` (``"id"``), that mem0 itself never writes and
leaves out of every item's ``metadata`` (mem0's ``get``, ``get_all`` and ``search`` build ``metadata``
from the payload minus its own keys, ``id`` among them): a plain mem0 reader of the same store, and the
drop-in, show exactly the metadata the app gave. They are held as one compact JSON text (mem0 deep-copies
and walks every nested mapping of the metadata it is given, which cost about 1.7% of a plain add), except
for a memory stored to replace another: its facts stay a mapping, so recovery finds it with a filter on the
nested key. Both forms are read, and so are the top-level ``hygiene_*`` payload keys of stores written by
earlier versions (taken out of the drop-in's own results).

A memory stored to replace another (``supersede``, or a write-time decision) also carries which memory
it replaces and how (:data:`BIRTH_REPLACES`, :data:`BIRTH_REPLACES_HOW`): if the process dies between
mem0 storing it and the ledger linking the two, the next start finds it by that fact and links it
(see :mod:`mem0_hygiene.memory.recovery`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..errors import ConfigError
from ..stores.ledger import LedgerRow
from ..timeutil import parse_time, to_iso
from .provenance import TOOL_ROLES

BIRTH_SOURCE = "hygiene_source"
BIRTH_SOURCE_KIND = "hygiene_source_kind"
BIRTH_EXPIRES = "hygiene_expires_at"
BIRTH_QUARANTINED = "hygiene_quarantined"
BIRTH_TOPIC = "hygiene_topic_key"
BIRTH_REPLACES = "hygiene_replaces"
"""The id of the memory this one was stored to replace."""
BIRTH_REPLACES_HOW = "hygiene_replaces_how"
"""How: "supersede", or "invalidate" with the reason after a colon ("invalidate:negation cue 'no longer'")."""
BIRTH_HOLDER = "id"
"""The payload key holding the birth facts (a dict): one mem0 never writes and never shows as metadata."""
BIRTH_KEYS = (
    BIRTH_SOURCE,
    BIRTH_SOURCE_KIND,
    BIRTH_EXPIRES,
    BIRTH_QUARANTINED,
    BIRTH_TOPIC,
    BIRTH_REPLACES,
    BIRTH_REPLACES_HOW,
)


def birth_facts(
    source: str | None, kind: str, expires: str | None, quarantined: bool, topic_key: str | None
) -> dict[str, Any]:
    """The facts that let a lost ledger row be rebuilt (only the ones with a value); the payload carries
    them as ``{BIRTH_HOLDER: facts}`` (see :func:`birth_metadata`)."""
    out: dict[str, Any] = {BIRTH_SOURCE_KIND: kind}
    if source is not None:
        out[BIRTH_SOURCE] = source
    if expires is not None:
        out[BIRTH_EXPIRES] = expires
    if quarantined:
        out[BIRTH_QUARANTINED] = True
    if topic_key is not None:
        out[BIRTH_TOPIC] = topic_key
    return out


def replaces_facts(old_id: str, action: str = "supersede", reason: str = "") -> dict[str, Any]:
    """The birth facts saying which memory a new one replaces: ``action`` "supersede" or "invalidate"
    (with the invalidation's ``reason``)."""
    return {BIRTH_REPLACES: old_id, BIRTH_REPLACES_HOW: action if action == "supersede" else f"{action}:{reason}"}


_JSON_MARK = '{"' + BIRTH_SOURCE_KIND + '"'
"""How a held JSON text of birth facts begins (the kind is always its first key)."""


def birth_metadata(metadata: dict[str, Any] | None, facts: dict[str, Any]) -> dict[str, Any]:
    """The metadata to give mem0's ``add``: the app's own, plus ``facts`` merged under :data:`BIRTH_HOLDER`
    (a JSON text; a mapping when they say which memory this one replaces)."""
    meta = dict(metadata or {})
    held = held_facts(meta.get(BIRTH_HOLDER))
    if held is None and next(iter(facts), None) == BIRTH_SOURCE_KIND:
        merged = facts  # the common case (birth_facts puts the kind first)
    else:  # the kind first (see _JSON_MARK), with its merged value
        merged = {BIRTH_SOURCE_KIND: None, **(held or {}), **facts}
    meta[BIRTH_HOLDER] = merged if BIRTH_REPLACES in merged else _facts_text(tuple(merged.items()))
    return meta


@functools.lru_cache(maxsize=256)
def _facts_text(items: tuple[tuple[str, Any], ...]) -> str:
    """The JSON text of birth facts (most adds repeat a few: a kind, a source, no expiry)."""
    return json.dumps(dict(items), separators=(",", ":"))


def held_facts(held: Any) -> dict[str, Any] | None:
    """The birth facts a :data:`BIRTH_HOLDER` value holds (a mapping or its JSON text), None when it holds none."""
    if isinstance(held, str) and held.startswith(_JSON_MARK):
        try:
            held = json.loads(held)
        except ValueError:
            return None
    if isinstance(held, dict) and BIRTH_SOURCE_KIND in held:
        return held
    return None


def birth_of(payload: Any) -> dict[str, Any] | None:
    """The birth facts in a payload (or a legacy item's metadata), None when the drop-in wrote none."""
    if not isinstance(payload, dict):
        return None
    held = held_facts(payload.get(BIRTH_HOLDER))
    if held is not None:
        return held
    if BIRTH_SOURCE_KIND in payload or BIRTH_REPLACES in payload:  # written by an earlier version
        return payload
    return None


def replaced_by_birth(payload: dict[str, Any] | None) -> tuple[str, str, str] | None:
    """(old id, action, reason) when this payload's memory was stored to replace another, else None."""
    birth = birth_of(payload)
    if birth is None or not birth.get(BIRTH_REPLACES):
        return None
    action, _, reason = str(birth.get(BIRTH_REPLACES_HOW) or "supersede").partition(":")
    return str(birth[BIRTH_REPLACES]), action, reason


def point_item(point: Any, memory_id: str | None = None) -> dict[str, Any]:
    """A vector-store point as the item :func:`adoption_row` reads (id, payload, scope, times); ``memory_id``:
    the id it was fetched by (else the point's own). A payload that is not a dict counts as empty."""
    raw = getattr(point, "payload", None)
    payload = dict(raw) if isinstance(raw, dict) else {}
    return {
        "id": memory_id if memory_id is not None else str(point.id),
        "payload": payload,
        "created_at": payload.get("created_at"),
        "expiration_date": payload.get("expiration_date"),
        "user_id": payload.get("user_id"),
        "agent_id": payload.get("agent_id"),
        "run_id": payload.get("run_id"),
    }


def adoption_row(item: dict[str, Any], now: Callable[[], datetime]) -> LedgerRow:
    """A ledger row for a memory the ledger does not know: from its birth facts in the payload when the
    drop-in wrote it (its row was still buffered when the process died), else source "unknown".

    ``item`` is a mem0 result item or a vector-store point; ``now`` is the clock, asked only when the
    item has no usable ``created_at``."""
    facts = birth_of(item.get("payload")) or birth_of(item.get("metadata"))
    if facts is not None:
        return _row_from_birth(item, facts, now)
    birth = item.get("metadata") or item.get("payload") or {}
    created = item.get("created_at")
    try:
        created_iso = to_iso(parse_time(created)) if created else to_iso(now())
    except ConfigError:
        created_iso = to_iso(now())
    expires = None
    exp_date = item.get("expiration_date")
    if exp_date:
        try:
            expires = to_iso(parse_time(str(exp_date)[:10]) + timedelta(days=1))
        except ConfigError:
            expires = None
    # mem0 keeps each message's role in the payload: a memory plain mem0 stored from a tool/function message is
    # tool output (an injected "fact", perhaps), so it is adopted as such and quarantined until confirmed
    payload: dict[str, Any] = item["payload"] if isinstance(item.get("payload"), dict) else {}
    role = item.get("role") or payload.get("role") or (birth.get("role") if isinstance(birth, dict) else None)
    from_tool = role in TOOL_ROLES
    return LedgerRow(
        memory_id=str(item["id"]),
        user_id=item.get("user_id"),
        agent_id=item.get("agent_id"),
        run_id=item.get("run_id"),
        source=f"unknown ({role} message)" if from_tool else "unknown",
        source_kind="tool" if from_tool else "unknown",
        created_at=created_iso,
        confirmed_at=created_iso,
        expires_at=expires,
        quarantined=from_tool,
        adopted=True,
    )


def _row_from_birth(item: dict[str, Any], birth: dict[str, Any], now: Callable[[], datetime]) -> LedgerRow:
    try:  # mem0's own created_at (the drop-in passes its clock's time when the clock is injected)
        created = to_iso(parse_time(item["created_at"])) if item.get("created_at") else to_iso(now())
    except ConfigError:
        created = to_iso(now())
    return LedgerRow(
        memory_id=str(item["id"]),
        user_id=item.get("user_id"),
        agent_id=item.get("agent_id"),
        run_id=item.get("run_id"),
        source=birth.get(BIRTH_SOURCE),
        source_kind=str(birth.get(BIRTH_SOURCE_KIND) or "unknown"),
        created_at=created,
        confirmed_at=created,
        expires_at=birth.get(BIRTH_EXPIRES),
        quarantined=bool(birth.get(BIRTH_QUARANTINED)),
        topic_key=birth.get(BIRTH_TOPIC),
    )


def strip_birth(item: dict[str, Any]) -> None:
    """Result items look exactly like mem0's: birth facts a store written by an earlier version kept as
    top-level payload keys are taken out of ``metadata`` (``item`` is changed in place; a ``metadata`` left
    empty becomes None). mem0 itself never shows :data:`BIRTH_HOLDER`."""
    meta = item.get("metadata")
    if isinstance(meta, dict) and (BIRTH_SOURCE_KIND in meta or BIRTH_REPLACES in meta):
        for key in BIRTH_KEYS:
            meta.pop(key, None)
        if not meta:
            item["metadata"] = None
