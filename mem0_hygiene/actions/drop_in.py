"""The drop-in classes as the package exports them (``from mem0_hygiene import Memory, AsyncMemory``).

They are ``memory/``'s :class:`~mem0_hygiene.memory.core.Memory` and
:class:`~mem0_hygiene.memory.asynchronous.AsyncMemory` plus the two operations on the whole deployment that an app
runs on its own live Memory: :meth:`Memory.backup` and :meth:`Memory.forget` (through the app's open vector-store
client, so they work while the app holds the local Qdrant lock). Those operations resolve and lock the deployment
(:mod:`mem0_hygiene.target`, which opens ``memory/``'s Memory), so they sit here, above ``memory/``, and ``memory/``
imports nothing of this layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..memory.asynchronous import AsyncMemory as _AsyncCore
from ..memory.core import Memory as _Core
from .backup import BackupResult, backup
from .forget import ForgetResult, forget


class Memory(_Core):
    __doc__ = (
        (_Core.__doc__ or "")
        + """
    Operations on the whole deployment: :meth:`backup` and :meth:`forget`.
    """
    )

    def backup(self, dest: Any, *, keep: int | None = None, dry_run: bool = False) -> BackupResult:
        """Back up this deployment into a new dated folder under ``dest`` (in-process: through this
        Memory's own open vector-store client, so it works while the app runs and holds the local
        Qdrant lock). See :func:`mem0_hygiene.actions.backup.backup` (``keep=N`` rotates, ``dry_run``
        writes nothing)."""
        self.flush()
        return backup(self, dest, keep=keep, dry_run=dry_run)

    def forget(self, memory_ids: Sequence[str], *, scrub: bool = False, dry_run: bool = False) -> ForgetResult:
        """Delete memories through :meth:`delete` (cascade as usual) and, with ``scrub``, erase their
        text from every store file and verify it byte by byte. ``scrub`` edits mem0's history.db on
        purpose (blanks the text, keeps the event rows). See :func:`mem0_hygiene.actions.forget.forget`."""
        return forget(self, memory_ids, scrub=scrub, dry_run=dry_run)


HygieneMemory = Memory


class AsyncMemory(_AsyncCore):
    __doc__ = _AsyncCore.__doc__

    async def backup(self, dest: Any, *, keep: int | None = None, dry_run: bool = False) -> BackupResult:
        """Back up this deployment into a new dated folder under ``dest`` (see :meth:`Memory.backup`)."""

        def run() -> BackupResult:
            self._sync.flush()
            return backup(self._sync, dest, keep=keep, dry_run=dry_run)

        return await self._call(run)

    async def forget(self, memory_ids: Sequence[str], *, scrub: bool = False, dry_run: bool = False) -> ForgetResult:
        """Delete memories and, with ``scrub``, erase their text from every store file (see :meth:`Memory.forget`)."""
        return await self._call(forget, self._sync, memory_ids, scrub=scrub, dry_run=dry_run)
