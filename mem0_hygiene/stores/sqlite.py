"""The SQLite helpers every store module shares: connecting, transactions, checks, counts and copies.

- :func:`connect`: the one way this package opens a SQLite file: autocommit, a busy timeout of
  :data:`BUSY_TIMEOUT_MS`, the path URI-quoted, ``mode=ro`` or ``mode=rw``, and a missing file is
  never created unless ``create`` is given.
- :func:`transaction`: ``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception.
- :func:`integrity_check`, :func:`table_counts`, :func:`vacuum_into`: checking, counting and copying
  a database (an open connection or a path).
- :data:`SIDECARS`, :func:`sidecars`, :func:`files_under`, :func:`file_signature`: the files that
  belong to a database.
- :func:`copy_database` (and its tuple form :func:`copy_sqlite`): a verified copy of a live database.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias
from urllib.parse import quote

from ..errors import RelocateError
from .staging import remove_stale_copies, staging_prefix

BUSY_TIMEOUT_MS = 5000  # a writer in the app waits this long for our lock (and we for its)
SIDECARS = ("-wal", "-shm", "-journal")  # files SQLite keeps beside a database, named after it
_WRITTEN = ("", "-wal", "-journal")  # the files a write changes (``-shm`` changes on reads too)

Database: TypeAlias = sqlite3.Connection | str | os.PathLike[str]  # an open connection or a path


def is_wal_file(path: str | os.PathLike[str]) -> bool:
    """The database file at ``path`` is in WAL mode (its header's read/write versions are 2)."""
    try:
        with open(os.fspath(path), "rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[:16] == b"SQLite format 3\x00" and header[18] == 2 and header[19] == 2


def uri(path: str | os.PathLike[str], mode: str) -> str:
    """The ``file:`` URI of ``path`` (absolute, quoted: ``?``, ``#``, ``%`` and spaces survive) with ``mode``.

    Read-only (``mode="ro"``) on a WAL database that nobody has open (no ``-wal`` file: every write is in the
    main file) adds ``immutable=1``: otherwise SQLite would create ``-wal``/``-shm`` files beside it that a
    read-only connection cannot remove again, and a read must leave nothing behind. While a writer has it open
    (``-wal`` exists) the normal shared-memory reader is used."""
    absolute = os.path.abspath(os.fspath(path))
    extra = ""
    if mode == "ro" and not os.path.exists(absolute + "-wal") and is_wal_file(absolute):
        extra = "&immutable=1"
    return f"file:{quote(absolute)}?mode={mode}{extra}"


def connect(
    path: str | os.PathLike[str],
    *,
    readonly: bool = False,
    create: bool = False,
    check_same_thread: bool = True,
    factory: type[sqlite3.Connection] = sqlite3.Connection,
) -> sqlite3.Connection:
    """An autocommit connection (``isolation_level=None``) with a busy timeout of :data:`BUSY_TIMEOUT_MS`.

    ``readonly`` opens with ``mode=ro`` (nothing can be written through it); otherwise ``mode=rw``,
    which fails on a missing file, unless ``create`` (``mode=rwc``). ``":memory:"`` opens a new
    in-memory database, with ``create`` only. ``factory``: the connection's class (a subclass of
    ``sqlite3.Connection``).
    """
    p = os.fspath(path)
    if p == ":memory:":
        if readonly or not create:
            raise ValueError("an in-memory SQLite database can only be created (create=True), not reopened")
        return sqlite3.connect(
            p,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=check_same_thread,
            factory=factory,
        )
    mode = "ro" if readonly else ("rwc" if create else "rw")
    return sqlite3.connect(
        uri(p, mode),
        uri=True,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=check_same_thread,
        factory=factory,
    )


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``with transaction(conn):`` the writes inside commit together (``BEGIN IMMEDIATE``), or none do."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def _opened(db: Database, readonly: bool = False) -> Iterator[sqlite3.Connection]:
    """``db`` itself when it is a connection (left open), else a connection to the path (closed after)."""
    if isinstance(db, sqlite3.Connection):
        yield db
        return
    conn = connect(db, readonly=readonly)
    try:
        yield conn
    finally:
        conn.close()


def integrity_check(db: Database) -> str:
    """``PRAGMA integrity_check`` of a connection or a file: "ok", or what is wrong (a file SQLite
    cannot read at all says so too: "unreadable: ...")."""
    try:
        with _opened(db) as conn:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return f"unreadable: {exc}"
    return "; ".join(line for r in rows for line in str(r[0]).splitlines() if line.strip()) or "no result"


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return {n: int(conn.execute(f"SELECT count(*) FROM {_quote_ident(n)}").fetchone()[0]) for n in names}


def table_counts(db: Database) -> dict[str, int]:
    """Rows per table (SQLite's own tables excluded), sorted by table name.

    A path is read without writing: read-only where SQLite allows it, else (a WAL database whose
    ``-shm`` file cannot be created read-only) read-write, reading only. A missing file raises.
    """
    if isinstance(db, sqlite3.Connection):
        return _counts(db)
    try:
        with _opened(db, readonly=True) as conn:
            return _counts(conn)
    except sqlite3.OperationalError:
        with _opened(db) as conn:
            return _counts(conn)


def vacuum_into(conn: sqlite3.Connection, dst: str | os.PathLike[str]) -> None:
    """``VACUUM INTO dst``: a compact, consistent copy of the database (``dst`` missing or an empty file)."""
    conn.execute("VACUUM INTO ?", (os.fspath(dst),))


def sidecars(path: str) -> list[str]:
    """The sidecar files (``-wal``, ``-shm``, ``-journal``) of the database at ``path`` that exist now."""
    return [path + s for s in SIDECARS if os.path.lexists(path + s)]


def files_under(folder: str) -> list[str]:
    """Every SQLite database file (``*.sqlite``, as local Qdrant names its own) under ``folder``, sorted."""
    out = []
    for root, _dirs, files in os.walk(folder):
        out += [os.path.join(root, name) for name in files if name.endswith(".sqlite")]
    return sorted(out)


def file_signature(path: str) -> tuple[tuple[str, int, int], ...]:
    """(suffix, size, mtime) of the database and the sidecars a write changes: differs once someone wrote."""
    sig = []
    for suffix in _WRITTEN:
        p = path + suffix
        if os.path.exists(p):
            st = os.stat(p)
            sig.append((suffix, st.st_size, st.st_mtime_ns))
    return tuple(sig)


# ---------------------------------------------------------------------------------------------- copies


@dataclass(frozen=True)
class SqliteCopy:
    """What :func:`copy_database` made: rows per table at the source and in the copy, the copy's
    integrity_check result, and the source's :func:`file_signature` right after the copy."""

    counts_before: dict[str, int]
    counts_after: dict[str, int]
    integrity: str
    signature: tuple[tuple[str, int, int], ...]


def copy_database(src: str, dst: str) -> SqliteCopy:
    """Copy a live SQLite database with ``VACUUM INTO``, check it, and put it at ``dst`` (not overwritten).

    The copy is built in a hidden temporary file beside ``dst`` while a second connection holds
    writers out (``BEGIN IMMEDIATE``, nothing written), so the copy and the counts describe the same
    state; it is linked into place only after its integrity_check and rows per table match. The copy
    keeps the source's file mode and, when the source is in WAL mode, WAL mode (``VACUUM INTO`` writes a
    rollback-journal file with the default mode). Half-built copies an interrupted earlier run left beside
    ``dst`` are removed first (while writers are held out).
    Raises :class:`~mem0_hygiene.errors.RelocateError` when ``dst`` is taken, a writer keeps the
    source busy, or the copy does not verify.
    """
    parent = os.path.dirname(dst)
    os.makedirs(parent, exist_ok=True)
    if os.path.lexists(dst):
        raise RelocateError(f"{dst} already exists; choose another destination (nothing was copied)")
    tmp = ""
    try:
        with contextlib.closing(connect(src)) as guard, contextlib.closing(connect(src)) as reader:
            # The guard keeps other writers out while the reader copies, so the copy and the counts
            # describe the same state (readers are never blocked).
            try:
                guard.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise RelocateError(
                        f"{src} is being written by another process ({exc}); stop the app and retry"
                    ) from exc
                raise RelocateError(f"cannot hold {src} still while copying it: {exc}") from exc
            try:
                remove_stale_copies(dst)
                fd, tmp = tempfile.mkstemp(prefix=staging_prefix(dst), dir=parent)
                os.close(fd)  # VACUUM INTO accepts an existing empty file
                wal = str(reader.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal"
                before = table_counts(reader)
                vacuum_into(reader, tmp)
            finally:
                guard.execute("ROLLBACK")
        os.chmod(tmp, stat.S_IMODE(os.stat(src).st_mode))
        with contextlib.closing(connect(tmp)) as copy:
            if wal:
                copy.execute("PRAGMA journal_mode=WAL")
            integrity = integrity_check(copy)
            after = table_counts(copy)
        if integrity != "ok":
            raise RelocateError(f"the copy of {src} failed PRAGMA integrity_check: {integrity}")
        if after != before:
            raise RelocateError(f"the copy of {src} has rows per table {after}, the source {before}")
        signature = file_signature(src)
        try:
            os.link(tmp, dst)  # fails instead of overwriting a file that appeared meanwhile
        except FileExistsError as exc:
            raise RelocateError(f"{dst} appeared while copying; nothing was switched") from exc
        except OSError:
            if os.path.lexists(dst):
                raise RelocateError(f"{dst} appeared while copying; nothing was switched") from None
            os.rename(tmp, dst)
    finally:
        if tmp:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    return SqliteCopy(before, after, integrity, signature)


def copy_sqlite(src: str, dst: str) -> tuple[dict[str, int], dict[str, int], str]:
    """:func:`copy_database` as a tuple: (rows per table at the source, rows per table in the copy,
    integrity_check result)."""
    c = copy_database(src, dst)
    return c.counts_before, c.counts_after, c.integrity
