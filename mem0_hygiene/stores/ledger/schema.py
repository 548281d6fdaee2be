"""The ledger's schema in both dialects, side by side: each table's columns listed once (:class:`Column`), the
``CREATE TABLE`` of either dialect generated from them (:func:`create_table`), and what differs written beside
each other (the schema version's home, the tombstone trigger, the live view's clock). :func:`migrations` gives a
dialect's steps from schema version 1 to :data:`SCHEMA_VERSION`.

Tables:

- ``memories``: one row per mem0 memory (the facts of :class:`~mem0_hygiene.stores.ledger.rows.LedgerRow`).
  Version 2 added ``redacted`` and ``flag`` (the column's ``version``).
- ``pending`` (version 3): the drop-in's operations under way across the ledger and mem0's stores ("delete",
  "supersede", "invalidate"); a tombstone is journaled as a pending delete by the statement that writes it (a
  trigger), so no path can forget to.
- ``confirmations`` (version 4): one row per confirmation of a memory (``via``: "confirm" for ``Memory.confirm``,
  "update" for a new text through ``update()``, "seeded" for the last confirmation a ledger older than version 4
  had kept), written in the same transaction as the row's ``confirmed_at``; its rows go with their memory's row.
- ``consolidation``: the record of ``consolidate`` runs (:mod:`mem0_hygiene.stores.consolidation_log`).
- ``write_decisions``: the LLM judge's decisions at write time (:mod:`mem0_hygiene.memory.judge`).
- ``reads`` (version 5): the opt-in read log (``hygiene.read_log``): one row per memory a read (``op``: "search",
  "get_all" or "get") served, with the scope it was asked for and the caller's ``source`` label
  (:mod:`mem0_hygiene.stores.ledger.reads`).
- ``hygiene_meta`` (PostgreSQL only): the application id and schema version, which SQLite keeps in
  ``PRAGMA application_id`` and ``PRAGMA user_version``.

A SQLite ledger older than version 4 may already hold ``consolidation`` and ``write_decisions`` (they were created
on first use); the migration creates them where they are missing. Version 4 also adds the unique index that keeps
one live row per topic key and scope (:mod:`mem0_hygiene.stores.topic_keys`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...timeutil import to_iso
from ..states import live_sql
from ..topic_keys import INDEX_SQL, chain_duplicates
from .dialect import POSTGRES, SQLITE, Dialect

logger = logging.getLogger("mem0_hygiene.stores.ledger")

APPLICATION_ID = 0x4D304859  # "M0HY": marks a SQLite file (or a PostgreSQL schema) as a mem0-hygiene ledger
SCHEMA_VERSION = 5

CONFIRMATION_VIAS = ("confirm", "update", "seeded")


@dataclass(frozen=True)
class Column:
    """One column: its name, type ("TEXT", "INTEGER", "REAL": the dialect's floating type, or "KEY": an integer
    primary key the database numbers), what follows the type ("{deferrable}" stands for the dialect's foreign-key
    option) and the schema version that added it."""

    name: str
    type: str
    extra: str = ""
    version: int = 1

    def ddl(self, dialect: Dialect) -> str:
        kind = {"REAL": dialect.real, "KEY": dialect.auto_key}.get(self.type, self.type)
        extra = self.extra.format(deferrable=dialect.deferrable)
        return f"{self.name} {kind}{' ' + extra if extra else ''}"


@dataclass(frozen=True)
class Table:
    """One table: its columns, the constraints after them, whether it is created only where missing, the
    SQLite ``WITHOUT ROWID`` option (tables with a text key) and the version that added it."""

    name: str
    columns: tuple[Column, ...]
    constraints: tuple[str, ...] = ()
    if_missing: bool = False
    without_rowid: bool = True
    version: int = 1

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


_SOURCE_KINDS_SQL = "'user','assistant','tool','system','import','unknown'"

MEMORY_COLUMNS: tuple[Column, ...] = (
    Column("memory_id", "TEXT", "PRIMARY KEY"),
    Column("user_id", "TEXT"),
    Column("agent_id", "TEXT"),
    Column("run_id", "TEXT"),
    Column("source", "TEXT"),
    Column("source_kind", "TEXT", f"NOT NULL DEFAULT 'unknown' CHECK (source_kind IN ({_SOURCE_KINDS_SQL}))"),
    Column("created_at", "TEXT", "NOT NULL"),
    Column("confirmed_at", "TEXT"),
    Column("expires_at", "TEXT"),
    Column("superseded_by", "TEXT", "REFERENCES memories(memory_id) ON DELETE CASCADE{deferrable}"),
    Column("superseded_at", "TEXT"),
    Column("invalid_at", "TEXT"),
    Column("invalid_reason", "TEXT"),
    Column("quarantined", "INTEGER", "NOT NULL DEFAULT 0"),
    Column("last_used_at", "TEXT"),
    Column("use_count", "INTEGER", "NOT NULL DEFAULT 0"),
    Column("topic_key", "TEXT"),
    Column("deleted_at", "TEXT"),
    Column("adopted", "INTEGER", "NOT NULL DEFAULT 0"),
    Column("redacted", "TEXT", version=2),
    Column("flag", "TEXT", version=2),
)
"""The ``memories`` columns, in the order every query reads and writes them."""

MEMORIES = Table(
    "memories", MEMORY_COLUMNS, constraints=("CHECK (superseded_by IS NULL OR superseded_by <> memory_id)",)
)
PENDING = Table(
    "pending",
    (
        Column("memory_id", "TEXT", "NOT NULL"),
        Column("action", "TEXT", "NOT NULL CHECK (action IN ('delete', 'supersede', 'invalidate'))"),
        Column("since", "TEXT", "NOT NULL"),
    ),
    constraints=("PRIMARY KEY (memory_id, action)",),
    version=3,
)
CONFIRMATIONS = Table(
    "confirmations",
    (
        Column("memory_id", "TEXT", "NOT NULL REFERENCES memories(memory_id) ON DELETE CASCADE{deferrable}"),
        Column("confirmed_at", "TEXT", "NOT NULL"),
        Column("via", "TEXT", "NOT NULL DEFAULT 'confirm' CHECK (via IN ('confirm', 'update', 'seeded'))"),
    ),
    constraints=("PRIMARY KEY (memory_id, confirmed_at)",),
    version=4,
)
CONSOLIDATION = Table(
    "consolidation",
    (
        Column("plan_id", "TEXT", "NOT NULL"),
        Column("step", "INTEGER", "NOT NULL"),
        Column("action", "TEXT", "NOT NULL CHECK (action IN ('merge', 'supersede', 'invalidate'))"),
        Column("memory_id", "TEXT", "NOT NULL"),
        Column("into_id", "TEXT", "NOT NULL"),
        Column("similarity", "REAL"),
        Column("reason", "TEXT", "NOT NULL"),
        Column("planned_at", "TEXT", "NOT NULL"),
        Column("done_at", "TEXT"),
        Column("outcome", "TEXT"),
    ),
    constraints=("PRIMARY KEY (plan_id, step)",),
    if_missing=True,
    version=4,
)
WRITE_DECISIONS = Table(
    "write_decisions",
    (
        Column("id", "KEY"),
        Column("memory_id", "TEXT", "NOT NULL"),
        Column("compared_id", "TEXT"),
        Column("label", "TEXT", "NOT NULL"),
        Column("judge", "TEXT"),
        Column("event", "TEXT"),
        Column("reason", "TEXT"),
        Column("similarity", "REAL"),
        Column("decided_at", "TEXT", "NOT NULL"),
    ),
    if_missing=True,
    without_rowid=False,
    version=4,
)
READS = Table(
    "reads",
    (
        Column("id", "KEY"),
        Column("read_at", "TEXT", "NOT NULL"),
        Column("op", "TEXT", "NOT NULL CHECK (op IN ('search', 'get_all', 'get'))"),
        Column("memory_id", "TEXT", "NOT NULL"),
        Column("user_id", "TEXT"),
        Column("agent_id", "TEXT"),
        Column("run_id", "TEXT"),
        Column("caller", "TEXT"),
    ),
    without_rowid=False,
    version=5,
)
READS_INDEX = "CREATE INDEX reads_memory ON reads(memory_id, read_at)"
HYGIENE_META = Table("hygiene_meta", (Column("key", "TEXT", "PRIMARY KEY"), Column("value", "TEXT", "NOT NULL")))
"""PostgreSQL's home of the application id and schema version (SQLite keeps them in its pragmas)."""

SIDE_TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "confirmations": (CONFIRMATIONS.column_names, "memory_id, confirmed_at"),
    "consolidation": (CONSOLIDATION.column_names, "plan_id, step"),
    "write_decisions": (WRITE_DECISIONS.column_names, "id"),
    "reads": (READS.column_names, "id"),
}
"""table -> (its columns, the key it is ordered by), for a PostgreSQL ledger's scratch copy in SQLite."""


def create_table(table: Table, dialect: Dialect, *, version: int | None = None) -> str:
    """``CREATE TABLE`` of ``table`` in ``dialect``, with the columns it had at schema ``version`` (all)."""
    columns = [c for c in table.columns if version is None or c.version <= version]
    body = ",\n    ".join([*(c.ddl(dialect) for c in columns), *table.constraints])
    options = dialect.table_options if table.without_rowid else ""
    exists = " IF NOT EXISTS" if table.if_missing else ""
    return f"CREATE TABLE{exists} {table.name} (\n    {body}\n){options}"


def add_columns(table: Table, dialect: Dialect, version: int) -> list[str]:
    """The ``ALTER TABLE`` statements adding the columns schema ``version`` brought."""
    return [f"ALTER TABLE {table.name} ADD COLUMN {c.ddl(dialect)}" for c in table.columns if c.version == version]


_MEMORY_INDEXES = (
    "CREATE INDEX memories_superseded_by ON memories(superseded_by) WHERE superseded_by IS NOT NULL",
    "CREATE INDEX memories_expires_at ON memories(expires_at) WHERE expires_at IS NOT NULL",
    "CREATE INDEX memories_topic ON memories(topic_key) WHERE topic_key IS NOT NULL",
)
CONSOLIDATION_INDEX = "CREATE INDEX IF NOT EXISTS consolidation_memory ON consolidation(memory_id)"

SEED_CONFIRMATIONS = (
    "INSERT INTO confirmations (memory_id, confirmed_at, via) SELECT memory_id, confirmed_at, "
    "'seeded' FROM memories WHERE confirmed_at IS NOT NULL AND confirmed_at <> created_at"
)
"""The migration's seed: each row's last confirmation (a ``confirmed_at`` equal to ``created_at`` is the
memory's birth, not a confirmation)."""


def live_view(dialect: Dialect) -> str:
    """The live view: what reads may serve (a missed prune is harmless because of it), on the database's clock.
    SQLite expands its ``*`` when read; PostgreSQL when it creates the view, so it is replaced as columns come."""
    verb = "CREATE VIEW IF NOT EXISTS" if dialect is SQLITE else "CREATE OR REPLACE VIEW"
    return f"{verb} live_memories AS SELECT * FROM memories WHERE {live_sql(now=dialect.now_iso)}"


# The tombstone trigger, one per dialect: a tombstone journals itself as a pending delete.
_TOMBSTONE_TRIGGER_SQLITE = (
    "CREATE TRIGGER pending_delete_on_tombstone AFTER UPDATE OF deleted_at ON memories\n"
    "WHEN NEW.deleted_at IS NOT NULL\n"
    "BEGIN INSERT OR IGNORE INTO pending VALUES (NEW.memory_id, 'delete', NEW.deleted_at); END"
)
_TOMBSTONE_TRIGGER_POSTGRES = (
    "CREATE FUNCTION hygiene_pending_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$\n"
    "BEGIN\n"
    "    INSERT INTO pending VALUES (NEW.memory_id, 'delete', NEW.deleted_at) ON CONFLICT DO NOTHING;\n"
    "    RETURN NULL;\n"
    "END $fn$",
    "CREATE TRIGGER pending_delete_on_tombstone AFTER UPDATE OF deleted_at ON memories\n"
    "FOR EACH ROW WHEN (NEW.deleted_at IS NOT NULL) EXECUTE FUNCTION hygiene_pending_delete()",
)

MigrationStep = str | Callable[[Any, Any], None]
"""A statement of a migration, or a function run with (connection, ledger) in the migration's transaction."""


def seed_and_chain(conn: Any, ledger: Any) -> None:
    """Migration 4's data step (both dialects): the confirmations log seeded from each row's last
    confirmation, then rows sharing a topic key and scope chained to the newest (before the unique index)."""
    conn.execute(SEED_CONFIRMATIONS)
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


def migrations(dialect: Dialect) -> dict[int, tuple[MigrationStep, ...]]:
    """schema version -> the steps that bring a ledger in ``dialect`` from the version before to it."""
    on_pg = dialect is POSTGRES
    v1: list[MigrationStep] = [create_table(HYGIENE_META, dialect)] if on_pg else []
    v1 += [create_table(MEMORIES, dialect, version=1), *_MEMORY_INDEXES, live_view(dialect)]
    v2: list[MigrationStep] = [*add_columns(MEMORIES, dialect, 2)]
    if on_pg:
        v2.append(live_view(dialect))
    v3: list[MigrationStep] = [create_table(PENDING, dialect)]
    v3 += list(_TOMBSTONE_TRIGGER_POSTGRES) if on_pg else [_TOMBSTONE_TRIGGER_SQLITE]
    v4: tuple[MigrationStep, ...] = (
        create_table(CONFIRMATIONS, dialect),
        seed_and_chain,
        INDEX_SQL,
        create_table(CONSOLIDATION, dialect),
        CONSOLIDATION_INDEX,
        create_table(WRITE_DECISIONS, dialect),
    )
    v5: tuple[MigrationStep, ...] = (create_table(READS, dialect), READS_INDEX)
    return {1: tuple(v1), 2: tuple(v2), 3: tuple(v3), 4: v4, 5: v5}


def statements(steps: Sequence[MigrationStep]) -> list[str]:
    """The SQL statements among a migration's steps (a test builds an older ledger from them)."""
    return [s for s in steps if isinstance(s, str)]
