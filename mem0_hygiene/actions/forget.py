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
from dataclasses import dataclass
from typing import Any

from ..errors import BackupError, ConfigError, MemoryNotFound
from ..render.tables import Line, LinesView
from ..stores.ledger import connect as ledger_connect
from ..stores.sqlite import connect, files_under, sidecars, transaction
from ..target import resolve

_LEDGER_TEXT_COLUMNS = ("source", "invalid_reason", "topic_key")
SHORT_TEXT = 8  # bytes; shorter texts can match unrelated data by chance


@dataclass(frozen=True)
class FileCheck:
    """One store file read byte by byte after the scrub (in a dry run: as it is now).

    Fields:
        path: the file.
        role: "history_db", "ledger" or "vector_store".
        clean: none of the forgotten texts' UTF-8 bytes occur in it.
        found: how many of the texts were found in it.
        reason: why it still holds them (another memory with the same text, a file that could not
            be rewritten, ...); "" when clean.
    """

    path: str
    role: str
    clean: bool
    found: int = 0
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "role": self.role, "clean": self.clean, "found": self.found, "reason": self.reason}


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
        files: every store file checked, clean or still holding the text (empty without scrub).
        unverified: stores whose files cannot be read from here (a Qdrant server), so the erasure
            cannot be proven for them.
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
    unverified: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def still_found(self) -> tuple[FileCheck, ...]:
        return tuple(f for f in self.files if not f.clean)

    @property
    def verified(self) -> bool:
        """A real scrub ran, every store's files could be read, and all of them were found clean."""
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
            out.append([(f"scrub: {blank} the text in {self.history_rows_blanked} history.db row(s) (rows kept), "
                         f"{'would remove' if self.dry_run else 'removed'} {self.messages_removed} messages row(s), "
                         f"{self.ledger_fields_blanked} ledger field(s); {self.texts} text(s) searched for", "")])
            if self.vacuumed:
                out.append([("  vacuumed: " + ", ".join(self.vacuumed), "")])
            dirty = self.still_found
            if self.dry_run:
                out.append([("  the text is found now in: " + (", ".join(f.path for f in dirty) or "no store file"),
                             "")])
            elif not dirty:
                out.append([("  ", ""), ("verified", "green"),
                            (f": the text is found in none of the {len(self.files)} store files", "")])
            for f in ([] if self.dry_run else dirty):
                out.append([("  ", ""), ("still found", "bold red"), (f" in {f.path}: {f.reason}", "")])
        out += [[("  ", ""), ("note", "yellow"), (f": {note}", "")] for note in self.notes]
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


def _sqlite_files(path: str | None) -> list[str]:
    if not path or path == ":memory:":
        return []
    return [p for p in [path, *sidecars(path)] if os.path.isfile(p)]


def _scan(path: str, needles: Sequence[bytes]) -> set[int]:
    """Indexes of the needles whose bytes occur in the file (read in 1 MiB blocks with overlap)."""
    found: set[int] = set()
    overlap = max((len(n) for n in needles), default=1) - 1
    tail = b""
    try:
        with open(path, "rb") as fh:
            while True:
                block = fh.read(1 << 20)
                if not block:
                    break
                buf = tail + block
                for i, needle in enumerate(needles):
                    if i not in found and needle in buf:
                        found.add(i)
                tail = buf[-overlap:] if overlap > 0 else b""
    except FileNotFoundError:
        return set()
    return found


def _connect_secure(path: str) -> sqlite3.Connection:
    """A read-write connection (never creating the file) that zeroes what it deletes."""
    conn = connect(path)
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def _vacuum(path: str) -> str:
    """``VACUUM`` (secure_delete on) and truncate the WAL; returns "" or why it could not."""
    try:
        conn = _connect_secure(path)
        try:
            conn.execute("VACUUM")
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode == "wal":
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                if busy:
                    return "the write-ahead log could not be truncated: another connection was reading"
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"VACUUM failed: {exc}"
    return ""


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _scrub_history(path: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
    """Blank the memories' text in history (rows kept), remove messages holding it. One transaction."""
    conn = _connect_secure(path)
    try:
        with transaction(conn):
            marks = ",".join("?" * len(ids))
            blanked = conn.execute(
                f"UPDATE history SET old_memory = CASE WHEN old_memory IS NULL THEN NULL ELSE '' END, "
                f"new_memory = CASE WHEN new_memory IS NULL THEN NULL ELSE '' END "
                f"WHERE memory_id IN ({marks}) AND (COALESCE(old_memory, '') <> '' OR COALESCE(new_memory, '') <> '')",
                list(ids),
            ).rowcount
            removed = 0
            if "messages" in _tables(conn):
                for text in texts:
                    removed += conn.execute("DELETE FROM messages WHERE instr(content, ?) > 0", (text,)).rowcount
    finally:
        conn.close()
    return blanked, removed


def _count_scrub(path: str | None, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
    """What :func:`_scrub_history` would change (history rows, messages rows), read-only."""
    if not path or not os.path.isfile(path):
        return 0, 0
    conn = connect(path, readonly=True)
    try:
        marks = ",".join("?" * len(ids))
        rows = conn.execute(f"SELECT count(*) FROM history WHERE memory_id IN ({marks}) "
                            "AND (COALESCE(old_memory, '') <> '' OR COALESCE(new_memory, '') <> '')",
                            list(ids)).fetchone()[0]
        messages = 0
        if "messages" in _tables(conn):
            ids_seen: set[str] = set()
            for text in texts:
                ids_seen |= {r[0] for r in conn.execute("SELECT id FROM messages WHERE instr(content, ?) > 0", (text,))}
            messages = len(ids_seen)
    finally:
        conn.close()
    return int(rows), messages


def _scrub_ledger(path: str, ids: Sequence[str], texts: Sequence[str]) -> int:
    """The ledger keeps no memory text; blank any of its text fields of these memories that holds it."""
    conn = ledger_connect(path)
    try:
        conn.execute("PRAGMA secure_delete = ON")
        blanked = 0
        with transaction(conn):
            marks = ",".join("?" * len(ids))
            for column in _LEDGER_TEXT_COLUMNS:
                for text in texts:
                    blanked += conn.execute(
                        f"UPDATE memories SET {column} = NULL WHERE memory_id IN ({marks}) AND instr({column}, ?) > 0",
                        [*ids, text],
                    ).rowcount
    finally:
        conn.close()
    return blanked


def _why_history(path: str, ids: Sequence[str], texts: Sequence[str]) -> str:
    try:
        conn = connect(path, readonly=True)
        try:
            others: set[str] = set()
            messages = 0
            has_messages = "messages" in _tables(conn)
            for text in texts:
                for (mid,) in conn.execute("SELECT DISTINCT memory_id FROM history "
                                           "WHERE instr(old_memory, ?) > 0 OR instr(new_memory, ?) > 0", (text, text)):
                    if mid not in ids:
                        others.add(str(mid))
                if has_messages:
                    messages += conn.execute("SELECT count(*) FROM messages WHERE instr(content, ?) > 0",
                                             (text,)).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"could not look inside it: {exc}"
    parts = []
    if others:
        parts.append(f"history rows of other memories hold the same text ({', '.join(sorted(others)[:5])}); "
                     "forget those too")
    if messages:
        parts.append(f"{messages} messages rows still hold it")
    return "; ".join(parts)


def _why_points(path: str, texts: Sequence[str]) -> str:
    try:
        conn = connect(path, readonly=True)
        try:
            n = sum(conn.execute("SELECT count(*) FROM points WHERE instr(point, ?) > 0",
                                 (t.encode("utf-8"),)).fetchone()[0] for t in texts)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"could not look inside it: {exc}"
    return f"{n} other stored point(s) hold the same text (another memory says the same); forget those too" if n else ""


# ---------------------------------------------------------------------------------------------- forget


def forget(
    target: Any,
    memory_ids: Sequence[str],
    *,
    scrub: bool = False,
    dry_run: bool = False,
) -> ForgetResult:
    """Delete memories through mem0's API and, with ``scrub``, erase their text from every store file.

    ``target`` is the app's drop-in ``Memory`` (in-process; works while the app runs) or a mem0 config
    dict, for which a ``Memory`` is opened here (:class:`~mem0_hygiene.errors.StoreLocked` when a
    running app holds the local Qdrant folder: call ``m.forget(...)`` in the app instead). Deletion
    goes through ``Memory.delete``: the chain each memory superseded is deleted too, and tombstones
    keep them hidden. A memory already gone from the vector store can still be scrubbed (the audit's
    ``DELETED_TEXT_IN_HISTORY`` fix). Unknown ids raise :class:`~mem0_hygiene.errors.MemoryNotFound`
    before anything is changed.

    ``scrub=True`` edits mem0's history.db on purpose; see the module docstring for every step and
    for how the result reports files that still hold the text. ``dry_run`` changes nothing and, with
    ``scrub``, reports where the text is found now.
    """
    ids = list(dict.fromkeys(str(i) for i in memory_ids))
    if not ids:
        raise ConfigError("give at least one memory id to forget")
    with resolve(target).memory_for("forget memories in", readonly=dry_run) as m:
        m.flush()
        plan: list[tuple[str, bool, list[str]]] = []  # (id, in store, chain it superseded)
        texts: set[str] = set()
        in_store: set[str] = set()
        for mid in ids:
            present, found, rows = _texts_of(m, mid)
            if present:
                in_store.add(mid)
            ledger_row = m.ledger.get(mid)
            if not present and ledger_row is None and not rows:
                raise MemoryNotFound(mid, "it is in neither the vector store, the ledger nor history.db; "
                                          "nothing was changed")
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
        if not dry_run:
            for mid, present, _chain in plan:
                row = m.ledger.get(mid)
                if not present and (row is None or row.deleted_at):
                    continue  # already deleted: only its text is left to scrub
                try:
                    m.delete(mid)
                except MemoryNotFound:
                    pass  # gone from the store already; the ledger now marks it deleted (and its chain)
            deleted = [x for x in deleted if m.vector_store.get(vector_id=x) is None]

        if not scrub:
            notes.append("not scrubbed: mem0 keeps a deleted memory's text in history.db (and free pages); "
                         "forget with scrub=True (--scrub) to erase it")
            return ForgetResult(memory_ids=tuple(ids), deleted=tuple(dict.fromkeys(deleted)), cascaded=cascaded,
                                already_deleted=already, dry_run=dry_run, scrub=False, texts=len(texts),
                                notes=tuple(notes))
        ordered = sorted(texts)
        if any(len(t.encode("utf-8")) < SHORT_TEXT for t in ordered):
            notes.append(f"some texts are shorter than {SHORT_TEXT} bytes and may match unrelated bytes by chance")
        history_path = _abs(m.config.history_db_path)
        ledger_path = _abs(m.ledger_path)
        qdrant_path = _local_qdrant_path(m)
        unverified: tuple[str, ...] = ()
        if qdrant_path is None:
            unverified = ("vector_store",)
            notes.append("the vector store is not a local Qdrant folder: its files cannot be read from here; the "
                         "points were deleted through mem0's API")
        blanked = removed = ledger_blanked = 0
        vacuumed: list[str] = []
        failed: dict[str, str] = {}
        if not dry_run:
            m.flush()
            try:
                if history_path and os.path.isfile(history_path):
                    with m.history_lock():  # mem0's connection waits meanwhile
                        blanked, removed = _scrub_history(history_path, affected, ordered)
                        failed[history_path] = _vacuum(history_path)
                    vacuumed.append(history_path)
                if ledger_path and os.path.isfile(ledger_path):
                    with m.ledger.locked():
                        ledger_blanked = _scrub_ledger(ledger_path, affected, ordered)
                        failed[ledger_path] = _vacuum(ledger_path)
                    vacuumed.append(ledger_path)
            except sqlite3.Error as exc:
                raise BackupError(
                    f"the memories were deleted, but scrubbing their text failed ({exc}); nothing of the scrub "
                    "was half-applied to that file (one transaction). Run forget with scrub again"
                ) from exc
            for path in (files_under(qdrant_path) if qdrant_path is not None else []):
                failed[path] = _vacuum(path)
                vacuumed.append(path)
        else:
            blanked, removed = _count_scrub(history_path, affected, ordered)
        files = _verify(history_path, ledger_path, qdrant_path, affected, ordered, failed, dry_run)
    return ForgetResult(
        memory_ids=tuple(ids), deleted=tuple(dict.fromkeys(deleted)), cascaded=cascaded, already_deleted=already,
        dry_run=dry_run, scrub=True, texts=len(ordered), history_rows_blanked=blanked, messages_removed=removed,
        ledger_fields_blanked=ledger_blanked, vacuumed=tuple(p for p in vacuumed if not failed.get(p)),
        files=tuple(files), unverified=unverified, notes=tuple(notes),
    )


def _abs(path: str | None) -> str | None:
    return os.path.abspath(os.path.expanduser(path)) if path and path != ":memory:" else None


def _local_qdrant_path(m: Any) -> str | None:
    from ..stores.locations import location_of, resolve_locations

    vs = location_of(resolve_locations(m), "vector_store")
    return vs.path if vs.provider == "qdrant" and vs.is_local and vs.path and os.path.isdir(vs.path) else None


def _verify(history_path: str | None, ledger_path: str | None, qdrant_path: str | None, ids: Sequence[str],
            texts: Sequence[str], failed: dict[str, str], dry_run: bool) -> list[FileCheck]:
    """Read every store file's raw bytes and say where the texts are still found, and why."""
    needles = [t.encode("utf-8") for t in texts]
    targets: list[tuple[str, str]] = [(p, "history_db") for p in _sqlite_files(history_path)]
    targets += [(p, "ledger") for p in _sqlite_files(ledger_path)]
    if qdrant_path is not None:
        for root, _dirs, files in os.walk(qdrant_path):
            targets += [(os.path.join(root, n), "vector_store") for n in sorted(files)]
    out: list[FileCheck] = []
    for path, role in targets:
        hits = _scan(path, needles) if needles else set()
        if not hits:
            out.append(FileCheck(path, role, True))
            continue
        found = [texts[i] for i in sorted(hits)]
        if dry_run:
            reason = "not scrubbed yet (dry run)"
        else:
            main = next((p for p in (history_path, ledger_path) if p and path.startswith(p)), path)
            parts = []
            if path == history_path:
                parts.append(_why_history(path, ids, found))
            elif path.endswith(".sqlite"):
                parts.append(_why_points(path, found))
            if failed.get(main):
                parts.append(failed[main])
            if path != main:
                parts.append("in the database's journal/WAL file")
            reason = "; ".join(p for p in parts if p) or (
                "the bytes are still in the file although no row holds them (unused space that VACUUM did not "
                "rewrite)")
        out.append(FileCheck(path, role, False, len(hits), reason))
    return out


__all__ = ["FileCheck", "ForgetResult", "forget"]
