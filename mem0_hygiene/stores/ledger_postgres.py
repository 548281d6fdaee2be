"""The ledger on PostgreSQL (``hygiene.ledger_url``), for several replicas of an app sharing one ledger.

:class:`PostgresLedger` keeps :class:`~mem0_hygiene.stores.ledger.Ledger`'s public API and queries; the
dialect differences sit behind :class:`PgConnection`, a small adapter that gives a psycopg 3 connection the
face of a ``sqlite3`` one (``execute``/``executemany``/``in_transaction``, ``?`` placeholders) and rewrites
the few SQLite-only forms (``INSERT OR IGNORE``/``OR REPLACE``, ``IS ?``). The schema is the same, at the
same versions (kept in ``hygiene_meta``), migrated under an advisory lock so replicas starting together do
not race. Times stay UTC ISO strings, and the clock is the server's (:meth:`PostgresLedger.now`).

Every read goes to the server: nothing is cached, so a change one replica commits is seen by every other
replica's next read. Credentials in the URL never appear in a message (:func:`redact`).
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import LedgerError, MissingExtra
from ..timeutil import to_iso
from . import ledger_ddl as tables
from .ledger import (
    APPLICATION_ID,
    COLUMNS,
    SCHEMA_VERSION,
    Ledger,
    LedgerRow,
    MigrationStep,
    migration_steps,
    row_from,
    seed_and_chain,
)
from .locations import redact_url
from .states import live_sql
from .topic_keys import INDEX_SQL, TOPIC_INDEX, TopicConflict, chained_rows

URL_SCHEMES = ("postgresql://", "postgres://")

_ISO_NOW = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"

_SCHEMA_V1 = (
    """
CREATE TABLE hygiene_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    memory_id      TEXT PRIMARY KEY,
    user_id        TEXT,
    agent_id       TEXT,
    run_id         TEXT,
    source         TEXT,
    source_kind    TEXT NOT NULL DEFAULT 'unknown'
                   CHECK (source_kind IN ('user','assistant','tool','system','import','unknown')),
    created_at     TEXT NOT NULL,
    confirmed_at   TEXT,
    expires_at     TEXT,
    superseded_by  TEXT REFERENCES memories(memory_id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,
    superseded_at  TEXT,
    invalid_at     TEXT,
    invalid_reason TEXT,
    quarantined    INTEGER NOT NULL DEFAULT 0,
    last_used_at   TEXT,
    use_count      INTEGER NOT NULL DEFAULT 0,
    topic_key      TEXT,
    deleted_at     TEXT,
    adopted        INTEGER NOT NULL DEFAULT 0,
    CHECK (superseded_by IS NULL OR superseded_by <> memory_id)
);
CREATE INDEX memories_superseded_by ON memories(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_expires_at ON memories(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_topic ON memories(topic_key) WHERE topic_key IS NOT NULL;
CREATE VIEW live_memories AS SELECT * FROM memories WHERE """
    + live_sql(now=_ISO_NOW)
    + """;
"""
)

_SCHEMA_V2 = (
    """
ALTER TABLE memories ADD COLUMN redacted TEXT;
ALTER TABLE memories ADD COLUMN flag TEXT;
CREATE OR REPLACE VIEW live_memories AS SELECT * FROM memories WHERE """
    + live_sql(now=_ISO_NOW)
    + """;
"""
)

_PENDING_V3 = """
CREATE TABLE pending (
    memory_id TEXT NOT NULL,
    action    TEXT NOT NULL CHECK (action IN ('delete', 'supersede', 'invalidate')),
    since     TEXT NOT NULL,
    PRIMARY KEY (memory_id, action)
);
CREATE FUNCTION hygiene_pending_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO pending VALUES (NEW.memory_id, 'delete', NEW.deleted_at) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $fn$;
CREATE TRIGGER pending_delete_on_tombstone AFTER UPDATE OF deleted_at ON memories
FOR EACH ROW WHEN (NEW.deleted_at IS NOT NULL) EXECUTE FUNCTION hygiene_pending_delete();
"""

_V4: tuple[MigrationStep, ...] = (
    tables.CONFIRMATIONS_POSTGRES,
    seed_and_chain,
    INDEX_SQL,
    tables.CONSOLIDATION_POSTGRES,
    tables.CONSOLIDATION_INDEX,
    tables.WRITE_DECISIONS_POSTGRES,
)

MIGRATIONS: dict[int, str | tuple[MigrationStep, ...]] = {1: _SCHEMA_V1, 2: _SCHEMA_V2, 3: _PENDING_V3, 4: _V4}

_CONFLICT_KEYS = {
    "memories": ("memory_id",),
    "pending": ("memory_id", "action"),
    "hygiene_meta": ("key",),
    "confirmations": ("memory_id", "confirmed_at"),
}
_UPDATED = {
    "memories": tuple(c for c in COLUMNS if c != "memory_id"),
    "pending": ("since",),
    "hygiene_meta": ("value",),
    "confirmations": ("via",),
}
_INSERT_OR = re.compile(r"^\s*INSERT OR (IGNORE|REPLACE) INTO (\w+)", re.IGNORECASE)
_LINK_LOCK = zlib.crc32(b"mem0-hygiene:supersede-links")
CLOCK_RESYNC = 60.0  # seconds between two measurements of the server's clock


def is_postgres_url(location: str | None) -> bool:
    """Whether a ledger location names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


def redact(url: str) -> str:
    """The URL as every message shows it: no user, password or query string."""
    return redact_url(url)


def advisory_key(name: str) -> int:
    """A stable 32-bit advisory-lock key for a named purpose ("prune")."""
    return zlib.crc32(f"mem0-hygiene:{name}".encode())


def translate(sql: str) -> str:
    """A ledger statement written for SQLite, in PostgreSQL's dialect (placeholders ``%s``)."""
    text = sql.replace("%", "%%")
    found = _INSERT_OR.match(text)
    if found:
        verb, table = found.group(1).upper(), found.group(2)
        text = "INSERT INTO " + table + text[found.end() :]
        if verb == "IGNORE":
            text += " ON CONFLICT DO NOTHING"
        else:
            keys = ", ".join(_CONFLICT_KEYS[table])
            sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in _UPDATED[table])
            text += f" ON CONFLICT ({keys}) DO UPDATE SET {sets}"
    text = text.replace(" IS ?", " IS NOT DISTINCT FROM ?")
    if text.strip().upper() == "BEGIN IMMEDIATE":
        text = "BEGIN"
    return text.replace("?", "%s")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise MissingExtra("psycopg 3", extra="postgres", feature="a PostgreSQL ledger (hygiene.ledger_url)") from None
    return psycopg


_TOMBSTONE_LIVE_CHAIN = """
WITH RECURSIVE chain(id, depth) AS (
    SELECT memory_id, 0 FROM memories WHERE memory_id = ?
    UNION
    SELECT m.memory_id, c.depth + 1 FROM memories m JOIN chain c ON m.superseded_by = c.id WHERE c.depth < 10000)
UPDATE memories SET deleted_at = COALESCE(deleted_at, ?)
WHERE memory_id IN (SELECT id FROM chain)
  AND EXISTS (SELECT 1 FROM memories WHERE memory_id = ? AND deleted_at IS NULL)
RETURNING memory_id, superseded_by
"""


class PgConnection:
    """A psycopg 3 connection (autocommit) that answers like the ``sqlite3`` connection the ledger's
    queries were written for; reconnects once when the server dropped it between two statements."""

    def __init__(self, url: str, *, readonly: bool = False) -> None:
        self.url = url
        self.readonly = readonly
        self._cache: dict[str, str] = {}
        self._txn_open = False
        self._raw = self._open()

    def _open(self) -> Any:
        psycopg = _psycopg()
        try:
            raw = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise LedgerError(self.explain(exc)) from None
        try:
            raw.execute("SET TIME ZONE 'UTC'")
            if self.readonly:
                raw.execute("SET default_transaction_read_only = on")
        except psycopg.Error as exc:
            raw.close()
            raise LedgerError(self.explain(exc)) from None
        return raw

    def explain(self, exc: BaseException) -> str:
        text = " ".join(str(exc).split()).replace(self.url, redact(self.url))
        return f"the ledger at {redact(self.url)} failed: {text}"

    @property
    def in_transaction(self) -> bool:
        return bool(self._raw.info.transaction_status != 0)  # 0: IDLE

    def _sql(self, sql: str) -> str:
        out = self._cache.get(sql)
        if out is None:
            out = self._cache[sql] = translate(sql)
        return out

    @staticmethod
    def _params(params: Sequence[Any]) -> list[Any]:
        return [int(p) if isinstance(p, bool) else p for p in params]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        psycopg = _psycopg()
        text = self._sql(sql)
        if self._raw.broken or self._raw.closed:
            if self._raw.closed and not self._raw.broken:
                raise LedgerError(f"the ledger at {redact(self.url)} is closed")
            if self._txn_open:  # lost inside a transaction: the server rolled it back; never go on outside it
                if text in ("ROLLBACK", "COMMIT"):
                    self._txn_open = False
                raise LedgerError(
                    f"the connection to the ledger at {redact(self.url)} was lost inside a "
                    "transaction; nothing of it was committed (the next call reconnects)"
                )
            self._raw = self._open()  # the server dropped us between two statements: nothing was under way
        if text == "BEGIN":
            self._txn_open = True
        elif text in ("COMMIT", "ROLLBACK"):
            self._txn_open = False
        try:
            return self._raw.execute(text, self._params(params))
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def error(self, exc: Any) -> LedgerError:
        """The ledger's error for a psycopg one (a :class:`TopicConflict` when it met the topic-key index)."""
        diag = getattr(exc, "diag", None)
        if getattr(diag, "constraint_name", None) == TOPIC_INDEX:
            return TopicConflict(self.explain(exc))
        return LedgerError(self.explain(exc))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        psycopg = _psycopg()
        try:
            cur = self._raw.cursor()
            cur.executemany(self._sql(sql), [self._params(r) for r in rows])
            return cur
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def script(self, sql: str) -> None:
        """Run DDL as written (no placeholders, no rewriting)."""
        psycopg = _psycopg()
        try:
            self._raw.execute(sql)
        except psycopg.Error as exc:
            raise LedgerError(self.explain(exc)) from None

    def close(self) -> None:
        self._raw.close()


_ONE_ROW = "VALUES (" + ",".join("?" * len(COLUMNS)) + ")"
"""The one ``VALUES`` group of the ledger's row inserts (see :meth:`PostgresLedger.write_rows`)."""
_ARRAY_TYPES = {"quarantined": "integer", "use_count": "integer", "adopted": "integer"}
"""The columns that are not text, with their type (for the arrays :meth:`PostgresLedger.write_rows` sends)."""


class PostgresLedger(Ledger):
    """The ledger in a PostgreSQL database (one schema: the connection's ``search_path``). Thread-safe; one
    connection guarded by a lock, plus one for advisory locks while a replica holds one."""

    FIND_SQL = "strpos"

    def __init__(self, path: str, *, readonly: bool = False) -> None:  # noqa: D107 - path is the URL
        self.path = path
        self._lock = threading.RLock()
        self.migration_notes: list[str] = []
        self.chained_on_upgrade = 0
        self._lock_conn: PgConnection | None = None
        self._lock_guard = threading.RLock()  # advisory locks nest (prune inside a maintenance run)
        self._offset: timedelta | None = None
        self._synced = 0.0
        self._conn = PgConnection(path, readonly=readonly)  # type: ignore[assignment]
        try:
            if readonly:
                self._check_readable()
            else:
                self._migrate()
        except BaseException:
            self._conn.close()
            raise

    @property
    def shown(self) -> str:
        """The location as messages show it (credentials removed)."""
        return redact(self.path)

    @property
    def is_server(self) -> bool:
        return True

    @property
    def pg(self) -> PgConnection:
        return self._conn  # type: ignore[return-value]

    # -- schema -----------------------------------------------------------------------------
    def _version(self) -> tuple[int | None, int]:
        """(application id, schema version) from ``hygiene_meta``; (None, 0) for an empty schema."""
        found = self.pg.execute("SELECT to_regclass('hygiene_meta') IS NOT NULL").fetchone()[0]
        if not found:
            tables = [
                r[0]
                for r in self.pg.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                    "AND table_name IN ('memories', 'pending')"
                )
            ]
            if tables:
                raise LedgerError(
                    f"{self.shown} holds tables named {', '.join(tables)} that are not a "
                    "mem0-hygiene ledger's; point hygiene.ledger_url at another database or schema"
                )
            return None, 0
        meta = dict(self.pg.execute("SELECT key, value FROM hygiene_meta").fetchall())
        return int(meta.get("application_id", 0)), int(meta.get("schema_version", 0))

    def _check_readable(self) -> None:
        app_id, version = self._version()
        if app_id is None:
            raise LedgerError(f"no ledger at {self.shown}: the drop-in Memory creates it on first start")
        if version > SCHEMA_VERSION:
            raise LedgerError(self._newer(version))

    def _newer(self, version: int) -> str:
        return (
            f"the ledger at {self.shown} has schema version {version}, newer than this mem0-hygiene "
            f"understands ({SCHEMA_VERSION}); upgrade mem0-hygiene"
        )

    def _migrate(self) -> None:
        with self.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(?)", (APPLICATION_ID,))  # replicas starting together
            app_id, version = self._version()
            if app_id is not None and app_id != APPLICATION_ID:
                raise LedgerError(f"{self.shown} is not a mem0-hygiene ledger; check hygiene.ledger_url")
            if version > SCHEMA_VERSION:
                raise LedgerError(self._newer(version))
            for target in range(version + 1, SCHEMA_VERSION + 1):
                migration = MIGRATIONS[target]
                if isinstance(migration, str):
                    self.pg.script(migration)
                else:
                    for step in migration_steps(migration):
                        if isinstance(step, str):
                            self.pg.script(step)
                        else:
                            step(conn, self)
                conn.execute(
                    "INSERT OR REPLACE INTO hygiene_meta (key, value) VALUES ('application_id', ?)",
                    (str(APPLICATION_ID),),
                )
                conn.execute(
                    "INSERT OR REPLACE INTO hygiene_meta (key, value) VALUES ('schema_version', ?)", (str(target),)
                )

    def schema_version(self) -> int:
        return self._version()[1]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
        with self._lock_guard:
            if self._lock_conn is not None:
                self._lock_conn.close()
                self._lock_conn = None

    # -- dialect --------------------------------------------------------------------------------
    def _has_journal(self) -> bool:
        return True  # a PostgreSQL ledger is always at the current schema once opened

    def link_guard(self, conn: Any) -> None:
        """Inside a transaction: supersede links and topic-key chains are made one at a time across replicas
        (two replicas linking A->B and B->A at once would each miss the other's cycle; two writing one topic
        key would each find no holder, and one would meet the unique index)."""
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_LINK_LOCK,))

    def defer_links(self, conn: Any) -> None:
        conn.execute("SET CONSTRAINTS ALL DEFERRED")

    def has_table(self, name: str) -> bool:
        return bool(self.query("SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])

    def purge_rows(self, memory_ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return 0
        with self.transaction() as conn:
            before = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM memories WHERE deleted_at IS NOT NULL AND memory_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM pending WHERE action = 'delete' AND memory_id IN ({marks})", chunk)
            removed = int(before - conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        with self._lock:  # dead row versions go now, not at the next autovacuum
            self.pg.script("VACUUM memories")
        return removed

    # -- the hot path in one round trip each (a replica pays the network for every statement) ---------------
    def get_many(self, memory_ids: Sequence[str]) -> dict[str, LedgerRow]:
        """The rows of these ids in one statement (``= ANY`` of one array: one text, prepared once, whatever
        the number of ids)."""
        ids = list(dict.fromkeys(str(m) for m in memory_ids))
        if not ids:
            return {}
        rows = self.query("SELECT " + ", ".join(COLUMNS) + " FROM memories WHERE memory_id = ANY(?)", (ids,))
        return {row.memory_id: row for row in map(row_from, rows)}

    def record_uses(self, uses: dict[str, tuple[int, datetime]]) -> None:
        """The read counts in one ``UPDATE ... FROM unnest(...)`` (SQLite's is one statement per row)."""
        if not uses:
            return
        ids = list(uses)
        self._write(
            "UPDATE memories AS m SET use_count = m.use_count + u.n, last_used_at = CASE WHEN m.last_used_at "
            "IS NULL OR m.last_used_at < u.at THEN u.at ELSE m.last_used_at END "
            "FROM unnest(?::text[], ?::integer[], ?::text[]) AS u(id, n, at) WHERE m.memory_id = u.id",
            ([*ids], [uses[m][0] for m in ids], [to_iso(uses[m][1]) for m in ids]),
        )

    def write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Many rows as one ``INSERT ... SELECT FROM unnest(...)`` of one array per column: one statement for the
        server to run, not one per row (a buffered flush of new memories' rows)."""
        if len(rows) < 2 or _ONE_ROW not in sql or len({r[0] for r in rows}) != len(rows):
            return super().write_rows(sql, rows)
        arrays = ", ".join(f"?::{_ARRAY_TYPES.get(c, 'text')}[]" for c in COLUMNS)
        columns = [[int(v) if isinstance(v, bool) else v for v in column] for column in zip(*rows)]
        return self._write(sql.replace(_ONE_ROW, f"SELECT * FROM unnest({arrays})"), columns)

    def tombstone_live_chain(self, memory_id: str, when: datetime) -> list[str] | None:
        """As on SQLite, in one round trip: one recursive ``UPDATE`` finds the chain and tombstones it, and
        returns each row with the one that superseded it (the chain's order is rebuilt from those links)."""
        with self._lock:
            rows = self._conn.execute(_TOMBSTONE_LIVE_CHAIN, (memory_id, to_iso(when), memory_id)).fetchall()
        if not rows:
            return None
        above: dict[str, list[str]] = {}  # each row by the row that superseded it
        for mid, by in rows:
            if mid != memory_id:
                above.setdefault(by, []).append(mid)
        newest_first: list[str] = []
        level = [memory_id]
        while level:
            level = [m for top in level for m in above.pop(top, ())]
            newest_first += level
        return [*reversed(newest_first), memory_id]

    def insert_tombstoned(self, rows: Sequence[LedgerRow], when: datetime) -> None:
        """The rows, tombstoned, and their journal entries in one statement (atomic on its own): a delete
        waits for one round trip, not four."""
        if not rows:
            return
        stamp = to_iso(when)
        values = [replace(r, deleted_at=r.deleted_at or stamp).as_tuple() for r in rows]
        marks = ", ".join("(" + ", ".join("?" * len(COLUMNS)) + ")" for _ in values)
        upsert = (
            f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES {marks} ON CONFLICT (memory_id) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "memory_id")
        )
        self._write(
            f"WITH written AS ({upsert} RETURNING memory_id, deleted_at) "
            "INSERT INTO pending SELECT memory_id, 'delete', deleted_at FROM written ON CONFLICT DO NOTHING",
            [v for row in values for v in row],
        )

    def pragma_check(self) -> tuple[list[tuple[Any, ...]], bool, str]:
        """PostgreSQL always enforces the foreign key; rows pointing nowhere cannot exist."""
        broken = self.query(
            "SELECT m.memory_id, m.superseded_by FROM memories m LEFT JOIN memories r "
            "ON r.memory_id = m.superseded_by "
            "WHERE m.superseded_by IS NOT NULL AND r.memory_id IS NULL"
        )
        return [("memories", r[0], "memories", 0) for r in broken], True, "postgresql"

    def scrub_fields(
        self,
        memory_ids: Sequence[str],
        texts: Sequence[str],
        columns: Sequence[str] = ("source", "invalid_reason", "topic_key"),
    ) -> int:
        """``forget --scrub``: the fields blanked as on SQLite (one transaction), then ``VACUUM`` the table so
        the old row versions go too. Returns the fields blanked."""
        blanked = super().scrub_fields(memory_ids, texts, columns)
        if memory_ids and texts:  # as before: nothing asked, nothing to vacuum
            with self._lock:
                self.pg.script("VACUUM memories")
        return blanked

    # -- the server's clock -------------------------------------------------------------------------
    def now(self) -> datetime:
        """The database server's time (UTC): its clock's offset from this host's is measured when the
        ledger opens and again every :data:`CLOCK_RESYNC` seconds (to within half a round trip), so
        replicas on hosts whose clocks disagree still stamp their rows on one clock."""
        mono = time.monotonic()
        if self._offset is None or mono - self._synced > CLOCK_RESYNC:
            with self._lock:
                before = time.time()
                server = self.pg.execute("SELECT clock_timestamp()").fetchone()[0]
                after = time.time()
            local = datetime.fromtimestamp((before + after) / 2, tz=timezone.utc)
            self._offset = server.astimezone(timezone.utc) - local
            self._synced = mono
        return datetime.now(timezone.utc) + self._offset

    # -- one replica at a time -----------------------------------------------------------------
    @contextlib.contextmanager
    def exclusive(self, purpose: str, *, wait: bool = True) -> Iterator[bool]:
        """``with ledger.exclusive("prune") as held:`` a session advisory lock across every replica on this
        database (on a connection of its own, so this replica's other calls go on meanwhile). ``wait=False``
        yields False at once when another replica holds it."""
        with self._lock_guard:
            if self._lock_conn is None:
                self._lock_conn = PgConnection(self.path)
            conn = self._lock_conn
            key = advisory_key(purpose)
            if wait:
                conn.execute("SELECT pg_advisory_lock(?)", (key,))
                held = True
            else:
                held = bool(conn.execute("SELECT pg_try_advisory_lock(?)", (key,)).fetchone()[0])
            try:
                yield held
            finally:
                if held:
                    conn.execute("SELECT pg_advisory_unlock(?)", (key,))

    # -- copies ------------------------------------------------------------------------------------
    def to_scratch(self) -> Ledger:
        """An in-memory SQLite ledger holding this one's rows and journal (dry runs write to it)."""
        return self.copy_into(Ledger(":memory:"))

    def copy_into(self, scratch: Ledger) -> Ledger:
        """Copy this ledger's rows, journal and the other tables (:data:`~mem0_hygiene.stores.ledger_ddl.
        SIDE_TABLES`) into an empty SQLite ledger (one consistent snapshot: the reads share one repeatable-read
        transaction); returns it. A ledger older than schema version 4 (opened read-only) is upgraded in the
        copy as the migration would: confirmations seeded, rows sharing a topic key chained to the newest."""
        with self.transaction() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            version = self._version()[1]
            rows = conn.execute("SELECT " + ", ".join(COLUMNS) + " FROM memories").fetchall()
            pending = conn.execute("SELECT memory_id, action, since FROM pending").fetchall()
            side = {
                table: conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
                for table, (columns, _key) in tables.SIDE_TABLES.items()
                if conn.execute("SELECT to_regclass(?) IS NOT NULL", (table,)).fetchone()[0]
            }
        if version < 4:
            chained, _count = chained_rows([row_from(r) for r in rows], to_iso(self.now()))
            rows = [r.as_tuple() for r in chained]
            side["confirmations"] = [
                (r[0], r[COLUMNS.index("confirmed_at")], "seeded")
                for r in rows
                if r[COLUMNS.index("confirmed_at")]
                and r[COLUMNS.index("confirmed_at")] != r[COLUMNS.index("created_at")]
            ]
        self._fill(scratch, rows, pending, side)
        return scratch

    @staticmethod
    def _fill(scratch: Ledger, rows: Any, pending: Any, side: dict[str, Any] | None = None) -> None:
        with scratch._lock:
            scratch._conn.execute("PRAGMA foreign_keys = OFF")
            with scratch.transaction() as conn:
                conn.executemany(
                    "INSERT INTO memories (" + ", ".join(COLUMNS) + ") VALUES (" + ",".join("?" * len(COLUMNS)) + ")",
                    rows,
                )
                conn.executemany("INSERT INTO pending VALUES (?, ?, ?)", pending)
                for table, copied in (side or {}).items():
                    columns = tables.SIDE_TABLES[table][0]
                    if copied:
                        conn.executemany(
                            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                            copied,
                        )
            scratch._conn.execute("PRAGMA foreign_keys = ON")


def open_readonly(url: str) -> PostgresLedger:
    """A PostgreSQL ledger opened for reading only (no migration; the server refuses writes)."""
    return PostgresLedger(url, readonly=True)


# ---------------------------------------------------------------------------------------------- dump and load
# A backup dumps every table of the PostgreSQL ledger into a SQLite ledger file (the same format a SQLite
# deployment's backup set holds) from one REPEATABLE READ snapshot; a restore (and ``ledger migrate``) loads
# such a file back in one transaction, verified by the count and sha256 of every table before it commits.

RESTORE_MARK = "restored_from"
"""The ``hygiene_meta`` key a restore sets in the same transaction as the rows it loads: a rerun after a crash
reads it to know whether that transaction committed."""

_PG_TYPES = {
    "integer": "INTEGER",
    "bigint": "INTEGER",
    "smallint": "INTEGER",
    "boolean": "INTEGER",
    "real": "REAL",
    "double precision": "REAL",
    "numeric": "REAL",
    "bytea": "BLOB",
}


def postgres_tables(conn: PgConnection) -> list[Any]:
    """Every table of the ledger's schema (the connection's ``search_path``), ``hygiene_meta`` left out, as
    :class:`~mem0_hygiene.stores.ledger_tables.TableShape` (types in SQLite's terms), by name."""
    from .ledger_tables import META_TABLES, TableShape

    cols = conn.execute(
        "SELECT c.table_name, c.column_name, c.data_type, coalesce(c.column_default, ''), c.is_identity "
        "FROM information_schema.columns c JOIN information_schema.tables t "
        "ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' "
        "ORDER BY c.table_name, c.ordinal_position"
    ).fetchall()
    keys = conn.execute(
        "SELECT tc.table_name, k.column_name FROM information_schema.table_constraints tc "
        "JOIN information_schema.key_column_usage k ON k.constraint_schema = tc.constraint_schema "
        "AND k.constraint_name = tc.constraint_name AND k.table_name = tc.table_name "
        "WHERE tc.table_schema = current_schema() AND tc.constraint_type = 'PRIMARY KEY' "
        "ORDER BY tc.table_name, k.ordinal_position"
    ).fetchall()
    by_table: dict[str, list[tuple[str, str, bool]]] = {}
    for table, column, dtype, default, identity in cols:
        generated = identity == "YES" or str(default).startswith("nextval(")
        by_table.setdefault(table, []).append((column, _PG_TYPES.get(str(dtype), "TEXT"), generated))
    key_of: dict[str, list[str]] = {}
    for table, column in keys:
        key_of.setdefault(table, []).append(column)
    shapes = []
    for table in sorted(by_table):
        if table in META_TABLES:
            continue
        columns = by_table[table]
        key = tuple(key_of.get(table, ()))
        auto = len(key) == 1 and any(c == key[0] and g and t == "INTEGER" for c, t, g in columns)
        shapes.append(
            TableShape(table, tuple(c for c, _t, _g in columns), tuple(t for _c, t, _g in columns), key, auto)
        )
    return shapes


@contextlib.contextmanager
def snapshot(url: str) -> Iterator[PostgresLedger]:
    """``with snapshot(url) as ledger:`` every read through ``ledger`` inside sees one moment: a REPEATABLE READ,
    READ ONLY transaction whose snapshot is taken by the first read (so take it when the other stores are held
    still). Refuses a ledger whose schema is not this mem0-hygiene's (:class:`LedgerError`: upgrade, or let a
    replica of this version migrate it first)."""
    ledger = open_readonly(url)
    try:
        with ledger.transaction() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            version = ledger.schema_version()  # the first read: the snapshot is taken here
            if version != SCHEMA_VERSION:
                raise LedgerError(
                    f"the ledger at {ledger.shown} has schema version {version}, older than this mem0-hygiene's "
                    f"({SCHEMA_VERSION}); start one replica with this version (it migrates the ledger), or use "
                    "the mem0-hygiene version the replicas run"
                )
            yield ledger
    finally:
        ledger.close()


def _plain(value: Any) -> Any:
    """A PostgreSQL value as SQLite stores it."""
    import decimal
    import json

    if isinstance(value, bool):
        return int(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


def dump_into_file(source: PostgresLedger, path: str) -> list[Any]:
    """Every table of ``source`` (read inside the caller's transaction, e.g. :func:`snapshot`) written into a
    new SQLite ledger file at ``path``: the current SQLite schema, plus any table the SQLite ledger only creates
    when first used; verified by count and sha256 per table. Returns the
    :class:`~mem0_hygiene.stores.ledger_tables.TableCopy` of each table."""
    from .ledger_tables import sqlite_tables, verify_tables

    shapes = postgres_tables(source.pg)
    target = Ledger(path)
    try:
        present = {s.name: s for s in sqlite_tables(target.query)}
        with target._lock:
            target._conn.execute("PRAGMA foreign_keys = OFF")  # a row may point at one copied after it
            try:
                with target.transaction() as conn:
                    for shape in shapes:
                        have = present.get(shape.name)
                        if have is None:
                            conn.execute(shape.sqlite_ddl())
                        elif set(shape.columns) - set(have.columns):
                            raise LedgerError(
                                f"table {shape.name} of the ledger at {source.shown} has columns "
                                f"{sorted(set(shape.columns) - set(have.columns))} that this mem0-hygiene's SQLite "
                                "ledger lacks; use the mem0-hygiene version the replicas run"
                            )
                        rows = [tuple(_plain(v) for v in r) for r in source.query(shape.select_sql())]
                        if rows:
                            conn.executemany(shape.insert_sql(), rows)
            finally:
                target._conn.execute("PRAGMA foreign_keys = ON")
        return verify_tables(
            lambda sql: [tuple(_plain(v) for v in r) for r in source.query(sql)],
            target.query,
            shapes,
            f"{source.shown} -> {path}",
        )
    finally:
        target.close()


def commit_point() -> None:
    """Called right before a restore's transaction commits (a crash test's kill point); does nothing."""


@contextlib.contextmanager
def held_for_load(ledger: PostgresLedger) -> Iterator[Any]:
    """``with held_for_load(ledger) as conn:`` one transaction holding the ledger still: the schema's advisory
    lock (replicas starting meanwhile wait), every table locked against writes (readers go on), foreign keys
    checked at commit. Commits when the block ends (:func:`commit_point` first), rolls back on an error."""
    with ledger.transaction() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (APPLICATION_ID,))
        conn.execute("SET CONSTRAINTS ALL DEFERRED")
        names = ["hygiene_meta", *(s.name for s in postgres_tables(ledger.pg))]
        from .ledger_tables import quote

        ledger.pg.script(f"LOCK TABLE {', '.join(quote(n) for n in names)} IN EXCLUSIVE MODE")
        yield conn
        commit_point()


def restore_mark(ledger: PostgresLedger) -> str | None:
    """The :data:`RESTORE_MARK` of the ledger: the restore whose rows it holds (None: none since)."""
    rows = ledger.query("SELECT value FROM hygiene_meta WHERE key = ?", (RESTORE_MARK,))
    return str(rows[0][0]) if rows else None


def set_restore_mark(conn: Any, value: str | None) -> None:
    """Inside :func:`held_for_load`: set (or with None, clear) the :data:`RESTORE_MARK`."""
    conn.execute("DELETE FROM hygiene_meta WHERE key = ?", (RESTORE_MARK,))
    if value is not None:
        conn.execute("INSERT INTO hygiene_meta (key, value) VALUES (?, ?)", (RESTORE_MARK, value))


def load_rows(ledger: PostgresLedger, conn: Any, source: Ledger, *, replace: bool) -> list[Any]:
    """Inside :func:`held_for_load`: every table of the SQLite ledger ``source`` loaded into ``ledger`` (with
    ``replace``, every ledger table of the database is emptied first, tables the file lacks too); a table the
    database lacks is created; numbering sequences are moved past the loaded keys; then every table's count and
    sha256 are compared on both sides before anything commits (:class:`LedgerError` otherwise). Returns the
    :class:`~mem0_hygiene.stores.ledger_tables.TableCopy` of each table."""
    from .ledger_tables import quote, sqlite_tables, verify_tables

    shapes = sqlite_tables(source.query)
    present = {s.name: s for s in postgres_tables(ledger.pg)}
    for shape in shapes:
        if shape.name not in present:
            ledger.pg.script(shape.postgres_ddl())
    present = {s.name: s for s in postgres_tables(ledger.pg)}
    if replace:
        for name in present:
            conn.execute(f"DELETE FROM {quote(name)}")
    common: dict[str, tuple[str, ...]] = {}
    for shape in shapes:
        have = present[shape.name]
        missing = [c for c in shape.columns if c not in have.columns]
        if missing:
            raise LedgerError(
                f"table {shape.name} of {source.path} has columns {missing} that the ledger at "
                f"{ledger.shown} lacks; nothing was changed"
            )
        common[shape.name] = shape.columns
        rows = source.query(shape.select_sql())
        if rows:
            conn.executemany(shape.insert_sql(), rows)
    for name, have in present.items():
        if have.auto_key:
            col = have.key[0]
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max({quote(col)}), 0) + 1, false) "
                f"FROM {quote(name)}",
                (quote(name), col),
            )
    return verify_tables(
        source.query,
        lambda sql: [tuple(_plain(v) for v in r) for r in ledger.query(sql)],
        shapes,
        f"{source.path} -> {ledger.shown}",
        common,
    )


_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def translate_named(sql: str) -> str:
    """A read written for SQLite with ``:name`` (or ``?``) placeholders, in psycopg's form (``%(name)s``,
    ``%s``); quoted literals are left as they are."""
    parts = translate(sql).split("'")
    for i in range(0, len(parts), 2):  # outside the quotes only
        parts[i] = _NAMED.sub(r"%(\1)s", parts[i])
    return "'".join(parts)


class ReadSnapshot:
    """One consistent, read-only view of a PostgreSQL ledger: a ``REPEATABLE READ READ ONLY`` transaction held
    open from the first query to :meth:`close`, so every read sees the same committed state while replicas go
    on writing. Queries are written for SQLite (``?`` or ``:name`` placeholders; :func:`translate_named`)."""

    def __init__(self, url: str) -> None:
        self._ledger = open_readonly(url)  # checks it is a ledger this version can read
        self.shown = self._ledger.shown
        self._raw = self._ledger.pg._raw
        try:
            self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._run("SAVEPOINT mem0_hygiene_read")
        except BaseException:
            self._ledger.close()
            raise

    def _run(self, sql: str, params: Any = None) -> Any:
        psycopg = _psycopg()
        try:
            return self._raw.execute(sql, params)
        except psycopg.Error as exc:
            self._recover()
            raise LedgerError(self._ledger.pg.explain(exc)) from None

    def _recover(self) -> None:
        """After a failed read, the transaction goes on (same snapshot) for the next one."""
        try:
            self._raw.execute("ROLLBACK TO SAVEPOINT mem0_hygiene_read")
        except Exception:  # the connection itself is gone: the next read says so
            pass

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a read."""
        return list(self._run(translate_named(sql), params or None).fetchall())

    def stream(
        self, sql: str, params: Sequence[Any] | dict[str, Any] = (), size: int = 10_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of a read in pages of ``size``, through a server-side cursor (memory stays flat)."""
        psycopg = _psycopg()
        try:
            with self._raw.cursor(name="mem0_hygiene_audit") as cur:
                cur.execute(translate_named(sql), params or None)
                while True:
                    page = cur.fetchmany(size)
                    if not page:
                        return
                    yield page
        except psycopg.Error as exc:
            self._recover()
            raise LedgerError(self._ledger.pg.explain(exc)) from None

    def close(self) -> None:
        try:
            if not self._raw.closed and not self._raw.broken:
                self._raw.execute("ROLLBACK")
        except Exception:  # the connection is going anyway
            pass
        self._ledger.close()
