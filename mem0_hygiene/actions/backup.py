"""Consistent backups of a mem0 deployment (restoring them: :mod:`mem0_hygiene.actions.restore`).

:func:`backup` writes one dated folder per run, ``DEST/mem0-backup-YYYYMMDDTHHMMSSZ/`` (the set format:
:mod:`mem0_hygiene.stores.backup_set`), holding

- ``history.db``: mem0's changelog, copied with ``VACUUM INTO`` and checked with ``PRAGMA integrity_check``;
- ``hygiene.db``: the ledger, the same way (absent when the deployment has no ledger yet);
- ``qdrant/``: the local Qdrant folder, copied while its lock is held (by a client of ours, or in-process
  by the app's own client), every SQLite file in it checked, and the copy opened and its points counted;
  for a Qdrant server, a server-side snapshot per collection instead (downloading it is out of scope:
  the manifest says "server snapshot created: NAME");
- ``vector/``: for pgvector, Chroma and FAISS, the provider seam's snapshot instead
  (:mod:`mem0_hygiene.stores.vector`: the pgvector table read in one REPEATABLE READ transaction into
  ``rows.jsonl``; Chroma's folder or FAISS's files copied and checked unchanged), with its count and checksum;
- ``manifest.json``: times, counts per store (points per collection, rows per table), the sha256 and size
  of every other file, the integrity results, the mem0-hygiene version and the paths the set came from.

All stores are taken at the same moment: every SQLite file involved (history.db, the ledger and
Qdrant's own ``storage.sqlite`` files) is held with ``BEGIN IMMEDIATE`` (nothing written) while the
copies are made, so no writer can slip in between them; a writer in the app waits (SQLite's busy
timeout, 5 s) until the copy is taken. The set is built in a hidden temporary folder inside DEST and
renamed into place only after every check passed; on any failure the partial set is removed and the
earlier backups are left exactly as they were (:class:`~mem0_hygiene.errors.BackupError`). A partial set
that a crash (kill -9, power loss) left behind is removed at the start of the next backup into DEST.

Each verified backup is also listed in the deployment's backup record, ``hygiene.backups.json`` beside
the ledger (:mod:`mem0_hygiene.stores.backup_record`), which the audit reads for
``BACKUP_LAST_VERIFIED``; :func:`last_verified_backup` answers the same question for a config or a
DEST folder. Each set is also registered as a copy of the stores (``hygiene.copies.json``,
:mod:`mem0_hygiene.stores.copies`), so ``where``, the audit's ``STORE_COPIES`` and ``forget --scrub`` see it;
rotation (``keep``) takes the sets it deletes off that list.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..display.tables import Line, LinesView, counts_text
from ..display.text import human_size
from ..errors import BackupError, HygieneError
from ..progress import report, step
from ..stores import qdrant as qdrant_local
from ..stores.backup_record import backup_status_for_paths, update_record
from ..stores.backup_set import (
    FORMAT,
    HISTORY_FILE,
    LEDGER_CONSISTENCY,
    LEDGER_FILE,
    MANIFEST_VERSION,
    PREFIX,
    QDRANT_DIR,
    BackupInfo,
    check_set,
    complete_backups,
    file_checksums,
    free_name,
    info_of,
    ledger_digests,
    time_stamp,
    write_manifest,
)
from ..stores.copies import (
    clean_leftovers,
    find_leftovers,
    holding,
    register_copy,
    size_of,
    temporary_name,
    unregister_copy,
)
from ..stores.database_url import is_database_url as is_postgres_url
from ..stores.ledger.postgres import redact
from ..stores.ledger.postgres_copy import dump_into_file
from ..stores.ledger.postgres_reads import snapshot
from ..stores.restore_journal import refuse_while_restoring
from ..stores.sqlite import BUSY_TIMEOUT_MS, connect, files_under, integrity_check, table_counts, vacuum_into
from ..target import Target, resolve
from ..timeutil import as_utc, system_clock, to_iso
from ..version import __version__

# ---------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class BackupResult(LinesView):
    """What :func:`backup` did (or, with ``dry_run``, would do).

    Fields:
        path: the backup folder (in a dry run: the folder it would create).
        dest: the DEST folder holding the dated backups.
        dry_run: nothing was written; counts were read from the live stores.
        created_at: the backup's time (UTC ISO), from the target's clock unless ``now`` was given.
        source: where the set came from: vector store (path or server), collection, history.db, ledger.
        counts: ``points`` (per collection), ``history`` and ``ledger`` (rows per table).
        integrity: ``PRAGMA integrity_check`` result per copied SQLite file (relative path -> "ok").
        vector_store: how the vector store was taken ("local folder copied while locked (N points)" or
            "server snapshot created: NAME").
        files: how many files the set holds (manifest excluded); 0 in a dry run.
        size_bytes: their total size.
        rotated: older backups removed by ``keep`` (in a dry run: that would be removed).
        record_path: the backup record the audit reads (None when there is no place for one).
        copies_path: the registry of copies the set is listed in (``where``, the audit and erasure read it).
        leftovers: temporary folders of an earlier, interrupted backup in DEST that were removed at the start
            (in a dry run: that would be removed).
        notes: anything else worth saying (a missing ledger, a record that could not be written, ...).
        seconds: how long it took.
    """

    path: str
    dest: str
    dry_run: bool
    created_at: str
    source: dict[str, Any]
    counts: dict[str, dict[str, int]]
    integrity: dict[str, str]
    vector_store: str
    files: int = 0
    size_bytes: int = 0
    rotated: tuple[str, ...] = ()
    record_path: str | None = None
    copies_path: str | None = None
    leftovers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def points(self) -> int:
        return sum(self.counts.get("points", {}).values())

    @property
    def history_rows(self) -> int:
        return int(self.counts.get("history", {}).get("history", 0))

    @property
    def ledger_rows(self) -> int:
        return int(self.counts.get("ledger", {}).get("memories", 0))

    def _lines(self) -> list[Line]:
        c = self.counts
        out: list[Line] = [
            [("dry run: would back up into ", ""), (self.path, "")]
            if self.dry_run
            else [("backed up into ", ""), (self.path, "bold")]
        ]
        out.append([(f"  vector store: {self.vector_store}", "")])
        if self.source.get("ledger_url"):
            verb = "would be dumped" if self.dry_run else "dumped"
            out.append(
                [
                    (
                        f"  ledger: {self.source['ledger_url']} {verb} into hygiene.db from one REPEATABLE READ "
                        "snapshot taken while history.db and the vector store were held still",
                        "",
                    )
                ]
            )
        out.append(
            [
                (
                    f"  points: {counts_text(c.get('points', {}))}; history.db rows: "
                    f"{counts_text(c.get('history', {}))}; ledger rows: {counts_text(c.get('ledger', {}))}",
                    "",
                )
            ]
        )
        if self.integrity:
            out.append([("  integrity_check: " + ", ".join(f"{k} {v}" for k, v in self.integrity.items()), "")])
        if not self.dry_run:
            out.append(
                [(f"  {self.files} files ({human_size(self.size_bytes)}), each with its sha256 in manifest.json", "")]
            )
        for old in self.rotated:
            out.append([(f"  {'would remove' if self.dry_run else 'removed'} the older backup {old} (--keep)", "")])
        for old in self.leftovers:
            out.append(
                [
                    (
                        f"  {'would remove' if self.dry_run else 'removed'} the leftover of an interrupted backup: "
                        f"{old}",
                        "",
                    )
                ]
            )
        if self.record_path and not self.dry_run:
            out.append([(f"  recorded in {self.record_path} (the audit's BACKUP_LAST_VERIFIED reads it)", "")])
        if self.copies_path and not self.dry_run:
            out.append(
                [
                    (
                        f"  listed as a copy of the stores in {self.copies_path} (where, the audit and "
                        "forget --scrub read it)",
                        "",
                    )
                ]
            )
        out += [[("  ", ""), ("note", "yellow"), (f": {note}", "")] for note in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "dest": self.dest,
            "dry_run": self.dry_run,
            "created_at": self.created_at,
            "source": dict(self.source),
            "counts": {k: dict(v) for k, v in self.counts.items()},
            "integrity": dict(self.integrity),
            "vector_store": self.vector_store,
            "files": self.files,
            "size_bytes": self.size_bytes,
            "rotated": list(self.rotated),
            "record_path": self.record_path,
            "copies_path": self.copies_path,
            "leftovers": list(self.leftovers),
            "notes": list(self.notes),
            "seconds": self.seconds,
        }


SEAM_DIR = "vector"
"""The folder of a backup set holding a snapshot the provider seam took (pgvector, Chroma, FAISS)."""
SEAM_KIND = "seam_snapshot"
"""The manifest's kind for that store (``local_qdrant`` and ``qdrant_server`` for Qdrant)."""

# ---------------------------------------------------------------------------------------------- the target


def backup_target(target: Any) -> Target:
    """The deployment to back up or restore into (a config dict, a live Memory or a Target), refused unless the
    provider seam reads its vector store (:data:`~mem0_hygiene.stores.vector.SUPPORTED`): Qdrant (a local folder
    or a server), pgvector, Chroma or FAISS."""
    from ..stores.vector import SUPPORTED, unsupported_reason

    tgt = resolve(target)
    if tgt.vector_location.provider not in SUPPORTED:
        raise BackupError(
            f"{unsupported_reason(tgt.vector_location.provider)}; nothing was backed up. Back it up with its own "
            "tools, at the same moment as history.db and the ledger"
        )
    return tgt


def _through_seam(tgt: Target) -> bool:
    """The vector store is snapshotted by the provider seam (pgvector, Chroma, FAISS), not as a Qdrant store."""
    return tgt.vector_location.provider != "qdrant"


def _is_local(tgt: Target) -> bool:
    """A local Qdrant folder (copied as a folder); the seam's providers are snapshotted their own way."""
    return tgt.vector_location.is_local and not _through_seam(tgt)


def source_dict(tgt: Target) -> dict[str, Any]:
    """What a backup set was taken from, as written into its manifest."""
    return {
        "vector_store": {
            "provider": tgt.vector_location.provider,
            "kind": "local" if tgt.vector_location.is_local else "server",
            "path": tgt.vector_path,
            "server": tgt.vector_location.remote,
            "collection": tgt.collection,
        },
        "history_db_path": tgt.history_path,
        **(
            {"ledger_path": None, "ledger_url": redact(tgt.ledger_path)}
            if is_postgres_url(tgt.ledger_path)
            else {"ledger_path": tgt.ledger_path}
        ),
    }


def _point_counts(client: Any, tgt: Target) -> dict[str, int]:
    """Local: every collection of the folder (the whole folder is copied). Server: the app's collection."""
    if _is_local(tgt):
        return qdrant_local.client_counts(client)
    names = {c.name for c in client.get_collections().collections}
    if tgt.collection not in names:
        return {}
    return {tgt.collection: int(client.count(tgt.collection, exact=True).count)}


# ---------------------------------------------------------------------------------------------- SQLite copies


@contextlib.contextmanager
def _held_still(paths: list[str]) -> Iterator[None]:
    """Hold a write lock (``BEGIN IMMEDIATE``, nothing written) on each SQLite file: no writer gets in,
    readers (our copies) are not blocked. Released (rolled back) on exit."""
    conns: list[sqlite3.Connection] = []
    try:
        for path in paths:
            conn = connect(path)
            conns.append(conn)
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise BackupError(
                    f"cannot hold {path} still for the backup ({exc}): a writer kept it busy for more than "
                    f"{BUSY_TIMEOUT_MS // 1000} s; retry, or run the backup when the app is quieter"
                ) from exc
        yield
    finally:
        for conn in reversed(conns):
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            conn.close()


def _snapshot_sqlite(path: str, dst: str) -> tuple[dict[str, int], str]:
    """``VACUUM INTO`` a copy (the caller holds writers out); returns the source's rows per table and
    journal mode (a restore puts the mode back: the ledger runs in WAL)."""
    conn = connect(path)
    try:
        counts = table_counts(conn)
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        vacuum_into(conn, dst)
    finally:
        conn.close()
    return counts, mode


def _postgres_counts(url: str) -> dict[str, int]:
    """Rows per table of a PostgreSQL ledger (a dry run's counts), from one snapshot."""
    from ..stores.ledger.postgres_copy import postgres_tables
    from ..stores.ledger.tables import quote

    with snapshot(url) as ledger:
        return {
            t.name: int(ledger.query(f"SELECT count(*) FROM {quote(t.name)}")[0][0]) for t in postgres_tables(ledger.pg)
        }


def _settle_copy(path: str) -> dict[str, int]:
    """Make a copy self-contained (rollback journal, no sidecars); returns its rows per table."""
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
        return table_counts(conn)
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"the copy {path} cannot be read as SQLite: {exc}") from exc
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------- last verified


def last_verified_backup(dest_or_config: Any = None, *, verify: bool = False) -> BackupInfo | None:
    """The newest backup that was verified when it was made and is still complete on disk, or None.

    ``dest_or_config``: a DEST folder (a path: its ``mem0-backup-*`` folders are examined), or a mem0
    config dict / live Memory / None for mem0's defaults (its backup record is read). Completeness
    means the manifest and every listed file with its size; ``verify=True`` recomputes every sha256.
    """
    if isinstance(dest_or_config, (str, os.PathLike)):
        dest = os.path.abspath(os.path.expanduser(os.fspath(dest_or_config)))
        for folder, doc in reversed(complete_backups(dest)):
            if not check_set(folder, doc, checksums=verify):
                return info_of(folder, doc, "checksums" if verify else "sizes")
        return None
    tgt = backup_target(dest_or_config)
    return backup_status_for_paths(tgt.ledger_path, tgt.history_path, verify=verify).last


# ---------------------------------------------------------------------------------------------- backup


def _rotation(dest: str, keep: int | None, new_path: str | None) -> list[str]:
    """Complete backups to delete so that ``keep`` remain, counting the new one (never deleted)."""
    if keep is None:
        return []
    others = [f for f, _ in complete_backups(dest) if f != new_path]
    room = keep - 1  # the new backup takes one place
    return others[: max(0, len(others) - room)]


def backup(
    target: Any,
    dest: str | os.PathLike[str],
    *,
    keep: int | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> BackupResult:
    """Back up a mem0 deployment into a new dated folder under ``dest``; see the module docstring.

    ``target`` is a mem0 config dict (None: mem0's defaults) or a live ``Memory``. With a config, a
    local Qdrant folder is opened by a client of ours, whose lock keeps everyone else out while it is
    copied; :class:`~mem0_hygiene.errors.StoreLocked` says so when the app holds it. With a live
    Memory (the in-process route, ``m.backup(dest)``), the app's own open client is used, so it works
    while the app runs. ``keep=N`` then deletes the oldest complete backups in ``dest`` beyond N
    (never the one just made). ``dry_run`` reads the counts and plans, writes nothing.

    Raises :class:`~mem0_hygiene.errors.BackupError` when a copy fails its check (the partial set is
    removed, earlier backups are untouched) or nothing can be backed up.
    """
    started = time.perf_counter()
    if keep is not None and keep < 1:
        raise BackupError(f"keep must be at least 1 (the backup just made is always kept), not {keep}")
    tgt = backup_target(target)
    refuse_while_restoring(tgt.ledger_path, tgt.history_path, tgt.vector_path, "back up the stores")
    dest_s = os.path.abspath(os.path.expanduser(os.fspath(dest)))
    if os.path.exists(dest_s) and not os.path.isdir(dest_s):
        raise BackupError(f"{dest_s} exists and is not a folder; give a folder to hold the dated backups")
    if tgt.client is None and _is_local(tgt):  # refuse before anything is written
        if not qdrant_local.is_qdrant_folder(tgt.vector_path or ""):
            raise BackupError(f"there is no local Qdrant store at {tgt.vector_path}: nothing to back up")
        qdrant_local.ensure_unlocked(tgt.vector_path or "", "back up")
    moment = as_utc(now) if now is not None else tgt.now()
    name = free_name(dest_s, PREFIX + time_stamp(moment))
    final = os.path.join(dest_s, name)
    history_exists = os.path.isfile(tgt.history_path)
    on_postgres = is_postgres_url(tgt.ledger_path)  # hygiene.ledger_url: its rows are dumped into the set
    ledger_exists = on_postgres or (tgt.ledger_path != ":memory:" and os.path.isfile(tgt.ledger_path))
    notes: list[str] = []
    if not ledger_exists:
        notes.append(f"no ledger at {tgt.ledger_path}: the set holds history.db and the vector store only")
    if not history_exists:
        notes.append(f"no history.db at {tgt.history_path}: the set holds no changelog")

    if dry_run:
        leftovers = find_leftovers(dest_s, "backup", stem_prefix=PREFIX)
        if _through_seam(tgt):
            from ..stores.vector import for_target

            with for_target(tgt, action="back up") as store:
                points = {tgt.collection: store.count()} if store.exists() else {}
        else:
            with tgt.vector_client("back up", BackupError) as client:
                points = _point_counts(client, tgt)
        counts = {
            "points": points,
            "history": table_counts(tgt.history_path) if history_exists else {},
            "ledger": _postgres_counts(tgt.ledger_path)
            if on_postgres
            else table_counts(tgt.ledger_path)
            if ledger_exists
            else {},
        }
        taken = (
            f"the {tgt.provider} store would be snapshotted through the provider seam"
            if _through_seam(tgt)
            else "local folder would be copied while locked"
            if _is_local(tgt)
            else "a server snapshot would be created"
        )
        return BackupResult(
            path=final,
            dest=dest_s,
            dry_run=True,
            created_at=to_iso(moment),
            source=source_dict(tgt),
            counts=counts,
            integrity={},
            vector_store=taken,
            rotated=tuple(_rotation(dest_s, keep, None)),
            record_path=tgt.side_file("backup_record"),
            copies_path=tgt.side_file("copies_registry"),
            leftovers=tuple(leftovers),
            notes=tuple(notes),
            seconds=round(time.perf_counter() - started, 3),
        )

    os.makedirs(dest_s, exist_ok=True)
    leftovers, problems = clean_leftovers(dest_s, "backup", stem_prefix=PREFIX)  # a crashed run's partial sets
    notes += [f"could not remove the leftover of an interrupted backup {p}" for p in problems]
    registry = tgt.side_file("copies_registry")
    tmp = tempfile.mkdtemp(prefix=temporary_name(name, "backup"), dir=dest_s)
    registered = False
    try:
        with holding(tmp):  # a backup starting meanwhile in DEST leaves this one's partial set alone
            manifest, integrity, counts, taken = _build_set(tgt, tmp, moment, history_exists, ledger_exists)
            manifest["notes"] = list(notes)
            manifest["seconds"] = round(time.perf_counter() - started, 3)
            write_manifest(tmp, manifest)
            if os.path.lexists(final):
                raise BackupError(f"{final} appeared while the backup was made; nothing was replaced")
            roles = [
                r
                for r, ok in (
                    ("vector_store", tgt.vector_location.is_local),
                    ("history_db", history_exists),
                    ("ledger", ledger_exists),
                )
                if ok
            ] or ["vector_store"]
            # listed before it appears: a crash right after the rename leaves it accounted for
            note = register_copy(
                registry,
                "backup_set",
                final,
                roles=roles,
                created_at=to_iso(moment),
                note=f"backup of this deployment's stores into {dest_s}",
                size_bytes=size_of(tmp),
            )
            registered = not note
            if note:
                notes.append(note + "; forget --scrub will not find this backup unless it is in the backup record")
            os.rename(tmp, final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if registered:
            unregister_copy(registry, [final])
        if isinstance(exc, HygieneError) or not isinstance(exc, Exception):
            raise
        raise BackupError(
            f"the backup failed ({type(exc).__name__}: {exc}); the partial set was removed, "
            f"earlier backups in {dest_s} are untouched"
        ) from exc

    rotated = _rotation(dest_s, keep, final)
    for old in rotated:
        shutil.rmtree(old)
    if rotated:
        note = unregister_copy(registry, rotated)
        if note:
            notes.append(note)
    entry = {
        "path": final,
        "created_at": to_iso(moment),
        "counts": counts,
        "files": len(manifest["files"]),
        "consistency": manifest["consistency"],
        "size_bytes": sum(f["size"] for f in manifest["files"].values()),
        "vector_store": taken,
    }
    note = update_record(tgt.side_file("backup_record"), add=entry, drop=tuple(rotated))
    if note:
        notes.append(note)
    return BackupResult(
        path=final,
        dest=dest_s,
        dry_run=False,
        created_at=to_iso(moment),
        source=source_dict(tgt),
        counts=counts,
        integrity=integrity,
        vector_store=taken,
        files=len(manifest["files"]),
        size_bytes=entry["size_bytes"],
        rotated=tuple(rotated),
        record_path=tgt.side_file("backup_record"),
        copies_path=registry,
        leftovers=tuple(leftovers),
        notes=tuple(notes),
        seconds=round(time.perf_counter() - started, 3),
    )


def _build_set(
    tgt: Target, tmp: str, moment: datetime, history_exists: bool, ledger_exists: bool
) -> tuple[dict[str, Any], dict[str, str], dict[str, dict[str, int]], str]:
    """Copy every store into ``tmp`` at one moment, check each copy, and return the manifest's parts."""
    counts: dict[str, dict[str, int]] = {"points": {}, "history": {}, "ledger": {}}
    integrity: dict[str, str] = {}
    stores: dict[str, Any] = {}
    snapshots: dict[str, str] = {}
    modes: dict[str, str] = {}
    on_postgres = is_postgres_url(tgt.ledger_path)
    dumped: dict[str, Any] = {}
    seam = _through_seam(tgt)
    taken_snapshot: Any = None
    with contextlib.ExitStack() as ledger_snapshot:
        if seam:  # pgvector, Chroma, FAISS: the provider's own consistent snapshot, verified (stores/vector)
            from ..stores.vector import for_target

            store = ledger_snapshot.enter_context(for_target(tgt, action="back up"))
            client: Any = None
            points = {tgt.collection: store.count()} if store.exists() else {}
        else:
            client = ledger_snapshot.enter_context(tgt.vector_client("back up", BackupError))
            points = _point_counts(client, tgt)
        held = [
            p
            for p, ok in ((tgt.history_path, history_exists), (tgt.ledger_path, ledger_exists and not on_postgres))
            if ok
        ]
        if _is_local(tgt) and tgt.vector_path:
            held += files_under(tgt.vector_path)
        with _held_still(held):
            if history_exists:
                with step("copying history.db"):
                    counts["history"], modes["history_db"] = _snapshot_sqlite(
                        tgt.history_path, os.path.join(tmp, HISTORY_FILE)
                    )
            if on_postgres:  # the snapshot is taken now, while the other stores are held still
                pg = ledger_snapshot.enter_context(snapshot(tgt.ledger_path))
                dumped["snapshot_at"] = to_iso(pg.now())
            elif ledger_exists:
                with step("copying the ledger"):
                    counts["ledger"], modes["ledger"] = _snapshot_sqlite(
                        tgt.ledger_path, os.path.join(tmp, LEDGER_FILE)
                    )
            if seam:
                if points:
                    with step("copying the vector store"):
                        taken_snapshot = store.snapshot(os.path.join(tmp, SEAM_DIR))
            elif _is_local(tgt) and tgt.vector_path:
                with step("copying the vector store"):
                    qdrant_local.copy_store(tgt.vector_path, os.path.join(tmp, QDRANT_DIR))
            else:
                for collection in points:
                    try:
                        snap = client.create_snapshot(collection_name=collection)
                    except NotImplementedError as exc:
                        raise BackupError(
                            "the vector store's client is a local Qdrant passed in as an object; give its "
                            "folder as vector_store.config.path instead so it can be copied"
                        ) from exc
                    snapshots[collection] = str(getattr(snap, "name", snap))
        after = ({tgt.collection: store.count()} if store.exists() else {}) if seam else _point_counts(client, tgt)
        if on_postgres:  # read from the snapshot taken above, after the other stores were let go
            with step("copying the ledger"):
                copies = dump_into_file(pg, os.path.join(tmp, LEDGER_FILE))
            counts["ledger"] = {c.table: c.rows for c in copies}
            modes["ledger"] = "wal"  # as a SQLite ledger runs
    if after != points:
        raise BackupError(
            f"the vector store changed while it was being backed up (points {points} before, {after} after); "
            "the partial set was removed, retry"
        )
    counts["points"] = points

    sqlite_copies = (("history_db", HISTORY_FILE, history_exists), ("ledger", LEDGER_FILE, ledger_exists))
    for checked, (role, fname, ok) in enumerate(sqlite_copies):
        report("checking the copies", checked, 3)
        if not ok:
            stores[role] = None
            continue
        path = os.path.join(tmp, fname)
        copied = _settle_copy(path)
        result = integrity_check(path)
        integrity[fname] = result
        if result != "ok":
            raise BackupError(
                f"the copy of {role} ({fname}) failed PRAGMA integrity_check: {result}; the partial set was "
                "removed and earlier backups are untouched"
            )
        key = "history" if role == "history_db" else "ledger"
        if role == "ledger" and on_postgres:  # the file may hold empty tables the database has not created
            if {t: n for t, n in copied.items() if t in counts[key] or n} != counts[key]:
                raise BackupError(
                    f"the copy of the ledger has rows per table {copied}, the database had "
                    f"{counts[key]}; the partial set was removed"
                )
            counts[key] = copied
        elif copied != counts[key]:
            raise BackupError(
                f"the copy of {role} has rows per table {copied}, the source had {counts[key]}; "
                "the partial set was removed"
            )
        stores[role] = {
            "file": fname,
            "source": tgt.history_path if role == "history_db" else tgt.ledger_path,
            "counts": copied,
            "integrity": result,
            "journal_mode": modes.get(role, "delete"),
        }
        if role == "ledger" and on_postgres:
            stores[role].update(
                source=redact(tgt.ledger_path),
                kind="postgresql_dump",
                consistency=LEDGER_CONSISTENCY["postgresql"],
                **dumped,
            )
            stores[role]["tables"] = ledger_digests(path)  # every table, as check_set recomputes them

    report("checking the copies", 2, 3)
    if seam:
        taken = (
            f"{tgt.provider} snapshot through the provider seam: {taken_snapshot.count} points, checksum verified"
            if taken_snapshot is not None
            else f"the {tgt.provider} store holds no collection {tgt.collection!r}: nothing to snapshot"
        )
        stores["vector_store"] = {
            "kind": SEAM_KIND,
            "provider": tgt.provider,
            "source": tgt.vector_path or tgt.vector_location.remote,
            "collection": tgt.collection,
            "counts": points,
            "taken": taken,
        }
        if taken_snapshot is not None:
            stores["vector_store"].update(folder=SEAM_DIR, checksum=taken_snapshot.checksum)
    elif _is_local(tgt):
        taken = _check_qdrant_copy(os.path.join(tmp, QDRANT_DIR), points, integrity)
        stores["vector_store"] = {
            "kind": "local_qdrant",
            "folder": QDRANT_DIR,
            "source": tgt.vector_path,
            "collection": tgt.collection,
            "counts": points,
            "taken": taken,
        }
    else:
        taken = (
            "; ".join(f"server snapshot created: {name}" for name in snapshots.values())
            or "server has no collection to snapshot"
        )
        stores["vector_store"] = {
            "kind": "qdrant_server",
            "server": tgt.server_conf.get("remote"),
            "collection": tgt.collection,
            "counts": points,
            "snapshots": snapshots,
            "taken": taken,
        }

    manifest: dict[str, Any] = {
        "format": FORMAT,
        "version": MANIFEST_VERSION,
        "mem0_hygiene_version": __version__,
        "created_at": to_iso(moment),
        "finished_at": to_iso(as_utc(system_clock())),
        "in_process": tgt.in_process,
        "source": source_dict(tgt),
        "stores": stores,
        "counts": counts,
        "totals": {
            "points": sum(points.values()),
            "history_rows": counts["history"].get("history", 0),
            "ledger_rows": counts["ledger"].get("memories", 0),
        },
        "integrity": integrity,
        "consistency": LEDGER_CONSISTENCY["postgresql" if on_postgres else "sqlite"],
    }
    report("checking the copies", 3, 3)
    with step("computing checksums"):
        manifest["files"] = file_checksums(tmp)
    return manifest, integrity, counts, taken


def _check_qdrant_copy(folder: str, expected: dict[str, int], integrity: dict[str, str]) -> str:
    """integrity_check every SQLite file of the copied folder, then open it and count its points."""
    lock = qdrant_local.lock_file(folder)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(lock)  # the source's lock file came along; it is no part of the data
    for path in files_under(folder):
        rel = QDRANT_DIR + "/" + os.path.relpath(path, folder).replace(os.sep, "/")
        result = integrity_check(path)
        integrity[rel] = result
        if result != "ok":
            raise BackupError(
                f"the copy of the vector store's {rel} failed PRAGMA integrity_check: {result}; "
                "the partial set was removed and earlier backups are untouched"
            )
    try:
        with qdrant_local.opened(folder, "verify the copy of") as client:
            got = qdrant_local.client_counts(client)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
    if got != expected:
        raise BackupError(
            f"the copy of the vector store holds {got} points per collection, the store {expected}; "
            "the partial set was removed"
        )
    return f"local folder copied while locked ({sum(got.values())} points, counts verified in the copy)"
