"""Where a deployment's own files are, and what must be at each store path before anything opens it.

The files kept beside the ledger and named after it (``hygiene.db`` -> ``hygiene.backups.json``,
``hygiene.copies.json``, ``hygiene.restore-journal.json``; beside history.db when the ledger is in memory or on
PostgreSQL) are named by :func:`side_file`, the one rule for all of them.

:func:`check_store_paths` refuses a store path that holds something no store can be: a FIFO (reading its header
would block forever), a socket, a device, a folder where a file is expected, or a file where the Qdrant folder
is expected (:class:`~mem0_hygiene.errors.NotAStorePath`, one line naming the path and what is there). A missing
path is fine: the store is created there.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from ..errors import NotADatabase, NotAStorePath

SIDE_FILES = {
    "backup_record": ".backups.json",
    "copies_registry": ".copies.json",
    "restore_journal": ".restore-journal.json",
}
"""The files kept beside the ledger, by role: the suffix that replaces the ledger's extension."""

FOLDER_ROLES = ("vector_store",)
"""Store roles whose path is a folder (local Qdrant); every other role's path is a file."""


def side_file(
    role: str, ledger_path: str | None, history_path: str | None, vector_path: str | None = None
) -> str | None:
    """Where the file ``role`` (a key of :data:`SIDE_FILES`) of a deployment lives: beside the ledger file and
    named after it; beside history.db for a ledger in memory or on PostgreSQL; beside the local vector store
    folder (``vector_path``, when given) when both are in memory; None otherwise."""
    suffix = SIDE_FILES[role]
    for base in (ledger_path, history_path):
        if base and base != ":memory:" and "://" not in base:
            root, _ext = os.path.splitext(os.path.abspath(os.path.expanduser(base)))
            return root + suffix
    if vector_path:
        return os.path.abspath(os.path.expanduser(vector_path)).rstrip(os.sep) + suffix
    return None


def side_files(
    ledger_path: str | None,
    history_path: str | None,
    vector_path: str | None = None,
) -> dict[str, str]:
    """Every side file of a deployment that has a path, by role."""
    out = {}
    for role in SIDE_FILES:
        path = side_file(role, ledger_path, history_path, vector_path if role == "restore_journal" else None)
        if path:
            out[role] = path
    return out


def what_is_at(path: str) -> str | None:
    """What is at ``path`` (links followed), in words: "a folder", "a file", "a FIFO (named pipe)", "a socket",
    "a device"; None when nothing is (or it cannot be looked at: left to whoever opens it)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def check_store_path(role: str, path: str | None) -> None:
    """Refuse (:class:`NotAStorePath`) ``path`` when something is there that the store ``role`` cannot be: the
    Qdrant folder must be a folder, every other store a regular file."""
    if not path or path == ":memory:" or "://" in path:
        return
    path = os.path.expanduser(path)
    found = what_is_at(path)
    if found is None:
        return
    expected = "a folder" if role in FOLDER_ROLES else "a file"
    if found != expected:
        raise NotAStorePath(path, role, found, expected)


SQLITE_HEADER = b"SQLite format 3\x00"


def check_sqlite_file(role: str, path: str | None) -> None:
    """Refuse (:class:`~mem0_hygiene.errors.NotADatabase`, naming the file) a file at ``path`` whose first 16
    bytes are not SQLite's header. A missing, empty or unreadable file is left to whoever opens it (mem0 creates
    a missing one; an unreadable one is reported where it is read)."""
    if not path or path == ":memory:":
        return
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError:
        return
    if head and head != SQLITE_HEADER:
        raise NotADatabase(path, role)


def check_store_paths(paths: Iterable[tuple[str, str | None]]) -> None:
    """:func:`check_store_path` for each (role, path)."""
    for role, path in paths:
        check_store_path(role, path)


def deployment_paths(
    history_path: str | None, ledger_path: str | None, vector_path: str | None
) -> list[tuple[str, str | None]]:
    """(role, path) of every store and side file of a deployment, for :func:`check_store_paths`."""
    out: list[tuple[str, str | None]] = [
        ("vector_store", vector_path),
        ("history_db", history_path),
        ("ledger", ledger_path),
    ]
    return out + list(side_files(ledger_path, history_path, vector_path).items())


def overlaps(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` are the same, or one is inside the other (links resolved): removing one
    would remove (part of) the other."""
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    return ra == rb or ra.startswith(rb.rstrip(os.sep) + os.sep) or rb.startswith(ra.rstrip(os.sep) + os.sep)
