"""The erasure primitives ``forget --scrub`` applies to every SQLite file it edits, live or a copy.

- :func:`scrub_history`: blank the memories' text in history.db (``''`` in ``old_memory``/``new_memory``, the
  event rows kept) and remove mem0's ``messages`` rows holding it, in one transaction;
  :func:`count_scrub` says what it would change, read-only.
- :func:`scrub_ledger_fields`: blank the ledger's free-text fields of these memories that hold the text.
- :func:`vacuum`: ``VACUUM`` with ``secure_delete`` on, and truncate a write-ahead log.
- :func:`scan`: which texts' UTF-8 bytes occur in a file (the verification reads raw bytes, nothing else).
- :func:`why_history`, :func:`why_points`: why a file still holds a text after the scrub.
- :func:`history_texts`: the texts a history.db holds for these memories (a copy may know texts the live
  store has already lost).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence

from ..stores.sqlite import connect, sidecars, transaction

LEDGER_TEXT_COLUMNS = ("source", "invalid_reason", "topic_key")
SHORT_TEXT = 8  # bytes; shorter texts can match unrelated data by chance


def sqlite_files(path: str | None) -> list[str]:
    """A database file and its sidecars, those that exist."""
    if not path or path == ":memory:":
        return []
    return [p for p in [path, *sidecars(path)] if os.path.isfile(p)]


def scan(path: str, needles: Sequence[bytes]) -> set[int]:
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


def connect_secure(path: str) -> sqlite3.Connection:
    """A read-write connection (never creating the file) that zeroes what it deletes."""
    conn = connect(path)
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def vacuum(path: str) -> str:
    """``VACUUM`` (secure_delete on) and truncate the WAL; returns "" or why it could not."""
    try:
        conn = connect_secure(path)
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


def tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def scrub_history(
    path: str, ids: Sequence[str], texts: Sequence[str], *, delete_events_at: str | None = None
) -> tuple[int, int]:
    """Blank the memories' text in history (rows kept), remove messages holding it. One transaction.

    ``delete_events_at`` (a copy of history.db whose memories were deleted elsewhere): also add the DELETE
    event mem0 writes on delete, with that time and no text, for each memory whose last event in this file
    is not one, so the copy's history agrees with its vector store. Returns (rows blanked, messages removed).
    """
    conn = connect_secure(path)
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
            if "messages" in tables(conn):
                for text in texts:
                    removed += conn.execute("DELETE FROM messages WHERE instr(content, ?) > 0", (text,)).rowcount
            if delete_events_at is not None:
                _add_delete_events(conn, ids, delete_events_at)
    finally:
        conn.close()
    return blanked, removed


def _add_delete_events(conn: sqlite3.Connection, ids: Sequence[str], at: str) -> None:
    import uuid

    for mid in ids:
        last = conn.execute(
            "SELECT event, created_at, actor_id, role FROM history WHERE memory_id = ? ORDER BY rowid DESC LIMIT 1",
            (mid,),
        ).fetchone()
        if last is None or str(last[0]).upper() == "DELETE":
            continue
        conn.execute(
            "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, "
            "is_deleted, actor_id, role) VALUES (?, ?, '', NULL, 'DELETE', ?, ?, 1, ?, ?)",
            (str(uuid.uuid4()), mid, last[1], at, last[2], last[3]),
        )


def count_scrub(path: str | None, ids: Sequence[str], texts: Sequence[str]) -> tuple[int, int]:
    """What :func:`scrub_history` would change (history rows, messages rows), read-only."""
    if not path or not os.path.isfile(path):
        return 0, 0
    conn = connect(path, readonly=True)
    try:
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT count(*) FROM history WHERE memory_id IN ({marks}) "
            "AND (COALESCE(old_memory, '') <> '' OR COALESCE(new_memory, '') <> '')",
            list(ids),
        ).fetchone()[0]
        messages = 0
        if "messages" in tables(conn):
            ids_seen: set[str] = set()
            for text in texts:
                ids_seen |= {r[0] for r in conn.execute("SELECT id FROM messages WHERE instr(content, ?) > 0", (text,))}
            messages = len(ids_seen)
    finally:
        conn.close()
    return int(rows), messages


def history_texts(path: str | None, ids: Sequence[str]) -> set[str]:
    """Every non-empty text this history.db holds for these memories (read-only; empty when unreadable)."""
    if not path or not os.path.isfile(path) or not ids:
        return set()
    try:
        conn = connect(path, readonly=True)
        try:
            marks = ",".join("?" * len(ids))
            rows = conn.execute(
                f"SELECT old_memory, new_memory FROM history WHERE memory_id IN ({marks})", list(ids)
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return set()
    return {t for row in rows for t in row if isinstance(t, str) and t}


def scrub_ledger_fields(
    conn: sqlite3.Connection, ids: Sequence[str], texts: Sequence[str], *, tombstone_at: str | None = None
) -> int:
    """The ledger keeps no memory text; blank any of its text fields of these memories that holds it (one
    transaction on ``conn``). ``tombstone_at`` (a copy of the ledger): also mark them deleted then, as the
    live ledger was. Returns the fields blanked."""
    conn.execute("PRAGMA secure_delete = ON")
    blanked = 0
    with transaction(conn):
        marks = ",".join("?" * len(ids))
        for column in LEDGER_TEXT_COLUMNS:
            for text in texts:
                blanked += conn.execute(
                    f"UPDATE memories SET {column} = NULL WHERE memory_id IN ({marks}) AND instr({column}, ?) > 0",
                    [*ids, text],
                ).rowcount
        if tombstone_at is not None:
            conn.execute(
                f"UPDATE memories SET deleted_at = COALESCE(deleted_at, ?) WHERE memory_id IN ({marks})",
                [tombstone_at, *ids],
            )
    return blanked


def why_history(path: str, ids: Sequence[str], texts: Sequence[str]) -> str:
    """Why a scrubbed history.db still holds texts: other memories' rows or messages say the same."""
    try:
        conn = connect(path, readonly=True)
        try:
            others: set[str] = set()
            messages = 0
            has_messages = "messages" in tables(conn)
            for text in texts:
                for (mid,) in conn.execute(
                    "SELECT DISTINCT memory_id FROM history WHERE instr(old_memory, ?) > 0 OR instr(new_memory, ?) > 0",
                    (text, text),
                ):
                    if mid not in ids:
                        others.add(str(mid))
                if has_messages:
                    messages += conn.execute(
                        "SELECT count(*) FROM messages WHERE instr(content, ?) > 0", (text,)
                    ).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"could not look inside it: {exc}"
    parts = []
    if others:
        parts.append(
            f"history rows of other memories hold the same text ({', '.join(sorted(others)[:5])}); forget those too"
        )
    if messages:
        parts.append(f"{messages} messages rows still hold it")
    return "; ".join(parts)


def why_points(path: str, texts: Sequence[str]) -> str:
    """Why a scrubbed Qdrant ``storage.sqlite`` still holds texts: other points say the same."""
    try:
        conn = connect(path, readonly=True)
        try:
            n = sum(
                conn.execute("SELECT count(*) FROM points WHERE instr(point, ?) > 0", (t.encode("utf-8"),)).fetchone()[
                    0
                ]
                for t in texts
            )
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"could not look inside it: {exc}"
    return f"{n} other stored point(s) hold the same text (another memory says the same); forget those too" if n else ""
