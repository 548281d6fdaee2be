"""Ledgers as an older mem0-hygiene left them: a current ledger file taken back to schema version 3 or 2 (the
objects later migrations added dropped, ``user_version`` set back), for the migrations to upgrade."""

from __future__ import annotations

import sqlite3

_DROP_V4 = (
    "DROP INDEX memories_topic_live; DROP TABLE confirmations; DROP TABLE IF EXISTS consolidation; "
    "DROP TABLE IF EXISTS write_decisions;"
)
_DROP_V5 = "DROP TABLE IF EXISTS reads;"
_DROP_V3 = "DROP TRIGGER pending_delete_on_tombstone; DROP TABLE pending;"


def as_version(path: str, version: int) -> None:
    """Take the ledger file at ``path`` back to schema ``version`` (4, 3 or 2)."""
    script = _DROP_V5 + (_DROP_V4 if version <= 3 else "") + (_DROP_V3 if version <= 2 else "")
    script += f"PRAGMA user_version = {version};"
    conn = sqlite3.connect(path)
    try:
        conn.executescript(script)
    finally:
        conn.close()
