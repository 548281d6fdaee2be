"""Erasure checks: does every erasure receipt of the deployment still hold?

``forget --user ID`` (and ``--agent``, ``--run``) leaves a receipt per erasure in the receipts folder beside the
ledger (:mod:`mem0_hygiene.stores.erasures`). Something of an erased scope can come back afterwards: a restore of an
older backup set, a replica that still had it, the app writing it again. ``ERASURE_UNDONE`` re-checks each receipt
against what the audit has already read, cheaply (queries on the scratch database, no store opened again): points
of the scope and points whose text has one of the erased texts' sha256, live ledger rows of the erased memories,
and in every history.db read, rows of the erased memories holding an erased text and ``messages`` rows of the
scope. ``forget --verify RECEIPT`` is the full check (every registered copy too).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ...report import Severity
from ...stores.erasures import list_receipts, receipts_folder, scope_flags, scope_label
from .base import CheckResult, Context, check, finding

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
_SHA = "mh_sha256"


def _sha256(text: Any) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if isinstance(text, str) and text else None


def _folder(ctx: Context) -> str | None:
    by_role: dict[str, str | None] = {}
    for loc in ctx.locations:  # the deployment's own history.db comes before the other hosts'
        by_role.setdefault(loc.role, loc.path)
    return receipts_folder(by_role.get("ledger"), by_role.get("history_db"))


def _marks(values: Iterable[str]) -> str:
    return ",".join("?" for _ in values)


def _escape(value: str) -> str:  # mem0's session_scope escaping (actions/scope_messages.py)
    return str(value).replace("%", "%25").replace("&", "%26").replace("=", "%3D")


def _left(ctx: Context, doc: dict[str, Any]) -> list[str]:
    """What of the receipt's erasure is back, in words (empty: it holds)."""
    scope = {k: str(v) for k, v in dict(doc.get("scope") or {}).items() if k in SCOPE_KEYS and v}
    digests = sorted(set(doc.get("text_sha256") or []))
    ids = sorted({str(i) for i in doc.get("memory_ids") or []})
    out: list[str] = []
    db = ctx.db
    if db.sources.points and scope:
        where = " AND ".join(f"{k} = ?" for k in scope)
        n = db.one(f"SELECT COUNT(*) FROM points WHERE {where}", list(scope.values())) or 0
        if n:
            out.append(f"{n} point(s) of the scope")
    if db.sources.points and digests:
        n = db.one(f"SELECT COUNT(*) FROM points WHERE {_SHA}(text) IN ({_marks(digests)})", digests) or 0
        if n:
            out.append(f"{n} point(s) holding an erased text")
    if db.sources.ledger and db.ledger is not None and ids:
        n = _live_ledger(ctx, ids)
        if n:
            out.append(f"{n} live ledger row(s) of an erased memory")
    for h in db.histories:
        with db.attached(h) as alias:
            if ids and digests:
                n = (
                    db.one(
                        f"SELECT COUNT(*) FROM {alias}.history WHERE memory_id IN ({_marks(ids)}) AND "
                        f"({_SHA}(old_memory) IN ({_marks(digests)}) OR {_SHA}(new_memory) IN ({_marks(digests)}))",
                        [*ids, *digests, *digests],
                    )
                    or 0
                )
                if n:
                    out.append(f"{n} history row(s) holding an erased text in {h.shown}")
            if h.messages and scope:
                where = " AND ".join("instr('&' || session_scope || '&', ?) > 0" for _ in scope)
                n = (
                    db.one(
                        f"SELECT COUNT(*) FROM {alias}.messages WHERE {where}",
                        [f"&{k}={_escape(v)}&" for k, v in scope.items()],
                    )
                    or 0
                )
                if n:
                    out.append(f"{n} messages row(s) of the scope in {h.shown}")
    return out


def _live_ledger(ctx: Context, ids: list[str]) -> int:
    led = ctx.db.ledger
    assert led is not None
    params: dict[str, Any] = {f"i{k}": v for k, v in enumerate(ids)}
    params["now"] = ctx.now_iso
    marks = ",".join(f":i{k}" for k in range(len(ids)))
    return int(
        ctx.db.one(f"SELECT COUNT(*) FROM {led.keys} m WHERE m.memory_id IN ({marks}) AND {led.live_key('m')}", params)
        or 0
    )


@check(
    "ERASURE_UNDONE",
    "content",
    severity="error",
    means=(
        "something of a scope erased with `forget --user/--agent/--run` is back (a restore of an older backup, a "
        "replica, the app writing it again): points, history or messages rows, or live ledger rows its receipt "
        "says were erased"
    ),
    fix="erase the scope again (`mem0-hygiene forget --user ID`), then `forget --verify RECEIPT`; restore older "
    "backup sets with `restore --reapply-erasures`",
)
def erasure_undone(ctx: Context) -> CheckResult:
    folder = _folder(ctx)
    receipts = list_receipts(folder)
    if not receipts:
        return
    ctx.db.conn.create_function(_SHA, 1, _sha256, deterministic=True)
    latest: dict[str, tuple[str, dict[str, Any]]] = {}
    for path, doc in receipts:  # oldest first: a scope's later receipt is the one to check
        latest[scope_label(dict(doc.get("scope") or {}))] = (path, doc)
    back: list[tuple[str, dict[str, Any], list[str]]] = []
    for path, doc in latest.values():
        left = _left(ctx, doc)
        if left:
            back.append((path, doc, left))
    if not back:
        return
    scopes = [dict(doc.get("scope") or {}) for _p, doc, _l in back]
    yield finding(
        "ERASURE_UNDONE",
        Severity.ERROR,
        "content",
        f"{len(back)} of {len(latest)} erased scope(s) {'is' if len(back) == 1 else 'are'} back in the stores "
        "since their erasure",
        count=len(back),
        examples=[
            f"{scope_label(dict(doc.get('scope') or {}))} (erased {doc.get('erased_at')}, receipt {path}): "
            + ", ".join(left)
            for path, doc, left in back
        ][: ctx.examples],
        why="An erasure request was carried out and proven with a receipt; what is back is served again and the "
        "receipt no longer holds.",
        fix="\n".join(
            [ctx.cmd(f"forget {scope_flags(s)}") for s in scopes[:5]]
            + [ctx.cmd(f"forget --verify {path}") for path, _d, _l in back[:5]]
        ),
        receipts=[path for path, _d, _l in back],
        checked=len(latest),
    )
