"""The library's exceptions (and :func:`require`, the import of an optional extra that raises one). None of them
come from click; the CLI turns them into messages."""

from __future__ import annotations

import importlib
from typing import Any


class HygieneError(Exception):
    """Base class: every error says what went wrong and what to do about it."""


class ConfigError(HygieneError, ValueError):
    """A hygiene setting or a mem0 config value is malformed."""


class MemoryNotFound(HygieneError, ValueError):
    """No memory with that id exists in the store or the ledger (a ValueError, as in mem0)."""

    def __init__(self, memory_id: str, hint: str = "") -> None:
        self.memory_id = memory_id
        msg = f"no memory with id {memory_id!r}"
        if hint:
            msg += f"; {hint}"
        super().__init__(msg)


class StateError(HygieneError, ValueError):
    """The memory is in a state that does not allow the operation (deleted, superseded, ...)."""


class SupersedeError(StateError):
    """A supersede request would break the chain (cycle, stale target, self link)."""


class LedgerError(HygieneError):
    """The ledger file is missing, not a ledger, too new, or cannot be written."""


class MissingSource(HygieneError, ValueError):
    """`hygiene.require_source` is on and a write came without a source."""


class VolatileStoreError(HygieneError):
    """A store sits on a RAM-backed filesystem and `hygiene.on_volatile` is "error"."""


class StoreLocked(HygieneError):
    """A local Qdrant folder is held by another process (local Qdrant allows one)."""


class ReadOnlyStore(HygieneError):
    """A write was asked of a store opened read-only (a local Qdrant folder this process may only read)."""


class RelocateError(HygieneError):
    """A store cannot be moved: nothing to move, the destination is taken, or a copy failed verification."""


class MissingExtra(HygieneError, ImportError):
    """An optional dependency is not installed; the message names the extra that brings it in.

    Fields:
        package: the missing import ("pandas", "matplotlib").
        extra: the extra to install ("notebook").
    """

    def __init__(self, package: str, extra: str = "notebook", feature: str = "this") -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} needs {package}, which is not installed; install the {extra} extra: "
            f'pip install "mem0-hygiene[{extra}]"',
            name=package,
        )


def require(package: str, feature: str = "inspect()") -> Any:
    """Import an optional dependency of the notebook extra (pandas, numpy, matplotlib), or raise
    :class:`MissingExtra` naming ``feature`` and the extra to install."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingExtra(package, "notebook", feature) from None


class BackupError(HygieneError):
    """A backup, restore or erasure could not be completed: a copy failed its check, a backup set is
    incomplete or damaged, or a step failed (what was changed is put back, and the message says so)."""


class StoreMissing(HygieneError):
    """The config names a local Qdrant folder that holds no store."""


class EmbedderUnavailable(ConfigError):
    """The app's embedder cannot start here (typically: its API key is not set), so new text cannot be
    embedded. Reading and deleting need no embedder; use them, or set the key."""


class CollectionNotFound(ConfigError):
    """The vector store has collections, but not the one the config names (a wrong ``collection_name``): told
    apart from lost memories before anything is read, so no restore is advised on a wrong name.

    Fields:
        collection: the name the config gave.
        present: the collections the store holds.
    """

    def __init__(self, where: str, collection: str, present: list[str]) -> None:
        self.collection = collection
        self.present = present
        own = [n for n in present if not n.endswith("_entities")] or present
        super().__init__(
            f"the vector store at {where} has no collection {collection!r}; it holds {', '.join(map(repr, present))}. "
            f"Nothing was read or changed. Name the app's collection: --collection {own[0]} (or "
            f"vector_store.config.collection_name in the app's config)"
        )


class NotADatabase(ConfigError):
    """A path the config names as one of the SQLite stores (mem0's history.db, the ledger) holds something else:
    named, with what to check, before anything is opened (sqlite3 would say only "file is not a database").

    Fields:
        path: the file.
        role: "history_db" or "ledger".
    """

    def __init__(self, path: str, role: str) -> None:
        self.path, self.role = path, role
        what, option = (
            ("mem0's history database", "--history-db / history_db_path")
            if role == "history_db"
            else ("the mem0-hygiene ledger", "--ledger / hygiene.ledger_path")
        )
        super().__init__(
            f"{path} is not a SQLite database, so it cannot be {what}; nothing was read or changed. "
            f"Check that {option} names the right file"
        )


class NotAStorePath(ConfigError):
    """A store path of the config holds something no store can be (a FIFO, a socket, a device, a folder where a
    file is expected, a file where the Qdrant folder is expected): named before anything opens it (reading a
    FIFO's header would block forever).

    Fields:
        path: the path.
        role: "vector_store", "history_db", "ledger", or a side file ("backup_record", "copies_registry",
            "restore_journal").
        found: what is there ("a FIFO (named pipe)", "a socket", "a device", "a folder", "a file").
        expected: "a file" or "a folder".
    """

    WHAT = {
        "vector_store": ("the local Qdrant store", "vector_store.config.path / --qdrant-path"),
        "history_db": ("mem0's history database", "history_db_path / --history-db"),
        "ledger": ("the mem0-hygiene ledger", "hygiene.ledger_path / --ledger"),
        "backup_record": ("the backup record", "hygiene.ledger_path / --ledger (it lives beside the ledger)"),
        "copies_registry": ("the registry of copies", "hygiene.ledger_path / --ledger (it lives beside the ledger)"),
        "restore_journal": ("the restore journal", "hygiene.ledger_path / --ledger (it lives beside the ledger)"),
    }

    def __init__(self, path: str, role: str, found: str, expected: str) -> None:
        self.path, self.role, self.found, self.expected = path, role, found, expected
        what, option = self.WHAT.get(role, (role, "the config"))
        super().__init__(
            f"{path} is {found}, not {expected}, so it cannot be {what}; nothing was read or changed. "
            f"Move it away, or check that {option} names the right path"
        )


class Interrupted(HygieneError):
    """A long operation stopped at a safe point because its caller asked it to (the CLI on Ctrl-C; see
    :func:`mem0_hygiene.progress.request_stop`). What was done is kept; running it again finishes the rest.

    Fields:
        phase: what it was doing ("deleting memories through mem0").
        done: the items of that phase finished.
        total: the phase's items, None when not known.
    """

    def __init__(self, phase: str, done: int, total: int | None) -> None:
        self.phase, self.done, self.total = phase, done, total
        counts = f"{done} of {total}" if total is not None else str(done)
        super().__init__(
            f"stopped at a safe point while {phase} ({counts} done); what was done is kept, and "
            "running the same command again finishes the rest"
        )


class AuditError(HygieneError):
    """The audit could not run at all (nothing readable at the configured locations)."""


class InspectionError(HygieneError):
    """Nothing could be read at the configured locations (no vector store, history.db or ledger)."""


class SecretRefused(HygieneError, ValueError):
    """A text to store holds a credential and ``hygiene.secrets`` is "refuse": nothing was stored. The message
    names the kind of credential and which text held it, never the credential itself."""
