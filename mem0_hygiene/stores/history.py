"""Read-only access to mem0's history.db, together with the ledger, without the vector store.

:class:`HistoryAndLedger` is what the digest and a memory's story read: history.db's ``history`` rows and the
ledger's rows. For a deployment resolved from a config both are opened read-only (a missing file reads as
empty); for the app's live drop-in its own ledger is used, and history.db is read through a read-only
connection of our own (or, for an in-memory history, through mem0's own connection), so nothing here ever
writes or waits on the vector store's lock.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ..errors import LedgerError
from .ledger import Ledger, LedgerRow
from .sqlite import connect

HISTORY_COLUMNS = "memory_id, event, old_memory, new_memory, created_at, updated_at"


class HistoryAndLedger:
    """history.db and the ledger of one deployment, read-only. Open with :meth:`open`; close (or use as a
    context manager) to release the connections it opened itself.

    Fields:
        now: the deployment's current time (its clock), taken once when opened.
        history: a connection to history.db, or None when there is none.
        ledger: the ledger, or None when there is none.
    """

    def __init__(self, now: datetime, history: sqlite3.Connection | None, ledger: Ledger | None,
                 owned: Sequence[Any] = ()) -> None:
        self.now = now
        self.history = history
        self.ledger = ledger
        self._owned = list(owned)

    @classmethod
    def open(cls, now: datetime, history_path: str, ledger_path: str, *, ledger: Ledger | None = None,
             history: sqlite3.Connection | None = None) -> HistoryAndLedger:
        """Open history.db and the ledger at these paths read-only (a missing file reads as empty). An app's own
        open ``ledger`` is used as it is; its mem0 ``history`` connection only when history.db is in memory
        (a file is read through a read-only connection of our own). Raises
        :class:`~mem0_hygiene.errors.LedgerError` when neither store exists."""
        owned: list[Any] = []
        conn: sqlite3.Connection | None = None
        if history_path and history_path != ":memory:" and os.path.isfile(history_path):
            conn = connect(history_path, readonly=True, check_same_thread=False)
            owned.append(conn)
        elif history_path == ":memory:":
            conn = history
        if ledger is None and ledger_path != ":memory:" and os.path.isfile(ledger_path):
            ledger = Ledger.open_readonly(ledger_path)
            owned.append(ledger)
        if conn is None and ledger is None:
            raise LedgerError(
                f"found neither mem0's history.db ({history_path}) nor the ledger ({ledger_path}); pass the app's "
                "config with --config FILE (or --history-db/--ledger)"
            )
        return cls(now, conn, ledger, owned)

    def close(self) -> None:
        for item in self._owned:
            with contextlib.suppress(Exception):
                item.close()
        self._owned = []

    def __enter__(self) -> HistoryAndLedger:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def history_rows(self, where: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """(memory_id, event, old_memory, new_memory, created_at, updated_at) in insertion order."""
        if self.history is None:
            return []
        sql = f"SELECT {HISTORY_COLUMNS} FROM history WHERE {where} ORDER BY rowid"
        try:
            return list(self.history.execute(sql, params).fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise

    def history_for(self, ids: Iterable[str]) -> dict[str, list[tuple[Any, ...]]]:
        """Every history row of each memory, grouped by memory id."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        id_list = list(dict.fromkeys(ids))
        for start in range(0, len(id_list), 500):
            chunk = id_list[start : start + 500]
            for row in self.history_rows(f"memory_id IN ({','.join('?' * len(chunk))})", chunk):
                out.setdefault(str(row[0]), []).append(row)
        return out

    def rows(self, ids: Sequence[str]) -> dict[str, LedgerRow]:
        """The ledger rows of these memories (those it has)."""
        return self.ledger.get_many(list(ids)) if self.ledger is not None else {}
