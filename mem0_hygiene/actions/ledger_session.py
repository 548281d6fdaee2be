"""The stores a ``confirm`` or ``invalidate`` needs, and no more: :func:`ledger_session`.

A memory the ledger has a row of is confirmed or invalidated in the ledger alone, and its text is read from
history.db, so from outside the app nothing opens the vector store: the commands work while the app holds a
local Qdrant folder, on a SQLite or a PostgreSQL ledger. Only a memory without a row (written by plain mem0,
not adopted yet) needs the vector store, to be adopted from its point first; while another process holds that
store, the refusal says so and what to run instead. In-process, the app's own Memory, ledger and history.db
connection are used (its buffered rows flushed first), so both routes give the same rows and the same output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, LedgerError, MemoryNotFound, StoreLocked
from ..stores.history import HistoryAndLedger
from ..stores.ledger import Ledger, LedgerRow, open_ledger
from ..target import IN_PROCESS_HINTS, Target, is_dropin
from ..timeutil import as_utc, system_clock

if TYPE_CHECKING:
    from ..memory.core import Memory


def last_text(events: Sequence[tuple[Any, ...]]) -> str | None:
    """A memory's text after its history.db events (``HISTORY_COLUMNS`` rows, oldest first): the newest text
    written, or the text a DELETE removed; None when the events hold none."""
    text = None
    for _mid, event, old, new, _created, _updated in events:
        if new is not None:
            text = new
        elif str(event).upper() == "DELETE" and old is not None:
            text = old
    return text


def ledger_now(target: Target, ledger: Ledger) -> datetime:
    """The time a change is stamped with, as the drop-in takes it (:meth:`Memory.now`): the injected
    ``hygiene.clock``, else the ledger's clock (a PostgreSQL ledger's is the database server's)."""
    clock = target.clock
    return as_utc(ledger.now() if clock is system_clock else clock())


@dataclass
class LedgerSession:
    """What a confirm or invalidate works with.

    Fields:
        ledger: the ledger to change (read-only for a dry run from outside the app).
        now: the time changes are stamped with.
        reader: history.db (read-only) and the same ledger, for the memories' texts.
        memory: the drop-in Memory when one is open (the app's own, or one opened to adopt an untracked
            memory); None when the ledger alone is used.
    """

    ledger: Ledger
    now: datetime
    reader: HistoryAndLedger
    memory: Memory | None = None
    other_histories: tuple[str, ...] = ()
    """The other hosts' history.db files (``hygiene.history_dbs``): a replica's memory's text is in its own."""
    _others_open: list[HistoryAndLedger] | None = field(default=None, repr=False)

    def rows(self, memory_ids: Sequence[str]) -> dict[str, LedgerRow]:
        """The ledger rows of these memories; :class:`MemoryNotFound` for one that has none (compacted since)."""
        found = self.ledger.get_many(list(memory_ids))
        for mid in memory_ids:
            if mid not in found:
                raise MemoryNotFound(mid, "the ledger has no row of it (was it deleted and compacted meanwhile?)")
        return found

    def text(self, memory_id: str) -> str | None:
        """The memory's text: from history.db, else (with an open Memory) from its point in the vector store,
        else from the other hosts' history.db files (a memory another replica wrote)."""
        found = last_text(self.reader.history_for([memory_id]).get(memory_id, []))
        if found is None and self.memory is not None:
            from .prune import memory_text

            found = memory_text(self.memory, memory_id)
        if found is None and self.other_histories:
            if self._others_open is None:  # opened once for the session (closed with it)
                self._others_open = [
                    HistoryAndLedger.open(self.now, path, "", ledger=self.ledger) for path in self.other_histories
                ]
            for other in self._others_open:
                found = last_text(other.history_for([memory_id]).get(memory_id, []))
                if found is not None:
                    break
        return found

    def close(self) -> None:
        """Close the other hosts' history.db files this session opened."""
        for other in self._others_open or ():
            other.close()
        self._others_open = None


def untracked_refusal(
    target: Target, memory_ids: Sequence[str], holder: str, action: str, reader: HistoryAndLedger | None
) -> StoreLocked:
    """The error for memories the ledger has no row of while another process holds the vector store."""
    known = reader.history_for(memory_ids) if reader is not None else {}
    first = memory_ids[0]
    what = (
        "a memory plain mem0 wrote, or one the app wrote a moment ago and has not recorded yet"
        if first in known
        else "history.db does not know it either: check the id, or it was written around mem0"
    )
    more = f" (and {len(memory_ids) - 1} more)" if len(memory_ids) > 1 else ""
    hint = IN_PROCESS_HINTS.get(action, "")
    return StoreLocked(
        f"cannot {action} {first}{more} from the ledger alone: the ledger has no row of it ({what}), so it must be "
        f"adopted from the vector store first, and another process holds the local Qdrant store at {holder}, "
        "most likely the running app: stop the app and run the same command again (or `mem0-hygiene adopt`, then "
        "this command while the app runs)" + (f", or run it inside the app. {hint}" if hint else ".")
    )


@contextlib.contextmanager
def ledger_session(
    target: Target, action: str, memory_ids: Sequence[str], *, readonly: bool = False
) -> Iterator[LedgerSession]:
    """The :class:`LedgerSession` for ``action`` ("confirm", "invalidate") on these memories, closed after.

    In-process: the app's Memory (an untracked memory is adopted from its store). From a config: the ledger
    alone when it has a row of every memory (read-only with ``readonly``); otherwise the drop-in Memory is
    opened to adopt them (over a scratch copy of the ledger with ``readonly``), which while another process
    holds the local Qdrant folder is refused (:class:`StoreLocked`, naming the memory and what to run instead).
    """
    ids = list(dict.fromkeys(memory_ids))
    memory = target.memory
    if memory is not None:
        if not is_dropin(memory):
            raise ConfigError(
                "pass the drop-in mem0_hygiene.Memory (or a config dict), not plain mem0.Memory: "
                "plain mem0 has no ledger to keep the maintenance facts in"
            )
        for mid in ids:
            memory.require_row(mid)  # flushes the buffered rows; adopts a memory only the store knows
        now = memory.now()
        with HistoryAndLedger.open(
            now, target.history_path, target.ledger_path, ledger=memory.ledger, history=memory.db.connection
        ) as own:
            with contextlib.closing(LedgerSession(memory.ledger, now, own, memory, _others(target))) as session:
                yield session
        return
    with contextlib.ExitStack() as stack:
        unreadable: LedgerError | None = None
        try:
            reader: HistoryAndLedger | None = stack.enter_context(
                HistoryAndLedger.open(target.now(), target.history_path, target.ledger_path)
            )
        except LedgerError as exc:  # no ledger yet (or none readable): only the vector store can know the ids
            reader, unreadable = None, exc
        missing = (
            ids if reader is None or reader.ledger is None else [mid for mid in ids if mid not in reader.rows(ids)]
        )
        if reader is not None and reader.ledger is not None and not missing:
            ledger = (
                reader.ledger if readonly else stack.enter_context(contextlib.closing(open_ledger(target.ledger_path)))
            )
            yield stack.enter_context(
                contextlib.closing(LedgerSession(ledger, ledger_now(target, ledger), reader, None, _others(target)))
            )
            return
        holder = target.lock_holder()
        if holder and unreadable is not None:
            raise unreadable
        if holder:
            raise untracked_refusal(target, missing, holder, action, reader)
        m = target.open_memory(action=action, readonly=readonly)
        stack.callback(m.close)
        for mid in ids:
            m.require_row(mid)
        opened = stack.enter_context(
            HistoryAndLedger.open(
                m.now(), target.history_path, target.ledger_path, ledger=m.ledger, history=m.db.connection
            )
        )
        yield stack.enter_context(contextlib.closing(LedgerSession(m.ledger, m.now(), opened, m, _others(target))))


def _others(target: Target) -> tuple[str, ...]:
    return tuple(f.path for f in target.history_files[1:])


__all__ = ["LedgerSession", "last_text", "ledger_now", "ledger_session", "untracked_refusal"]
