"""The ledger on PostgreSQL (``hygiene.ledger_url``), for several replicas of an app sharing one ledger:
:class:`PostgresLedger` (the shared queries of :class:`~mem0_hygiene.stores.ledger.base.Ledger` plus the
statements that save a replica round trips) over :class:`PgConnection`. The schema is the same, at the same
versions (kept in ``hygiene_meta``), migrated under an advisory lock so replicas starting together do not race.
Times stay UTC ISO strings, and the clock is the server's (:meth:`PostgresLedger.now`).

Every read goes to the server: nothing is cached, so a change one replica commits is seen by every other
replica's next read. Credentials in the URL never appear in a message (:func:`redact`).
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from ...errors import LedgerError, MissingExtra
from ...timeutil import to_iso
from ..locations import redact_url
from ..topic_keys import TOPIC_INDEX, TopicConflict, chained_rows
from .base import Ledger
from .dialect import POSTGRES, Dialect
from .rows import COLUMNS, LedgerRow, row_from
from .schema import APPLICATION_ID, HYGIENE_META, MEMORY_COLUMNS, SCHEMA_VERSION, SIDE_TABLES, migrations
from .sqlite import SqliteLedger

MIGRATIONS = migrations(POSTGRES)
_SET_META = POSTGRES.upsert("hygiene_meta", HYGIENE_META.column_names, ("key",))
_LINK_LOCK = zlib.crc32(b"mem0-hygiene:supersede-links")
CLOCK_RESYNC = 60.0  # seconds between two measurements of the server's clock


def redact(url: str) -> str:
    """The URL as every message shows it: no user, password or query string."""
    return redact_url(url)


def advisory_key(name: str) -> int:
    """A stable 32-bit advisory-lock key for a named purpose ("prune")."""
    return zlib.crc32(f"mem0-hygiene:{name}".encode())


def load_psycopg() -> Any:
    """The psycopg 3 module (:class:`MissingExtra` when the ``postgres`` extra is not installed)."""
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
    """A psycopg 3 connection (autocommit) that is a :class:`~mem0_hygiene.stores.ledger.connection.LedgerConnection`:
    the PostgreSQL dialect, statements with ``?`` placeholders (passed to psycopg as its ``%s``; a ``%`` in the
    statement as ``%%``), ``BEGIN`` ... ``COMMIT`` transactions; reconnects once when the server dropped it
    between two statements."""

    dialect: Dialect = POSTGRES

    def __init__(self, url: str, *, readonly: bool = False) -> None:
        self.url = url
        self.readonly = readonly
        self._cache: dict[str, str] = {}
        self._txn_open = False
        self._raw = self._open()

    def _open(self) -> Any:
        psycopg = load_psycopg()
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
            out = self._cache[sql] = sql.replace("%", "%%").replace("?", "%s")
        return out

    @staticmethod
    def _params(params: Sequence[Any]) -> list[Any]:
        return [int(p) if isinstance(p, bool) else p for p in params]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        psycopg = load_psycopg()
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

    @contextlib.contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        """``with conn.transaction():`` the statements inside commit together, or none do."""
        self.execute("BEGIN")
        try:
            yield self
            self.execute("COMMIT")
        except BaseException:
            if self.in_transaction:
                self.execute("ROLLBACK")
            raise

    def error(self, exc: Any) -> LedgerError:
        """The ledger's error for a psycopg one (a :class:`TopicConflict` when it met the topic-key index)."""
        diag = getattr(exc, "diag", None)
        if getattr(diag, "constraint_name", None) == TOPIC_INDEX:
            return TopicConflict(self.explain(exc))
        return LedgerError(self.explain(exc))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        psycopg = load_psycopg()
        try:
            cur = self._raw.cursor()
            cur.executemany(self._sql(sql), [self._params(r) for r in rows])
            return cur
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def script(self, sql: str) -> None:
        """Run DDL as written (no placeholders, no rewriting)."""
        psycopg = load_psycopg()
        try:
            self._raw.execute(sql)
        except psycopg.Error as exc:
            raise LedgerError(self.explain(exc)) from None

    def close(self) -> None:
        self._raw.close()


_ONE_ROW = "VALUES (" + ",".join("?" * len(COLUMNS)) + ")"
"""The one ``VALUES`` group of the ledger's row inserts (see :meth:`PostgresLedger.write_rows`)."""
ARRAY_TYPES = {c.name: "integer" for c in MEMORY_COLUMNS if c.type == "INTEGER"}
"""The ``memories`` columns that are not text, with their type (for the arrays :meth:`PostgresLedger.write_rows`
sends)."""


class PostgresLedger(Ledger):
    """The ledger in a PostgreSQL database (one schema: the connection's ``search_path``). Thread-safe; one
    connection guarded by a lock, plus one for advisory locks while a replica holds one."""

    def __init__(self, path: str, *, readonly: bool = False) -> None:  # noqa: D107 - path is the URL
        self._setup(path, POSTGRES)
        self._lock_conn: PgConnection | None = None
        self._lock_guard = threading.RLock()  # advisory locks nest (prune inside a maintenance run)
        self._offset: timedelta | None = None
        self._synced = 0.0
        self._conn = PgConnection(path, readonly=readonly)
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
                for step in MIGRATIONS[target]:
                    if isinstance(step, str):
                        self.pg.script(step)
                    else:
                        step(conn, self)
                conn.execute(_SET_META, ("application_id", str(APPLICATION_ID)))
                conn.execute(_SET_META, ("schema_version", str(target)))

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
        arrays = ", ".join(f"?::{ARRAY_TYPES.get(c, 'text')}[]" for c in COLUMNS)
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
    def _replica_key(self) -> int:
        """The advisory-lock key of this ledger's replicas: one per schema (a database may hold several ledgers)."""
        schema = self._conn.execute("SELECT current_schema()").fetchone()[0]
        return advisory_key(f"replicas:{schema}")

    def announce_replica(self) -> None:
        """Hold, for as long as this ledger stays open, the lock every replica of it holds shared (on its main
        connection: a killed replica's lock goes with its connection), so that an operation that must run alone
        sees it (:meth:`replicas_open`). Never waits."""
        self._conn.execute("SELECT pg_try_advisory_lock_shared(?)", (self._replica_key(),))

    def replicas_open(self) -> bool:
        """Whether a replica (a drop-in Memory of another process, or of this one) has this ledger open now."""
        key = self._replica_key()
        with self._lock_guard:
            if self._lock_conn is None:
                self._lock_conn = PgConnection(self.path)
            conn = self._lock_conn
            alone = bool(conn.execute("SELECT pg_try_advisory_lock(?)", (key,)).fetchone()[0])
            if alone:
                conn.execute("SELECT pg_advisory_unlock(?)", (key,))
        return not alone

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
    def to_scratch(self) -> SqliteLedger:
        """An in-memory SQLite ledger holding this one's rows and journal (dry runs write to it)."""
        return self.copy_into(SqliteLedger(":memory:"))

    def copy_into(self, scratch: SqliteLedger) -> SqliteLedger:
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
                for table, (columns, _key) in SIDE_TABLES.items()
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
    def _fill(scratch: SqliteLedger, rows: Any, pending: Any, side: dict[str, Any] | None = None) -> None:
        with scratch._lock:
            scratch._conn.execute("PRAGMA foreign_keys = OFF")
            with scratch.transaction() as conn:
                conn.executemany(
                    "INSERT INTO memories (" + ", ".join(COLUMNS) + ") VALUES (" + ",".join("?" * len(COLUMNS)) + ")",
                    rows,
                )
                conn.executemany("INSERT INTO pending VALUES (?, ?, ?)", pending)
                for table, copied in (side or {}).items():
                    columns = SIDE_TABLES[table][0]
                    if copied:
                        conn.executemany(
                            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})",
                            copied,
                        )
            scratch._conn.execute("PRAGMA foreign_keys = ON")
