"""The library's exceptions. None of them come from click; the CLI turns them into messages."""

from __future__ import annotations


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


class RelocateError(HygieneError):
    """A store cannot be moved: nothing to move, the destination is taken, or a copy failed verification."""
