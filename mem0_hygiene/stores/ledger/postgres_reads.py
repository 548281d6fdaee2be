"""Reads of a PostgreSQL ledger that must all see one moment: :func:`snapshot` (a ledger whose reads share one
``REPEATABLE READ READ ONLY`` transaction, for a backup's dump) and :class:`ReadSnapshot` (the audit's queries on
the server, with ``:name`` placeholders as SQLite takes them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import LedgerError
from .postgres import PostgresLedger, load_psycopg
from .schema import SCHEMA_VERSION


def named_placeholders(sql: str) -> str:
    """A read with ``:name`` or ``?`` placeholders (SQLite's forms) in psycopg's (``%(name)s``, ``%s``; a ``%``
    as ``%%``); quoted literals and ``::`` casts are left as they are. A scan of the text, no pattern matching."""
    out: list[str] = []
    i, n, quoted = 0, len(sql), False
    while i < n:
        ch = sql[i]
        if ch == "'":
            quoted = not quoted
        if quoted or ch == "'":
            out.append("%%" if ch == "%" else ch)
            i += 1
            continue
        if ch == "%":
            out.append("%%")
        elif ch == "?":
            out.append("%s")
        elif ch == ":" and i + 1 < n and sql[i + 1] == ":":
            out.append("::")
            i += 1
        elif (
            ch == ":"
            and i + 1 < n
            and (sql[i + 1].isalpha() or sql[i + 1] == "_")
            and (i == 0 or not _word(sql[i - 1]))
        ):
            j = i + 1
            while j < n and _word(sql[j]):
                j += 1
            out.append(f"%({sql[i + 1 : j]})s")
            i = j
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@contextlib.contextmanager
def snapshot(url: str) -> Iterator[PostgresLedger]:
    """``with snapshot(url) as ledger:`` every read through ``ledger`` inside sees one moment: a REPEATABLE READ,
    READ ONLY transaction whose snapshot is taken by the first read (so take it when the other stores are held
    still). Refuses a ledger whose schema is not this mem0-hygiene's (:class:`LedgerError`: upgrade, or let a
    replica of this version migrate it first)."""
    ledger = PostgresLedger(url, readonly=True)
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


class ReadSnapshot:
    """One consistent, read-only view of a PostgreSQL ledger: a ``REPEATABLE READ READ ONLY`` transaction held
    open from the first query to :meth:`close`, so every read sees the same committed state while replicas go
    on writing. Queries are written with ``?`` or ``:name`` placeholders (:func:`named_placeholders`)."""

    def __init__(self, url: str) -> None:
        self._ledger = PostgresLedger(url, readonly=True)  # checks it is a ledger this version can read
        self.shown = self._ledger.shown
        self._raw = self._ledger.pg._raw
        try:
            self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self._run("SAVEPOINT mem0_hygiene_read")
        except BaseException:
            self._ledger.close()
            raise

    def _run(self, sql: str, params: Any = None) -> Any:
        psycopg = load_psycopg()
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
        return list(self._run(named_placeholders(sql), params or None).fetchall())

    def stream(
        self, sql: str, params: Sequence[Any] | dict[str, Any] = (), size: int = 10_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of a read in pages of ``size``, through a server-side cursor (memory stays flat)."""
        psycopg = load_psycopg()
        try:
            with self._raw.cursor(name="mem0_hygiene_audit") as cur:
                cur.execute(named_placeholders(sql), params or None)
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
