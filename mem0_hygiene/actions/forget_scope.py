"""Erase a person (a scope: user, agent and/or run) everywhere, with a receipt; check a receipt again later.

:func:`forget_scope` finds every memory of the scope (the vector store's points with those payload fields, the
ledger's rows, live or deleted, and what an interrupted run's journal names), every raw conversation turn mem0 kept
for it (``messages`` rows of the scope, in history.db and in every registered copy's history.db) and every row of
mem0's ``{collection}_entities`` collection of the scope. Then, journaled (:mod:`mem0_hygiene.stores.erasures`):

1. the journal is written durably (ids and texts: a rerun after a kill needs them once the stores have lost them);
2. the scope's ``messages`` rows are removed from history.db and from each copy's history.db (a backup set's
   erasure marker first, so its manifest is rewritten after);
3. the entity rows of the scope are deleted through mem0's entity store;
4. :func:`~mem0_hygiene.actions.forget.forget` with ``scrub=True`` deletes the memories through mem0's API and
   erases every text (the memories' and the turns') from every store file and registered copy, verified on the
   raw bytes of every file (a query on pgvector);
   (before it, the read log's rows of the scope and of its memories are removed: the ledger's vacuum covers them);
5. the scope-level queries (points, ledger rows, messages rows, entity rows of the scope left) are run;
6. the receipt is written durably and the journal removed (zeroed first).

Each step can be done twice, so a run killed anywhere is finished by running it again (the journal says it was
interrupted). :func:`verify_receipt` checks a receipt again (after a restore, say): the same scope-level queries,
and the erased texts searched by their sha256 in history.db, mem0's messages, the vector store's payloads and
every registered copy's history.db.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..errors import BackupError, ConfigError
from ..progress import step
from ..stores.backup_set import check_set
from ..stores.copies import StoreCopy, list_copies
from ..stores.database_url import is_database_url
from ..stores.erasures import (
    read_journal,
    read_receipt,
    receipts_folder,
    remove_journal,
    scope_label,
    text_digest,
    texts_digest,
    write_journal,
    write_receipt,
)
from ..stores.ledger.postgres import redact
from ..stores.ledger.reads import forget_reads
from ..stores.sqlite import connect
from ..target import resolve
from ..timeutil import to_iso
from .copy_erasure import copy_texts, erasing_marker, parts_of
from .forget import file_path, forget, is_live_copy, local_qdrant_path
from .scope_erasure import ReceiptCheck, ScopeCheck, ScopeErasure
from .scope_messages import remove_scope_messages, scope_messages
from .scrubbing import SHORT_TEXT, history_texts, tables

SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
LIST_LIMIT = 1_000_000


def _scope(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str]:
    scope = {k: str(v) for k, v in zip(SCOPE_FIELDS, (user_id, agent_id, run_id), strict=True) if v}
    if not scope:
        raise ConfigError("say whose memories to erase: a user, agent and/or run id (forget --user ID)")
    return scope


def _rows(listed: Any) -> list[Any]:
    """mem0's ``vector_store.list`` answer as rows (some providers wrap them in one more list)."""
    if isinstance(listed, (list, tuple)) and listed and isinstance(listed[0], list):
        return list(listed[0])
    return list(listed) if isinstance(listed, (list, tuple)) else []


def _points(m: Any, scope: dict[str, str]) -> list[Any]:
    """The vector store's points of the scope, through mem0's own store."""
    return _rows(m.vector_store.list(filters=dict(scope), top_k=LIST_LIMIT))


def _entity_store(m: Any) -> Any:
    """mem0's ``{collection}_entities`` store when it exists (never created here); None otherwise."""
    if getattr(m, "_entity_store", None) is not None:
        return m._entity_store
    if m.config.vector_store.provider == "qdrant" and hasattr(m.vector_store, "client"):
        try:
            if not m.vector_store.client.collection_exists(f"{m.collection_name}_entities"):
                return None
        except Exception:  # noqa: BLE001 - a store that cannot say: asked through mem0 below
            pass
    try:
        return m.entity_store
    except Exception:  # noqa: BLE001 - mem0 could not open it: there is none to erase
        return None


def _entity_rows(m: Any, scope: dict[str, str]) -> list[Any] | None:
    store = _entity_store(m)
    if store is None:
        return None
    return _rows(store.list(filters=dict(scope), top_k=LIST_LIMIT))


def _ledger_ids(m: Any, scope: dict[str, str]) -> list[str]:
    """Every ledger row of the scope, live or deleted (a deleted memory's text may still be in history.db)."""
    where = " AND ".join(f"{k} = ?" for k in scope)
    return [str(r[0]) for r in m.ledger.query(f"SELECT memory_id FROM memories WHERE {where}", list(scope.values()))]


def _copies(ledger_path: str | None, history_path: str | None, qdrant_path: str | None) -> list[StoreCopy]:
    try:
        return [
            c
            for c in list_copies(ledger_path, history_path)
            if not is_live_copy(c, (history_path, ledger_path, qdrant_path))
        ]
    except BackupError:
        return []  # forget says so and leaves the erasure unverified


def _history_parts(copy: StoreCopy) -> list[str]:
    return [p.path for p in parts_of(copy) if p.role == "history_db" and not p.is_folder and os.path.isfile(p.path)]


def _remove_copy_messages(copy: StoreCopy, scope: dict[str, str]) -> int:
    """The scope's turns out of a copy's history.db; a backup set gets its erasure marker first (the set's
    checksums are then rewritten by the scrub that follows), a damaged set is left to the scrub to report."""
    parts = _history_parts(copy)
    if not parts or not any(scope_messages(p, scope) for p in parts):
        return 0
    if copy.kind == "backup_set":
        marker = erasing_marker(copy.path)
        if not os.path.exists(marker):
            try:
                if check_set(copy.path):
                    return 0
            except BackupError:
                return 0
            with open(marker, "a"):
                pass
    return sum(remove_scope_messages(p, scope) for p in parts)


def _live_checks(
    m: Any, scope: dict[str, str], history_path: str | None, copies: Iterable[StoreCopy], kept: bool
) -> list[ScopeCheck]:
    """What of the scope is left: points, live ledger rows, messages rows (live and copies), entity rows."""
    out = [ScopeCheck("vector_store", "point(s) of the scope", len(_points(m, scope)))]
    out.append(ScopeCheck("ledger", "live ledger row(s) of the scope", len(m.ledger.scope_ids(scope))))
    out.append(ScopeCheck("history_db", "messages row(s) of the scope", len(scope_messages(history_path, scope))))
    rows = _entity_rows(m, scope)
    out.append(ScopeCheck("entities", "entity row(s) of the scope", len(rows) if rows is not None else 0))
    for c in copies:
        if kept and c.kind == "backup_set":
            continue
        left = sum(len(scope_messages(p, scope)) for p in _history_parts(c))
        out.append(ScopeCheck(c.path, "messages row(s) of the scope", left))
    return out


def _describe(tgt: Any, history_path: str | None, ledger_path: str | None) -> dict[str, Any]:
    ledger = tgt.ledger_path or ""
    return {
        "history_db": history_path,
        "ledger": redact(ledger) if is_database_url(ledger) else ledger_path,
        "vector_store": tgt.provider,
        "collection": tgt.collection,
    }


def forget_scope(
    target: Any,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    keep_backups: bool = False,
    dry_run: bool = False,
) -> ScopeErasure:
    """Erase every memory of a scope and every trace of its text, verified, and write a receipt.

    ``target``: the app's drop-in ``Memory`` (in-process) or its mem0 config dict (opened here; refused while a
    running app holds a local Qdrant folder). Deletions go through mem0's API (the memories through the drop-in's
    ``delete``, the entity rows through mem0's entity store); mem0's history.db and every registered copy are
    edited on purpose, as ``forget --scrub`` does (see the module docstring for the steps). ``keep_backups``
    leaves backup sets alone and names each one that still holds a text (the erasure is then not verified).
    ``dry_run`` changes nothing and says what would be erased. A run killed at any point is finished by the next
    run for the same scope. Raises :class:`~mem0_hygiene.errors.ConfigError` without a scope, or when every
    store is in memory (no place for a receipt).
    """
    scope = _scope(user_id, agent_id, run_id)
    tgt = resolve(target)
    folder = receipts_folder(tgt.ledger_path, tgt.history_path)
    if folder is None:
        raise ConfigError(
            "every store of this deployment is in memory: there is no erasure to prove and no place "
            "for its receipt; point history_db_path at a file"
        )
    with tgt.memory_for("erase a scope in", readonly=dry_run) as m:
        m.flush()
        history_path, ledger_path = file_path(tgt.history_path), file_path(tgt.ledger_path)
        copies = _copies(ledger_path, history_path, local_qdrant_path(m))
        pending = None if dry_run else read_journal(folder, scope)
        with step("finding the scope's memories"):
            points = _points(m, scope)
            ids = {str(p.id) for p in points} | set(_ledger_ids(m, scope))
            texts: set[str] = {str(p.payload["data"]) for p in points if isinstance((p.payload or {}).get("data"), str)}
            ids |= set((pending or {}).get("ids", []))
            texts |= history_texts(history_path, sorted(ids))
            turns = set(scope_messages(history_path, scope))
            for c in copies:
                texts |= copy_texts(c, sorted(ids))
                turns |= {t for p in _history_parts(c) for t in scope_messages(p, scope)}
            texts |= set((pending or {}).get("texts", []))
            turns |= set((pending or {}).get("turns", []))
            turns.discard("")
        entity_rows = _entity_rows(m, scope) or []
        searched = sorted({*texts, *(t for t in turns if len(t.encode("utf-8")) >= SHORT_TEXT)})
        if dry_run:
            result = (
                forget(m, sorted(ids), scrub=True, dry_run=True, keep_backups=keep_backups, also_texts=searched)
                if searched or ids
                else None
            )
            return ScopeErasure(scope, tuple(sorted(ids)), len(turns), len(entity_rows), result, (), None, dry_run=True)
        done = dict((pending or {}).get("done", {}))
        started = (pending or {}).get("started_at") or to_iso(tgt.now())
        journal = {"started_at": started, "ids": sorted(ids), "texts": sorted(texts), "turns": sorted(turns)}
        write_journal(folder, scope, {**journal, "done": done})
        with step("removing the scope's conversation turns"):
            with m.history_lock():
                removed = remove_scope_messages(history_path, scope)
            for c in copies:
                if not (keep_backups and c.kind == "backup_set"):
                    removed += _remove_copy_messages(c, scope)
        done["messages"] = done.get("messages", 0) + removed
        write_journal(folder, scope, {**journal, "done": done})
        with step("deleting the scope's entity rows through mem0"):
            if entity_rows:
                store = _entity_store(m)
                for row in entity_rows:
                    store.delete(vector_id=row.id)
        done["entities"] = done.get("entities", 0) + len(entity_rows)
        entity_digests = sorted({text_digest(str((r.payload or {}).get("data", ""))) for r in entity_rows})
        done["entity_sha256"] = sorted({*done.get("entity_sha256", []), *entity_digests})
        write_journal(folder, scope, {**journal, "done": done})
        done["reads"] = done.get("reads", 0) + forget_reads(m.ledger, sorted(ids), scope)  # vacuumed by forget
        write_journal(folder, scope, {**journal, "done": done})
        known = [i for i in sorted(ids) if _known(m, i, history_path)]
        result = (
            forget(m, known, scrub=True, keep_backups=keep_backups, also_texts=searched) if known or searched else None
        )
        with step("checking that nothing of the scope is left"):
            checks = tuple(_live_checks(m, scope, history_path, copies, keep_backups))
        now = tgt.now()
        all_texts = sorted({*texts, *turns})
        doc = {
            "scope": scope,
            "erased_at": to_iso(now),
            "started_at": started,
            "resumed": pending is not None,
            "deployment": _describe(tgt, history_path, ledger_path),
            "memory_ids": sorted(ids),
            "counts": {
                "memories": len(ids),
                "deleted_through_mem0": len(result.deleted) if result else 0,
                "history_rows_blanked": result.history_rows_blanked if result else 0,
                "messages_removed": done["messages"] + (result.messages_removed if result else 0),
                "entities_removed": done["entities"],
                "read_log_rows_removed": done["reads"],
                "ledger_fields_blanked": result.ledger_fields_blanked if result else 0,
                "texts": len(all_texts),
                "texts_searched_in_bytes": len(searched),
            },
            "texts_sha256": texts_digest(all_texts),
            "text_sha256": sorted({text_digest(t) for t in all_texts}),
            "entity_sha256": done["entity_sha256"],
            "files": [f.to_dict() for f in result.files] if result else [],
            "copies": [c.to_dict() for c in result.copies] if result else [],
            "checks": [c.to_dict() for c in checks],
            "keep_backups": keep_backups,
            "unverified": list(result.unverified) if result else [],
            "notes": list(result.notes) if result else [],
        }
        erasure = ScopeErasure(
            scope,
            tuple(sorted(ids)),
            done["messages"],
            done["entities"],
            result,
            checks,
            None,
            resumed=pending is not None,
        )
        doc["verified"] = erasure.verified
        path = write_receipt(folder, doc, now)
        remove_journal(folder, scope)
    return ScopeErasure(
        scope, tuple(sorted(ids)), done["messages"], done["entities"], result, checks, path, resumed=pending is not None
    )


def _known(m: Any, memory_id: str, history_path: str | None) -> bool:
    """A memory forget can act on: in the vector store, the ledger or history.db."""
    if m.vector_store.get(vector_id=memory_id) is not None or m.ledger.get(memory_id) is not None:
        return True
    return bool(m.db.get_history(memory_id))


# ---------------------------------------------------------------------------------------------- verify


def _digests_in_history(path: str, digests: set[str]) -> tuple[int, int]:
    """(history rows, messages rows) of a history.db whose text has one of the digests."""
    conn = connect(path, readonly=True)
    try:
        names = tables(conn)
        rows = 0
        if "history" in names:
            for old, new in conn.execute("SELECT old_memory, new_memory FROM history"):
                rows += any(isinstance(t, str) and t and text_digest(t) in digests for t in (old, new))
        msgs = 0
        if "messages" in names:
            msgs = sum(
                1
                for (content,) in conn.execute("SELECT content FROM messages")
                if isinstance(content, str) and text_digest(content) in digests
            )
    finally:
        conn.close()
    return rows, msgs


def _points_with_digests(m: Any, digests: set[str]) -> int:
    from ..stores.vector import UnsupportedVectorStore, from_mem0

    try:
        store = from_mem0(m.vector_store)
    except UnsupportedVectorStore:
        return -1
    found = 0
    try:
        for page in store.pages():
            for point in page:
                data = (point.get("payload") or {}).get("data")
                found += isinstance(data, str) and text_digest(data) in digests
    finally:
        if store.provider == "pgvector":
            store.close()
    return found


def verify_receipt(target: Any, receipt: str | os.PathLike[str]) -> ReceiptCheck:
    """Check an erasure receipt again: is anything of its scope back in the stores (a restore of an older
    backup, a replica, the app writing again)? Runs the receipt's scope-level queries and searches every text of
    history.db, mem0's messages, the vector store's payloads and every registered copy's history.db for the
    erased texts' sha256 (but the backup sets of an erasure run with ``keep_backups``: they were left holding the
    scope on purpose, and the receipt names them). Changes nothing. ``target``: the app's drop-in ``Memory`` or its
    config dict."""
    path = os.fspath(receipt)
    doc = read_receipt(path)
    scope = {k: str(v) for k, v in dict(doc.get("scope") or {}).items() if k in SCOPE_FIELDS and v}
    if not scope:
        raise BackupError(f"{path} names no scope; it is not a receipt of forget --user/--agent/--run")
    digests = set(doc.get("text_sha256") or [])
    kept = bool(doc.get("keep_backups"))
    tgt = resolve(target)
    with tgt.memory_for("check an erasure receipt in", readonly=True) as m:
        history_path, ledger_path = file_path(tgt.history_path), file_path(tgt.ledger_path)
        copies = [
            c for c in _copies(ledger_path, history_path, local_qdrant_path(m)) if not (kept and c.kind == "backup_set")
        ]
        checks = _live_checks(m, scope, history_path, copies, kept=kept)
        if history_path and os.path.isfile(history_path):
            rows, msgs = _digests_in_history(history_path, digests)
            checks.append(ScopeCheck("history_db", "history row(s) holding an erased text", rows))
            checks.append(ScopeCheck("history_db", "messages row(s) holding an erased text", msgs))
        points = _points_with_digests(m, digests)
        checks.append(
            ScopeCheck(
                "vector_store",
                "point(s) holding an erased text",
                max(points, 0),
                points >= 0,
                "" if points >= 0 else "the provider cannot be read by mem0-hygiene",
            )
        )
        for c in copies:
            for part in _history_parts(c):
                rows, msgs = _digests_in_history(part, digests)
                checks.append(ScopeCheck(c.path, "history/messages row(s) holding an erased text", rows + msgs))
    return ReceiptCheck(path, scope, str(doc.get("erased_at", "")), tuple(checks))


__all__ = ["ReceiptCheck", "ScopeCheck", "ScopeErasure", "forget_scope", "scope_label", "verify_receipt"]
