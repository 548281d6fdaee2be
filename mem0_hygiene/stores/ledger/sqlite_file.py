"""What a file named as a SQLite ledger is, told without writing to it (:func:`identify`,
:func:`refuse_unless_ledger`), and the messages for a file that cannot be the ledger: another SQLite database,
not SQLite at all, damaged, or written by a newer mem0-hygiene (each saying how to put the ledger back)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass

from ...errors import LedgerError
from ..backup_record import backup_status_for_paths, record_path_for
from ..sqlite import connect as sqlite_connect
from .schema import APPLICATION_ID, SCHEMA_VERSION

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
        raise LedgerError(explain(path, exc)) from None
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


def explain(path: str, exc: sqlite3.DatabaseError) -> str:
    """The message for an error SQLite raised on the ledger at ``path``: not SQLite, damaged (with the way back),
    not writable, or what SQLite said."""
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
