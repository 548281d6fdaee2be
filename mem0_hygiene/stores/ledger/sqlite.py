"""The ledger in a SQLite file (``hygiene.ledger_path``, beside mem0's history.db): :class:`SqliteLedger`, its
connection (:class:`SqliteConnection`, :func:`connect`) and its in-memory scratch copies (:func:`scratch_copy`).

Every connection turns on foreign keys, WAL and a busy timeout (built on
:func:`mem0_hygiene.stores.sqlite.connect`). The schema version is ``PRAGMA user_version``, and
``PRAGMA application_id`` marks the file as a ledger; nothing is written to a file that is not one
(:func:`~mem0_hygiene.stores.ledger.sqlite_file.refuse_unless_ledger`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import LedgerError
from ..sqlite import connect as sqlite_connect
from ..topic_keys import TopicConflict, conflict_from
from .base import Ledger
from .dialect import SQLITE, Dialect
from .schema import APPLICATION_ID, SCHEMA_VERSION, migrations
from .sqlite_file import explain, newer_schema_message, refuse_unless_ledger

_MIGRATIONS = migrations(SQLITE)


class SqliteConnection(sqlite3.Connection):
    """A ``sqlite3`` connection that is a :class:`~mem0_hygiene.stores.ledger.connection.LedgerConnection`:
    the SQLite dialect and ``BEGIN IMMEDIATE`` transactions (statements run as ``sqlite3`` runs them)."""

    dialect: Dialect = SQLITE

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SqliteConnection]:
        """``with conn.transaction():`` the writes inside commit together (``BEGIN IMMEDIATE``), or none do."""
        self.execute("BEGIN IMMEDIATE")
        try:
            yield self
            self.execute("COMMIT")
        except BaseException:
            if self.in_transaction:
                self.execute("ROLLBACK")
            raise


def connect(path: str, *, readonly: bool = False) -> SqliteConnection:
    """A connection with foreign keys on, a busy timeout and (for files) WAL. Autocommit mode."""
    if readonly and path == ":memory:":
        raise LedgerError("an in-memory ledger cannot be opened read-only from elsewhere")
    conn = sqlite_connect(
        path, readonly=readonly, create=not readonly, check_same_thread=False, factory=SqliteConnection
    )
    assert isinstance(conn, SqliteConnection)
    conn.execute("PRAGMA foreign_keys = ON")
    if not readonly and path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: no fsync per commit, still safe on power loss
        conn.execute("PRAGMA wal_autocheckpoint = 4000")  # fewer, larger checkpoints: cheaper commits on add
    return conn


class SqliteLedger(Ledger):
    """The ledger file and its queries (``":memory:"``: an in-memory ledger). Opened for writing, a missing file
    is created and an older schema migrated; ``readonly`` opens an existing ledger as it is (no migration,
    nothing created) for reports that must work while the app has the store open."""

    errors = (sqlite3.DatabaseError,)
    _conn: SqliteConnection

    def __init__(self, path: str, *, readonly: bool = False) -> None:
        self._setup(path, SQLITE)
        if readonly:
            self._open_readonly()
            return
        if path != ":memory:":
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as exc:
                    raise LedgerError(
                        f"cannot create the ledger's folder {folder}: {exc.strerror}; "
                        f"set hygiene.ledger_path to a writable place"
                    ) from None
            refuse_unless_ledger(path)  # read only: nothing is written to a file that is not ours
        try:
            self._conn = connect(path)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(explain(path, exc)) from None

    def _open_readonly(self) -> None:
        path = self.path
        if path == ":memory:" or not os.path.isfile(path):
            raise LedgerError(f"no ledger at {path}: the drop-in Memory creates it on first start")
        refuse_unless_ledger(path)
        try:
            self._conn = connect(path, readonly=True)
            app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(explain(path, exc)) from None
        if app_id != APPLICATION_ID:
            self._conn.close()
            raise LedgerError(f"{path} is not a mem0-hygiene ledger; check hygiene.ledger_path")
        if version > SCHEMA_VERSION:
            self._conn.close()
            raise LedgerError(newer_schema_message(path, version))

    def failure(self, exc: BaseException) -> LedgerError:
        assert isinstance(exc, sqlite3.DatabaseError)
        return LedgerError(explain(self.path, exc))

    def conflict_or_failure(self, exc: BaseException) -> LedgerError:
        if isinstance(exc, sqlite3.IntegrityError) and conflict_from(str(exc)):
            return TopicConflict(explain(self.path, exc))
        return self.failure(exc)

    # -- schema -----------------------------------------------------------------------------
    def _migrate(self) -> None:
        conn = self._conn
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        if app_id != APPLICATION_ID:
            if tables:
                raise LedgerError(
                    f"{self.path} is a SQLite database but not a mem0-hygiene ledger (it holds "
                    f"{', '.join(sorted(tables)[:5])}); point hygiene.ledger_path at a new file"
                )
            version = 0
        if version > SCHEMA_VERSION:
            raise LedgerError(newer_schema_message(self.path, version))
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with conn.transaction():
                for step in _MIGRATIONS[target]:
                    if isinstance(step, str):
                        conn.execute(step)
                    else:
                        step(conn, self)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {target}")

    def schema_version(self) -> int:
        return int(self.query("PRAGMA user_version")[0][0])

    def has_table(self, name: str) -> bool:
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    # -- dialect --------------------------------------------------------------------------------
    def link_guard(self, conn: Any) -> None:
        """SQLite's ``BEGIN IMMEDIATE`` already serialises every writer of the file."""

    def defer_links(self, conn: Any) -> None:
        conn.execute("PRAGMA defer_foreign_keys = ON")

    def purge_rows(self, memory_ids: Sequence[str]) -> int:
        """Remove tombstoned rows for good (and, by the foreign key's cascade, the rows they superseded),
        on this connection with ``secure_delete`` on, so the removed bytes are overwritten with zeros in
        the file instead of staying readable in free pages; then checkpoint the WAL so the old page
        images leave the ``-wal`` file too. Rows without a tombstone are never touched. Returns how many
        rows went (cascaded ones included)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return 0
        with self._lock:
            try:
                before = self._conn.execute("SELECT count(*) FROM memories").fetchone()[0]
                previous = self._conn.execute("PRAGMA secure_delete").fetchone()[0]
                self._conn.execute("PRAGMA secure_delete = ON")
                try:
                    with self._conn.transaction():
                        for start in range(0, len(ids), 500):
                            chunk = ids[start : start + 500]
                            marks = ",".join("?" * len(chunk))
                            self._conn.execute(
                                f"DELETE FROM memories WHERE deleted_at IS NOT NULL AND memory_id IN ({marks})", chunk
                            )
                            self._conn.execute(
                                f"DELETE FROM pending WHERE action = 'delete' AND memory_id IN ({marks})", chunk
                            )
                finally:
                    self._conn.execute(f"PRAGMA secure_delete = {int(previous)}")
                removed = before - self._conn.execute("SELECT count(*) FROM memories").fetchone()[0]
                if self.path != ":memory:":
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                return removed
            except sqlite3.DatabaseError as exc:
                raise self.failure(exc) from None

    def pragma_check(self) -> tuple[list[tuple[Any, ...]], bool, str]:
        """(foreign_key_check rows, foreign keys on?, journal mode) for this connection."""
        fk = self.query("PRAGMA foreign_key_check")
        on = bool(self.query("PRAGMA foreign_keys")[0][0])
        mode = str(self.query("PRAGMA journal_mode")[0][0])
        return fk, on, mode

    def to_scratch(self) -> SqliteLedger:
        """An in-memory copy of this ledger (SQLite's backup API; nothing is written here), upgraded to the current
        schema in the copy only."""
        scratch = SqliteLedger(":memory:")
        try:
            with self._lock:
                self._conn.backup(scratch._conn)
        except sqlite3.DatabaseError as exc:
            scratch.close()
            raise LedgerError(explain(self.path, exc)) from None
        scratch._conn.execute("PRAGMA foreign_keys = ON")
        scratch._migrate()  # a copy of an older ledger gets the current schema (in memory only)
        return scratch


def scratch_copy(path: str) -> SqliteLedger:
    """An in-memory copy of the ledger file at ``path`` (an empty ledger when there is none yet): the same rows
    and schema, and every write to it goes nowhere. The file is only ever read (read-only connection, copied with
    SQLite's backup API); an older schema is upgraded in the copy only. Raises :class:`LedgerError` for a file
    that is not a ledger or has a newer schema, before anything is done."""
    if path == ":memory:" or not os.path.isfile(path):
        return SqliteLedger(":memory:")
    source = SqliteLedger(path, readonly=True)
    try:
        return source.to_scratch()
    finally:
        source.close()
