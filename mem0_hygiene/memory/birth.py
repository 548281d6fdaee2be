"""A memory's birth facts in its payload: the keys, the payload the drop-in writes, and the ledger rows
rebuilt from a payload (or made up for a memory the ledger never knew).

The birth facts are written into the payload by the same mem0 ``add`` that stores the memory, so a
crash before its ledger row is written loses nothing: the next read rebuilds the row from them.

The payload keys are flat and scalar, so every vector store mem0 supports takes them (Chroma accepts
scalar metadata only) and every provider's ``list(filters=...)`` finds them by equality:

- :data:`BIRTH_TEXT` (``hygiene_birth``): the facts as one compact JSON text (source, kind, expiry,
  quarantine, topic key);
- :data:`BIRTH_REPLACES` / :data:`BIRTH_REPLACES_HOW` (``hygiene_replaces``, ``hygiene_replaces_how``),
  only on a memory stored to replace another (``supersede``, or a write-time decision): which memory it
  replaces and how. If the process dies between mem0 storing it and the ledger linking the two, the next
  start finds it by a flat filter on that key and links it (see :mod:`mem0_hygiene.memory.recovery`).

The drop-in takes these keys out of every result's ``metadata``: its items show exactly the metadata the
app gave. A plain mem0 reader of the same store shows every payload key mem0 does not know in
``metadata``, so it sees them there too (``{"hygiene_birth": "{...}"}`` beside the app's own keys, and the
two ``hygiene_replaces*`` keys on a replacement); its memories, ids, texts and scopes are untouched.

Payloads written by earlier versions are still read: the facts under the payload key ``"id"`` (as JSON
text, or as a mapping on a replacement) and the older top-level ``hygiene_*`` keys. The drop-in's
``update`` rewrites such a payload in the new shape when it next writes the memory.
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
BIRTH_TEXT = "hygiene_birth"
"""The payload key holding the birth facts other than the two replacement keys, as one compact JSON text."""
LEGACY_HOLDER = "id"
"""Where earlier versions held the birth facts (JSON text, or a mapping): read, rewritten on the next update."""
BIRTH_KEYS = (
    BIRTH_TEXT,
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
    them under :data:`BIRTH_TEXT` (see :func:`birth_metadata`)."""
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
"""How a JSON text of birth facts begins (the kind is always its first key)."""
_REPLACING = (BIRTH_REPLACES, BIRTH_REPLACES_HOW)


def birth_metadata(metadata: dict[str, Any] | None, facts: dict[str, Any]) -> dict[str, Any]:
    """The metadata to give mem0's ``add``: the app's own, plus ``facts`` merged with any already there:
    :data:`BIRTH_TEXT` a JSON text, the replacement keys flat beside it."""
    meta = dict(metadata or {})
    held = birth_of(meta) if (BIRTH_TEXT in meta or LEGACY_HOLDER in meta) else None
    if held is None and next(iter(facts), None) == BIRTH_SOURCE_KIND and not any(k in facts for k in _REPLACING):
        meta[BIRTH_TEXT] = _facts_text(tuple(facts.items()))  # the common case (birth_facts puts the kind first)
        return meta
    merged = {BIRTH_SOURCE_KIND: None, **(held or {}), **facts}  # the kind first (see _JSON_MARK)
    if merged[BIRTH_SOURCE_KIND] is None:
        merged[BIRTH_SOURCE_KIND] = "unknown"
    return {**meta, **shaped(merged)}


def shaped(facts: dict[str, Any]) -> dict[str, Any]:
    """The payload keys holding ``facts`` in the current shape (:data:`BIRTH_TEXT` plus the flat replacement
    keys when the facts have them); the legacy holder, when given facts, is emptied."""
    out: dict[str, Any] = {BIRTH_TEXT: _facts_text(tuple((k, v) for k, v in facts.items() if k not in _REPLACING))}
    for key in _REPLACING:
        if facts.get(key) is not None:
            out[key] = str(facts[key])
    return out


def upgraded(payload: Any) -> dict[str, Any] | None:
    """The metadata that rewrites a payload written in an earlier shape in the current one (for mem0's
    ``update``, which merges it into the payload; the legacy holder is left empty), None when the payload is
    in the current shape or has no birth facts."""
    if not isinstance(payload, dict) or BIRTH_TEXT in payload:
        return None
    facts = birth_of(payload)
    if facts is None:
        return None
    out = shaped({k: v for k, v in facts.items() if k in BIRTH_KEYS and k != BIRTH_TEXT})
    if LEGACY_HOLDER in payload:
        out[LEGACY_HOLDER] = ""  # mem0 never shows "id" as metadata; "" holds no facts
    return out


@functools.lru_cache(maxsize=256)
def _facts_text(items: tuple[tuple[str, Any], ...]) -> str:
    """The JSON text of birth facts (most adds repeat a few: a kind, a source, no expiry)."""
    return json.dumps(dict(items), separators=(",", ":"))


def held_facts(held: Any) -> dict[str, Any] | None:
    """The birth facts a held value holds (a mapping or its JSON text), None when it holds none."""
    if isinstance(held, str) and held.startswith(_JSON_MARK):
        try:
            held = json.loads(held)
        except ValueError:
            return None
    if isinstance(held, dict) and BIRTH_SOURCE_KIND in held:
        return held
    return None


def birth_of(payload: Any) -> dict[str, Any] | None:
    """The birth facts in a payload (or a legacy item's metadata), None when the drop-in wrote none: the
    current shape, else the facts under the legacy holder, else the top-level keys of the oldest stores."""
    if not isinstance(payload, dict):
        return None
    held = held_facts(payload.get(BIRTH_TEXT))
    if held is None:
        held = held_facts(payload.get(LEGACY_HOLDER))
        if held is not None:
            return held
    elif payload.get(BIRTH_REPLACES) is None:
        return held
    else:
        return {**held, **{k: payload[k] for k in _REPLACING if payload.get(k) is not None}}
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
    """Result items look exactly like mem0's showing the app's metadata: the birth-fact keys (current and
    earlier top-level ones) are taken out of ``metadata`` (``item`` is changed in place; a ``metadata`` left
    empty becomes None). mem0 itself never shows the legacy holder ``"id"``."""
    meta = item.get("metadata")
    if isinstance(meta, dict) and (BIRTH_TEXT in meta or BIRTH_SOURCE_KIND in meta or BIRTH_REPLACES in meta):
        for key in BIRTH_KEYS:
            meta.pop(key, None)
        if not meta:
            item["metadata"] = None
