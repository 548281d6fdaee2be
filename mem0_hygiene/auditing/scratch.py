"""The audit's working database: one scratch SQLite file that sees every store at once, read-only.

mem0's history.db is attached as ``h`` and the ledger as ``l`` (both ``mode=ro``); the vector store's
points are streamed in pages (:func:`mem0_hygiene.stores.vectors.qdrant_pages`) into ``points`` (with
the text scanners' hits in ``hits``), so every cross-store check is a SQL join and nothing is held in
Python memory. The scratch file lives in a temporary folder and is removed afterwards; the stores
themselves are never written.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import HygieneError
from ..scan import find_secrets, instruction_reason, normalize_for_duplicates
from ..stores.history import RecoveredCopy, needs_rollback
from ..stores.ledger import APPLICATION_ID
from ..stores.sqlite import connect, is_wal_file, uri
from .ledger_sql import AttachedLedger, LedgerSQL, ServerLedger

_SCRATCH_SCHEMA = """
CREATE TABLE points (
    id TEXT PRIMARY KEY, text TEXT, norm TEXT, user_id TEXT, agent_id TEXT, run_id TEXT,
    created_at TEXT, expiration_date TEXT, role TEXT
) WITHOUT ROWID;
CREATE TABLE hits (id TEXT, kind TEXT, label TEXT);
"""
_HIST_SCHEMA = """
CREATE TABLE hist (
    memory_id TEXT PRIMARY KEY, last_rowid INTEGER, n INTEGER, last_event TEXT, text_rows INTEGER, text_rowid INTEGER
) WITHOUT ROWID;
"""
# hist, per memory_id in history.db: its last row (rowid and event), its row count, and how many of its rows
# still hold text (old_memory or new_memory) with the last such row. One GROUP BY over history.db builds it.
_HIST_SUMMARY = """
INSERT INTO hist (memory_id, last_rowid, n, text_rows, text_rowid)
SELECT memory_id, MAX(rowid), COUNT(*), SUM(t), MAX(CASE WHEN t THEN rowid END)
FROM (SELECT memory_id, rowid, (COALESCE(old_memory, '') <> '' OR COALESCE(new_memory, '') <> '') AS t
      FROM h.history WHERE memory_id IS NOT NULL)
GROUP BY memory_id
"""
_PRAGMAS = ("journal_mode = OFF", "synchronous = OFF", "temp_store = FILE", "cache_size = -16000")


@dataclass
class Sources:
    """Which stores the scratch database could see, and why not when it could not.

    Fields:
        points: the vector store's points were loaded.
        history: history.db is attached as ``h``.
        ledger: the ledger is attached as ``l``.
        messages: history.db has mem0's ``messages`` table.
        backups: the backup record beside the ledger could be read (present or not yet written).
        missing: source name -> reason it is unavailable ("points", "history", "ledger", "backups").
        point_count: points loaded.
        recovered: source -> why it was read from a rolled-back copy (a hot journal: the app died mid-commit;
            :class:`mem0_hygiene.stores.history.RecoveredCopy`).
        backup_status: what the backup record says (:class:`mem0_hygiene.stores.backup_record.BackupStatus`), when
            ``backups`` is true.
    """

    points: bool = False
    history: bool = False
    ledger: bool = False
    ledger_wal: bool = False  # the ledger file is in WAL mode (read from its header)
    messages: bool = False
    backups: bool = False
    missing: dict[str, str] = field(default_factory=dict)
    point_count: int = 0
    backup_status: Any = None
    recovered: dict[str, str] = field(default_factory=dict)  # "history"/"ledger" -> read from a rolled-back copy


class ScratchDB:
    """A temporary SQLite database with the stores attached. Use as a context manager.

    The per-memory summary of history.db (``hist``) is built by a background thread on its own
    connection and file, so its scan of history.db overlaps with opening and reading the vector store
    (SQLite runs without the GIL); the first use of ``conn`` waits for it and copies it in.
    """

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="mem0-hygiene-audit-")
        self._conn = connect(os.path.join(self._dir.name, "audit.db"), create=True)
        for pragma in _PRAGMAS:
            self._conn.execute(f"PRAGMA {pragma}")
        self._conn.executescript(_SCRATCH_SCHEMA + _HIST_SCHEMA)
        self.sources = Sources()
        self._summary: threading.Thread | None = None
        self._summary_error: BaseException | None = None
        self._copies: list[RecoveredCopy] = []
        self.ledger: LedgerSQL | None = None  # the ledger's queries (see open_ledger)

    @property
    def conn(self) -> sqlite3.Connection:
        """The scratch connection, with ``hist`` complete."""
        if self._summary is not None:
            self._settle()
        return self._conn

    def __enter__(self) -> ScratchDB:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._summary is not None:
            self._summary.join()
            self._summary = None
        if self.ledger is not None:
            self.ledger.close()
            self.ledger = None
        self._conn.close()
        for copy in self._copies:
            copy.close()
        self._dir.cleanup()

    def _readable(self, source: str, path: str) -> str:
        """``path``, or a rolled-back copy of it when the app died mid-commit and left a hot journal there (a
        read-only attach cannot read such a file, and ``immutable=1`` would serve the half-written pages)."""
        if not needs_rollback(path):
            return path
        try:
            copy = RecoveredCopy(path)
        except (OSError, sqlite3.Error):
            return path  # the attach below says what is wrong
        self._copies.append(copy)
        self.sources.recovered[source] = copy.note
        return copy.path

    # -- SQLite stores ----------------------------------------------------------------------
    def attach_history(self, path: str | None) -> None:
        if not path or path == ":memory:" or not os.path.isfile(path):
            self.sources.missing["history"] = f"mem0's history.db was not found at {path}"
            return
        shown, path = path, self._readable("history", path)
        try:
            self._conn.execute("ATTACH DATABASE ? AS h", (uri(path, "ro"),))
            tables = {r[0] for r in self._conn.execute("SELECT name FROM h.sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            self._detach("h")
            self.sources.missing["history"] = f"{shown} could not be read as SQLite ({exc})"
            return
        if "history" not in tables:
            self._detach("h")
            self.sources.missing["history"] = f"{shown} has no 'history' table: it is not mem0's history.db"
            return
        self.sources.history = True
        self.sources.messages = "messages" in tables
        self._summary = threading.Thread(target=self._summarize_history, args=(path,), daemon=True,
                                         name="mem0-hygiene-audit-history")
        self._summary.start()

    def _summarize_history(self, path: str) -> None:
        """Build ``hist`` in ``hist.db`` beside the scratch file (runs in the background thread)."""
        try:
            conn = connect(os.path.join(self._dir.name, "hist.db"), create=True)
            try:
                for pragma in _PRAGMAS:
                    conn.execute(f"PRAGMA {pragma}")
                conn.executescript(_HIST_SCHEMA)
                conn.execute("ATTACH DATABASE ? AS h", (uri(path, "ro"),))
                conn.execute("BEGIN")
                conn.execute(_HIST_SUMMARY)
                conn.execute("UPDATE hist SET last_event = "
                             "(SELECT event FROM h.history WHERE h.history.rowid = hist.last_rowid)")
                conn.execute("COMMIT")
            finally:
                conn.close()
        except BaseException as exc:  # handed to the main thread by _settle
            self._summary_error = exc

    def _settle(self) -> None:
        """Wait for the background summary of history.db and copy it into ``hist``."""
        thread, self._summary = self._summary, None
        assert thread is not None
        thread.join()
        if self._summary_error is not None:
            error, self._summary_error = self._summary_error, None
            self._detach("h")
            self.sources.history = self.sources.messages = False
            self.sources.missing["history"] = f"mem0's history.db could not be read ({type(error).__name__}: {error})"
            return
        self._conn.execute("ATTACH DATABASE ? AS hs", (os.path.join(self._dir.name, "hist.db"),))
        try:
            self._conn.execute("INSERT INTO main.hist SELECT * FROM hs.hist")
        finally:
            self._conn.execute("DETACH DATABASE hs")

    def open_ledger(self, path: str | None, now_iso: str) -> None:
        """The audit's ledger: a SQLite file attached as ``l``; a PostgreSQL ledger (``hygiene.ledger_url``) read
        on the server through one read-only snapshot, with each row's id and facts at ``now_iso`` in
        ``ledger_ids`` here for the joins with the points and history.db (see
        :mod:`mem0_hygiene.auditing.ledger_sql`)."""
        if not (path and path.startswith(("postgresql://", "postgres://"))):
            self.attach_ledger(path)
            return
        from ..stores.ledger_postgres import ReadSnapshot

        try:
            server = ServerLedger(ReadSnapshot(path))
        except HygieneError as exc:
            self.sources.missing["ledger"] = str(exc)
            return
        self.ledger = server
        try:
            server.fill(self._conn, now_iso)
        except HygieneError as exc:
            self.sources.missing["ledger"] = str(exc)
            return
        self.sources.ledger = True

    def attach_ledger(self, path: str | None) -> None:
        """The ledger attached as ``l`` (a PostgreSQL ledger: a SQLite copy of it here, for readers that want every
        row anyway, such as :func:`~mem0_hygiene.auditing.inspection.inspect`)."""
        if path and path.startswith(("postgresql://", "postgres://")):  # hygiene.ledger_url: a SQLite copy here
            from ..stores.ledger_postgres import copy_to_file

            try:
                path = copy_to_file(path, os.path.join(self._dir.name, "ledger.db"))
            except HygieneError as exc:
                self.sources.missing["ledger"] = str(exc)
                return
        if not path or path == ":memory:" or not os.path.isfile(path):
            self.sources.missing["ledger"] = (
                f"no mem0-hygiene ledger at {path}: the app has not used mem0_hygiene.Memory on this store yet"
            )
            return
        shown, path = path, self._readable("ledger", path)
        try:
            self._conn.execute("ATTACH DATABASE ? AS l", (uri(path, "ro"),))
            app_id = self._conn.execute("PRAGMA l.application_id").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self._detach("l")
            self.sources.missing["ledger"] = f"{shown} could not be read as SQLite ({exc})"
            return
        if app_id != APPLICATION_ID:
            self._detach("l")
            self.sources.missing["ledger"] = f"{shown} is not a mem0-hygiene ledger"
            return
        self.sources.ledger = True
        self.sources.ledger_wal = is_wal_file(path)
        self.ledger = AttachedLedger(self.rows)

    def _detach(self, name: str) -> None:
        try:
            self._conn.execute(f"DETACH DATABASE {name}")
        except sqlite3.DatabaseError:
            pass

    # -- vector store -----------------------------------------------------------------------
    def load_points(self, pages: Iterator[list[Any]]) -> None:
        """Stream points (``{"id", "payload"}`` dicts, as :func:`~mem0_hygiene.stores.vectors.qdrant_pages`
        yields them, or qdrant ``Record``s) into ``points`` and scan their text."""
        insert_points = "INSERT OR REPLACE INTO points VALUES (?,?,?,?,?,?,?,?,?)"
        insert_hits = "INSERT INTO hits VALUES (?,?,?)"
        count = 0
        for page in pages:
            rows, hits = [], []
            for point in page:
                if isinstance(point, dict):
                    pid, payload = str(point["id"]), point.get("payload") or {}
                else:
                    pid, payload = str(point.id), point.payload or {}
                get = payload.get
                text = get("data")
                if not isinstance(text, str):
                    text = ""
                rows.append((pid, text, normalize_for_duplicates(text), get("user_id"), get("agent_id"),
                             get("run_id"), get("created_at"), get("expiration_date"), get("role")))
                if text:
                    for secret in find_secrets(text):
                        hits.append((pid, "secret", f"{secret.kind}: {secret.redacted}"))
                    reason = instruction_reason(text)
                    if reason:
                        hits.append((pid, "instruction", reason))
            self._conn.execute("BEGIN")
            self._conn.executemany(insert_points, rows)
            if hits:
                self._conn.executemany(insert_hits, hits)
            self._conn.execute("COMMIT")
            count += len(rows)
        self.sources.points = True
        self.sources.point_count = count

    # -- queries ----------------------------------------------------------------------------
    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()
