"""Erasure in the copies the tool made: backup sets, stores a restore moved aside, relocation sources.

``forget --scrub`` reads the one list of copies (:func:`mem0_hygiene.stores.copies.list_copies`) and, for
each, does to the copy what the live erasure did to the live stores, so that the copy, if it is ever put
back, holds neither the text nor the memory:

- a copy of history.db: the memories' ``old_memory``/``new_memory`` blanked (rows kept), mem0's
  ``messages`` rows holding the text removed, and the DELETE event mem0 writes on delete added (without
  text), so the copy's history agrees with its vector store; then ``VACUUM`` with ``secure_delete``;
- a copy of the ledger: text fields holding it blanked, the memories tombstoned; ``VACUUM``;
- a copy of a local Qdrant folder: the points deleted through a Qdrant client opened on the copy (from every
  collection in it: a migration may have renamed the deployment's), then every ``storage.sqlite`` in it vacuumed;
- a copy of a Chroma folder (a backup set's ``vector/chroma``, or a folder a relocation or migration left): the
  points deleted through a Chroma client opened on the copy (every collection in it: the copy may be of another
  collection name), what Chroma's own log keeps of them blanked, the unused slots of its HNSW files zeroed (they
  hold whatever the writing process's memory held, texts included), then ``chroma.sqlite3`` vacuumed with
  ``secure_delete`` (free pages included) and its write-ahead log truncated when it keeps one;
- a copy of a FAISS folder: the memories' entries removed from the docstore and the id map and their vectors from
  the index, both files rewritten atomically (:meth:`~mem0_hygiene.stores.vector.faiss.FaissStore.erase`);
- a pgvector snapshot (a backup set's ``vector/rows.jsonl``): the memories' lines removed, rewritten atomically
  (:func:`~mem0_hygiene.stores.vector.rows.erase_rows`);
- a snapshot taken through the provider seam: its own manifest (``vector-manifest.json``) rewritten to the new
  count and checksum, which the set's manifest keeps too;
- a backup set: its three parts as above, then its manifest rewritten (:func:`~mem0_hygiene.stores.
  backup_set.reseal`: counts, integrity results, sha256 of every file, and a ``changes`` entry) so that
  ``restore --dry-run`` accepts it again. A set that already failed its checks before the scrub is
  scrubbed but not resealed (that would bless the damage), unless the damage is an earlier scrub of this
  set that was interrupted (its ``.NAME.erasing`` marker beside the set says so).

The verification that follows reads the raw bytes of every file of every copy
(:func:`mem0_hygiene.actions.forget.forget`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import BackupError, StoreLocked
from ..stores import qdrant as qdrant_local
from ..stores.backup_set import HISTORY_FILE, LEDGER_FILE, QDRANT_DIR, check_set, read_manifest, reseal
from ..stores.copies import StoreCopy
from ..stores.sqlite import files_under, integrity_check, table_counts
from ..stores.vector.files import folder_files
from .backup import SEAM_KIND
from .scrubbing import connect_secure, history_texts, scrub_history, scrub_ledger_fields, vacuum


@dataclass(frozen=True)
class CopyErasure:
    """What ``forget --scrub`` did with one registered copy (it never contains the text).

    Fields:
        kind: "backup_set", "replaced_aside" or "relocation_source".
        path: the copy.
        roles: the stores it holds a copy of.
        scrubbed: its files were edited now (False in a dry run, for a copy kept on purpose, or when it could
            not be edited: see ``reason``).
        kept: left alone on purpose (``keep_backups``: a backup set).
        holds_text: after all, at least one of its files still holds a forgotten text (read byte by byte).
        points_deleted: points of the forgotten memories deleted from its Qdrant copy.
        history_rows_blanked: rows of its history.db copy whose text was blanked.
        resealed: (a backup set) its manifest was rewritten, so the set verifies again.
        reason: why it was not scrubbed or not resealed, or why it still holds the text ("" when clean).
    """

    kind: str
    path: str
    roles: tuple[str, ...]
    scrubbed: bool
    kept: bool = False
    holds_text: bool = False
    points_deleted: int = 0
    history_rows_blanked: int = 0
    resealed: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "roles": list(self.roles),
            "scrubbed": self.scrubbed,
            "kept": self.kept,
            "holds_text": self.holds_text,
            "points_deleted": self.points_deleted,
            "history_rows_blanked": self.history_rows_blanked,
            "resealed": self.resealed,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Part:
    """One store inside a copy: its role, where it is, and which database file each of its files belongs to."""

    role: str
    path: str
    is_folder: bool
    provider: str = ""
    """For a backup set's snapshot taken through the provider seam (``vector/``): its provider (pgvector, Chroma,
    FAISS); "" otherwise (a local Qdrant folder, a SQLite file, a folder copied as it was)."""

    def files(self) -> list[tuple[str, str]]:
        """(file, the database it belongs to: itself, or the database whose sidecar it is)."""
        if self.is_folder:
            out = []
            for root, _dirs, names in os.walk(self.path):
                out += [(os.path.join(root, n), os.path.join(root, n)) for n in sorted(names)]
            return sorted(out)
        return [
            (p, self.path)
            for p in [self.path, *(self.path + s for s in ("-wal", "-shm", "-journal"))]
            if os.path.isfile(p)
        ]


def parts_of(copy: StoreCopy) -> list[Part]:
    """The stores a copy holds, by role: a backup set's files per its manifest (or the usual names when the
    manifest cannot be read), otherwise the copy itself in each of its roles."""
    if copy.kind == "backup_set":
        try:
            stores = read_manifest(copy.path)["stores"]
        except BackupError:
            stores = {
                "history_db": {"file": HISTORY_FILE},
                "ledger": {"file": LEDGER_FILE},
                "vector_store": {"kind": "local_qdrant", "folder": QDRANT_DIR},
            }
        parts = []
        for role in ("history_db", "ledger"):
            name = (stores.get(role) or {}).get("file")
            if name and os.path.isfile(os.path.join(copy.path, name)):
                parts.append(Part(role, os.path.join(copy.path, name), False))
        vs = stores.get("vector_store") or {}
        if vs.get("folder") and os.path.isdir(os.path.join(copy.path, vs["folder"])):
            provider = str(vs.get("provider") or "") if vs.get("kind") == SEAM_KIND else ""
            parts.append(Part("vector_store", os.path.join(copy.path, vs["folder"]), True, provider))
        return parts
    return [Part(role, copy.path, os.path.isdir(copy.path), _snapshot_provider(copy.path)) for role in copy.roles[:1]]


def _snapshot_provider(path: str) -> str:
    """The provider of a snapshot the seam took, kept as a copy of its own (the pgvector rows a restore replaced:
    ``rows.jsonl`` beside ``vector-manifest.json``); "" for anything else."""
    from ..stores.vector import Snapshot
    from ..stores.vector.base import MANIFEST as SNAPSHOT_MANIFEST

    if not os.path.isfile(os.path.join(path, SNAPSHOT_MANIFEST)):
        return ""
    try:
        return Snapshot.read(path).provider
    except BackupError:
        return ""


def copy_texts(copy: StoreCopy, ids: Sequence[str]) -> set[str]:
    """The texts a copy's history.db holds for these memories (read-only): a copy may still know a text the
    live store has already lost."""
    return {
        t
        for part in parts_of(copy)
        if part.role == "history_db" and not part.is_folder
        for t in history_texts(part.path, ids)
    }


@dataclass
class _Work:
    failed: dict[str, str] = field(default_factory=dict)  # database file -> why it could not be rewritten
    problems: list[str] = field(default_factory=list)
    points_deleted: int = 0
    blanked: int = 0
    points: dict[str, int] | None = None
    snapshot_checksum: str | None = None  # a seam snapshot's new checksum, for the set's manifest


def _uuid_ids(ids: Sequence[str]) -> list[str]:
    out = []
    for i in ids:
        with contextlib.suppress(ValueError):
            out.append(str(uuid.UUID(str(i))))
    return out


def _scrub_qdrant(part: Part, ids: Sequence[str], work: _Work) -> None:
    lock = qdrant_local.lock_file(part.path)
    had_lock = os.path.exists(lock)
    try:
        with qdrant_local.opened(part.path, "erase the text in") as client:
            names = {c.name for c in client.get_collections().collections}
            wanted = _uuid_ids(ids)
            # every collection of the copy, not only the deployment's: a migration may have renamed it, and a
            # memory id (a UUID) is that memory wherever it is
            for name in sorted(n for n in names if not n.endswith("_entities")):
                present = client.retrieve(name, ids=wanted, with_payload=False, with_vectors=False) if wanted else []
                if present:
                    client.delete(name, points_selector=[p.id for p in present])
                    work.points_deleted += len(present)
            for name in sorted(n for n in names if n.endswith("_entities")):
                if ids:
                    work.points_deleted += _scrub_entities(client, name, set(ids))
            work.points = qdrant_local.client_counts(client)
    except StoreLocked:
        work.problems.append(f"another Qdrant client holds {part.path}; stop it and forget again")
        work.failed.update({p: "its Qdrant folder is held by another process" for p in files_under(part.path)})
        return
    except Exception as exc:
        work.problems.append(f"could not open the Qdrant copy {part.path}: {type(exc).__name__}: {exc}")
        work.failed.update({p: "its Qdrant folder could not be opened" for p in files_under(part.path)})
        return
    finally:
        if not had_lock:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
    for path in files_under(part.path):
        reason = vacuum(path)
        if reason:
            work.failed[path] = reason


def folder_provider(folder: str) -> str:
    """Which provider's data a copied folder holds when it is not a local Qdrant folder: "chroma" (a
    ``chroma.sqlite3``), "faiss" (``*.faiss`` index files), or ""."""
    if os.path.isfile(os.path.join(folder, "chroma.sqlite3")):
        return "chroma"
    with contextlib.suppress(OSError):
        if any(n.endswith(".faiss") for n in os.listdir(folder)):
            return "faiss"
    return ""


def _scrub_data_folder(
    provider: str, folder: str, ids: Sequence[str], work: _Work, checksums: dict[str, tuple[int, str]] | None = None
) -> dict[str, int] | None:
    """Erase the memories from a Chroma or FAISS folder kept as a copy (in a backup set's snapshot, or a folder a
    relocation or migration left): every collection in it (the copy may be of another collection name than the
    deployment's), through Chroma's client then ``VACUUM`` of ``chroma.sqlite3`` with ``secure_delete``, or FAISS's
    index and docstore rewritten. Returns the points per collection after it (None when it failed: ``work``
    says why); ``checksums``, when given, receives each collection's count and checksum after it (read before the
    vacuum, which comes last)."""
    from ..stores.vector.chroma import ChromaStore, clear_unused_capacity, collection_names, forget_cached_clients
    from ..stores.vector.faiss import FaissStore

    counts: dict[str, int] = {}
    try:
        if provider == "chroma":
            try:
                for name in collection_names(folder):
                    store = ChromaStore(folder, name)
                    try:
                        work.points_deleted += store.erase(ids)
                        counts[name] = store.count()
                        if checksums is not None:
                            checksums[name] = store.checksum()
                    finally:
                        store.close()
            finally:
                forget_cached_clients(folder)  # chromadb keeps the folder's database open until then
            clear_unused_capacity(folder)  # the HNSW files' unused slots hold the writer's memory: texts too
        else:
            names = sorted(n[: -len(".faiss")] for n in os.listdir(folder) if n.endswith(".faiss"))
            names += sorted(n[1 : -len(".erasing")] for n in os.listdir(folder) if n.endswith(".erasing"))
            for name in dict.fromkeys(names):
                index = FaissStore(folder, name)
                work.points_deleted += index.erase(ids)
                counts[name] = index.count()
                if checksums is not None:
                    checksums[name] = index.checksum()
    except Exception as exc:  # the providers' own errors vary: say which copy and what happened
        work.problems.append(
            f"could not erase the memories from the {provider} copy {folder}: {type(exc).__name__}: {exc}"
        )
        work.failed.update({p: f"its {provider} folder could not be edited" for p in folder_files(folder)})
        return None
    database = os.path.join(folder, "chroma.sqlite3")
    if provider == "chroma" and os.path.isfile(database):
        reason = vacuum(database)
        if reason:
            work.failed[database] = reason
    return counts


def _scrub_snapshot(part: Part, ids: Sequence[str], work: _Work) -> None:
    """A backup set's snapshot taken through the provider seam (``vector/``): the memories erased from its data (a
    Chroma or FAISS folder, or pgvector's ``rows.jsonl``), then its own manifest rewritten to the new count and
    checksum (whenever they differ, so a rerun after a kill finishes it), and both kept for the set's manifest."""
    from ..stores.vector import DATA_FOLDERS, Snapshot, payload_checksum
    from ..stores.vector.rows import ROWS_FILE, erase_rows, write_snapshot_manifest

    try:
        snap = Snapshot.read(part.path)
        if part.provider in DATA_FOLDERS:
            data = os.path.join(part.path, DATA_FOLDERS[part.provider])
            if not os.path.isdir(data):
                work.problems.append(f"{data} is missing: the snapshot's data could not be erased")
                return
            checksums: dict[str, tuple[int, str]] = {}
            if _scrub_data_folder(part.provider, data, ids, work, checksums) is None:
                return
            count, digest = checksums.get(snap.collection) or payload_checksum([])
            now = Snapshot(snap.provider, snap.collection, count, digest, part.path)
            if (count, digest) != (snap.count, snap.checksum):
                write_snapshot_manifest(now)
        elif os.path.isfile(os.path.join(part.path, ROWS_FILE)):
            removed, now = erase_rows(part.path, ids)
            work.points_deleted += removed
        else:
            work.problems.append(f"{part.path} holds no {part.provider} data this version can erase")
            return
    except (BackupError, OSError) as exc:
        work.problems.append(f"could not erase the memories from the {part.provider} snapshot {part.path}: {exc}")
        work.failed.update({p: f"its {part.provider} snapshot could not be edited" for p in folder_files(part.path)})
        return
    work.points = {now.collection: now.count}
    work.snapshot_checksum = now.checksum


def _scrub_entities(client: Any, name: str, ids: set[str]) -> int:
    """mem0 2.x's entity rows in a copy: those linked only to erased memories are deleted, the others lose the
    erased ids from ``linked_memory_ids`` (as mem0's own delete does live). Returns the rows deleted."""
    gone: list[Any] = []
    offset = None
    while True:
        points, offset = client.scroll(name, limit=1000, offset=offset, with_payload=True, with_vectors=False)
        for p in points:
            linked = (p.payload or {}).get("linked_memory_ids")
            if not isinstance(linked, list) or not ids.intersection(map(str, linked)):
                continue
            remaining = [i for i in linked if str(i) not in ids]
            if remaining:
                client.set_payload(name, payload={"linked_memory_ids": remaining}, points=[p.id])
            else:
                gone.append(p.id)
        if offset is None:
            break
    if gone:
        client.delete(name, points_selector=gone)
    return len(gone)


def _scrub_sqlite(part: Part, ids: Sequence[str], texts: Sequence[str], at: str, work: _Work) -> None:
    try:
        if part.role == "history_db":
            blanked, _removed = scrub_history(part.path, ids, texts, delete_events_at=at)
            work.blanked += blanked
        else:
            conn = connect_secure(part.path)
            try:
                scrub_ledger_fields(conn, ids, texts, tombstone_at=at)
            finally:
                conn.close()
    except sqlite3.Error as exc:
        work.failed[part.path] = f"could not be edited: {exc}"
        work.problems.append(f"{part.path} could not be edited ({exc})")
        return
    reason = vacuum(part.path)
    if reason:
        work.failed[part.path] = reason


def erasing_marker(folder: str) -> str:
    """The empty file beside a backup set that says an erasure in it is under way (or was interrupted)."""
    return os.path.join(os.path.dirname(folder), f".{os.path.basename(folder)}.erasing")


def scrub_copy(
    copy: StoreCopy, ids: Sequence[str], texts: Sequence[str], *, collection: str, at: str
) -> tuple[CopyErasure, dict[str, str]]:
    """Erase the memories (ids) and their texts from one copy; returns what was done and, per database file,
    why it could not be rewritten (for the verification's reasons)."""
    work = _Work()
    parts = parts_of(copy)
    damaged: list[str] = []
    marker = ""
    if copy.kind == "backup_set":
        try:
            damaged = check_set(copy.path)
        except BackupError as exc:
            damaged = [str(exc)]
        marker = erasing_marker(copy.path)
        if os.path.exists(marker):
            damaged = []  # the mismatch is our own interrupted erasure: reseal it this time
        if not damaged:
            with open(marker, "a"):  # removed once resealed; kept while the set is half-erased
                pass
    for part in parts:
        if part.is_folder:
            if part.role != "vector_store":
                continue
            if part.provider:
                _scrub_snapshot(part, ids, work)
            elif qdrant_local.is_qdrant_folder(part.path):
                _scrub_qdrant(part, ids, work)
            elif folder_provider(part.path):
                _scrub_data_folder(folder_provider(part.path), part.path, ids, work)
        else:
            _scrub_sqlite(part, ids, texts, at, work)
    resealed = False
    if copy.kind == "backup_set":
        resealed = _reseal_set(copy.path, parts, work, damaged, at, len(ids))
        if resealed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(marker)
    reason = "; ".join(work.problems)
    if damaged:
        reason = "; ".join(
            [
                *([reason] if reason else []),
                "the set failed its checks before the erasure ("
                + "; ".join(damaged[:3])
                + "), so its manifest was not rewritten: it stays unusable "
                "for restore",
            ]
        )
    return (
        CopyErasure(
            kind=copy.kind,
            path=copy.path,
            roles=copy.roles,
            scrubbed=not work.problems,
            points_deleted=work.points_deleted,
            history_rows_blanked=work.blanked,
            resealed=resealed,
            reason=reason,
        ),
        work.failed,
    )


def _reseal_set(folder: str, parts: list[Part], work: _Work, damaged: list[str], at: str, n: int) -> bool:
    """Rewrite the set's manifest when every changed file checks out; False (with the reason) otherwise."""
    if damaged or work.problems:
        return False
    try:
        doc = read_manifest(folder)
    except BackupError as exc:
        work.problems.append(str(exc))
        return False
    counts: dict[str, dict[str, int]] = {}
    integrity: dict[str, str] = {}
    for part in parts:
        dbs = files_under(part.path) if part.is_folder else [part.path]
        for db in dbs:
            rel = os.path.relpath(db, folder).replace(os.sep, "/")
            integrity[rel] = integrity_check(db)
        if not part.is_folder:
            counts["history" if part.role == "history_db" else "ledger"] = table_counts(part.path)
    if work.points is not None:
        counts["points"] = work.points
    if work.snapshot_checksum is not None:
        doc["stores"]["vector_store"]["checksum"] = work.snapshot_checksum
    bad = {rel: r for rel, r in integrity.items() if r != "ok"}
    if bad:
        work.problems.append(
            "after the erasure, integrity_check failed for " + ", ".join(f"{k}: {v}" for k, v in bad.items())
        )
        return False
    reseal(
        folder,
        doc,
        counts=counts,
        integrity=integrity,
        change={
            "at": at,
            "what": "erasure",
            "memories": n,
            "note": "forgotten memories deleted from every store of the set (forget --scrub); checksums rewritten",
        },
    )
    return True
