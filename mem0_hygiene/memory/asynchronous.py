"""The drop-in ``AsyncMemory``: mem0's ``AsyncMemory`` API (awaitable methods, ``from_config``, ``async with``)
over the same hygiene ledger and rules as the drop-in ``Memory``, plus the hygiene verbs, all awaitable.

How it is built, and why. It owns one drop-in :class:`~mem0_hygiene.memory.core.Memory` and runs every call in a
worker thread of its own pool, one call at a time inside the Memory (a gate: one lock):

- local Qdrant's client is not thread-safe (its collections are plain Python objects; an insert from one thread
  can be lost, or a search can see arrays of different lengths, while another thread writes), and mem0's own
  ``AsyncMemory`` calls it from many threads at once (``asyncio.to_thread`` per store call, ``gather`` in
  ``delete_all``). Behind the gate only one thread at a time touches the store, the ledger buffers and mem0's
  entity store (which shares the same client);
- the hygiene rules read and then write (the write-time decision looks for the nearest live memory, then
  stores or reinforces; a delete tombstones the chain, then deletes through mem0): a whole call inside the gate
  is atomic with respect to every other call, as it is in the sync Memory;
- the one exception is the LLM. While a call waits for ``llm.generate_response`` (mem0's fact extraction on
  ``add(infer=True)``, seconds with a real model) it steps out of the gate, so concurrent adds overlap their
  model calls the way mem0's ``AsyncMemory`` does, and reads are not stuck behind them. mem0 only reads before
  that call (the recent messages and memories it shows the model) and writes after it, so stepping out changes
  nothing but what the model is shown: exactly what concurrent adds see in mem0's ``AsyncMemory``. Embedding
  calls stay inside (the write-time decision embeds between its read and its write);
- the pool is its own (as many threads as asyncio's default executor), so calls waiting at the gate never hold
  threads of the event loop's default executor, and the work is done in the caller's ``contextvars`` context,
  as ``asyncio.to_thread`` does.

Reimplementing the hygiene layer over mem0's async internals would duplicate every rule of the sync Memory and
still need the same serialization for local Qdrant; the class instead subclasses mem0's ``AsyncMemory`` only so
that ``isinstance(m, mem0.AsyncMemory)`` holds (Microsoft Agent Framework's Mem0 provider tells the OSS memory
from the platform client that way) and never runs its ``__init__`` (that would open the local Qdrant folder a
second time). mem0's instance attributes (``config``, ``vector_store``, ``db``, ``llm``, ...) are the wrapped
Memory's, read and written through; mem0's private coroutines are inherited as they are and bypass the ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import threading
from collections.abc import Awaitable, Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any, TypeVar

from mem0 import AsyncMemory as Mem0AsyncMemory
from mem0.configs.base import MemoryConfig

from ..config import ConfigFacts, HygieneSettings
from ..errors import StateError
from ..stores.ledger import Ledger
from .core import Memory

T = TypeVar("T")
_UNSET: Any = object()
_PROCEDURAL = "procedural_memory"  # mem0.configs.enums.MemoryType.PROCEDURAL.value
_OWN = frozenset({"_sync", "_gate", "_pool"})


class _Gate:
    """One thread at a time inside the wrapped Memory; the holder may step out while it waits for its LLM.
    Also counts the calls admitted and not yet finished, so ``close()`` can wait for them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holder: int | None = None
        self._changed = threading.Condition()
        self._calls = 0
        self.closing = False

    def admit(self) -> None:
        with self._changed:
            if self.closing:
                raise StateError("this AsyncMemory is closed; build a new one (AsyncMemory.from_config(config))")
            self._calls += 1

    def finished(self, _future: object = None) -> None:
        with self._changed:
            self._calls -= 1
            self._changed.notify_all()

    def start_closing(self) -> bool:
        """Refuse new calls; False when another close() got here first."""
        with self._changed:
            first, self.closing = not self.closing, True
            return first

    def wait_idle(self) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._calls == 0)

    @contextlib.contextmanager
    def inside(self) -> Iterator[None]:
        with self._lock:
            self._holder = threading.get_ident()
            try:
                yield
            finally:
                self._holder = None

    @contextlib.contextmanager
    def stepped_out(self) -> Iterator[None]:
        """Let other calls in for the duration (a no-op in a thread that is not inside)."""
        if self._holder != threading.get_ident():
            yield
            return
        self._holder = None
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._holder = threading.get_ident()


class _SteppingOutLLM:
    """The wrapped Memory's LLM: ``generate_response`` runs outside the gate; everything else is the LLM's."""

    def __init__(self, llm: Any, gate: _Gate) -> None:
        self.wrapped = llm
        self._gate = gate

    def generate_response(self, *args: Any, **kwargs: Any) -> Any:
        with self._gate.stepped_out():
            return self.wrapped.generate_response(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


class _LangChainLLM:
    """``add(..., llm=)`` for procedural memory: a LangChain chat model answering as mem0's ``AsyncMemory`` asks
    it (``llm.invoke(input=messages)``, the reply's ``content``)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def generate_response(self, messages: list[dict[str, Any]], **_kwargs: Any) -> Any:
        try:
            from langchain_core.messages.utils import convert_to_messages
        except ImportError as e:  # mem0's message, word for word
            raise ImportError(
                "langchain-core is required to pass a custom LLM to procedural memory. "
                "Install it with 'pip install langchain-core'."
            ) from e
        return self.llm.invoke(input=convert_to_messages(messages)).content


class _Closed:
    """What ``close()`` returns: the closing is done, and ``await m.close()`` is allowed too."""

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # makes this a generator


class AsyncMemory(Mem0AsyncMemory):
    """mem0's ``AsyncMemory`` with the hygiene ledger: same constructor, ``from_config``, awaitable methods,
    arguments and result shapes; result items carry one extra key, ``"hygiene"``. Every hygiene argument and
    verb of the drop-in ``Memory`` is here too, awaitable: ``confirm``, ``supersede``, ``invalidate``,
    ``review_queue``, ``prune``, ``adopt``, ``flush`` (and ``backup``, ``forget`` on the package's export,
    :class:`mem0_hygiene.AsyncMemory`). ``close()`` works awaited or not,
    and ``async with AsyncMemory.from_config(config) as m:`` closes it at the end.

    Safe to share between any number of coroutines (and event loops, and threads): see the module docstring for
    how calls are serialized.
    """

    _sync: Memory
    _gate: _Gate
    _pool: ThreadPoolExecutor

    def __init__(
        self,
        config: MemoryConfig | None = None,
        *,
        hygiene: HygieneSettings | dict[str, Any] | None = None,
        clock: Callable[[], datetime] | None = None,
        config_facts: ConfigFacts | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        # mem0's AsyncMemory.__init__ is not run: the wrapped Memory opens the stores (once)
        self._attach(Memory(config, hygiene=hygiene, clock=clock, config_facts=config_facts, ledger=ledger))

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> AsyncMemory:
        """Build from a mem0 config dict with an optional ``"hygiene"`` section (as ``Memory.from_config``)."""
        self = cls.__new__(cls)
        self._attach(Memory.from_config(config_dict))
        return self

    def _attach(self, memory: Memory) -> None:
        gate = _Gate()
        object.__setattr__(self, "_sync", memory)
        object.__setattr__(self, "_gate", gate)
        object.__setattr__(
            self,
            "_pool",
            ThreadPoolExecutor(max_workers=min(32, (os.cpu_count() or 1) + 4), thread_name_prefix="mem0-hygiene-async"),
        )
        memory.llm = _SteppingOutLLM(memory.llm, gate)

    # mem0's instance attributes are the wrapped Memory's (it replaces vector_store and db on reset)
    def __getattr__(self, name: str) -> Any:
        if name in _OWN or name.startswith("__"):
            raise AttributeError(name)
        inner = vars(self._sync)
        if name not in inner:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = inner[name]
        return value.wrapped if isinstance(value, _SteppingOutLLM) else value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _OWN and "_sync" in vars(self) and name in vars(self._sync):
            if name == "llm":
                value = _SteppingOutLLM(value, self._gate)
            setattr(self._sync, name, value)
        else:
            object.__setattr__(self, name, value)

    @property
    def entity_store(self) -> Any:
        """mem0's entity store (the wrapped Memory's; it shares the vector store's client)."""
        return self._sync.entity_store

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` in a worker thread, inside the gate, in the caller's context."""
        gate = self._gate
        gate.admit()
        context = contextvars.copy_context()

        def work() -> T:
            with gate.inside():
                return context.run(fn, *args, **kwargs)

        try:
            future: Future[T] = self._pool.submit(work)
        except RuntimeError:  # the pool was shut down by a close() racing this call
            gate.finished()
            raise StateError("this AsyncMemory is closed; build a new one (AsyncMemory.from_config(config))") from None
        future.add_done_callback(gate.finished)
        return await asyncio.wrap_future(future)

    # -- mem0's methods ---------------------------------------------------------------------------------
    async def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        llm: Any = None,
        source: str | None = None,
        source_kind: str | None = None,
        ttl: timedelta | str | None = None,
        expires_at: datetime | str | None = None,
        topic_key: str | None = None,
    ) -> dict[str, Any]:
        """mem0's ``add`` plus provenance and expiry (see ``Memory.add``). ``llm``: a LangChain chat model for a
        procedural memory (``memory_type="procedural_memory"`` with an ``agent_id``), as in mem0."""
        call = functools.partial(
            self._sync.add,
            messages,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            metadata=metadata,
            timestamp=timestamp,
            expiration_date=expiration_date,
            infer=infer,
            memory_type=memory_type,
            prompt=prompt,
            source=source,
            source_kind=source_kind,
            ttl=ttl,
            expires_at=expires_at,
            topic_key=topic_key,
        )
        if llm is not None and agent_id is not None and memory_type == _PROCEDURAL:
            return await self._call(self._with_llm, _LangChainLLM(llm), call)
        return await self._call(call)

    def _with_llm(self, llm: Any, call: Callable[[], T]) -> T:
        # inside the gate, never stepping out: no other call sees the borrowed LLM
        own = self._sync.llm
        self._sync.llm = llm
        try:
            return call()
        finally:
            self._sync.llm = own

    async def get(self, memory_id: str, *, source: str | None = None) -> dict[str, Any] | None:
        """mem0's ``get``, whatever the memory's state; ``["hygiene"]["state"]`` says which."""
        return await self._call(self._sync.get, memory_id, source=source)

    async def get_all(
        self,
        *,
        filters: dict[str, Any] | None = None,
        top_k: int = 20,
        show_expired: bool = False,
        include_stale: bool = False,
        as_of: datetime | str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """mem0's ``get_all`` over live memories only (see ``Memory.get_all``)."""
        return await self._call(
            self._sync.get_all,
            filters=filters,
            top_k=top_k,
            show_expired=show_expired,
            include_stale=include_stale,
            as_of=as_of,
            since=since,
            until=until,
            source=source,
            **kwargs,
        )

    async def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: dict[str, Any] | None = None,
        threshold: float = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        include_stale: bool = False,
        as_of: datetime | str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        source: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """mem0's ``search`` over live memories only; ``top_k=k`` returns min(k, live matches) (see
        ``Memory.search``)."""
        return await self._call(
            self._sync.search,
            query,
            top_k=top_k,
            filters=filters,
            threshold=threshold,
            rerank=rerank,
            explain=explain,
            reference_date=reference_date,
            show_expired=show_expired,
            include_stale=include_stale,
            as_of=as_of,
            since=since,
            until=until,
            source=source,
            **kwargs,
        )

    async def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, Any]:
        """mem0's ``update``; a new text counts as a confirmation, an expiration date is recorded."""
        given = {} if expiration_date is _UNSET else {"expiration_date": expiration_date}
        return await self._call(self._sync.update, memory_id, text=text, metadata=metadata, data=data, **given)

    async def delete(self, memory_id: str) -> dict[str, Any]:
        """mem0's ``delete``, plus the memories this one superseded and a tombstone (see ``Memory.delete``)."""
        return await self._call(self._sync.delete, memory_id)

    async def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """mem0's ``AsyncMemory.delete_all``: a memory that fails to delete is logged and the rest are deleted all
        the same; the scope's ledger rows (and their chains) are tombstoned first, the failed ones restored
        (see ``Memory.delete_all_each``)."""
        return await self._call(self._sync.delete_all_each, user_id=user_id, agent_id=agent_id, run_id=run_id)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        """mem0's ``history`` of a memory (history.db's rows, oldest first)."""
        return await self._call(self._sync.history, memory_id)

    async def reset(self) -> None:
        """mem0's ``reset``; every ledger row is tombstoned."""
        await self._call(self._sync.reset)

    # -- hygiene verbs --------------------------------------------------------------------------------------
    async def confirm(self, memory_id: str) -> dict[str, Any]:
        """Mark a memory as re-checked against its source today; releases it from quarantine."""
        return await self._call(self._sync.confirm, memory_id)

    async def supersede(
        self,
        old_id: str,
        text: str | None = None,
        *,
        new_id: str | None = None,
        source: str | None = None,
        source_kind: str | None = None,
        ttl: timedelta | str | None = None,
        expires_at: datetime | str | None = None,
        topic_key: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Replace ``old_id`` by a new fact (``text``) or an existing memory (``new_id=``); returns the new id."""
        return await self._call(
            self._sync.supersede,
            old_id,
            text,
            new_id=new_id,
            source=source,
            source_kind=source_kind,
            ttl=ttl,
            expires_at=expires_at,
            topic_key=topic_key,
            metadata=metadata,
        )

    async def invalidate(self, memory_id: str, reason: str = "") -> None:
        """Declare a memory untrue (soft delete with a date); kept for audit until prune."""
        await self._call(self._sync.invalidate, memory_id, reason)

    async def review_queue(
        self, older_than: timedelta | str | None = None, limit: int = 20, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Live, non-expiring memories due for review, oldest confirmation first (see ``Memory.review_queue``)."""
        return await self._call(self._sync.review_queue, older_than, limit, filters)

    async def prune(self, dry_run: bool = False) -> Any:
        """Delete expired memories and those superseded/invalidated long ago; returns a ``PruneResult``."""
        return await self._call(self._sync.prune, dry_run)

    async def adopt(self) -> int:
        """Give every memory without a ledger row one (source "unknown"); returns how many."""
        return await self._call(self._sync.adopt)

    async def flush(self) -> None:
        """Write the buffered ledger rows now."""
        await self._call(self._sync.flush)

    # -- closing --------------------------------------------------------------------------------------------
    def close(self) -> Awaitable[None]:
        """Flush and close the ledger, mem0's history db and the vector-store client, once the calls already
        made have finished (later calls raise :class:`~mem0_hygiene.errors.StateError`). Synchronous, as mem0's
        ``AsyncMemory.close``, so it blocks until then; the result may be awaited too. ``async with`` closes
        without blocking the event loop."""
        self._shut()
        return _Closed()

    def _shut(self) -> None:
        if "_gate" not in vars(self) or not self._gate.start_closing():
            return  # closed already, or never built (an __init__ that raised): nothing to release
        self._gate.wait_idle()
        try:
            with self._gate.inside():
                self._sync.close()
        finally:
            self._pool.shutdown(wait=False)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        await asyncio.to_thread(self._shut)
        return False
