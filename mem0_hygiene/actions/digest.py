"""Read-only views from outside the app: the daily ``digest`` and a memory's story (``memory_story``).

They read history.db and the ledger, so they work while the app runs and holds a local Qdrant folder. The
one thing they take from the vector store is the birth facts of memories the ledger does not know yet (the
app died before its buffered ledger rows were written): read from the payload the way the drop-in rebuilds
such a row, through the app's own store in-process, or from outside when the store can be read without
waiting on the app or writing anything (see :func:`birth_rows`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..display.text import plural
from ..errors import ConfigError, MemoryNotFound
from ..memory.birth import adoption_row, birth_of
from ..memory.conflicts import open_conflicts
from ..memory.provenance import kind_from_source
from ..stores.consolidation_log import applied_reasons
from ..stores.history import HistoryAndLedger, needs_rollback
from ..stores.ledger import LedgerRow
from ..stores.sqlite import files_under
from ..target import Target, is_dropin, resolve
from ..timeutil import parse_time, to_iso, window_start_time
from .results import ChainLink, Digest, DigestItem, Story, StoryEvent


def _when(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return parse_time(str(value))
    except ConfigError:
        return None


def _last_text(events: list[tuple[Any, ...]]) -> str | None:
    text = None
    for _mid, event, old, new, _c, _u in events:
        if new is not None:
            text = new
        elif str(event).upper() == "DELETE" and old is not None:
            text = old
    return text


def _is_tool(row: LedgerRow | None) -> bool:
    if row is None:
        return False
    return row.source_kind == "tool" or kind_from_source(row.source) == "tool"


def _open(tgt: Target) -> HistoryAndLedger:
    """history.db and the ledger of the deployment, read-only; the app's own ledger in-process."""
    memory = tgt.memory
    if memory is None:
        return HistoryAndLedger.open(tgt.now(), tgt.history_path, tgt.ledger_path)
    if not is_dropin(memory):
        raise ConfigError("pass the drop-in mem0_hygiene.Memory (or a config dict), not plain mem0.Memory")
    return HistoryAndLedger.open(
        tgt.now(), tgt.history_path, tgt.ledger_path, ledger=memory.ledger, history=memory.db.connection
    )


def _payloads(tgt: Target, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The vector-store payloads of these memories, where they can be read without waiting on the app or
    writing to a store: through the app's store in-process; from outside, a Qdrant server, or a local folder
    nobody holds whose files need no recovery. {} otherwise."""
    if tgt.memory is not None:
        store = tgt.memory.vector_store
        out = {}
        for mid in ids:
            point = store.get(vector_id=mid)
            if point is not None:
                out[mid] = dict(point.payload or {})
        return out
    if tgt.provider != "qdrant":  # another provider, read through the seam (nothing of it is locked)
        from ..stores.vector import for_target

        try:
            with for_target(tgt, action="read the birth facts of new memories") as store:
                return {mid: dict(p.get("payload") or {}) for mid, p in store.get(ids).items()}
        except Exception:  # not readable from here (an unsupported provider, a server down): "untracked"
            return {}
    if tgt.lock_holder():
        return {}  # the app runs: its buffered rows are at most hygiene.flush_after old
    folder = tgt.vector_path
    if folder and any(needs_rollback(p) for p in files_under(folder)):
        return {}  # reading it would roll back a hot journal: a write
    try:
        with tgt.vector_client("read the birth facts of new memories") as client:
            points = client.retrieve(collection_name=tgt.collection, ids=ids, with_payload=True, with_vectors=False)
    except Exception:  # no store to read (or not reachable): the memories stay "untracked"
        return {}
    return {str(p.id): dict(p.payload or {}) for p in points}


def birth_rows(tgt: Target, ids: list[str], now: datetime) -> dict[str, LedgerRow]:
    """Ledger rows rebuilt from the birth facts in the payload (as the drop-in does on its next read) for
    memories the ledger does not know: written by the drop-in in a process that died before flushing their
    rows. Memories without birth facts (plain mem0's) get none: they are untracked."""
    if not ids:
        return {}
    out = {}
    for mid, payload in _payloads(tgt, ids).items():
        if birth_of(payload) is not None:
            item = {
                "id": mid,
                "payload": payload,
                **{k: payload.get(k) for k in ("created_at", "expiration_date", "user_id", "agent_id", "run_id")},
            }
            out[mid] = adoption_row(item, lambda: now)
    return out


def window_start(since: timedelta | datetime | str, now: datetime) -> datetime:
    """The start of a window given as a duration back from ``now`` ("1d", "12h", a timedelta) or as a
    time (a datetime or an ISO string such as "2026-08-01"; see :func:`mem0_hygiene.timeutil.parse_time`)."""
    return window_start_time(since, now, what="since")


def digest(target: Any, since: timedelta | datetime | str = "1d") -> Digest:
    """The memories written since ``since`` (a duration such as "1d", or an ISO time), with their
    source: tool/web-sourced first (the injected "facts" to catch), then those of unknown source, then
    the rest, oldest first within each group.

    Written = an ``ADD`` in history.db or a ledger row created in the window, so memories stored by
    plain mem0 (no ledger row: state "untracked") are included. Reads history.db and the ledger (and the
    birth facts of memories whose ledger rows the app never wrote, see :func:`birth_rows`).
    """
    tgt = resolve(target)
    with _open(tgt) as src:
        now = src.now
        start = window_start(since, now)
        start_iso = to_iso(start)
        created: dict[str, datetime] = {}
        if src.ledger is not None:
            for recorded in src.ledger.iter_rows("created_at >= ? AND created_at <= ?", (start_iso, to_iso(now))):
                when = _when(recorded.created_at)
                if when is not None:
                    created[recorded.memory_id] = when
        # Text prefilter a day wide (times in history.db may carry other offsets), then exact times.
        prefix = to_iso(start - timedelta(days=1))[:10]
        for mid, _event, _old, _new, created_at, _updated in src.history_rows(
            "event = 'ADD' AND created_at >= ?", (prefix,)
        ):
            when = _when(created_at)
            if when is not None and start <= when <= now:
                created.setdefault(str(mid), when)
        rows = src.rows(list(created))
        if src.ledger is not None:  # without a ledger no drop-in ever wrote here: no birth facts to find
            rows.update(birth_rows(tgt, [mid for mid in created if mid not in rows], now))
        history = src.history_for(created)
        conflicts: dict[str, str] = {}
        if src.ledger is not None:
            for c in reversed(open_conflicts(src.ledger, now)):  # the newest one of each memory last: kept
                if c.memory_id in created:
                    other = _last_text(src.history_for([c.compared_id]).get(c.compared_id, []))
                    conflicts[c.memory_id] = f"with {c.compared_id} {other!r}: {c.reason}"
        items = []
        for mid, when in created.items():
            row = rows.get(mid)
            events = history.get(mid, [])
            if row is not None:
                state = row.state(now)
            elif any(str(e[1]).upper() == "DELETE" for e in events):
                state = "deleted"
            else:
                state = "untracked"
            items.append(
                DigestItem(
                    memory_id=mid,
                    text=_last_text(events),
                    source=row.source if row else None,
                    source_kind=row.source_kind if row else "unknown",
                    state=state,
                    created_at=to_iso(when),
                    scope=row.scope if row else {},
                    tool_sourced=_is_tool(row),
                    instruction=row.flag if row else None,
                    redacted=tuple(row.redacted.split(",")) if row and row.redacted else (),
                    conflict=conflicts.get(mid),
                )
            )

        def rank(item: DigestItem) -> tuple[int, str, str]:
            group = 0 if item.tool_sourced or item.instruction else (1 if item.source_kind == "unknown" else 2)
            return (group, item.created_at, item.memory_id)

        return Digest(items=tuple(sorted(items, key=rank)), since=start_iso, until=to_iso(now))


CONFIRMATIONS_SHOWN = 10
"""How many confirmations of one memory a story lists by default (the latest; the earlier ones are one line)."""

_CONFIRMED_HOW = {
    "confirm": "re-checked against its source",
    "update": "re-checked: a new text through update()",
    "seeded": "re-checked against its source (the last confirmation kept before the ledger logged every one)",
}


def memory_story(target: Any, memory_id: str, *, confirmations: int | None = CONFIRMATIONS_SHOWN) -> Story:
    """A memory's full story, oldest first: its supersede chain both ways (what it replaced,
    transitively, and what replaced it) and every event of each memory in that chain, from history.db
    (ADD/UPDATE/DELETE with texts) and the ledger (recorded with source, every confirmation, superseded,
    invalidated with reason, expired, last used, tombstoned). Reads history.db and the ledger (and the birth
    facts of a memory whose ledger row the app never wrote, see :func:`birth_rows`).

    ``confirmations``: how many of one memory's confirmations are listed, the latest (None: every one); the
    earlier ones are one "confirmed" event saying how many there were ("and N more ...")."""
    tgt = resolve(target)
    with _open(tgt) as src:
        now = src.now
        before: list[str] = []
        after: list[str] = []
        if src.ledger is not None:
            before = list(reversed(src.ledger.predecessors(memory_id)))
            after = src.ledger.successors(memory_id)
        chain_ids = [*before, memory_id, *after]
        rows = src.rows(chain_ids)
        if src.ledger is not None:
            rows.update(birth_rows(tgt, [mid for mid in chain_ids if mid not in rows], now))
        history = src.history_for(chain_ids)
        consolidated = applied_reasons(src.ledger, chain_ids)  # why `consolidate` merged or superseded them
        logged = src.ledger.confirmations(chain_ids) if src.ledger is not None else {}
        if memory_id not in rows and memory_id not in history:
            raise MemoryNotFound(
                memory_id,
                "neither history.db nor the ledger knows it; check the id "
                "(`mem0-hygiene digest --since 30d` lists recent ones)",
            )
        depth = {mid: -(len(before) - i) for i, mid in enumerate(before)}
        depth.update({mid: i + 1 for i, mid in enumerate(after)})
        depth[memory_id] = 0
        chain = []
        events: list[tuple[datetime | None, int, int, StoryEvent]] = []
        seq = 0

        def add(at: Any, mid: str, event: str, text: str | None, detail: str, origin: str) -> None:
            nonlocal seq
            when = _when(at)
            seq += 1
            events.append(
                (
                    when,
                    depth[mid],
                    seq,
                    StoryEvent(
                        at=to_iso(when) if when else str(at or ""),
                        memory_id=mid,
                        event=event,
                        text=text,
                        detail=detail,
                        origin=origin,
                    ),
                )
            )

        for mid in chain_ids:
            row = rows.get(mid)
            hist = history.get(mid, [])
            text = _last_text(hist)
            for _m, event, old, new, created_at, updated_at in hist:
                ev = str(event).upper()
                at = created_at if ev == "ADD" else (updated_at or created_at)
                if ev == "UPDATE":
                    add(at, mid, ev, new, f"was: {old}" if old is not None else "", "history.db")
                elif ev == "DELETE":
                    add(at, mid, ev, old, "deleted through mem0's API", "history.db")
                else:
                    add(at, mid, ev, new, "", "history.db")
            state = (
                row.state(now)
                if row
                else ("deleted" if any(str(h[1]).upper() == "DELETE" for h in hist) else "untracked")
            )
            chain.append(
                ChainLink(mid, depth[mid], text, state, row.source if row else None, row.superseded_by if row else None)
            )
            if row is None:
                continue
            if row.adopted:
                add(row.created_at, mid, "adopted", text, "written without the wrapper; source unknown", "ledger")
            else:
                detail = f"source: {row.source or '(none)'} ({row.source_kind})"
                if row.quarantined:
                    detail += "; quarantined until confirmed"
                if row.scope:
                    detail += "; " + ", ".join(f"{k}={v}" for k, v in row.scope.items())
                add(row.created_at, mid, "recorded", text, detail, "ledger")
            confirmed = logged.get(mid, [])
            if not confirmed and row.confirmed_at and row.confirmed_at != row.created_at:
                confirmed = [(row.confirmed_at, "seeded")]  # a ledger older than the log: its last one only
            shown = confirmed if confirmations is None else confirmed[len(confirmed) - max(confirmations, 0) :]
            earlier = confirmed[: len(confirmed) - len(shown)]
            if earlier:
                add(
                    earlier[0][0],
                    mid,
                    "confirmed",
                    text,
                    f"and {plural(len(earlier), 'more confirmation', 'more confirmations')} from "
                    f"{earlier[0][0][:10]} to {earlier[-1][0][:10]}, not listed (history --all lists every one)",
                    "ledger",
                )
            for at, via in shown:
                add(at, mid, "confirmed", text, _CONFIRMED_HOW.get(via, via), "ledger")
            if row.superseded_at:
                why = f"; {consolidated[mid]}" if mid in consolidated else ""
                add(row.superseded_at, mid, "superseded", text, f"by {row.superseded_by}{why}", "ledger")
            if row.invalid_at:
                add(row.invalid_at, mid, "invalidated", text, f"reason: {row.invalid_reason or '-'}", "ledger")
            if row.expires_at:
                expired = row.expires_at <= to_iso(now)
                add(
                    row.expires_at,
                    mid,
                    "expired" if expired else "expires",
                    text,
                    "hidden from reads since" if expired else "will be hidden from reads then",
                    "ledger",
                )
            if row.last_used_at:
                served = plural(row.use_count, "time", "times")
                add(row.last_used_at, mid, "last used", text, f"served {served} in all", "ledger")
            if row.deleted_at:
                add(row.deleted_at, mid, "tombstoned", text, "deleted through the wrapper; kept hidden", "ledger")

        # At the same moment a memory's arrival comes first: a supersede stores the new memory and marks
        # the old one in one step, and the story reads better in that order.
        far = datetime.max.replace(tzinfo=now.tzinfo)
        arrivals = ("ADD", "recorded", "adopted")
        ordered = sorted(events, key=lambda e: (e[0] or far, e[3].event not in arrivals, e[1], e[2]))
        return Story(memory_id=memory_id, chain=tuple(chain), events=tuple(e[3] for e in ordered), at=to_iso(now))
