"""Verified erasure: delete memories and, on request, scrub their text out of every store file.

:func:`forget` deletes through the drop-in's ``Memory.delete`` (so the memories each one superseded
go too, and tombstones keep them hidden). mem0 itself keeps a deleted memory's text: history.db's
``old_memory`` column of the DELETE event (and of earlier events), raw conversation turns in its
``messages`` table, and, until SQLite reuses them, the bytes of deleted rows in free pages.

With ``scrub=True`` this is the privacy / legal deletion path, and **it edits mem0's history.db on
purpose**: it blanks ``old_memory``/``new_memory`` ('' instead of the text; the event rows stay, so the
history still says what happened and when) of the forgotten memories, removes the ``messages`` rows
whose content contains the text, blanks any ledger field that holds it, and then rewrites every
SQLite file involved with ``PRAGMA secure_delete=ON`` and ``VACUUM`` (history.db, the ledger, and
local Qdrant's own ``collection/NAME/storage.sqlite``, where a deleted point's pickled payload can
linger in free pages), truncating write-ahead logs. Finally it reads the raw bytes of every store
file (history.db and its ``-wal``/``-shm``/``-journal``, the same for the ledger, every file under the
local Qdrant folder) and reports, per file, whether the text (UTF-8) is still found and why.

The same is done to every copy of the stores the tool made and registered (backup sets, the stores a
restore moved aside, relocation sources: :mod:`mem0_hygiene.stores.copies`), each as described in
:mod:`mem0_hygiene.actions.copy_erasure` (a backup set's checksums are rewritten so it still restores),
and their files are read byte by byte too: "verified" means no file the tool knows about holds the
text. ``keep_backups=True`` leaves backup sets alone and names each one that still holds it.

Local Qdrant's SQLite file is vacuumed with the folder's lock held by a Qdrant client of this
process (the app's own one in-process, or ours from a config), whose connection is idle between
calls, so no other process can write it meanwhile. The verification is honest: a file that could
not be rewritten, or that still holds the text because another memory or message says the same
thing, is reported as still found, with the reason. The result never contains the text itself.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..display.tables import Line, LinesView
from ..errors import BackupError, ConfigError, MemoryNotFound
from ..progress import counted, report, step
from ..stores.copies import StoreCopy, list_copies
from ..stores.ledger import connect as ledger_connect
from ..stores.sqlite import files_under
from ..target import resolve
from ..timeutil import to_iso
from .copy_erasure import CopyErasure, copy_texts, parts_of, scrub_copy
from .scrubbing import (
    SHORT_TEXT,
    count_scrub,
    scan,
    scrub_history,
    scrub_ledger_fields,
    sqlite_files,
    vacuum,
    why_history,
    why_points,
)


@dataclass(frozen=True)
class FileCheck:
    """One file read byte by byte after the scrub (in a dry run: as it is now): a live store file, or a file
    of a registered copy.

    Fields:
        path: the file.
        role: "history_db", "ledger" or "vector_store" (a copy's other files, e.g. a backup's manifest:
            "other").
        clean: none of the forgotten texts' UTF-8 bytes occur in it.
        found: how many of the texts were found in it.
        reason: why it still holds them (another memory with the same text, a file that could not
            be rewritten, a backup kept on purpose, ...); "" when clean.
        copy: the registered copy the file belongs to ("" for the live stores).
        kind: "live", or the copy's kind ("backup_set", "replaced_aside", "relocation_source").
    """

    path: str
    role: str
    clean: bool
    found: int = 0
    reason: str = ""
    copy: str = ""
    kind: str = "live"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "role": self.role,
            "clean": self.clean,
            "found": self.found,
            "reason": self.reason,
            "copy": self.copy,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class ForgetResult(LinesView):
    """What :func:`forget` did (or, with ``dry_run``, would do). It never contains the memories' text.

    Fields:
        memory_ids: the ids asked for.
        deleted: memories deleted now through mem0's API (the asked-for ones and their chains).
        cascaded: memories deleted only because a memory they had been superseded by was forgotten.
        already_deleted: asked-for memories that were no longer in the vector store (scrubbed all the same).
        dry_run: nothing was changed; ``files`` says where the text is found now.
        scrub: the text was (or would be) scrubbed from the store files.
        texts: how many distinct texts (current and earlier versions) were searched for.
        history_rows_blanked: history.db rows whose old_memory/new_memory were set to '' (dry run: would be).
        messages_removed: rows of mem0's ``messages`` table removed because they contained the text
            (dry run: would be).
        ledger_fields_blanked: ledger fields that held the text and were blanked.
        vacuumed: SQLite files rewritten with VACUUM.
        files: every file checked, of the live stores and of every registered copy, clean or still holding
            the text (empty without scrub).
        copies: each registered copy (backup sets, stores moved aside by restore, relocation sources):
            scrubbed, kept (``keep_backups``), and whether it still holds the text.
        keep_backups: backup sets were left alone on purpose.
        unverified: stores whose files cannot be read from here (a Qdrant server; "copies" when the
            registry of copies cannot be read), so the erasure cannot be proven for them.
        notes: anything else worth saying (a Qdrant server that cannot be read byte by byte, ...).
    """

    memory_ids: tuple[str, ...]
    deleted: tuple[str, ...]
    cascaded: tuple[str, ...]
    already_deleted: tuple[str, ...]
    dry_run: bool
    scrub: bool
    texts: int = 0
    history_rows_blanked: int = 0
    messages_removed: int = 0
    ledger_fields_blanked: int = 0
    vacuumed: tuple[str, ...] = ()
    files: tuple[FileCheck, ...] = ()
    copies: tuple[CopyErasure, ...] = ()
    keep_backups: bool = False
    unverified: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def still_found(self) -> tuple[FileCheck, ...]:
        return tuple(f for f in self.files if not f.clean)

    @property
    def copies_holding_text(self) -> tuple[CopyErasure, ...]:
        """The registered copies in which a forgotten text is still found."""
        return tuple(c for c in self.copies if c.holds_text)

    @property
    def verified(self) -> bool:
        """A real scrub ran, every store's files could be read, and all of them, the live stores' and every
        registered copy's, were found clean."""
        return self.scrub and not self.dry_run and bool(self.files) and not self.still_found and not self.unverified

    def _lines(self) -> list[Line]:
        out: list[Line] = []
        verb = "would delete" if self.dry_run else "deleted"
        if self.deleted:
            out.append([(f"{verb} (through mem0's API): {', '.join(self.deleted)}", "")])
        if self.cascaded:
            out.append([(f"  including the memories they superseded: {', '.join(self.cascaded)}", "")])
        if self.already_deleted:
            out.append([(f"already gone from the vector store: {', '.join(self.already_deleted)}", "")])
        if self.scrub:
            blank = "would blank" if self.dry_run else "blanked"
            out.append(
                [
                    (
                        f"scrub: {blank} the text in {self.history_rows_blanked} history.db row(s) (rows kept), "
                        f"{'would remove' if self.dry_run else 'removed'} {self.messages_removed} messages row(s), "
                        f"{self.ledger_fields_blanked} ledger field(s); {self.texts} text(s) searched for",
                        "",
                    )
                ]
            )
            if self.vacuumed:
                out.append([("  vacuumed: " + ", ".join(self.vacuumed), "")])
            out += self._copy_lines()
            dirty = self.still_found
            live = sum(1 for f in self.files if f.kind == "live")
            if self.dry_run:
                out.append([("  the text is found now in: " + (", ".join(f.path for f in dirty) or "no file"), "")])
            elif not dirty:
                out.append(
                    [
                        ("  ", ""),
                        ("verified", "green"),
                        (
                            f": the text is found in none of the {len(self.files)} files ({live} of the live "
                            f"stores, {len(self.files) - live} of the {len(self.copies)} registered copies)",
                            "",
                        ),
                    ]
                )
            for f in [] if self.dry_run else dirty:
                out.append([("  ", ""), ("still found", "bold red"), (f" in {f.path}: {f.reason}", "")])
        out += [[("  ", ""), ("note", "yellow"), (f": {note}", "")] for note in self.notes]
        return out

    def _copy_lines(self) -> list[Line]:
        out: list[Line] = []
        for c in self.copies:
            if c.kept:
                state = "left alone (--keep-backups)" + ("; still holds the text" if c.holds_text else "; clean")
            elif self.dry_run:
                state = "would be scrubbed" + ("; holds the text now" if c.holds_text else "")
            elif c.scrubbed:
                done = [
                    f"{c.points_deleted} point(s) deleted" if "vector_store" in c.roles else "",
                    f"{c.history_rows_blanked} history row(s) blanked" if "history_db" in c.roles else "",
                    "ledger rows tombstoned" if "ledger" in c.roles else "",
                    "manifest counts and checksums rewritten" if c.resealed else "",
                ]
                state = f"scrubbed ({', '.join(d for d in done if d)})"
            else:
                state = "could not be scrubbed"
            style = "bold red" if c.holds_text and not self.dry_run else ""
            line: list[tuple[object, str]] = [(f"  copy ({c.kind}) {c.path}: ", ""), (state, style)]
            if c.reason and not c.kept:
                line.append((f"; {c.reason}", ""))
            out.append(line)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_ids": list(self.memory_ids),
            "deleted": list(self.deleted),
            "cascaded": list(self.cascaded),
            "already_deleted": list(self.already_deleted),
            "dry_run": self.dry_run,
            "scrub": self.scrub,
            "verified": self.verified,
            "texts": self.texts,
            "history_rows_blanked": self.history_rows_blanked,
            "messages_removed": self.messages_removed,
            "ledger_fields_blanked": self.ledger_fields_blanked,
            "vacuumed": list(self.vacuumed),
            "files": [f.to_dict() for f in self.files],
            "copies": [c.to_dict() for c in self.copies],
            "keep_backups": self.keep_backups,
            "unverified": list(self.unverified),
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------- helpers


def _texts_of(m: Any, memory_id: str) -> tuple[bool, set[str], int]:
    """(in the vector store?, its texts: current payload and every history version, history rows)."""
    texts: set[str] = set()
    point = m.vector_store.get(vector_id=memory_id)
    if point is not None:
        data = (point.payload or {}).get("data")
        if isinstance(data, str):
            texts.add(data)
    rows = m.db.get_history(memory_id)
    for row in rows:
        for key in ("old_memory", "new_memory"):
            if isinstance(row.get(key), str):
                texts.add(row[key])
    return point is not None, {t for t in texts if t}, len(rows)


def _scrub_ledger(path: str, ids: Sequence[str], texts: Sequence[str]) -> int:
    conn = ledger_connect(path)
    try:
        return scrub_ledger_fields(conn, ids, texts)
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------- forget


def forget(
    target: Any,
    memory_ids: Sequence[str],
    *,
    scrub: bool = False,
    dry_run: bool = False,
    keep_backups: bool = False,
    also_texts: Sequence[str] = (),
) -> ForgetResult:
    """Delete memories through mem0's API and, with ``scrub``, erase their text from every store file and
    from every registered copy of the stores.

    ``target`` is the app's drop-in ``Memory`` (in-process; works while the app runs) or a mem0 config
    dict, for which a ``Memory`` is opened here (:class:`~mem0_hygiene.errors.StoreLocked` when a
    running app holds the local Qdrant folder: call ``m.forget(...)`` in the app instead). Deletion
    goes through ``Memory.delete``: the chain each memory superseded is deleted too, and tombstones
    keep them hidden. A memory already gone from the vector store can still be scrubbed (the audit's
    ``DELETED_TEXT_IN_HISTORY`` fix). Unknown ids raise :class:`~mem0_hygiene.errors.MemoryNotFound`
    before anything is changed.

    ``scrub=True`` edits mem0's history.db on purpose, and every registered copy (backup sets included,
    whose manifests are rewritten so they still restore); see the module docstring for every step and for
    how the result reports files that still hold the text. ``keep_backups`` leaves backup sets alone (the
    result then names each one that still holds the text, and is not verified). ``dry_run`` changes
    nothing and, with ``scrub``, reports where the text is found now. ``also_texts``: more texts to scrub and
    verify beside the memories' own (a scope erasure's raw conversation turns, or texts its journal kept);
    with them, ``memory_ids`` may be empty.
    """
    ids = list(dict.fromkeys(str(i) for i in memory_ids))
    if not ids and not also_texts:
        raise ConfigError("give at least one memory id to forget")
    tgt = resolve(target)
    with tgt.memory_for("forget memories in", readonly=dry_run) as m:
        m.flush()
        plan: list[tuple[str, bool, list[str]]] = []  # (id, in store, chain it superseded)
        texts: set[str] = {t for t in also_texts if t}
        in_store: set[str] = set()
        for mid in ids:
            present, found, rows = _texts_of(m, mid)
            if present:
                in_store.add(mid)
            ledger_row = m.ledger.get(mid)
            if not present and ledger_row is None and not rows:
                raise MemoryNotFound(
                    mid, "it is in neither the vector store, the ledger nor history.db; nothing was changed"
                )
            chain = m.ledger.predecessors(mid)
            texts |= found
            for pid in chain:
                p_present, p_texts, _ = _texts_of(m, pid)
                texts |= p_texts
                if p_present:
                    in_store.add(pid)
            plan.append((mid, present, chain))
        affected = list(dict.fromkeys([*ids, *(p for _, _, chain in plan for p in chain)]))
        cascaded = tuple(p for p in affected if p not in ids)
        already = tuple(mid for mid, present, _ in plan if not present)
        deleted = [x for x in affected if x in in_store]  # what goes out of the vector store through mem0
        notes: list[str] = []
        # the deployment's own files (a dry run's Memory works on a scratch copy of the ledger)
        history_path = file_path(tgt.history_path)
        ledger_path = file_path(tgt.ledger_path)
        qdrant_path = local_qdrant_path(m)
        raw = _raw_store(m, qdrant_path)
        copies: list[StoreCopy] = []
        unverified: list[str] = []
        if scrub:
            try:
                copies = [
                    c
                    for c in list_copies(ledger_path, history_path)
                    if not is_live_copy(c, (history_path, ledger_path, qdrant_path))
                ]
            except BackupError as exc:
                unverified.append("copies")
                notes.append(f"the copies of the stores cannot be listed, so none was scrubbed or checked: {exc}")
            for c in copies:
                texts |= copy_texts(c, affected)  # a copy may still hold a text the live store has lost
        if not dry_run:
            for mid, present, _chain in counted("deleting memories through mem0", plan):
                row = m.ledger.get(mid)
                if not present and (row is None or row.deleted_at):
                    continue  # already deleted: only its text is left to scrub
                try:
                    m.delete(mid)
                except MemoryNotFound:
                    pass  # gone from the store already; the ledger now marks it deleted (and its chain)
            deleted = [x for x in deleted if m.vector_store.get(vector_id=x) is None]

        if not scrub:
            notes.append(
                "not scrubbed: mem0 keeps a deleted memory's text in history.db (and free pages); "
                "erase it with `mem0-hygiene forget --scrub` (in the app: m.forget(ids, scrub=True))"
            )
            return ForgetResult(
                memory_ids=tuple(ids),
                deleted=tuple(dict.fromkeys(deleted)),
                cascaded=cascaded,
                already_deleted=already,
                dry_run=dry_run,
                scrub=False,
                texts=len(texts),
                notes=tuple(notes),
            )
        ordered = sorted(texts)
        if any(len(t.encode("utf-8")) < SHORT_TEXT for t in ordered):
            notes.append(f"some texts are shorter than {SHORT_TEXT} bytes and may match unrelated bytes by chance")
        if qdrant_path is None and raw is None:
            unverified.append("vector_store")
            notes.append(
                "the vector store cannot be read from here (a server, or a provider mem0-hygiene does not read): "
                "the points were deleted through mem0's API, their erasure is not verified"
            )
        elif raw is not None and raw.provider == "pgvector":
            notes.append(
                "pgvector: the table was checked by a query; PostgreSQL keeps deleted rows' bytes until "
                "VACUUM reclaims them: run VACUUM on the table to have them overwritten"
            )
        blanked = removed = ledger_blanked = 0
        vacuumed: list[str] = []
        failed: dict[str, str] = {}
        erasures: dict[str, CopyErasure] = {}
        if not dry_run:
            m.flush()
            try:
                if history_path and os.path.isfile(history_path):
                    report("scrubbing history.db", 0, 1)
                    with m.history_lock():  # mem0's connection waits meanwhile
                        blanked, removed = scrub_history(history_path, affected, ordered)
                        failed[history_path] = vacuum(history_path)
                    vacuumed.append(history_path)
                if ledger_path and os.path.isfile(ledger_path):
                    report("scrubbing the ledger", 0, 1)
                    with m.ledger.locked():
                        ledger_blanked = _scrub_ledger(ledger_path, affected, ordered)
                        failed[ledger_path] = vacuum(ledger_path)
                    vacuumed.append(ledger_path)
                elif m.ledger.is_server:  # hygiene.ledger_url: the rows are blanked on the database server
                    ledger_blanked = m.ledger.scrub_fields(affected, ordered)
            except sqlite3.Error as exc:
                raise BackupError(
                    f"the memories were deleted, but scrubbing their text failed ({exc}); nothing of the scrub "
                    "was half-applied to that file (one transaction). Run forget with scrub again"
                ) from exc
            if raw is not None and hasattr(raw, "scrub_log"):  # Chroma keeps deleted payloads in its own log
                raw.scrub_log(affected)
            if raw is not None and hasattr(raw, "zero_unused_capacity"):  # and stale memory in its HNSW files
                raw.zero_unused_capacity()
            for path in counted(
                "compacting the vector store's files",
                files_under(qdrant_path) if qdrant_path is not None else _sqlite_files_of(raw),
            ):
                failed[path] = vacuum(path)
                vacuumed.append(path)
            at = to_iso(tgt.now())
            for c in counted("scrubbing the copies", copies):
                if keep_backups and c.kind == "backup_set":
                    erasures[c.path] = CopyErasure(c.kind, c.path, c.roles, scrubbed=False, kept=True)
                    continue
                erasures[c.path], copy_failed = scrub_copy(c, affected, ordered, collection=tgt.collection, at=at)
                failed.update(copy_failed)
        else:
            blanked, removed = count_scrub(history_path, affected, ordered)
            for c in copies:
                erasures[c.path] = CopyErasure(
                    c.kind, c.path, c.roles, scrubbed=False, kept=keep_backups and c.kind == "backup_set"
                )
        with step("checking that no file still holds the text"):
            files = _verify(history_path, ledger_path, qdrant_path, affected, ordered, failed, dry_run)
            files += _verify_raw_store(raw, ordered, failed, dry_run)
            copy_files = _verify_copies(copies, erasures, affected, ordered, failed, dry_run)
        files += copy_files
        checked = tuple(
            replace(erasures[c.path], holds_text=any(f.copy == c.path and not f.clean for f in copy_files))
            for c in copies
        )
    return ForgetResult(
        memory_ids=tuple(ids),
        deleted=tuple(dict.fromkeys(deleted)),
        cascaded=cascaded,
        already_deleted=already,
        dry_run=dry_run,
        scrub=True,
        texts=len(ordered),
        history_rows_blanked=blanked,
        messages_removed=removed,
        ledger_fields_blanked=ledger_blanked,
        vacuumed=tuple(p for p in vacuumed if not failed.get(p)),
        files=tuple(files),
        copies=checked,
        keep_backups=keep_backups,
        unverified=tuple(unverified),
        notes=tuple(notes),
    )


def file_path(path: str | None) -> str | None:
    """A store file's absolute path; None in memory or for a ledger on PostgreSQL (no file: its copies are
    registered beside history.db)."""
    return os.path.abspath(os.path.expanduser(path)) if path and path != ":memory:" and "://" not in path else None


def local_qdrant_path(m: Any) -> str | None:
    from ..stores.locations import location_of, resolve_locations

    vs = location_of(resolve_locations(m), "vector_store")
    return vs.path if vs.provider == "qdrant" and vs.is_local and vs.path and os.path.isdir(vs.path) else None


def _raw_store(m: Any, qdrant_path: str | None) -> Any:
    """The seam's view of the app's vector store when it is not a local Qdrant folder (whose files are checked
    as before): Chroma's and FAISS's files, pgvector's table; None when it cannot be read from here."""
    if qdrant_path is not None:
        return None
    from ..stores.vector import UnsupportedVectorStore, from_mem0

    try:
        store = from_mem0(m.vector_store)
    except UnsupportedVectorStore:
        return None
    if store.provider == "qdrant":  # a server, or a client passed in: no files to read here
        return None
    return store


def _sqlite_files_of(raw: Any) -> list[str]:
    """The SQLite files among a store's raw files (Chroma's ``chroma.sqlite3``): compacted like Qdrant's."""
    return [p for p in raw.raw_files() if p.endswith((".sqlite3", ".sqlite"))] if raw is not None else []


def _verify_raw_store(raw: Any, texts: Sequence[str], failed: dict[str, str], dry_run: bool) -> list[FileCheck]:
    """Where the store of another provider still holds the texts: each of its files' raw bytes (Chroma, FAISS),
    or a query on the table (pgvector)."""
    if raw is None:
        return []
    out: list[FileCheck] = []
    if raw.provider == "pgvector":
        try:
            held = [t for t in texts if raw.holds_text(t)]
        finally:
            raw.close()
        where = f"table {raw.collection} on {raw.where}"
        reason = "not scrubbed yet (dry run)" if dry_run else "a row of the table still holds it"
        out.append(FileCheck(where, "vector_store", not held, len(held), reason if held else ""))
        return out
    needles = [t.encode("utf-8") for t in texts]
    for path in raw.raw_files():
        hits = scan(path, needles) if needles else set()
        if not hits:
            out.append(FileCheck(path, "vector_store", True))
            continue
        reason = (
            "not scrubbed yet (dry run)"
            if dry_run
            else failed.get(path)
            or ("the bytes are still in the file although no point holds them (unused space not rewritten)")
        )
        out.append(FileCheck(path, "vector_store", False, len(hits), reason))
    return out


def is_live_copy(copy: StoreCopy, live: Sequence[str | None]) -> bool:
    """A registered copy that is (a link to) a live store, or holds one: it is checked as the live store."""
    real = os.path.realpath(copy.path)
    for path in live:
        if path and (real == os.path.realpath(path) or os.path.realpath(path).startswith(real.rstrip("/") + "/")):
            return True
    return False


def _reason(
    path: str, main: str, ids: Sequence[str], found: Sequence[str], failed: dict[str, str], history_like: bool
) -> str:
    parts = []
    if history_like and path == main:
        parts.append(why_history(path, ids, found))
    elif path.endswith(".sqlite"):
        parts.append(why_points(path, found))
    if failed.get(main):
        parts.append(failed[main])
    if path != main:
        parts.append("in the database's journal/WAL file")
    return "; ".join(p for p in parts if p) or (
        "the bytes are still in the file although no row holds them (unused space that VACUUM did not rewrite)"
    )


def _verify(
    history_path: str | None,
    ledger_path: str | None,
    qdrant_path: str | None,
    ids: Sequence[str],
    texts: Sequence[str],
    failed: dict[str, str],
    dry_run: bool,
) -> list[FileCheck]:
    """Read every live store file's raw bytes and say where the texts are still found, and why."""
    needles = [t.encode("utf-8") for t in texts]
    targets: list[tuple[str, str, str]] = [(p, "history_db", history_path or p) for p in sqlite_files(history_path)]
    targets += [(p, "ledger", ledger_path or p) for p in sqlite_files(ledger_path)]
    if qdrant_path is not None:
        for root, _dirs, names in os.walk(qdrant_path):
            targets += [(os.path.join(root, n), "vector_store", os.path.join(root, n)) for n in sorted(names)]
    out: list[FileCheck] = []
    for path, role, main in targets:
        hits = scan(path, needles) if needles else set()
        if not hits:
            out.append(FileCheck(path, role, True))
            continue
        found = [texts[i] for i in sorted(hits)]
        reason = (
            "not scrubbed yet (dry run)" if dry_run else _reason(path, main, ids, found, failed, path == history_path)
        )
        out.append(FileCheck(path, role, False, len(hits), reason))
    return out


def _verify_copies(
    copies: Sequence[StoreCopy],
    erasures: dict[str, CopyErasure],
    ids: Sequence[str],
    texts: Sequence[str],
    failed: dict[str, str],
    dry_run: bool,
) -> list[FileCheck]:
    """Read every file of every registered copy byte by byte, as :func:`_verify` does for the live stores."""
    needles = [t.encode("utf-8") for t in texts]
    out: list[FileCheck] = []
    for c in copies:
        owner: dict[str, tuple[str, str]] = {}  # file -> (role, the database it belongs to)
        for part in parts_of(c):
            for path, main in part.files():
                owner[path] = (part.role, main)
        erasure = erasures[c.path]
        for path in c.files():
            role, main = owner.get(path, ("other", path))
            hits = scan(path, needles) if needles else set()
            if not hits:
                out.append(FileCheck(path, role, True, copy=c.path, kind=c.kind))
                continue
            found = [texts[i] for i in sorted(hits)]
            if erasure.kept:
                reason = "a backup set left alone on purpose (--keep-backups)"
            elif dry_run:
                reason = "not scrubbed yet (dry run)"
            else:
                reason = _reason(path, main, ids, found, failed, role == "history_db")
            out.append(FileCheck(path, role, False, len(hits), reason, copy=c.path, kind=c.kind))
    return out


__all__ = ["CopyErasure", "FileCheck", "ForgetResult", "file_path", "forget", "is_live_copy", "local_qdrant_path"]
