"""A memory's birth facts in its payload: the keys, the payload the drop-in writes, and the ledger rows
rebuilt from a payload (or made up for a memory the ledger never knew).

The birth facts are written into the payload by the same mem0 ``add`` that stores the memory, so a
crash before its ledger row is written loses nothing: the next read rebuilds the row from them. They
are taken out of ``metadata`` in every result, so items look exactly like mem0's.

A memory stored to replace another (``supersede``, or a write-time decision) also carries which memory
it replaces and how (:data:`BIRTH_REPLACES`, :data:`BIRTH_REPLACES_HOW`): if the process dies between
mem0 storing it and the ledger linking the two, the next start finds it by that fact and links it
(see :mod:`mem0_hygiene.memory.recovery`).
"""

from __future__ import annotations

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
BIRTH_KEYS = (BIRTH_SOURCE, BIRTH_SOURCE_KIND, BIRTH_EXPIRES, BIRTH_QUARANTINED, BIRTH_TOPIC, BIRTH_REPLACES,
              BIRTH_REPLACES_HOW)


def birth_payload(source: str | None, kind: str, expires: str | None, quarantined: bool,
                  topic_key: str | None) -> dict[str, Any]:
    """The payload keys that let a lost ledger row be rebuilt (only the ones with a value)."""
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


def replaces_payload(old_id: str, action: str = "supersede", reason: str = "") -> dict[str, Any]:
    """The payload keys saying which memory a new one replaces: ``action`` "supersede" or "invalidate"
    (with the invalidation's ``reason``)."""
    return {BIRTH_REPLACES: old_id, BIRTH_REPLACES_HOW: action if action == "supersede" else f"{action}:{reason}"}


def replaced_by_birth(payload: dict[str, Any] | None) -> tuple[str, str, str] | None:
    """(old id, action, reason) when this payload's memory was stored to replace another, else None."""
    if not isinstance(payload, dict) or not payload.get(BIRTH_REPLACES):
        return None
    action, _, reason = str(payload.get(BIRTH_REPLACES_HOW) or "supersede").partition(":")
    return str(payload[BIRTH_REPLACES]), action, reason


def adoption_row(item: dict[str, Any], now: Callable[[], datetime]) -> LedgerRow:
    """A ledger row for a memory the ledger does not know: from its birth facts in the payload when the
    drop-in wrote it (its row was still buffered when the process died), else source "unknown".

    ``item`` is a mem0 result item or a vector-store point; ``now`` is the clock, asked only when the
    item has no usable ``created_at``."""
    birth = item.get("metadata") or item.get("payload") or {}
    if isinstance(birth, dict) and BIRTH_SOURCE_KIND in birth:
        return _row_from_birth(item, birth, now)
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
    """Result items look exactly like mem0's: the birth facts stay in the payload, not in ``metadata``
    (``item`` is changed in place; a ``metadata`` left empty becomes None)."""
    meta = item.get("metadata")
    if isinstance(meta, dict) and BIRTH_SOURCE_KIND in meta:
        for key in BIRTH_KEYS:
            meta.pop(key, None)
        if not meta:
            item["metadata"] = None
