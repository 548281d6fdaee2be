"""The small interface the ledger's shared queries run over (:class:`LedgerConnection`): statements with ``?``
placeholders, a transaction, the dialect's fragments. SQLite's is a ``sqlite3`` connection of its own class
(:class:`~mem0_hygiene.stores.ledger.sqlite.SqliteConnection`), PostgreSQL's wraps psycopg 3
(:class:`~mem0_hygiene.stores.ledger.postgres.PgConnection`)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from .dialect import Dialect


class Cursor(Protocol):
    """What a statement returns: its rows and how many rows it changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class LedgerConnection(Protocol):
    """One connection to a ledger's database, in autocommit mode outside :meth:`transaction`."""

    dialect: Dialect

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...

    def transaction(self) -> AbstractContextManager[Any]:
        """``with conn.transaction() as conn:`` the statements inside commit together, or none do."""
        ...

    def close(self) -> None: ...
