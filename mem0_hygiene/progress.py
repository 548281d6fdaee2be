"""Progress of long operations (prune, backup, restore, relocate, forget with scrubbing, the audit), for
whoever wants to show it.

The library never prints: an operation reports each phase it enters and how far it got through a
callback, and the caller decides what to show (the CLI draws a rich progress display on a terminal). A
callback is any callable ``callback(phase, done, total)``:

- ``phase``: what is being done now, a few words ("deleting memories", "copying the vector store");
- ``done``: how many items of the phase are finished (0 when the phase starts);
- ``total``: how many items the phase has, or ``None`` when that is not known.

Pass one for a block of code, around any library call::

    from mem0_hygiene import maintenance, progress

    with progress.reporting(lambda phase, done, total: print(phase, done, total)):
        maintenance.prune(config)

The callback is a context variable, so it follows the calling thread or task only. An exception raised by
a callback is ignored (progress never breaks the operation it watches). Every report is also a safe point
where a stop asked for by :func:`request_stop` (the CLI's Ctrl-C) takes effect. Nothing here imports rich or
mem0.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Protocol, TypeVar

T = TypeVar("T")


class ProgressCallback(Protocol):
    """What :func:`reporting` takes: called with the phase, the items done and the total (None: unknown)."""

    def __call__(self, phase: str, done: int, total: int | None) -> None: ...


_CURRENT: ContextVar[ProgressCallback | None] = ContextVar("mem0_hygiene_progress", default=None)


@contextlib.contextmanager
def reporting(callback: ProgressCallback | None) -> Iterator[None]:
    """Within the block, long operations report their phases to ``callback`` (None: to nobody)."""
    token = _CURRENT.set(callback)
    try:
        yield
    finally:
        _CURRENT.reset(token)


_STOP = threading.Event()


def request_stop() -> None:
    """Ask the running operation to stop at its next safe point: the next :func:`report` (each item of a phase
    is finished by then, and every multi-step operation is journaled) raises
    :class:`~mem0_hygiene.errors.Interrupted`. The CLI calls it on the first Ctrl-C; safe from a signal
    handler."""
    _STOP.set()


def clear_stop() -> None:
    """Forget a stop request that no operation took up."""
    _STOP.clear()


def report(phase: str, done: int = 0, total: int | None = None) -> None:
    """Tell the caller's callback (if any) how far ``phase`` got; cheap when nobody listens. A safe point: when
    a stop was requested (:func:`request_stop`), raises :class:`~mem0_hygiene.errors.Interrupted`."""
    callback = _CURRENT.get()
    if callback is not None:
        try:
            callback(phase, done, total)
        except Exception:  # noqa: BLE001 - a display must never break the operation it shows
            pass
    if _STOP.is_set():
        from .errors import Interrupted

        _STOP.clear()
        raise Interrupted(phase, done, total)


def counted(phase: str, items: Iterable[T], total: int | None = None) -> Iterator[T]:
    """Yield ``items``, reporting ``phase`` before the first and after each one (``total`` defaults to
    ``len(items)`` when it has one)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    report(phase, 0, total)
    done = 0
    for item in items:
        yield item
        done += 1
        report(phase, done, total)


@contextlib.contextmanager
def step(phase: str) -> Iterator[None]:
    """A phase of one indivisible step (copying a file, swapping the stores): reported as 0 of 1 when it
    starts and 1 of 1 when it ends, so a display shows what is under way and how long it took."""
    report(phase, 0, 1)
    yield
    report(phase, 1, 1)
