"""The sidecar ledger: one SQLite row per mem0 memory_id with provenance, confirmation, expiry,
supersession, invalidation, use and tombstone facts. Schema, migrations and queries live here.

Besides ``memories``, the ``pending`` table (schema version 3) journals the drop-in's operations that
span the ledger and mem0's stores while they are under way: a tombstoned memory whose point mem0 has not
deleted yet ("delete"), a memory whose replacement (or contradiction) mem0 is storing ("supersede",
"invalidate"). A process that dies midway leaves its entries behind, and the next one finishes or undoes
exactly those (see :mod:`mem0_hygiene.memory.recovery`).

Schema version 4 adds the ``confirmations`` log (every confirmation, not only the last; see
:mod:`mem0_hygiene.stores.ledger_ddl`), the unique index that keeps one live row per topic key and scope
(see :mod:`mem0_hygiene.stores.topic_keys`: every write here makes room for it by chaining, never by
deleting), and the ``consolidation`` and ``write_decisions`` tables, so they exist in both dialects.

Every connection turns on foreign keys, WAL and a busy timeout (built on
:func:`mem0_hygiene.stores.sqlite.connect`). Times are UTC ISO strings in one format (see
:func:`mem0_hygiene.timeutil.to_iso`), so they compare correctly as text.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from datetime import datetime, timedelta
from typing import Any

from ..errors import LedgerError, SupersedeError
from ..timeutil import parse_time, shift_time, system_clock, to_iso
from . import ledger_ddl as tables
from .backup_record import backup_status_for_paths, record_path_for
from .sqlite import connect as sqlite_connect
from .sqlite import transaction
from .states import live_sql, state_of
from .topic_keys import INDEX_SQL, RETRIES, TopicConflict, chain_duplicates, conflict_from, make_room

logger = logging.getLogger(__name__)

APPLICATION_ID = 0x4D304859  # "M0HY": marks a SQLite file as a mem0-hygiene ledger
SCHEMA_VERSION = 4

SOURCE_KINDS = ("user", "assistant", "tool", "system", "import", "unknown")

_SCHEMA_V1 = """
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
    superseded_by  TEXT REFERENCES memories(memory_id) ON DELETE CASCADE,
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
) WITHOUT ROWID;
CREATE INDEX memories_superseded_by ON memories(superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_expires_at ON memories(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_topic ON memories(topic_key) WHERE topic_key IS NOT NULL;
"""

# The live view: what reads may serve. A missed prune is harmless because of it.
_LIVE_VIEW = f"""
CREATE VIEW IF NOT EXISTS live_memories AS
SELECT * FROM memories
WHERE {live_sql(now="strftime('%Y-%m-%dT%H:%M:%f000+00:00', 'now')")};
"""

# v2: what the write-time guard found (credential kinds replaced, a standing-order label)
_SCHEMA_V2 = """
ALTER TABLE memories ADD COLUMN redacted TEXT;
ALTER TABLE memories ADD COLUMN flag TEXT;
"""


# v3: operations under way across the ledger and mem0's stores (see the module docstring). A tombstone is
# journaled as a pending delete by the statement that writes it (the trigger), so no path can forget to.
_PENDING_V3 = """
CREATE TABLE pending (
    memory_id TEXT NOT NULL,
    action    TEXT NOT NULL CHECK (action IN ('delete', 'supersede', 'invalidate')),
    since     TEXT NOT NULL,
    PRIMARY KEY (memory_id, action)
) WITHOUT ROWID;
CREATE TRIGGER pending_delete_on_tombstone AFTER UPDATE OF deleted_at ON memories
WHEN NEW.deleted_at IS NOT NULL
BEGIN INSERT OR IGNORE INTO pending VALUES (NEW.memory_id, 'delete', NEW.deleted_at); END;
"""

MigrationStep = str | Callable[[Any, "Ledger"], None]
"""A statement of a migration, or a function run with (connection, ledger) in the migration's transaction."""


def seed_and_chain(conn: Any, ledger: Ledger) -> None:
    """Migration 4's data step (both dialects): the confirmations log seeded from each row's last
    confirmation, then rows sharing a topic key and scope chained to the newest (before the unique index)."""
    conn.execute(tables.SEED_CONFIRMATIONS)
    chained = chain_duplicates(conn, to_iso(ledger.now()))
    ledger.chained_on_upgrade = chained
    if chained:
        note = (
            f"upgrading the ledger at {ledger.shown} to schema version 4 chained {chained} row(s) to a newer "
            "row of the same topic_key and scope (superseded, not deleted: one live row per key)"
        )
        ledger.migration_notes.append(note)
        if ledger.path != ":memory:":  # a scratch copy's upgrade changes nothing anyone keeps
            logger.warning("%s", note)


_V4: tuple[MigrationStep, ...] = (
    tables.CONFIRMATIONS_SQLITE,
    seed_and_chain,
    INDEX_SQL,
    tables.CONSOLIDATION_SQLITE,
    tables.CONSOLIDATION_INDEX,
    tables.WRITE_DECISIONS_SQLITE,
)

_MIGRATIONS: dict[int, str | tuple[MigrationStep, ...]] = {
    1: _SCHEMA_V1 + _LIVE_VIEW,
    2: _SCHEMA_V2,
    3: _PENDING_V3,
    4: _V4,
}


def migration_steps(migration: str | tuple[MigrationStep, ...]) -> list[MigrationStep]:
    """The steps of one migration: a script split into statements, or the steps as given."""
    if isinstance(migration, str):
        return list(_split_sql(migration))
    return list(migration)


PENDING_ACTIONS = ("delete", "supersede", "invalidate")

COLUMNS = (
    "memory_id",
    "user_id",
    "agent_id",
    "run_id",
    "source",
    "source_kind",
    "created_at",
    "confirmed_at",
    "expires_at",
    "superseded_by",
    "superseded_at",
    "invalid_at",
    "invalid_reason",
    "quarantined",
    "last_used_at",
    "use_count",
    "topic_key",
    "deleted_at",
    "adopted",
    "redacted",
    "flag",
)


@dataclass(frozen=True)
class LedgerRow:
    """One memory's ledger facts.

    Fields:
        memory_id: mem0's id for the memory.
        user_id, agent_id, run_id: the scope the memory was stored in.
        source: free text saying where it came from ("chat 2026-08-08", "tool:web_fetch https://...").
        source_kind: one of user, assistant, tool, system, import, unknown.
        created_at, confirmed_at, expires_at: UTC ISO strings (expires_at None = drifts, review instead).
        superseded_by, superseded_at: the replacement memory and when it replaced this one.
        invalid_at, invalid_reason: when and why it was declared untrue (soft delete).
        quarantined: from tool output or web content; not served until confirmed.
        last_used_at, use_count: read bookkeeping.
        topic_key: optional identity key (same key in the same scope = same fact).
        deleted_at: tombstone for memories deleted through the wrapper.
        adopted: the row was created for a memory written without the wrapper.
        redacted: the kinds of credential the write guard replaced in its text (comma-separated), or None.
        flag: the standing-order label the write guard gave its text ("imperative_order", ...), or None.
    """

    memory_id: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    source: str | None = None
    source_kind: str = "unknown"
    created_at: str = ""
    confirmed_at: str | None = None
    expires_at: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    invalid_at: str | None = None
    invalid_reason: str | None = None
    quarantined: bool = False
    last_used_at: str | None = None
    use_count: int = 0
    topic_key: str | None = None
    deleted_at: str | None = None
    adopted: bool = False
    redacted: str | None = None
    flag: str | None = None

    @classmethod
    def of(cls, **fields: Any) -> LedgerRow:
        """``LedgerRow(**fields)`` without the frozen dataclass's one ``object.__setattr__`` per field (a row per
        add is built on the hot path); the fields are the same, unnamed ones take their defaults."""
        values = {**_ROW_DEFAULTS, **fields}
        if len(values) != len(_ROW_DEFAULTS):
            raise TypeError(f"LedgerRow has no field {sorted(fields.keys() - _ROW_DEFAULTS.keys())[0]!r}")
        if values["memory_id"] is MISSING:
            raise TypeError("LedgerRow needs a memory_id")
        return _row_of(values)

    def with_id(self, memory_id: str) -> LedgerRow:
        """This row's facts under another memory id (``dataclasses.replace`` without its per-field checks)."""
        return _row_of({**self.__dict__, "memory_id": memory_id})

    def state(self, now: datetime) -> str:
        """deleted > superseded > invalidated > quarantined > expired > live (see :mod:`.states`)."""
        return state_of(self, to_iso(now))

    def as_tuple(self) -> tuple[Any, ...]:
        return _ROW_VALUES(self)

    @property
    def scope(self) -> dict[str, str]:
        return {k: v for k, v in (("user_id", self.user_id), ("agent_id", self.agent_id), ("run_id", self.run_id)) if v}


_ROW_VALUES = operator.attrgetter(*COLUMNS)
_DELETED_AT = COLUMNS.index("deleted_at")
_ROW_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(LedgerRow)}


def _row_of(values: dict[str, Any]) -> LedgerRow:
    """A row holding ``values`` (every field, by name) as they are, with no per-field ``object.__setattr__``."""
    row = object.__new__(LedgerRow)
    object.__setattr__(row, "__dict__", values)
    return row


def row_from(r: sqlite3.Row | tuple[Any, ...]) -> LedgerRow:
    """A ledger row from its values in :data:`COLUMNS` order."""
    values = dict(zip(COLUMNS, tuple(r)))
    values["quarantined"] = bool(values["quarantined"])
    values["adopted"] = bool(values["adopted"])
    return LedgerRow(**values)


_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM memories"
_INSERT = f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})"
# Conflicts on the id only: a row is never replaced by deleting it (that would cascade to the rows it superseded
# and its confirmations), and a topic key's conflict is an error, never a row silently dropped.
_INSERT_SQL = {
    "INSERT": _INSERT,
    "INSERT OR IGNORE": _INSERT + " ON CONFLICT (memory_id) DO NOTHING",
    "INSERT OR REPLACE": _INSERT
    + " ON CONFLICT (memory_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "memory_id"),
}


_BIRTH_COLUMNS = (
    "user_id",
    "agent_id",
    "run_id",
    "source",
    "source_kind",
    "created_at",
    "expires_at",
    "topic_key",
    "redacted",
    "flag",
    "adopted",
)
_UPSERT_BIRTH = (
    _INSERT
    + " ON CONFLICT (memory_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _BIRTH_COLUMNS)
    + ", quarantined = CASE WHEN memories.quarantined = 0 THEN 0 ELSE excluded.quarantined END"
)


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection with foreign keys on, a busy timeout and (for files) WAL. Autocommit mode."""
    if readonly and path == ":memory:":
        raise LedgerError("an in-memory ledger cannot be opened read-only from elsewhere")
    conn = sqlite_connect(path, readonly=readonly, create=not readonly, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    if not readonly and path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: no fsync per commit, still safe on power loss
        conn.execute("PRAGMA wal_autocheckpoint = 4000")  # fewer, larger checkpoints: cheaper commits on add
    return conn


# ------------------------------------------------------------------------------------- identity and damage

SQLITE_MAGIC = b"SQLite format 3\x00"
_DAMAGE_WORDS = ("malformed", "disk I/O error", "database or disk is full", "out of memory")


@dataclass(frozen=True)
class FileIdentity:
    """What a file named as the ledger is, read from its bytes without writing anything.

    Fields:
        kind: "missing", "empty" (no file content or no schema yet: it may become the ledger),
            "not_sqlite", "ledger" (carries :data:`APPLICATION_ID`) or "foreign" (another SQLite database).
        version: the ledger's schema version (``user_version``), for "ledger".
        tables: the tables of a foreign database, when they could be read without writing.
    """

    kind: str
    version: int = 0
    tables: tuple[str, ...] = ()


def _probe(path: str) -> FileIdentity:
    """Ask SQLite itself (read-only), for a database whose header may be behind its ``-wal`` file."""
    with contextlib.closing(sqlite_connect(path, readonly=True)) as conn:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = tuple(sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")))
    if app_id == APPLICATION_ID:
        return FileIdentity("ledger", version=version)
    return FileIdentity("foreign", tables=tables) if tables else FileIdentity("empty")


def identify(path: str) -> FileIdentity:
    """What the file at ``path`` is, told from its 100-byte SQLite header (application id, schema
    version, schema cookie, journal mode), so nothing is written to it, nor a sidecar created beside it.
    Only a WAL database with a non-empty ``-wal`` file (its header may lag behind: a ledger created just
    before a crash) is asked through a read-only SQLite connection. Raises ``sqlite3.DatabaseError`` when
    SQLite cannot read such a file."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except FileNotFoundError:
        return FileIdentity("missing")
    if not header:
        return FileIdentity("empty")
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return FileIdentity("not_sqlite")
    app_id = int.from_bytes(header[68:72], "big")
    version = int.from_bytes(header[60:64], "big", signed=True)
    wal_mode = header[18] == 2
    wal = path + "-wal"
    if app_id == APPLICATION_ID:
        return FileIdentity("ledger", version=version)
    if wal_mode and os.path.isfile(wal) and os.path.getsize(wal) > 0:
        return _probe(path)
    if int.from_bytes(header[40:44], "big") == 0:  # schema cookie: no table was ever created
        return FileIdentity("empty")
    tables: tuple[str, ...] = ()
    if not wal_mode:  # a read-only open of a rollback-journal database writes nothing (WAL: it makes sidecars)
        with contextlib.suppress(sqlite3.DatabaseError):
            tables = _probe(path).tables
    return FileIdentity("foreign", tables=tables)


def newer_schema_message(path: str, version: int) -> str:
    """The refusal of a ledger written by a newer mem0-hygiene."""
    return (
        f"the ledger at {path} has schema version {version}, newer than this mem0-hygiene understands "
        f"({SCHEMA_VERSION}); upgrade mem0-hygiene"
    )


def restore_hint(path: str) -> str:
    """How to put the ledger at ``path`` back: the newest complete backup set in the backup record
    beside it, through ``mem0-hygiene restore`` (all stores together), or how to make one next time."""
    record = record_path_for(path, None)
    try:
        status = backup_status_for_paths(path, None)
    except Exception:  # the hint must never hide the error it is attached to
        status = None
    if status is not None and status.last is not None:
        return (
            f"stop the app and put the last verified backup back, all stores together: mem0-hygiene restore "
            f"{status.last.path} (with the app's --config; taken {status.last.created_at}, listed in {record})"
        )
    return (
        f"stop the app and put a backup set back with mem0-hygiene restore SET (with the app's --config); "
        f"{record} lists no complete backup, so if there is none, move the file away to start an empty ledger "
        "(sources, supersessions and tombstones are lost) and run mem0-hygiene backup from then on"
    )


def damaged_message(path: str, problem: str) -> str:
    """The error for a ledger SQLite reports as damaged: which file, what SQLite said, how to restore it."""
    return f"the ledger {path} is damaged ({problem}), so its rows cannot be read; {restore_hint(path)}"


def not_sqlite_message(path: str) -> str:
    """The error for a ledger path holding something that is not SQLite (a damaged ledger, or another file)."""
    return (
        f"{path} is not a SQLite database, so it cannot be the ledger. If it was the ledger, it is damaged "
        f"(truncated or overwritten): {restore_hint(path)}. If it is another file, set hygiene.ledger_path "
        "to a new file"
    )


def refuse_unless_ledger(path: str) -> FileIdentity:
    """Refuse (:class:`LedgerError`) a file that is not a mem0-hygiene ledger, or is one with a newer schema,
    before anything opens it for writing; returns what it is ("missing" and "empty" may become one)."""
    try:
        found = identify(path)
    except sqlite3.DatabaseError as exc:
        raise LedgerError(Ledger._explain_for(path, exc)) from None
    except IsADirectoryError:
        raise LedgerError(f"{path} is a folder, not a ledger file; set hygiene.ledger_path to a file") from None
    except OSError as exc:
        raise LedgerError(
            f"cannot read the ledger at {path} ({exc.strerror or exc}); make it readable or set "
            "hygiene.ledger_path to another file"
        ) from None
    if found.kind == "not_sqlite":
        raise LedgerError(not_sqlite_message(path))
    if found.kind == "foreign":
        held = f" (it holds {', '.join(found.tables[:5])})" if found.tables else ""
        raise LedgerError(
            f"{path} is a SQLite database but not a mem0-hygiene ledger{held}; point "
            "hygiene.ledger_path at a new file (nothing was written to this one)"
        )
    if found.kind == "ledger" and found.version > SCHEMA_VERSION:
        raise LedgerError(newer_schema_message(path, found.version))
    return found


class Ledger:
    """The ledger file and its queries. Thread-safe; one connection guarded by a lock.

    ``Ledger("postgresql://...")`` opens the ledger on PostgreSQL instead
    (:class:`~mem0_hygiene.stores.ledger_postgres.PostgresLedger`: the same API and queries)."""

    FIND_SQL = "instr"
    """The SQL function giving a substring's position (1-based, 0 when absent): ``instr`` in SQLite."""

    def __new__(cls, path: str, *args: Any, **kwargs: Any) -> Ledger:
        if cls is Ledger and _is_url(path):
            from .ledger_postgres import PostgresLedger

            return super().__new__(PostgresLedger)
        return super().__new__(cls)

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.RLock()
        self.migration_notes: list[str] = []  # what opening it changed besides the schema (said in the log too)
        self.chained_on_upgrade = 0  # rows the upgrade to version 4 chained to a newer row of their topic key
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
        if path != ":memory:":
            refuse_unless_ledger(path)  # read only: nothing is written to a file that is not ours
        try:
            self._conn = connect(path)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self._explain(exc)) from None

    def _explain(self, exc: sqlite3.DatabaseError) -> str:
        return self._explain_for(self.path, exc)

    @staticmethod
    def _explain_for(path: str, exc: sqlite3.DatabaseError) -> str:
        text = str(exc)
        if "not a database" in text or "file is encrypted" in text:
            return not_sqlite_message(path)
        if any(word in text for word in _DAMAGE_WORDS):
            return damaged_message(path, text)
        if "readonly" in text or "unable to open" in text:
            return (
                f"cannot write the ledger at {path} ({text}); make the folder writable or set "
                f"hygiene.ledger_path to a writable place"
            )
        return f"the ledger at {path} failed: {text}"

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
            with transaction(conn):
                for step in migration_steps(_MIGRATIONS[target]):
                    if isinstance(step, str):
                        conn.execute(step)
                    else:
                        step(conn, self)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {target}")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @property
    def shown(self) -> str:
        """The ledger's location as messages show it (a database URL without its credentials)."""
        return self.path

    @property
    def is_server(self) -> bool:
        """A ledger on a database server (shared by replicas), not a SQLite file."""
        return False

    def now(self) -> datetime:
        """The ledger's clock: this host's for SQLite; the database server's for PostgreSQL."""
        return system_clock()

    @contextlib.contextmanager
    def exclusive(self, purpose: str, *, wait: bool = True) -> Iterator[bool]:
        """``with ledger.exclusive("prune") as held:`` one holder at a time across every process sharing the
        ledger (PostgreSQL: an advisory lock). A SQLite ledger has one app process: always held."""
        yield True

    def link_guard(self, conn: Any) -> None:
        """Inside a transaction, before a supersede link or a write that may chain rows of one topic key:
        serialise them across replicas (SQLite's ``BEGIN IMMEDIATE`` already does)."""

    def defer_links(self, conn: Any) -> None:
        """Inside a transaction: check foreign keys at its commit, so a row may point at one written later in
        it (a topic key's holder chained to the row that is about to be written)."""
        conn.execute("PRAGMA defer_foreign_keys = ON")

    def has_table(self, name: str) -> bool:
        """Whether the ledger holds table ``name`` (a read-only opening of an older ledger may lack one)."""
        return bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))

    # -- low level --------------------------------------------------------------------------
    def _write(self, sql: str, params: Sequence[Any] | Iterable[Sequence[Any]], many: bool = False) -> int:
        """One write. A single statement commits on its own (autocommit); several rows go in one
        transaction."""
        with self._lock:
            try:
                if many:
                    rows = list(params)
                    if len(rows) == 1:
                        return self._conn.execute(sql, rows[0]).rowcount
                    with transaction(self._conn):
                        return self._conn.executemany(sql, rows).rowcount
                return self._conn.execute(sql, params).rowcount  # type: ignore[arg-type]
            except sqlite3.DatabaseError as exc:
                raise LedgerError(self._explain(exc)) from None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """``with ledger.locked():`` this ledger's connection waits meanwhile (e.g. while another
        connection to the same file rewrites it)."""
        with self._lock:
            yield

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``with ledger.transaction() as conn:`` runs several writes atomically."""
        with self._lock:
            try:
                with transaction(self._conn) as conn:
                    yield conn
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.IntegrityError) and conflict_from(str(exc)):
                    raise TopicConflict(self._explain(exc)) from None
                raise LedgerError(self._explain(exc)) from None

    def claiming(self, body: Callable[[Any], Any]) -> Any:
        """Run ``body(conn)`` in a transaction that may chain rows of one topic key (links serialised across
        replicas, foreign keys checked at commit), again when it met the unique topic-key index because
        another writer raced past its check (:class:`~mem0_hygiene.stores.topic_keys.TopicConflict`)."""
        for attempt in range(RETRIES + 1):
            try:
                with self.transaction() as conn:
                    self.link_guard(conn)
                    self.defer_links(conn)
                    return body(conn)
            except TopicConflict:
                if attempt == RETRIES:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read; a damaged file raises :class:`LedgerError` saying so and how to restore it."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise LedgerError(self._explain(exc)) from None

    # -- reads ------------------------------------------------------------------------------
    def get(self, memory_id: str) -> LedgerRow | None:
        rows = self.query(_SELECT + " WHERE memory_id = ?", (memory_id,))
        return row_from(rows[0]) if rows else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, LedgerRow]:
        out: dict[str, LedgerRow] = {}
        ids = list(memory_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.query(_SELECT + f" WHERE memory_id IN ({marks})", chunk):
                row = row_from(r)
                out[row.memory_id] = row
        return out

    def not_live_among(self, memory_ids: Sequence[str], now: datetime) -> set[str]:
        """Those of these ids whose row says reads must not serve them at ``now`` (any state but live, a
        tombstone included); ids with no row are not in it (the caller decides those)."""
        out: set[str] = set()
        ids = list(memory_ids)
        at = to_iso(now)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0]
                for r in self.query(
                    f"SELECT memory_id FROM memories WHERE memory_id IN ({marks}) AND NOT ({live_sql()})", [*chunk, at]
                )
            )
        return out

    def iter_rows(self, where: str = "", params: Sequence[Any] = (), order: str = "") -> Iterator[LedgerRow]:
        sql = _SELECT + (f" WHERE {where}" if where else "") + (f" ORDER BY {order}" if order else "")
        for r in self.query(sql, params):
            yield row_from(r)

    def predecessors(self, memory_id: str) -> list[str]:
        """Every memory that `memory_id` superseded, directly or through a chain (newest first)."""
        rows = self.query(
            """WITH RECURSIVE chain(id, depth) AS (
                   SELECT memory_id, 1 FROM memories WHERE superseded_by = ?
                   UNION
                   SELECT m.memory_id, c.depth + 1 FROM memories m JOIN chain c ON m.superseded_by = c.id
                   WHERE c.depth < 10000)
               SELECT id FROM chain ORDER BY depth""",
            (memory_id,),
        )
        return [r[0] for r in rows]

    def successors(self, memory_id: str) -> list[str]:
        """The chain of replacements after `memory_id`, oldest first (stops at a cycle)."""
        out: list[str] = []
        seen = {memory_id}
        current = self.get(memory_id)
        while current is not None and current.superseded_by:
            nxt = current.superseded_by
            if nxt in seen:
                break
            out.append(nxt)
            seen.add(nxt)
            current = self.get(nxt)
        return out

    def scope_ids(self, scope: dict[str, str]) -> list[str]:
        where = " AND ".join(f"{k} = ?" for k in scope)
        return [
            r[0]
            for r in self.query(
                f"SELECT memory_id FROM memories WHERE {where} AND deleted_at IS NULL", list(scope.values())
            )
        ]

    # -- writes -----------------------------------------------------------------------------
    def insert(
        self, rows: Sequence[LedgerRow], *, ignore_existing: bool = False, new: bool = False, keep_state: bool = False
    ) -> int:
        """Write rows: replacing rows with the same id, keeping them (``ignore_existing``), or, for ids that
        cannot exist yet (``new``: fresh ids from mem0's add), a plain INSERT. ``keep_state``: a row that
        exists already (adopted meanwhile, maybe by another replica, and then confirmed, superseded,
        invalidated, deleted or used) gets only the birth facts; its state and uses are kept."""
        if not rows:
            return 0
        mode = "birth" if keep_state else ("new" if new else ("ignore" if ignore_existing else "replace"))
        sql = _UPSERT_BIRTH if keep_state else _INSERT_SQL[_VERBS[mode]]
        keyed = [r for r in rows if r.topic_key is not None]
        if not keyed:  # the common case: no key to make room for, one batched statement
            return self.write_rows(sql, [r.as_tuple() for r in rows])
        plain = [r.as_tuple() for r in rows if r.topic_key is None]

        def write(conn: Any) -> int:
            count = conn.executemany(sql, plain).rowcount if plain else 0
            for row in keyed:  # one at a time, in order: two rows of one key in the batch chain too
                count += _write_keyed(conn, sql, row, mode)
            return int(count)

        return int(self.claiming(write))

    def write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Write ``rows`` (tuples of :data:`COLUMNS`) with ``sql``, an ``INSERT INTO memories`` of one ``VALUES``
        group, in one transaction; returns the rows written."""
        return self._write(sql, rows, many=True)

    def confirm(self, memory_id: str, when: datetime, via: str = "confirm") -> None:
        """Record a confirmation at ``when`` (``via``: "confirm", or "update" for a new text): the row's
        ``confirmed_at`` and a line of the confirmations log, in one transaction; releases it from quarantine
        (when it then holds its topic key, the other row holding it is chained to this one). An unknown id
        changes nothing."""
        stamp = to_iso(when)

        def write(conn: Any) -> None:
            found = conn.execute(_SELECT + " WHERE memory_id = ?", (memory_id,)).fetchone()
            if found is not None:
                self.confirm_in(conn, row_from(found), stamp, via)

        self.claiming(write)

    def confirm_in(self, conn: Any, row: LedgerRow, stamp: str, via: str = "confirm", *, where: str = "") -> int:
        """Inside a transaction: confirm ``row`` at ``stamp`` (only while ``where``, a SQL condition, also holds):
        when this releases it from quarantine and so makes it hold its topic key, the row holding that key is
        chained to it first; then ``confirmed_at``, ``quarantined = 0`` and a line of the confirmations log.
        Returns how many rows changed (0 or 1)."""
        if row.quarantined:
            self.link_guard(conn)
            make_room(conn, replace(row, quarantined=False), stamp, wins=True)
        changed = int(
            conn.execute(
                "UPDATE memories SET confirmed_at = ?, quarantined = 0 WHERE memory_id = ?"
                + (f" AND {where}" if where else ""),
                (stamp, row.memory_id),
            ).rowcount
        )
        if changed:
            conn.execute(
                "INSERT OR IGNORE INTO confirmations (memory_id, confirmed_at, via) VALUES (?, ?, ?)",
                (row.memory_id, stamp, via),
            )
        return changed

    def confirmations(self, memory_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """memory id -> (confirmed_at, via) of every confirmation of it, oldest first (ids never confirmed are
        left out); {} for a ledger older than the log (opened read-only)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids or not self.has_table("confirmations"):
            return {}
        out: dict[str, list[tuple[str, str]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            sql = (
                f"SELECT memory_id, confirmed_at, via FROM confirmations WHERE memory_id IN "
                f"({','.join('?' * len(chunk))}) ORDER BY memory_id, confirmed_at"
            )
            for mid, at, via in self.query(sql, chunk):
                out.setdefault(str(mid), []).append((str(at), str(via)))
        return out

    def mark_guarded(
        self, memory_id: str, redacted: Sequence[str], flag: str | None, *, quarantine: bool = False
    ) -> None:
        """Record what the write guard found in a memory's new text (kinds of credential replaced, a
        standing-order label; ``quarantine``: not served until confirmed). Nothing found: nothing written."""
        if not redacted and not flag:
            return
        self._write(
            "UPDATE memories SET redacted = ?, flag = ?, "
            "quarantined = CASE WHEN ? = 1 THEN 1 ELSE quarantined END WHERE memory_id = ?",
            (",".join(redacted) or None, flag, int(quarantine), memory_id),
        )

    def set_expiry(self, memory_id: str, expires_at: datetime | None) -> None:
        self._write(
            "UPDATE memories SET expires_at = ? WHERE memory_id = ?",
            (to_iso(expires_at) if expires_at else None, memory_id),
        )

    def link_supersede(self, old_id: str, new_id: str, when: datetime, *, follow: bool = False) -> None:
        """Point old -> new, refusing self links and cycles (checked inside the transaction). A memory that is
        already superseded by another is refused (:class:`SupersedeError`), or with ``follow`` the live end of
        its chain is superseded instead (a topic-key upsert that lost a race to another writer)."""
        with self.transaction() as conn:
            self.link_guard(conn)
            _link(conn, _head(conn, old_id, new_id) if follow else old_id, new_id, to_iso(when))

    def add_linked(
        self,
        row: LedgerRow,
        old_id: str,
        when: datetime,
        action: str = "supersede",
        reason: str = "",
        *,
        follow: bool = False,
    ) -> None:
        """In one transaction: write the row of a memory just stored (replacing a row a reader may have
        adopted meanwhile), mark ``old_id`` superseded by it (``action`` "supersede", cycles refused) or
        invalidated (``action`` "invalidate", with ``reason``), and close the operation's ``pending``
        entry. Readers see the old memory live and the new one unknown, or the old one replaced and the
        new one recorded: never both live. ``follow``: as in :meth:`link_supersede`."""
        stamp = to_iso(when)

        def write(conn: Any) -> None:
            # the old memory first: it usually holds the topic key the new row takes over
            if action == "supersede":
                _link(conn, _head(conn, old_id, row.memory_id) if follow else old_id, row.memory_id, stamp)
            else:
                conn.execute(
                    "UPDATE memories SET invalid_at = ?, invalid_reason = ? WHERE memory_id = ?",
                    (stamp, reason, old_id),
                )
            conn.execute(_INSERT_SQL["INSERT OR REPLACE"], make_room(conn, row, stamp).as_tuple())
            conn.execute("DELETE FROM pending WHERE memory_id = ? AND action = ?", (old_id, action))

        self.claiming(write)

    def invalidate(self, memory_id: str, reason: str, when: datetime) -> None:
        self._write(
            "UPDATE memories SET invalid_at = ?, invalid_reason = ? WHERE memory_id = ?",
            (to_iso(when), reason, memory_id),
        )

    def tombstone(self, memory_ids: Sequence[str], when: datetime) -> None:
        """Tombstone these memories; the same statement journals each as a pending delete (their points are
        deleted through mem0 next, and :meth:`settle` closes the entries once they are gone)."""
        stamp = to_iso(when)
        self._write(
            "UPDATE memories SET deleted_at = COALESCE(deleted_at, ?) WHERE memory_id = ?",
            [(stamp, mid) for mid in memory_ids],
            many=True,
        )

    def deletion_chain(self, memory_id: str) -> list[str]:
        """What deleting ``memory_id`` takes: everything it superseded, directly or through a chain (the oldest
        first), then the memory itself; each id once."""
        return list(dict.fromkeys([*reversed(self.predecessors(memory_id)), memory_id]))

    def tombstone_live_chain(self, memory_id: str, when: datetime) -> list[str] | None:
        """A delete's first step: when ``memory_id`` has a row that is not deleted yet, tombstone its
        :meth:`deletion_chain` in one write (each journaled as a pending delete by the trigger) and return
        the chain. None, writing nothing, when the ledger has no such row (unknown, or deleted already).

        On SQLite the chain is read first and written by its ids (one recursive ``UPDATE`` costs several
        times the two statements)."""
        chain = self.deletion_chain(memory_id)
        marks = ",".join("?" * len(chain))
        written = self._write(
            f"UPDATE memories SET deleted_at = COALESCE(deleted_at, ?) WHERE memory_id IN ({marks}) "
            "AND EXISTS (SELECT 1 FROM memories WHERE memory_id = ? AND deleted_at IS NULL)",
            (to_iso(when), *chain, memory_id),
        )
        return chain if written else None

    def insert_tombstoned(self, rows: Sequence[LedgerRow], when: datetime) -> None:
        """Write rows of memories about to be deleted through mem0, tombstoned and journaled as pending
        deletes, in one transaction."""
        stamp = to_iso(when)
        at = _DELETED_AT  # each row's values with the tombstone's time in place (no copy of the row itself)
        values = [(*v[:at], v[at] or stamp, *v[at + 1 :]) for v in map(_ROW_VALUES, rows)]
        with self._lock:
            try:
                with transaction(self._conn) as conn:
                    conn.executemany(_INSERT_SQL["INSERT OR REPLACE"], values)
                    conn.executemany(
                        "INSERT OR IGNORE INTO pending VALUES (?, 'delete', ?)", [(v[0], v[at]) for v in values]
                    )
            except sqlite3.DatabaseError as exc:
                raise LedgerError(self._explain(exc)) from None

    def untombstone(self, memory_ids: Sequence[str]) -> None:
        """Take back the tombstones of memories whose delete through mem0 failed (their points are still
        there and served) and close their journal entries, in one transaction."""
        ids = list(dict.fromkeys(memory_ids))

        def write(conn: Any) -> None:
            for mid in ids:
                found = conn.execute(_SELECT + " WHERE memory_id = ?", (mid,)).fetchone()
                if found is not None and found[COLUMNS.index("topic_key")] is not None:
                    revived = replace(row_from(found), deleted_at=None)
                    placed = make_room(conn, revived, None)
                    if placed is not revived:  # a newer row took the key meanwhile: this one is chained to it
                        conn.execute(_MARK_SUPERSEDED, (placed.superseded_by, placed.superseded_at, mid))
                conn.execute("UPDATE memories SET deleted_at = NULL WHERE memory_id = ?", (mid,))
                conn.execute("DELETE FROM pending WHERE action = 'delete' AND memory_id = ?", (mid,))

        self.claiming(write)

    def tombstone_all(self, when: datetime) -> None:
        """Tombstone every row, each journaled as a pending delete (``reset``)."""
        self._write("UPDATE memories SET deleted_at = COALESCE(deleted_at, ?)", (to_iso(when),))

    # -- operations under way (the pending journal) ---------------------------------------------
    def begin(self, memory_id: str, action: str, when: datetime) -> None:
        """Journal an operation on ``memory_id`` before its first step outside the ledger (a supersede or
        invalidation whose new memory mem0 is about to store)."""
        self._write("INSERT OR REPLACE INTO pending VALUES (?, ?, ?)", (memory_id, action, to_iso(when)))

    def _has_journal(self) -> bool:
        """Whether this ledger has the ``pending`` table, asked once per connection (only a read-only opening of
        an older ledger lacks it, and nothing adds it while it stays open read-only)."""
        known = getattr(self, "_journal", None)
        if known is None:
            known = bool(self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pending'"))
            if known:
                self._journal = True  # a missing table is asked again: a writable opening may migrate later
        return known

    def pending(self, action: str | None = None) -> list[tuple[str, str, str]]:
        """(memory_id, action, since) of every operation still under way (or left behind by a process that
        died), oldest first; only ``action``'s when given. Empty for a ledger older than the journal."""
        where, params = ("WHERE action = ?", (action,)) if action else ("", ())
        if not self._has_journal():
            return []  # a read-only ledger older than the journal
        rows = self.query(f"SELECT memory_id, action, since FROM pending {where} ORDER BY since, memory_id", params)
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def settle(self, memory_ids: Sequence[str], action: str) -> None:
        """Close the journal entries of operations that are done (or were undone)."""
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            self._write(
                f"DELETE FROM pending WHERE action = ? AND memory_id IN ({','.join('?' * len(chunk))})",
                [action, *chunk],
            )

    def scrub_fields(
        self,
        memory_ids: Sequence[str],
        texts: Sequence[str],
        columns: Sequence[str] = ("source", "invalid_reason", "topic_key"),
    ) -> int:
        """Blank every text field of these memories' rows that holds one of ``texts`` (one transaction); returns
        the fields blanked. (``forget --scrub`` also vacuums a SQLite file; PostgreSQL vacuums the table.)"""
        ids = list(dict.fromkeys(memory_ids))
        if not ids or not texts:
            return 0
        blanked = 0
        marks = ",".join("?" * len(ids))
        with self.transaction() as conn:
            for column in columns:
                for text in texts:
                    blanked += conn.execute(
                        f"UPDATE memories SET {column} = NULL WHERE memory_id IN ({marks}) "
                        f"AND {self.FIND_SQL}({column}, ?) > 0",
                        [*ids, text],
                    ).rowcount
        return blanked

    def record_uses(self, uses: dict[str, tuple[int, datetime]]) -> None:
        if not uses:
            return
        self._write(
            "UPDATE memories SET use_count = use_count + ?, "
            "last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END "
            "WHERE memory_id = ?",
            [(count, to_iso(when), to_iso(when), mid) for mid, (count, when) in uses.items()],
            many=True,
        )

    def purge_tombstones(self, older_than: datetime) -> int:
        """Remove tombstoned rows deleted before `older_than` (their memories are gone from mem0)."""
        return self._write(
            "DELETE FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? "
            "AND NOT EXISTS (SELECT 1 FROM memories s WHERE s.superseded_by = memories.memory_id "
            "AND s.deleted_at IS NULL)",
            (to_iso(older_than),),
        )

    # -- maintenance queries ----------------------------------------------------------------
    def review_candidates(
        self, now: datetime, older_than: timedelta, limit: int, scope: dict[str, str] | None = None
    ) -> list[LedgerRow]:
        cutoff = to_iso(shift_time(now, -older_than, what="older_than"))
        where = live_sql(expiry=False) + " AND expires_at IS NULL AND COALESCE(confirmed_at, created_at) < ?"
        params: list[Any] = [cutoff]
        for key, value in (scope or {}).items():
            where += f" AND {key} = ?"
            params.append(value)
        sql = _SELECT + f" WHERE {where} ORDER BY COALESCE(confirmed_at, created_at) LIMIT ?"
        return [row_from(r) for r in self.query(sql, [*params, limit])]

    def prune_candidates(
        self, now: datetime, retain: timedelta, limit: int | None = None
    ) -> list[tuple[LedgerRow, str]]:
        """Rows prune should delete: expired now, or superseded/invalidated before now - retain.

        All of them oldest first; with ``limit``, at most that many in key order, so the scan stops at
        the first ``limit`` matches (the cheap query auto_prune runs inside the app's calls)."""
        stamp, cutoff = to_iso(now), to_iso(shift_time(now, -retain, what="retain_superseded"))
        out: list[tuple[LedgerRow, str]] = []
        where = (
            "deleted_at IS NULL AND ((expires_at IS NOT NULL AND expires_at <= ?) "
            "OR (superseded_at IS NOT NULL AND superseded_at <= ?) "
            "OR (invalid_at IS NOT NULL AND invalid_at <= ?))"
        )
        params: tuple[Any, ...] = (stamp, cutoff, cutoff)
        if limit is None:
            rows: Iterable[LedgerRow] = self.iter_rows(where, params, order="created_at")
        else:
            rows = [
                row_from(r)
                for r in self.query(_SELECT + f" WHERE {where} ORDER BY memory_id LIMIT ?", (*params, int(limit)))
            ]
        for row in rows:
            if row.expires_at and row.expires_at <= stamp:
                reason = "expired"
            elif row.superseded_by:
                reason = "superseded"
            else:
                reason = "invalidated"
            out.append((row, reason))
        return out

    def unused_candidates(self, now: datetime, older_than: timedelta) -> list[LedgerRow]:
        """Live memories neither used nor confirmed since ``now - older_than``, least recently touched
        first. A never-used memory counts from its creation; a quarantined one is not live, so it is
        left to review."""
        cutoff, stamp = to_iso(shift_time(now, -older_than, what="unused")), to_iso(now)
        where = live_sql() + " AND COALESCE(last_used_at, created_at) < ? AND COALESCE(confirmed_at, created_at) < ?"
        order = "MAX(COALESCE(last_used_at, created_at), COALESCE(confirmed_at, created_at)), memory_id"
        return list(self.iter_rows(where, (stamp, cutoff, cutoff), order=order))

    def purgeable_tombstones(self, older_than: datetime, limit: int | None = None) -> list[str]:
        """Ids :meth:`purge_rows` may remove, oldest tombstone first (at most ``limit``): tombstoned
        before ``older_than`` and not pointed at by a row that is still alive (removing a row cascades
        to the rows it superseded)."""
        rows = self.query(
            "SELECT memory_id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? "
            "AND NOT EXISTS (SELECT 1 FROM memories s WHERE s.superseded_by = memories.memory_id "
            "AND s.deleted_at IS NULL) ORDER BY deleted_at, memory_id LIMIT ?",
            (to_iso(older_than), 2**62 if limit is None else int(limit)),
        )
        return [r[0] for r in rows]

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
                    with transaction(self._conn):
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
                raise LedgerError(self._explain(exc)) from None

    @classmethod
    def open_readonly(cls, path: str) -> Ledger:
        """The ledger at ``path`` opened read-only (no migration, nothing created): for reports that must
        work while the app has the store open. Raises :class:`LedgerError` when it is missing or not a
        ledger."""
        if _is_url(path):
            from .ledger_postgres import open_readonly

            return open_readonly(path)
        if path == ":memory:" or not os.path.isfile(path):
            raise LedgerError(f"no ledger at {path}: the drop-in Memory creates it on first start")
        refuse_unless_ledger(path)
        self = object.__new__(cls)
        self.path = path
        self._lock = threading.RLock()
        self.migration_notes, self.chained_on_upgrade = [], 0
        try:
            self._conn = connect(path, readonly=True)
            app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(self._explain(exc)) from None
        if app_id != APPLICATION_ID:
            self._conn.close()
            raise LedgerError(f"{path} is not a mem0-hygiene ledger; check hygiene.ledger_path")
        if version > SCHEMA_VERSION:
            self._conn.close()
            raise LedgerError(newer_schema_message(path, version))
        return self

    @classmethod
    def scratch_copy(cls, path: str) -> Ledger:
        """An in-memory copy of the ledger at ``path`` (an empty ledger when there is none yet): the same rows
        and schema, and every write to it goes nowhere. Dry runs and reads from outside the app work on one, so
        the real file is only ever read (read-only connection, copied with SQLite's backup API). Raises
        :class:`LedgerError` for a file that is not a ledger or has a newer schema, before anything is done.
        A PostgreSQL ledger's scratch copy is an in-memory SQLite ledger with its rows."""
        if _is_url(path):
            from .ledger_postgres import open_readonly

            source_db = open_readonly(path)
            try:
                return source_db.to_scratch()
            finally:
                source_db.close()
        if path != ":memory:" and os.path.isfile(path):
            refuse_unless_ledger(path)
        scratch = cls(":memory:")
        if path == ":memory:" or not os.path.isfile(path):
            return scratch
        try:
            source = connect(path, readonly=True)
            try:
                app_id = source.execute("PRAGMA application_id").fetchone()[0]
                version = source.execute("PRAGMA user_version").fetchone()[0]
                if app_id != APPLICATION_ID:
                    raise LedgerError(f"{path} is not a mem0-hygiene ledger; check hygiene.ledger_path")
                if version > SCHEMA_VERSION:
                    raise LedgerError(newer_schema_message(path, version))
                with scratch._lock:
                    source.backup(scratch._conn)
            finally:
                source.close()
        except sqlite3.DatabaseError as exc:
            scratch.close()
            raise LedgerError(cls._explain_for(path, exc)) from None
        except LedgerError:
            scratch.close()
            raise
        scratch._conn.execute("PRAGMA foreign_keys = ON")
        scratch._migrate()  # a copy of an older ledger gets the current schema (in memory only)
        return scratch

    def pragma_check(self) -> tuple[list[tuple[Any, ...]], bool, str]:
        """(foreign_key_check rows, foreign_keys on?, journal mode) for this connection."""
        fk = self.query("PRAGMA foreign_key_check")
        on = bool(self.query("PRAGMA foreign_keys")[0][0])
        mode = str(self.query("PRAGMA journal_mode")[0][0])
        return fk, on, mode


_VERBS = {"new": "INSERT", "ignore": "INSERT OR IGNORE", "replace": "INSERT OR REPLACE"}
_MARK_SUPERSEDED = (
    "UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE memory_id = ? AND superseded_by IS NULL"
)


def _write_keyed(conn: Any, sql: str, row: LedgerRow, mode: str) -> int:
    """Inside a claiming transaction: write one row that has a topic key (``mode`` as in
    :meth:`Ledger.insert`: "new", "ignore", "replace" or "birth"), after making room for the key: the row as
    it will stand (for "birth" onto an existing row: that row's state with the new birth facts) takes it over
    from an older holder, or is written superseded by a newer one."""
    existing = None
    if mode in ("ignore", "birth"):
        found = conn.execute(_SELECT + " WHERE memory_id = ?", (row.memory_id,)).fetchone()
        existing = row_from(found) if found else None
        if existing is not None and mode == "ignore":
            return 0  # kept as it is: nothing changes who holds the key
    effective = row
    if existing is not None:
        births = {c: getattr(row, c) for c in _BIRTH_COLUMNS}
        effective = replace(existing, **births, quarantined=existing.quarantined and row.quarantined)
    placed = make_room(conn, effective, None)
    if placed is not effective:  # a newer row holds the key: this one is written superseded by it
        if existing is not None:
            conn.execute(_MARK_SUPERSEDED, (placed.superseded_by, placed.superseded_at, row.memory_id))
        row = replace(row, superseded_by=placed.superseded_by, superseded_at=placed.superseded_at)
    return int(conn.execute(sql, row.as_tuple()).rowcount)


def _link(conn: sqlite3.Connection, old_id: str, new_id: str, stamp: str) -> None:
    """Inside a transaction: point old -> new, refusing self links and cycles."""
    if old_id == new_id:
        raise SupersedeError(f"a memory cannot supersede itself ({old_id})")
    walk: str | None = new_id
    seen: set[str] = set()
    while walk is not None and walk not in seen:
        if walk == old_id:
            raise SupersedeError(
                f"superseding {old_id} by {new_id} would make a cycle: {new_id} already leads "
                f"back to {old_id} through its own chain"
            )
        seen.add(walk)
        nxt = conn.execute("SELECT superseded_by FROM memories WHERE memory_id = ?", (walk,)).fetchone()
        walk = nxt[0] if nxt else None
    # compare-and-set: a memory another writer superseded (or deleted) meanwhile is refused, never relinked
    changed = conn.execute(
        "UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE memory_id = ? "
        "AND (superseded_by IS NULL OR superseded_by = ?) AND deleted_at IS NULL",
        (new_id, stamp, old_id, new_id),
    ).rowcount
    if not changed:
        now = conn.execute("SELECT superseded_by, deleted_at FROM memories WHERE memory_id = ?", (old_id,)).fetchone()
        if now is not None and now[1]:
            raise SupersedeError(f"{old_id} was deleted on {now[1]}; there is nothing live to supersede")
        if now is not None and now[0]:
            raise SupersedeError(f"{old_id} is already superseded by {now[0]}; supersede {now[0]} instead")


def _head(conn: Any, old_id: str, new_id: str) -> str:
    """Inside a transaction: the live end of ``old_id``'s chain (``old_id`` itself when nothing superseded it
    yet, or when its replacement is ``new_id``)."""
    walk, seen = old_id, {old_id}
    while True:
        found = conn.execute("SELECT superseded_by FROM memories WHERE memory_id = ?", (walk,)).fetchone()
        nxt = found[0] if found else None
        if nxt is None or nxt == new_id or nxt in seen:
            return walk
        seen.add(nxt)
        walk = nxt


def _is_url(path: Any) -> bool:
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


def _split_sql(script: str) -> list[str]:
    return [s.strip() for s in script.split(";\n") if s.strip()]


def parse_stamp(value: str | None) -> datetime | None:
    """A ledger time string back to a datetime (None stays None)."""
    return parse_time(value) if value else None
