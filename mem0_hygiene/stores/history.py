"""Read-only access to mem0's history.db, together with the ledger, without the vector store.

:class:`HistoryAndLedger` is what the digest and a memory's story read: history.db's ``history`` rows and the
ledger's rows. For a deployment resolved from a config both are opened read-only (a missing file reads as
empty); for the app's live drop-in its own ledger is used, and history.db is read through a read-only
connection of our own (or, for an in-memory history, through mem0's own connection), so nothing here ever
writes or waits on the vector store's lock.

A database the app left with a hot journal (it died in the middle of a commit: the journal holds the pages
to put back, and only a writer may put them back) cannot be read through a read-only connection at all,
and reading it with ``immutable=1`` would serve the half-written pages. Such a file is copied with its
journal into a temporary folder, the copy is rolled back there (:class:`RecoveredCopy`), and the copy is
read; the file itself is left exactly as it is, for the app to recover the next time it opens it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import LedgerError
from .database_url import is_database_url
from .ledger import Ledger, LedgerRow, open_ledger
from .restore_journal import refuse_while_restoring
from .sqlite import connect

HISTORY_COLUMNS = "memory_id, event, old_memory, new_memory, created_at, updated_at"
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-@:")


@dataclass(frozen=True)
class HistoryFile:
    """One host's history.db, as the audit reads it: ``label`` names the host in findings (``LABEL=PATH`` as
    given, else the file's folder name), ``path`` is absolute."""

    label: str
    path: str


def split_label(entry: str) -> tuple[str | None, str]:
    """``"LABEL=PATH"`` -> (LABEL, PATH); a plain path (or an existing file whose name holds "=") -> (None,
    path). A label is letters, digits and ``_.-@:``."""
    label, sep, rest = entry.partition("=")
    if not sep or not label or not rest or not set(label) <= _LABEL_CHARS or os.path.isfile(entry):
        return None, entry
    return label, rest


def history_files(own: str, entries: Iterable[str] = ()) -> list[HistoryFile]:
    """The deployment's own history.db (``own``, mem0's ``history_db_path``) and every other host's
    (``entries``: ``PATH`` or ``LABEL=PATH``, e.g. ``hygiene.history_dbs``), each file once, the own first. A
    file's label is the one an entry gives it, else its folder's name; labels that would repeat get the folder
    above too, then a number."""
    paths: list[str] = []
    given: dict[str, str] = {}
    for label, path in [(None, own), *(split_label(e) for e in entries)]:
        if not path:
            continue
        path = path if path == ":memory:" else os.path.abspath(os.path.expanduser(path))
        key = path if path == ":memory:" else os.path.realpath(path)
        if key not in given:
            paths.append(path)
            given[key] = ""
        if label and not given[key]:
            given[key] = label
    out: list[HistoryFile] = []
    taken: set[str] = set()
    for path in paths:
        key = path if path == ":memory:" else os.path.realpath(path)
        folder = os.path.dirname(path)
        candidates = (
            [given[key]]
            if given[key]
            else [
                os.path.basename(folder) or path,
                os.path.join(os.path.basename(os.path.dirname(folder)), os.path.basename(folder)),
            ]
        )
        label = next((c for c in candidates if c not in taken), "")
        n = 2
        while not label:
            label = f"{candidates[0]}-{n}" if f"{candidates[0]}-{n}" not in taken else ""
            n += 1
        taken.add(label)
        out.append(HistoryFile(label, path))
    return out


logger = logging.getLogger(__name__)


def needs_rollback(path: str) -> bool:
    """True when a read-only connection cannot read the database at ``path`` because a writer died
    mid-commit and left a hot journal that only a writer may roll back."""
    try:
        conn = connect(path, readonly=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        name = getattr(exc, "sqlite_errorname", "")
        return name == "SQLITE_READONLY_ROLLBACK" or (not name and "readonly" in str(exc))
    except sqlite3.DatabaseError:
        return False  # not a database at all: the normal open says so
    return False


class RecoveredCopy:
    """A database and its journal copied into a temporary folder and rolled back there: the committed state
    of a file a crashed writer left with a hot journal. ``path`` is the copy; :meth:`close` removes it."""

    def __init__(self, path: str) -> None:
        self.source = path
        self._dir = tempfile.TemporaryDirectory(prefix="mem0-hygiene-recovered-")
        self.path = os.path.join(self._dir.name, os.path.basename(path))
        try:
            shutil.copyfile(path, self.path)
            for suffix in ("-journal", "-wal"):
                if os.path.isfile(path + suffix):
                    shutil.copyfile(path + suffix, self.path + suffix)
            conn = connect(self.path)  # a writer, on the copy only: SQLite rolls the journal back here
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except BaseException:
            self._dir.cleanup()
            raise

    @property
    def note(self) -> str:
        return (
            f"{self.source} has a hot journal: the app died in the middle of a commit. It was read from a "
            "rolled-back copy (the last committed state); the file itself recovers the next time the app "
            "(or any writer) opens it, so start the app, or run a maintenance command, to settle it"
        )

    def close(self) -> None:
        self._dir.cleanup()


class HistoryAndLedger:
    """history.db and the ledger of one deployment, read-only. Open with :meth:`open`; close (or use as a
    context manager) to release the connections it opened itself.

    Fields:
        now: the deployment's current time (its clock), taken once when opened.
        history: a connection to history.db, or None when there is none.
        ledger: the ledger, or None when there is none.
        notes: what the reader should know about how the files were read (a hot journal worked around).
    """

    def __init__(
        self,
        now: datetime,
        history: sqlite3.Connection | None,
        ledger: Ledger | None,
        owned: Sequence[Any] = (),
        notes: Sequence[str] = (),
    ) -> None:
        self.now = now
        self.history = history
        self.ledger = ledger
        self.notes = tuple(notes)
        self._owned = list(owned)

    @classmethod
    def open(
        cls,
        now: datetime,
        history_path: str,
        ledger_path: str,
        *,
        ledger: Ledger | None = None,
        history: sqlite3.Connection | None = None,
    ) -> HistoryAndLedger:
        """Open history.db and the ledger at these paths read-only (a missing file reads as empty). An app's own
        open ``ledger`` is used as it is; its mem0 ``history`` connection only when history.db is in memory
        (a file is read through a read-only connection of our own). A file with a hot journal is read from a
        rolled-back copy (see the module docstring; ``notes`` says so). Raises
        :class:`~mem0_hygiene.errors.LedgerError` when neither store exists."""
        if ledger is None:  # the app's own ledger: it started, so no restore was under way
            refuse_while_restoring(ledger_path, history_path, None, "read history.db and the ledger")
        owned: list[Any] = []
        notes: list[str] = []

        def readable(path: str) -> str:
            if not needs_rollback(path):
                return path
            copy = RecoveredCopy(path)
            owned.append(copy)
            notes.append(copy.note)
            logger.warning("%s", copy.note)
            return copy.path

        conn: sqlite3.Connection | None = None
        try:
            if history_path and history_path != ":memory:" and os.path.isfile(history_path):
                conn = connect(readable(history_path), readonly=True, check_same_thread=False)
                owned.append(conn)
            elif history_path == ":memory:":
                conn = history
            if ledger is None and is_database_url(ledger_path):
                ledger = open_ledger(ledger_path, readonly=True)  # hygiene.ledger_url: read on the server
                owned.append(ledger)
            elif ledger is None and ledger_path != ":memory:" and os.path.isfile(ledger_path):
                ledger = open_ledger(readable(ledger_path), readonly=True)
                owned.append(ledger)
        except BaseException:
            cls(now, None, None, owned).close()
            raise
        if conn is None and ledger is None:
            raise LedgerError(
                f"found neither mem0's history.db ({history_path}) nor the ledger ({ledger_path}); pass the app's "
                "config with --config FILE (or --history-db/--ledger)"
            )
        return cls(now, conn, ledger, owned, notes)

    def close(self) -> None:
        for item in reversed(self._owned):  # connections before the copies they read
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
