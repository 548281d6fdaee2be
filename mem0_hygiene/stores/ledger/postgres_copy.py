"""A PostgreSQL ledger copied whole, to and from a SQLite ledger file: a backup dumps every table into a SQLite
ledger file (the same format a SQLite deployment's backup set holds) from one REPEATABLE READ snapshot
(:func:`~mem0_hygiene.stores.ledger.postgres_reads.snapshot`, :func:`dump_into_file`); a restore (and ``ledger
migrate``) loads such a file back in one transaction (:func:`held_for_load`, :func:`load_rows`), verified by the
count and sha256 of every table before it commits."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from ...errors import LedgerError
from .base import Ledger
from .postgres import PgConnection, PostgresLedger
from .schema import APPLICATION_ID
from .sqlite import SqliteLedger
from .tables import META_TABLES, TableShape, quote, sqlite_tables, verify_tables

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
    :class:`~mem0_hygiene.stores.ledger.tables.TableShape` (types in SQLite's terms), by name."""
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
    :class:`~mem0_hygiene.stores.ledger.tables.TableCopy` of each table."""
    shapes = postgres_tables(source.pg)
    target = SqliteLedger(path)
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


def load_rows(
    ledger: PostgresLedger, conn: Any, source: Ledger, *, replace: bool, records: Sequence[str] = ()
) -> list[Any]:
    """Inside :func:`held_for_load`: every table of the SQLite ledger ``source`` loaded into ``ledger`` (with
    ``replace``, every ledger table of the database is emptied first, tables the file lacks too; ``records``:
    tables holding one record about the store, such as which embedder made its vectors, emptied first when the
    file has them, the file's record replacing one a drop-in wrote on opening the database); a table the
    database lacks is created; numbering sequences are moved past the loaded keys; then every table's count and
    sha256 are compared on both sides before anything commits (:class:`LedgerError` otherwise). Returns the
    :class:`~mem0_hygiene.stores.ledger.tables.TableCopy` of each table."""
    shapes = sqlite_tables(source.query)
    present = {s.name: s for s in postgres_tables(ledger.pg)}
    for shape in shapes:
        if shape.name not in present:
            ledger.pg.script(shape.postgres_ddl())
    present = {s.name: s for s in postgres_tables(ledger.pg)}
    if replace:
        for name in present:
            conn.execute(f"DELETE FROM {quote(name)}")
    else:
        for name in {shape.name for shape in shapes} & set(records) & set(present):
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
