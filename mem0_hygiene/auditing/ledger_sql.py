"""The ledger as the audit's checks read it: one seam, two dialects, the same queries.

A check that reads only the ledger runs its SQL through :class:`LedgerSQL` (``one``/``rows``, the ledger's
tables named by ``memories``/``pending``):

- :class:`AttachedLedger`, a SQLite ledger attached read-only to the scratch database as ``l`` (the queries
  run there, as they always did);
- :class:`ServerLedger`, a PostgreSQL ledger (``hygiene.ledger_url``) queried on the server, every query in
  one ``REPEATABLE READ READ ONLY`` transaction (:class:`~mem0_hygiene.stores.ledger.postgres_reads.ReadSnapshot`),
  so the whole audit sees one committed state; nothing is copied for these checks.

A check that compares the ledger with the vector store or history.db joins in the scratch database, where the
points and history.db's summary are. On SQLite it joins the attached ledger itself. On PostgreSQL, the scratch
database gets, from the same snapshot, each ledger row's id and two facts computed on the server (live at the
audit's time, deleted) in ``ledger_ids``, and the journal of operations under way in ``ledger_pending``: the
checks name those relations through ``keys``/``keys_pending`` and the facts through :meth:`LedgerSQL.live_key`
and :meth:`LedgerSQL.deleted_key`. Texts, sources and times stay on the server.

Where the dialects differ (the foreign key check, the set-up of the file, how a result orders text), both
forms sit next to each other here or in the check.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from ..stores.states import live_sql

Params = Sequence[Any] | dict[str, Any]

LEDGER_IDS_SCHEMA = """
CREATE TABLE ledger_ids (memory_id TEXT PRIMARY KEY, live INTEGER NOT NULL, deleted INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE ledger_pending (memory_id TEXT NOT NULL, action TEXT NOT NULL, since TEXT NOT NULL,
                             PRIMARY KEY (memory_id, action)) WITHOUT ROWID;
"""
# each ledger row's id and the facts the cross-store checks need, computed on the server at the audit's time
LEDGER_IDS_SQL = (
    "SELECT memory_id, CASE WHEN " + live_sql("", ":now") + " THEN 1 ELSE 0 END, "
    "CASE WHEN deleted_at IS NOT NULL THEN 1 ELSE 0 END FROM memories"
)
PENDING_SQL = "SELECT memory_id, action, since FROM pending"


class LedgerSQL:
    """What the checks need from the ledger, whichever database holds it.

    Attributes:
        dialect: "sqlite" or "postgresql".
        memories, pending: the ledger's tables, as the ledger-only queries name them.
        keys, keys_pending: the relations in the scratch database that the cross-store joins use (columns
            ``memory_id`` and the facts of :meth:`live_key`/:meth:`deleted_key`; ``memory_id, action, since``).
        collate: appended to an ``ORDER BY`` term over text, so both dialects order text byte by byte.
    """

    dialect = ""
    memories = keys = "memories"
    pending = keys_pending = "pending"
    collate = ""

    def one(self, sql: str, params: Params = ()) -> Any:
        rows = self.rows(sql, params)
        return rows[0][0] if rows else None

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def has_journal(self) -> bool:
        """The ledger has the journal of operations under way (``pending``; schema version 2 and later)."""
        raise NotImplementedError

    def live_key(self, alias: str) -> str:
        """The condition a ``keys`` row (``alias``) meets when its memory is live (``:now`` is the audit's time)."""
        raise NotImplementedError

    def deleted_key(self, alias: str) -> str:
        """The condition a ``keys`` row (``alias``) meets when its memory was deleted through the wrapper."""
        raise NotImplementedError

    def foreign_key_rows(self) -> int:
        """How many rows break the supersede foreign key."""
        raise NotImplementedError

    def setup_problems(self, wal: bool) -> list[str]:
        """What is wrong with how the ledger is set up for concurrent use ([] = nothing)."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class AttachedLedger(LedgerSQL):
    """A SQLite ledger attached to the scratch database as ``l``."""

    dialect = "sqlite"
    memories = keys = "l.memories"
    pending = keys_pending = "l.pending"

    def __init__(self, rows: Callable[[str, Params], list[tuple[Any, ...]]]) -> None:
        self._rows = rows

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self._rows(sql, params)

    def has_journal(self) -> bool:
        return bool(self.one("SELECT COUNT(*) FROM l.sqlite_master WHERE type = 'table' AND name = 'pending'"))

    def live_key(self, alias: str) -> str:
        return live_sql(alias, ":now")

    def deleted_key(self, alias: str) -> str:
        return f"{alias}.deleted_at IS NOT NULL"

    def foreign_key_rows(self) -> int:
        return len(self.rows("PRAGMA l.foreign_key_check(memories)"))

    def setup_problems(self, wal: bool) -> list[str]:
        # the file's own header: a read-only reader may open it immutable, which reports no journal mode
        mode = "wal" if wal else str(self.one("PRAGMA l.journal_mode") or "").lower()
        schema = self.one("SELECT sql FROM l.sqlite_master WHERE name = 'memories'") or ""
        problems = []
        if mode != "wal":
            problems.append(f"journal_mode is {mode}, not wal")
        if "REFERENCES" not in schema.upper():
            problems.append("the supersede column has no foreign key")
        return problems


class ServerLedger(LedgerSQL):
    """A PostgreSQL ledger read on the server through one read-only snapshot (a
    :class:`~mem0_hygiene.stores.ledger.postgres_reads.ReadSnapshot`)."""

    dialect = "postgresql"
    keys, keys_pending = "ledger_ids", "ledger_pending"
    collate = ' COLLATE "C"'

    def __init__(self, snapshot: Any) -> None:
        self.snapshot = snapshot

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        return self.snapshot.query(sql, params)

    def has_journal(self) -> bool:
        return True  # a PostgreSQL ledger that opens is at the current schema

    def live_key(self, alias: str) -> str:
        return f"{alias}.live = 1"

    def deleted_key(self, alias: str) -> str:
        return f"{alias}.deleted = 1"

    def foreign_key_rows(self) -> int:
        # PostgreSQL enforces the key: what PRAGMA foreign_key_check would list are rows pointing nowhere
        return int(
            self.one(
                "SELECT COUNT(*) FROM memories m WHERE m.superseded_by IS NOT NULL AND NOT EXISTS "
                "(SELECT 1 FROM memories n WHERE n.memory_id = m.superseded_by)"
            )
            or 0
        )

    def setup_problems(self, wal: bool) -> list[str]:
        # no journal mode to check: the server coordinates its writers itself
        keys = self.one("SELECT COUNT(*) FROM pg_constraint WHERE conrelid = to_regclass('memories') AND contype = 'f'")
        return [] if keys else ["the supersede column has no foreign key"]

    def fill(self, conn: sqlite3.Connection, now_iso: str) -> int:
        """Stream each ledger row's id and facts (and the journal) into the scratch database; returns the rows."""
        conn.executescript(LEDGER_IDS_SCHEMA)
        count = 0
        conn.execute("BEGIN")
        for page in self.snapshot.stream(LEDGER_IDS_SQL, {"now": now_iso}):
            conn.executemany("INSERT INTO ledger_ids VALUES (?,?,?)", page)
            count += len(page)
        conn.executemany("INSERT INTO ledger_pending VALUES (?,?,?)", self.snapshot.query(PENDING_SQL))
        conn.execute("COMMIT")
        return count

    def close(self) -> None:
        self.snapshot.close()
