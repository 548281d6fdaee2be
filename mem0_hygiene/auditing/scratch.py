"""The audit's working database: one scratch SQLite file that sees every store at once, read-only.

mem0's history.db is attached as ``h`` (a fleet's other hosts' files one at a time, when a check reads them) and
a SQLite ledger as ``l`` (all ``mode=ro``); a PostgreSQL ledger is queried on its server, with each row's id
and state copied here for the joins (:mod:`mem0_hygiene.auditing.ledger_sql`). The vector store's points are
streamed in pages (:func:`mem0_hygiene.stores.vectors.qdrant_pages`) into ``points`` (with the text scanners'
hits in ``hits``), so every cross-store check is a SQL join and nothing is held in Python memory. The scratch
file lives in a temporary folder and is removed afterwards; the stores themselves are never written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import HygieneError
from ..scan import find_secrets, instruction_reason, normalize_for_duplicates
from ..stores.database_url import is_database_url
from ..stores.history import HistoryFile, RecoveredCopy, needs_rollback
from ..stores.ledger import APPLICATION_ID
from ..stores.sqlite import connect, is_wal_file, uri
from .ledger_sql import AttachedLedger, LedgerSQL, ServerLedger

NO_LEDGER = "no mem0-hygiene ledger"
"""How the reason a ledger is missing begins when there is no ledger file at all (a store plain mem0 wrote)."""
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
# In the scratch database: hist_files, one row per (history.db, memory) as above with src = the file's place in
# ScratchDB.histories; hist, one row per memory over every file. With one file hist is that file's summary and
# hist_files a view of it.
_SCRATCH_HIST_SCHEMA = """
CREATE TABLE hist (
    memory_id TEXT PRIMARY KEY, src INTEGER, last_rowid INTEGER, n INTEGER, last_event TEXT, text_rows INTEGER,
    text_rowid INTEGER
) WITHOUT ROWID;
CREATE TABLE hist_files (
    memory_id TEXT, src INTEGER, last_rowid INTEGER, n INTEGER, last_event TEXT, text_rows INTEGER,
    text_rowid INTEGER, PRIMARY KEY (memory_id, src)
) WITHOUT ROWID;
"""
# The union of several hosts' summaries: a memory is deleted when any host's history ends with its DELETE (mem0
# never writes an id again once deleted); its row counts add up; src/last_rowid point at the row that says so
# (the DELETE, else the first file's last row). text_rowid is per file: read it from hist_files.
_HIST_UNION = """
INSERT INTO hist (memory_id, src, last_rowid, n, last_event, text_rows, text_rowid)
SELECT memory_id, src, last_rowid, total, last_event, texts, NULL FROM (
    SELECT memory_id, src, last_rowid, last_event, SUM(n) OVER w AS total, SUM(text_rows) OVER w AS texts,
           ROW_NUMBER() OVER (PARTITION BY memory_id ORDER BY last_event = 'DELETE' DESC, src) AS k
    FROM hist_files WINDOW w AS (PARTITION BY memory_id))
WHERE k = 1
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


@dataclass(frozen=True)
class ReadHistory:
    """A history.db the audit reads: its host's ``label``, the path as given (``shown``), the path read (a
    rolled-back copy after a crash mid-commit), its place ``src`` in ``hist_files``, and whether it has mem0's
    ``messages`` table."""

    label: str
    shown: str
    path: str
    src: int
    messages: bool


@dataclass
class Sources:
    """Which stores the scratch database could see, and why not when it could not.

    Fields:
        points: the vector store's points were loaded.
        history: a history.db is attached as ``h`` (the first of :attr:`ScratchDB.histories` read).
        histories: every history.db given (one per host) could be read.
        ledger: the ledger is attached as ``l``.
        messages: history.db has mem0's ``messages`` table.
        backups: the backup record beside the ledger could be read (present or not yet written).
        missing: source name -> reason it is unavailable ("points", "history", "histories", "ledger", "backups").
        point_count: points loaded.
        recovered: source -> why it was read from a rolled-back copy (a hot journal: the app died mid-commit;
            :class:`mem0_hygiene.stores.history.RecoveredCopy`).
        backup_status: what the backup record says (:class:`mem0_hygiene.stores.backup_record.BackupStatus`), when
            ``backups`` is true.
    """

    points: bool = False
    history: bool = False
    histories: bool = False  # every history.db given was read (the union of the hosts' histories is whole)
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
        self._conn.executescript(_SCRATCH_SCHEMA + _SCRATCH_HIST_SCHEMA)
        self.sources = Sources()
        self._summary: threading.Thread | None = None
        self._summaries: list[tuple[ReadHistory, threading.Thread]] = []
        self._summary_errors: dict[int, BaseException] = {}
        self.histories: list[ReadHistory] = []  # the history.db files read (every host's)
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
        for _h, thread in self._summaries:
            thread.join()
        self._summaries, self._summary = [], None
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
        """mem0's history.db at ``path`` (one host), attached as ``h``."""
        self.attach_histories([HistoryFile(os.path.basename(os.path.dirname(path or "")) or "history", path or "")])

    def attach_histories(self, files: Sequence[HistoryFile]) -> None:
        """Every host's history.db: the first readable one attached as ``h``, each summarised into
        ``hist_files`` (per file, ``src`` = its place in :attr:`histories`) and all together into ``hist`` (per
        memory, the union: a memory any host's history.db knows is in it; see :data:`_HIST_UNION`). A file that
        cannot be read is left out and named in ``sources.missing["histories"]``: the checks that need every
        host's history (a memory missing from all of them) are then skipped, the others read the rest."""
        many = len(files) > 1
        problems: list[str] = []
        for f in files:
            problem = self._open_history(f, many)
            if problem:
                problems.append(problem)
        self.sources.history = bool(self.histories)
        self.sources.messages = any(h.messages for h in self.histories)
        if problems:
            reason = "; ".join(problems)
            self.sources.missing["histories"] = reason
            if not self.histories:
                self.sources.missing["history"] = reason
        self.sources.histories = bool(self.histories) and not problems
        self._summaries = []
        for h in self.histories:
            thread = threading.Thread(
                target=self._summarize_history, args=(h,), daemon=True, name="mem0-hygiene-audit-history"
            )
            thread.start()
            self._summaries.append((h, thread))
        self._summary = self._summaries[0][1] if self._summaries else None

    def _open_history(self, f: HistoryFile, many: bool) -> str:
        """Check one history.db and add it to :attr:`histories`; returns why it cannot be read ("" when it can)."""
        named = f"{f.label}: " if many else ""
        path = f.path
        if not path or path == ":memory:" or not os.path.isfile(path):
            return f"{named}mem0's history.db was not found at {path}"
        shown, path = path, self._readable(f"history {f.label}" if many else "history", path)
        alias = "h" if not self.histories else "hx"
        try:
            self._conn.execute(f"ATTACH DATABASE ? AS {alias}", (uri(path, "ro"),))
            tables = {r[0] for r in self._conn.execute(f"SELECT name FROM {alias}.sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            self._detach(alias)
            return f"{named}{shown} could not be read as SQLite ({exc})"
        if alias != "h" or "history" not in tables:
            self._detach(alias)
        if "history" not in tables:
            return f"{named}{shown} has no 'history' table: it is not mem0's history.db"
        self.histories.append(ReadHistory(f.label, shown, path, len(self.histories), "messages" in tables))
        return ""

    @contextlib.contextmanager
    def attached(self, h: ReadHistory) -> Iterator[str]:
        """``with db.attached(h) as alias``: that history.db attached to the scratch connection (``h`` for the
        first; another one for the length of the block), for per-file queries joined with ``hist_files``."""
        conn = self.conn
        if h.src == 0:
            yield "h"
            return
        conn.execute("ATTACH DATABASE ? AS hx", (uri(h.path, "ro"),))
        try:
            yield "hx"
        finally:
            self._detach("hx")

    def _summarize_history(self, h: ReadHistory) -> None:
        """Build ``hist`` in ``hist-N.db`` beside the scratch file (runs in a background thread per file)."""
        try:
            conn = connect(os.path.join(self._dir.name, f"hist-{h.src}.db"), create=True)
            try:
                for pragma in _PRAGMAS:
                    conn.execute(f"PRAGMA {pragma}")
                conn.executescript(_HIST_SCHEMA)
                conn.execute("ATTACH DATABASE ? AS h", (uri(h.path, "ro"),))
                conn.execute("BEGIN")
                conn.execute(_HIST_SUMMARY)
                conn.execute(
                    "UPDATE hist SET last_event = (SELECT event FROM h.history WHERE h.history.rowid = hist.last_rowid)"
                )
                conn.execute("COMMIT")
            finally:
                conn.close()
        except BaseException as exc:  # handed to the main thread by _settle
            self._summary_errors[h.src] = exc

    def _settle(self) -> None:
        """Wait for the background summaries of history.db and copy them into ``hist_files`` and ``hist``."""
        self._summary = None
        summaries, self._summaries = self._summaries, []
        for _h, thread in summaries:
            thread.join()
        many = len(summaries) > 1
        read: list[ReadHistory] = []
        problems: list[str] = []
        for h, _thread in summaries:
            error = self._summary_errors.pop(h.src, None)
            if error is None:
                read.append(h)
            else:
                problems.append(
                    f"{h.label + ': ' if many else ''}mem0's history.db could not be read "
                    f"({type(error).__name__}: {error})"
                )
        if problems:
            if read and read[0].src != 0:  # ``h`` was the file that failed: the first one read takes its place
                self._detach("h")
                self._conn.execute("ATTACH DATABASE ? AS h", (uri(read[0].path, "ro"),))
            elif not read:
                self._detach("h")
            reason = "; ".join(problems)
            known = self.sources.missing.get("histories")
            self.sources.missing["histories"] = f"{known}; {reason}" if known else reason
            if not read:
                self.sources.missing["history"] = self.sources.missing["histories"]
            self.sources.histories = False
        self.histories = [dataclasses.replace(h, src=i) for i, h in enumerate(read)]
        self.sources.history = bool(read)
        self.sources.messages = any(h.messages for h in self.histories)
        files = [os.path.join(self._dir.name, f"hist-{h.src}.db") for h in read]
        target = "main.hist" if len(files) == 1 else "main.hist_files"
        for src, path in enumerate(files):
            self._conn.execute("ATTACH DATABASE ? AS hs", (path,))
            try:
                self._conn.execute(
                    f"INSERT INTO {target} SELECT memory_id, {src}, last_rowid, n, last_event, "
                    "text_rows, text_rowid FROM hs.hist"
                )
            finally:
                self._conn.execute("DETACH DATABASE hs")
        if len(files) == 1:  # one host: hist is its summary as it is
            self._conn.execute("DROP TABLE hist_files")
            self._conn.execute(
                "CREATE TEMP VIEW hist_files AS SELECT memory_id, src, last_rowid, n, last_event, "
                "text_rows, text_rowid FROM main.hist"
            )
        elif files:
            self._conn.execute(_HIST_UNION)

    def open_ledger(self, path: str | None, now_iso: str | None) -> None:
        """The audit's ledger: a SQLite file attached as ``l``; a PostgreSQL ledger (``hygiene.ledger_url``) read
        on the server through one read-only snapshot, with each row's id and facts at ``now_iso`` in
        ``ledger_ids`` here for the joins with the points and history.db (see
        :mod:`mem0_hygiene.auditing.ledger_sql`). ``now_iso`` None: no ``ledger_ids`` (for a reader that only
        reads the ledger's own tables, through :attr:`ledger`)."""
        if not (path and is_database_url(path)):
            self.attach_ledger(path)
            return
        from ..stores.ledger.postgres_reads import ReadSnapshot

        try:
            server = ServerLedger(ReadSnapshot(path))
        except HygieneError as exc:
            self.sources.missing["ledger"] = str(exc)
            return
        self.ledger = server
        try:
            if now_iso is not None:
                server.fill(self._conn, now_iso)
            else:
                server.one("SELECT 1 FROM memories LIMIT 1")  # the snapshot starts here, or says why not
        except HygieneError as exc:
            self.sources.missing["ledger"] = str(exc)
            return
        self.sources.ledger = True

    def attach_ledger(self, path: str | None) -> None:
        """A SQLite ledger file attached as ``l`` (see :meth:`open_ledger`, which also reads a PostgreSQL one)."""
        if not path or path == ":memory:" or not os.path.isfile(path):
            self.sources.missing["ledger"] = (
                f"{NO_LEDGER} at {path}: the app has not used mem0_hygiene.Memory on this store yet"
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
        self.load_fields(_point_fields(page) for page in pages)

    def load_fields(self, pages: Iterator[list[tuple[Any, ...]]]) -> None:
        """Stream points as ``(id, payload[key] for key in POINT_KEYS)`` tuples (what
        :meth:`~mem0_hygiene.stores.vector.base.VectorStore.field_pages` yields for :data:`POINT_KEYS`) into
        ``points`` and scan their text."""
        insert_points = "INSERT OR REPLACE INTO points VALUES (?,?,?,?,?,?,?,?,?)"
        insert_hits = "INSERT INTO hits VALUES (?,?,?)"
        count = 0
        for page in pages:
            rows, hits = [], []
            for pid, text, user, agent, run, created, expires, role in page:
                if not isinstance(text, str):
                    text = ""
                rows.append((pid, text, normalize_for_duplicates(text), user, agent, run, created, expires, role))
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


POINT_KEYS = ("data", "user_id", "agent_id", "run_id", "created_at", "expiration_date", "role")
"""The payload keys the audit reads (mem0's text, its scope, when it was made and expires, whose message it was),
in the order of the ``points`` columns after ``id`` and ``norm``."""


def _point_fields(page: list[Any]) -> list[tuple[Any, ...]]:
    """A page of points (dicts or qdrant ``Record``s) as :meth:`ScratchDB.load_fields` tuples."""
    out = []
    for point in page:
        if isinstance(point, dict):
            pid, payload = str(point["id"]), point.get("payload") or {}
        else:
            pid, payload = str(point.id), point.payload or {}
        get = payload.get
        out.append((pid, *[get(k) for k in POINT_KEYS]))
    return out
