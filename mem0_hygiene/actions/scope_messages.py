"""mem0's raw conversation turns of one scope, in a history.db's ``messages`` table: read and removed.

mem0 keeps the last turns of each session in ``messages`` under a ``session_scope`` it builds from the filters
(``agent_id=x&user_id=dana``: sorted keys, ``%``, ``&`` and ``=`` escaped). A scope erasure removes every row whose
scope holds all of the erased scope's keys (``--user dana`` takes ``user_id=dana`` alone and with any agent or
run), whether or not its text matches a memory's: raw turns rarely hold the extracted fact word for word.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator

from ..stores.sqlite import connect, transaction
from .scrubbing import connect_secure, tables


def _escape(value: str) -> str:
    return str(value).replace("%", "%25").replace("&", "%26").replace("=", "%3D")


def in_scope(session_scope: str | None, scope: dict[str, str]) -> bool:
    """Whether a ``messages`` row's ``session_scope`` belongs to the scope (holds every one of its keys)."""
    parts = set((session_scope or "").split("&"))
    return all(f"{k}={_escape(v)}" in parts for k, v in scope.items() if v)


def _rows(conn: sqlite3.Connection, scope: dict[str, str]) -> Iterator[tuple[str, str]]:
    if "messages" not in tables(conn):
        return
    for mid, session, content in conn.execute("SELECT id, session_scope, content FROM messages"):
        if in_scope(session, scope):
            yield str(mid), content if isinstance(content, str) else ""


def scope_messages(path: str | None, scope: dict[str, str]) -> list[str]:
    """The contents of the scope's ``messages`` rows in this history.db (read-only; empty when unreadable)."""
    if not path or not os.path.isfile(path):
        return []
    try:
        conn = connect(path, readonly=True)
        try:
            return [content for _id, content in _rows(conn, scope)]
        finally:
            conn.close()
    except sqlite3.Error:
        return []


def remove_scope_messages(path: str | None, scope: dict[str, str]) -> int:
    """Remove the scope's ``messages`` rows (one transaction, ``secure_delete`` on); returns how many."""
    if not path or not os.path.isfile(path):
        return 0
    conn = connect_secure(path)
    try:
        with transaction(conn):
            ids = [mid for mid, _content in _rows(conn, scope)]
            for mid in ids:
                conn.execute("DELETE FROM messages WHERE id = ?", (mid,))
    finally:
        conn.close()
    return len(ids)


__all__ = ["in_scope", "remove_scope_messages", "scope_messages"]
