"""Maintenance operations: prune, the review queue and its answers, the daily digest, a memory's story.

Each function takes a ``target``: the app's mem0 config dict (as passed to ``Memory.from_config``,
``"hygiene"`` section included; None for mem0's defaults) or a live drop-in
:class:`~mem0_hygiene.memory.core.Memory`. With a config, the stores are opened for the call and closed
after; with a live Memory, the app's own open stores are used: the route for a local Qdrant folder
that the running app holds locked (a second process cannot open it). The CLI commands of the same
names are thin layers over these functions and render the same result objects.

- :func:`open_memory`: open the drop-in from a config, refusing clearly while another process holds
  the local Qdrant folder, and without any API key unless new text must be embedded.
- :func:`prune` -> :class:`~mem0_hygiene.memory.pruning.PruneResult`: expired memories, superseded/invalidated
  ones past retention, optionally long-unused ones, then ledger compaction (old tombstones, with
  ``secure_delete``). Every deletion goes through mem0's API.
- :func:`review_queue` -> :class:`ReviewQueue`; :func:`confirm`, :func:`invalidate`,
  :func:`supersede` -> :class:`ChangeResult`.
- :func:`digest` -> :class:`Digest` and :func:`memory_story` -> :class:`Story` read only history.db and
  the ledger (never the vector store), so they also work from outside while the app runs.

Nothing here prints or imports click.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from mem0 import Memory as Mem0Memory

from ..config import default_ledger_path, split_config
from ..config_loader import for_maintenance
from ..errors import ConfigError, HygieneError, LedgerError, MemoryNotFound, StateError, StoreLocked
from ..memory.core import Memory
from ..memory.provenance import kind_from_source
from ..memory.pruning import PrunedMemory, PruneResult
from ..offline import OFFLINE_PROVIDER
from ..stores.ledger import Ledger, LedgerRow
from ..stores.locations import default_history_db_path, location_of, resolve_locations
from ..stores.qdrant import is_locked, is_qdrant_folder, locked_message
from ..stores.sqlite import connect as sqlite_connect
from ..timeutil import as_utc, parse_duration, parse_time, to_iso
from .compaction import compact_ledger
from .results import (
    ChainLink,
    Change,
    ChangeResult,
    Digest,
    DigestItem,
    ReviewItem,
    ReviewQueue,
    Story,
    StoryEvent,
)

__all__ = [
    "ChainLink",
    "Change",
    "ChangeResult",
    "Digest",
    "DigestItem",
    "EmbedderUnavailable",
    "ReviewItem",
    "ReviewQueue",
    "Story",
    "StoreMissing",
    "StoryEvent",
    "confirm",
    "digest",
    "invalidate",
    "memory_story",
    "open_memory",
    "prune",
    "review_queue",
    "store_lock_holder",
    "supersede",
    "window_start",
]

_SCOPE_KEYS = ("user_id", "agent_id", "run_id")

IN_PROCESS_HINTS: dict[str, str] = {
    "prune": "In the app: `from mem0_hygiene.maintenance import prune; prune(m)`, or set hygiene.auto_prune='24h' "
             "so the app prunes itself a little at a time.",
    "review": "In the app: `from mem0_hygiene.maintenance import review_queue; review_queue(m)`, then "
              "m.confirm(id), m.invalidate(id, reason=...) or m.supersede(id, 'new fact', source=...).",
    "confirm": "In the app: m.confirm(id).",
    "invalidate": "In the app: m.invalidate(id, reason=...).",
    "supersede": "In the app: m.supersede(id, 'new fact', source=...).",
}
"""The in-process equivalent named after the locked-store message, per operation."""

_KEY_HINTS = {
    "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "gemini": "GOOGLE_API_KEY",
    "together": "TOGETHER_API_KEY",
}


class StoreMissing(HygieneError):
    """The config names a local Qdrant folder that holds no store."""


class EmbedderUnavailable(ConfigError):
    """The app's embedder cannot start here (typically: its API key is not set), so new text cannot be
    embedded. Reading and deleting need no embedder; use them, or set the key."""


# --------------------------------------------------------------------------------------------- opening


def _vector_paths(config: dict[str, Any]) -> list[str]:
    """Local Qdrant folders this config may open: its path, and for a defaulted path on a temp folder
    also the persistent place the drop-in moves it to at start-up."""
    from ..stores.guard import _persistent_home

    locs = resolve_locations(config)
    vs = location_of(locs, "vector_store")
    if vs.provider != "qdrant" or not vs.is_local or vs.path is None:
        return []
    paths = [os.path.expanduser(vs.path)]
    if vs.defaulted:
        history = location_of(locs, "history_db").path or default_history_db_path()
        paths.append(_persistent_home(history))
    return list(dict.fromkeys(paths))


def store_lock_holder(config: dict[str, Any] | None) -> str | None:
    """The local Qdrant folder of ``config`` that another client holds locked right now, or None."""
    for path in _vector_paths(dict(config or {})):
        if is_locked(path):
            return path
    return None


def _locked(path: str, action: str) -> StoreLocked:
    hint = IN_PROCESS_HINTS.get(action, "")
    return StoreLocked(locked_message(path, action) + (" " + hint if hint else ""))


def _embedder_check(config: dict[str, Any]) -> None:
    """Start the config's embedder once, so a missing API key is reported before any store is opened."""
    from mem0.utils.factory import EmbedderFactory

    from ..config import build_mem0_config

    mem0_part, _settings, _facts = split_config(config)
    built = build_mem0_config(mem0_part)
    provider = built.embedder.provider
    if provider == OFFLINE_PROVIDER:
        return
    try:
        EmbedderFactory.create(provider, built.embedder.config, built.vector_store.config)
    except Exception as exc:
        conf = built.embedder.config or {}
        model = conf.get("model") if isinstance(conf, dict) else None
        env = _KEY_HINTS.get(provider)
        key_hint = (f"set {env} (or embedder.config.api_key in the config) in this shell" if env
                    else "give it what it needs (API key, endpoint) in this shell")
        raise EmbedderUnavailable(
            f"writing a new fact needs the app's embedder ({provider}{' ' + model if model else ''}) to embed it, "
            f"and it could not start here: {type(exc).__name__}: {exc}. It probably needs an API key: {key_hint} "
            "and retry. Commands that only read or delete (prune, review --list, confirm, invalidate, digest, "
            "history) need no key."
        ) from exc


def open_memory(config: dict[str, Any] | None, *, for_writing_text: bool = False, action: str = "open",
                must_exist: bool = True) -> Memory:
    """The drop-in Memory over the stores ``config`` names, for maintenance from outside the app.

    Refuses with :class:`~mem0_hygiene.errors.StoreLocked` (naming the remedies, and the in-process
    equivalent of ``action``) when another process holds the local Qdrant folder: checked before
    anything is opened or created. ``for_writing_text=False`` swaps the embedder and LLM for the
    offline ones (no API key; fine for reading and deleting). ``for_writing_text=True`` keeps the app's
    real embedder, which new text must be embedded with, and raises :class:`EmbedderUnavailable` when it
    cannot start (its API key is missing); only the LLM is swapped (nothing here infers). Automatic
    pruning (``hygiene.auto_prune``) is turned off in the returned instance: a maintenance command does
    only what it is asked. With ``must_exist`` (the default) a local Qdrant store that is not there is
    an error rather than created empty (a wrong path, or a store on /tmp wiped at reboot). The caller
    closes it (``m.close()``), which releases the folder.
    """
    cfg: dict[str, Any] = dict(config or {})
    holder = store_lock_holder(cfg)
    if holder:
        raise _locked(holder, action)
    paths = _vector_paths(cfg)
    if must_exist and paths and not any(is_qdrant_folder(p) for p in paths):
        raise StoreMissing(
            f"no local Qdrant store at {paths[0]}, so there is nothing to {action}. Pass the app's config "
            "with --config FILE (or --qdrant-path/--history-db); if the store should be there, run "
            "`mem0-hygiene audit` with the same options (a store under /tmp may have been wiped at reboot)"
        )
    if for_writing_text:
        cfg["llm"] = {"provider": OFFLINE_PROVIDER}
        _embedder_check(cfg)
    else:
        cfg = for_maintenance(cfg)
    cfg["hygiene"] = {**dict(cfg.get("hygiene") or {}), "auto_prune": None}
    try:
        return Memory.from_config(cfg)
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            paths = _vector_paths(cfg)
            raise _locked(paths[-1] if paths else "?", action) from exc
        raise


@contextlib.contextmanager
def _memory_for(target: Any, *, for_writing_text: bool = False, action: str) -> Iterator[Memory]:
    """A live drop-in Memory is used as it is; a config is opened for the block and closed after."""
    if isinstance(target, Memory):
        target.flush()  # buffered ledger rows first: the maintenance reads the ledger
        yield target
        return
    if isinstance(target, Mem0Memory):
        raise ConfigError("pass the drop-in mem0_hygiene.Memory (or a config dict), not plain mem0.Memory: "
                          "plain mem0 has no ledger to keep the maintenance facts in")
    if target is not None and not isinstance(target, dict):
        raise ConfigError(f"target must be a mem0 config dict or a mem0_hygiene.Memory, not {type(target).__name__}")
    m = open_memory(target, for_writing_text=for_writing_text, action=action)
    try:
        yield m
    finally:
        m.close()


def _duration_text(value: timedelta | str) -> str:
    if isinstance(value, str):
        return value.strip()
    seconds = int(value.total_seconds())
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# --------------------------------------------------------------------------------------------- prune


def prune(target: Any, *, dry_run: bool = False, unused: timedelta | str | None = None,
          delete_unused: bool = False) -> PruneResult:
    """Prune a deployment: everything ``Memory.prune`` deletes (expired memories; superseded and
    invalidated ones older than ``hygiene.retain_superseded``), then compact the ledger.

    ``unused="180d"`` also lists live memories neither used (``last_used_at``) nor confirmed
    (``confirmed_at``) for that long (a never-used one counts from its creation); they are deleted
    only with ``delete_unused=True``. Compaction removes tombstones older than ``retain_superseded``
    once their points are certainly gone (a point still there is deleted through mem0's API first),
    on a connection with ``secure_delete`` on. ``dry_run`` deletes nothing and says what would go.
    Every deletion goes through mem0's API, so history.db records a DELETE for each.
    """
    if delete_unused and unused is None:
        raise ConfigError("delete_unused needs unused='180d' (how long unused and unconfirmed)")
    window = parse_duration(unused, what="unused") if unused is not None else None
    with _memory_for(target, action="prune") as m:
        result = m.prune(dry_run=dry_run)
        now = m.now()
        listed: tuple[PrunedMemory, ...] = ()
        deleted_unused = False
        if window is not None:
            m.flush()
            rows = m.ledger.unused_candidates(now, window)
            listed = tuple(PrunedMemory(r.memory_id, "unused", _text(m, r.memory_id), r.scope) for r in rows)
            if delete_unused and not dry_run and listed:
                m._delete_ids([p.memory_id for p in listed])
                deleted_unused = True
        compaction = compact_ledger(m, now - m.hygiene_settings.retain_superseded, dry_run=dry_run)
        return replace(
            result,
            unused=listed,
            unused_older_than=_duration_text(unused) if unused is not None else None,
            unused_deleted=deleted_unused,
            tombstones_purged=compaction.purged,
            leftovers=compaction.leftovers,
        )


def _text(m: Memory, memory_id: str) -> str | None:
    item = Mem0Memory.get(m, memory_id)
    return item.get("memory") if item else None


# --------------------------------------------------------------------------------------------- review


def review_queue(target: Any, *, older_than: timedelta | str | None = None, limit: int = 20,
                 filters: dict[str, Any] | None = None) -> ReviewQueue:
    """The memories due for review (``Memory.review_queue``): live, non-expiring, last confirmed more
    than ``older_than`` ago (default ``hygiene.review_older_than``), oldest first, at most ``limit``;
    ``filters`` narrows to a scope (``{"user_id": "dana"}``)."""
    with _memory_for(target, action="review") as m:
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
                scope={k: str(item[k]) for k in _SCOPE_KEYS if item.get(k)},
            ))
        return ReviewQueue(items=tuple(out), older_than=_duration_text(older_than if older_than is not None else delta),
                           limit=limit, at=to_iso(m.now()))


def _state_of(m: Memory, memory_id: str) -> tuple[LedgerRow, str, str | None]:
    """(ledger row, state now, text) of a memory; adopts a memory only the store knows."""
    row = m._require_row(memory_id)
    return row, row.state(m.now()), _text(m, memory_id)


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
    with _memory_for(target, action="confirm") as m:
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
    with _memory_for(target, action="invalidate") as m:
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
    app's real embedder is used for the new text (see :func:`open_memory`)."""
    if not text or not text.strip():
        raise ConfigError("supersede needs the new fact's text")
    with _memory_for(target, for_writing_text=not dry_run, action="supersede") as m:
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


# --------------------------------------------------------------------------------------------- read-only views


class _Sources:
    """history.db and the ledger, read without the vector store: the app's own connections for a live
    Memory, read-only connections for a config (missing files read as empty)."""

    def __init__(self, target: Any) -> None:
        self._own: list[Any] = []
        self.history: sqlite3.Connection | None = None
        self._history_lock: Any = contextlib.nullcontext()
        self.ledger: Ledger | None = None
        if isinstance(target, Memory):
            target.flush()  # buffered ledger rows first: this reads the ledger
            self.now = target.now()
            self.history = target.db.connection
            self._history_lock = target.db._lock
            self.ledger = target.ledger
            return
        if isinstance(target, Mem0Memory):
            raise ConfigError("pass the drop-in mem0_hygiene.Memory (or a config dict), not plain mem0.Memory")
        if target is not None and not isinstance(target, dict):
            raise ConfigError(f"target must be a mem0 config dict or a mem0_hygiene.Memory, "
                              f"not {type(target).__name__}")
        mem0_part, settings, _facts = split_config(target or {})
        self.now = as_utc(settings.clock())
        history_path = os.path.expanduser(mem0_part.get("history_db_path") or default_history_db_path())
        ledger_path = settings.ledger_path or default_ledger_path(history_path)
        if history_path != ":memory:" and os.path.isfile(history_path):
            conn = sqlite_connect(history_path, readonly=True, check_same_thread=False)
            self._own.append(conn)
            self.history = conn
        if ledger_path != ":memory:" and os.path.isfile(ledger_path):
            self.ledger = Ledger.open_readonly(ledger_path)
            self._own.append(self.ledger)
        if self.history is None and self.ledger is None:
            raise LedgerError(
                f"found neither mem0's history.db ({history_path}) nor the ledger ({ledger_path}); pass the app's "
                "config with --config FILE (or --history-db/--ledger)"
            )

    def close(self) -> None:
        for item in self._own:
            with contextlib.suppress(Exception):
                item.close()

    def __enter__(self) -> _Sources:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def history_rows(self, where: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """(memory_id, event, old_memory, new_memory, created_at, updated_at) in insertion order."""
        if self.history is None:
            return []
        sql = ("SELECT memory_id, event, old_memory, new_memory, created_at, updated_at FROM history "
               f"WHERE {where} ORDER BY rowid")
        with self._history_lock:
            try:
                return list(self.history.execute(sql, params).fetchall())
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):
                    return []
                raise

    def history_for(self, ids: Iterable[str]) -> dict[str, list[tuple[Any, ...]]]:
        out: dict[str, list[tuple[Any, ...]]] = {}
        id_list = list(dict.fromkeys(ids))
        for start in range(0, len(id_list), 500):
            chunk = id_list[start : start + 500]
            for row in self.history_rows(f"memory_id IN ({','.join('?' * len(chunk))})", chunk):
                out.setdefault(str(row[0]), []).append(row)
        return out

    def rows(self, ids: Sequence[str]) -> dict[str, LedgerRow]:
        return self.ledger.get_many(list(ids)) if self.ledger is not None else {}


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


def window_start(since: timedelta | datetime | str, now: datetime) -> datetime:
    """The start of a window given as a duration back from ``now`` ("1d", "12h", a timedelta) or as a
    time (a datetime or an ISO string such as "2026-08-01")."""
    if isinstance(since, timedelta):
        return now - parse_duration(since, what="since")
    if isinstance(since, datetime):
        return as_utc(since)
    try:
        return now - parse_duration(since, what="since")
    except ConfigError:
        pass
    try:
        return parse_time(since, what="since")
    except ConfigError:
        raise ConfigError(f"since {since!r} is neither a duration ('1d', '12h', '2w') nor an ISO time "
                          "('2026-08-01', '2026-08-01T09:00:00+00:00')") from None


def digest(target: Any, since: timedelta | datetime | str = "1d") -> Digest:
    """The memories written since ``since`` (a duration such as "1d", or an ISO time), with their
    source: tool/web-sourced first (the injected "facts" to catch), then those of unknown source, then
    the rest, oldest first within each group.

    Written = an ``ADD`` in history.db or a ledger row created in the window, so memories stored by
    plain mem0 (no ledger row: state "untracked") are included. Reads only history.db and the ledger.
    """
    with _Sources(target) as src:
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
        for mid, _event, _old, _new, created_at, _updated in src.history_rows("event = 'ADD' AND created_at >= ?",
                                                                               (prefix,)):
            when = _when(created_at)
            if when is not None and start <= when <= now:
                created.setdefault(str(mid), when)
        rows = src.rows(list(created))
        history = src.history_for(created)
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
            items.append(DigestItem(
                memory_id=mid,
                text=_last_text(events),
                source=row.source if row else None,
                source_kind=row.source_kind if row else "unknown",
                state=state,
                created_at=to_iso(when),
                scope=row.scope if row else {},
                tool_sourced=_is_tool(row),
            ))

        def rank(item: DigestItem) -> tuple[int, str, str]:
            group = 0 if item.tool_sourced else (1 if item.source_kind == "unknown" else 2)
            return (group, item.created_at, item.memory_id)

        return Digest(items=tuple(sorted(items, key=rank)), since=start_iso, until=to_iso(now))


def memory_story(target: Any, memory_id: str) -> Story:
    """A memory's full story, oldest first: its supersede chain both ways (what it replaced,
    transitively, and what replaced it) and every event of each memory in that chain, from history.db
    (ADD/UPDATE/DELETE with texts) and the ledger (recorded with source, confirmed, superseded,
    invalidated with reason, expired, last used, tombstoned). Reads only history.db and the ledger."""
    with _Sources(target) as src:
        now = src.now
        before: list[str] = []
        after: list[str] = []
        if src.ledger is not None:
            before = list(reversed(src.ledger.predecessors(memory_id)))
            after = src.ledger.successors(memory_id)
        chain_ids = [*before, memory_id, *after]
        rows = src.rows(chain_ids)
        history = src.history_for(chain_ids)
        if memory_id not in rows and memory_id not in history:
            raise MemoryNotFound(memory_id, "neither history.db nor the ledger knows it; check the id "
                                            "(`mem0-hygiene digest --since 30d` lists recent ones)")
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
            events.append((when, depth[mid], seq, StoryEvent(
                at=to_iso(when) if when else str(at or ""), memory_id=mid, event=event, text=text,
                detail=detail, origin=origin)))

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
            state = row.state(now) if row else ("deleted" if any(str(h[1]).upper() == "DELETE" for h in hist)
                                                else "untracked")
            chain.append(ChainLink(mid, depth[mid], text, state, row.source if row else None,
                                   row.superseded_by if row else None))
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
            if row.confirmed_at and row.confirmed_at != row.created_at:
                add(row.confirmed_at, mid, "confirmed", text, "re-checked against its source", "ledger")
            if row.superseded_at:
                add(row.superseded_at, mid, "superseded", text, f"by {row.superseded_by}", "ledger")
            if row.invalid_at:
                add(row.invalid_at, mid, "invalidated", text, f"reason: {row.invalid_reason or '-'}", "ledger")
            if row.expires_at:
                expired = row.expires_at <= to_iso(now)
                add(row.expires_at, mid, "expired" if expired else "expires", text,
                    "hidden from reads since" if expired else "will be hidden from reads then", "ledger")
            if row.last_used_at:
                add(row.last_used_at, mid, "last used", text, f"served {row.use_count} time(s) in all", "ledger")
            if row.deleted_at:
                add(row.deleted_at, mid, "tombstoned", text, "deleted through the wrapper; kept hidden", "ledger")

        # At the same moment a memory's arrival comes first: a supersede stores the new memory and marks
        # the old one in one step, and the story reads better in that order.
        far = datetime.max.replace(tzinfo=now.tzinfo)
        arrivals = ("ADD", "recorded", "adopted")
        ordered = sorted(events, key=lambda e: (e[0] or far, e[3].event not in arrivals, e[1], e[2]))
        return Story(memory_id=memory_id, chain=tuple(chain), events=tuple(e[3] for e in ordered), at=to_iso(now))
