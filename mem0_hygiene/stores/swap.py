"""One journaled swap engine: stage copies, write down what goes where, swap them in, survive a kill anywhere.

Restore (:mod:`mem0_hygiene.actions.restore`) and relocate (:mod:`mem0_hygiene.actions.relocate`) are each a
list of their own steps over :class:`Swap`; the steps know how to stage, swap and undo one store, the engine
knows the order and what a failure or a kill leaves:

1. **stage**: each step makes its copy beside where it goes (:meth:`Swap.stage`). A failure while staging
   removes this run's staged copies (:meth:`Swap.attempt`), and a journal this run wrote before any swap, so
   the stores are as they were found.
2. **journal**: before the first swap the journal (written by :mod:`.durable`: temp file, fsync, rename, folder
   fsynced) names every step (:meth:`Swap.record`); each step's :meth:`SwapStep.entry` is its line in it.
3. **swap**: each step in order (:meth:`Swap.swap`). A failure from here on is rolled back from the journal when
   the operation can undo (restore: every store moved aside goes back); otherwise the journal stays and the
   next run finishes it (relocate).
4. **finish on rerun**: a journal a killed run left is read by the next run, which finishes it (the same
   operation: :meth:`Swap.resumed` builds the run from the journal's steps, already recorded) or rolls it back
   before doing anything else.
5. **done is never redone**: a step the journal marks ``done`` has let its source go (:meth:`Swap.mark_done`,
   journaled before the first source goes); a rerun never stages it again, whatever its old path holds by then
   (:meth:`Swap.stage` skips it; :func:`check_done` refuses when its destination no longer holds the data).
6. **finish**: the journal is removed as the last step (:meth:`Swap.finish`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar


class SwapStep(Protocol):
    """One store's step: its line in the journal, and whether it is done (its source let go)."""

    done: bool

    def entry(self) -> dict[str, Any]: ...


S = TypeVar("S", bound=SwapStep)


@dataclass(frozen=True)
class SwapJournal:
    """Where a swap is written down: ``write`` records the steps' entries durably, ``remove`` ends the swap."""

    write: Callable[[list[dict[str, Any]]], None]
    remove: Callable[[], None]


class Swap(Generic[S]):
    """A journaled swap of ``steps`` (see the module docstring for the order and the rules)."""

    def __init__(self, steps: list[S], journal: SwapJournal, *, recorded: bool = False) -> None:
        self.steps = steps
        self.journal = journal
        self.recorded = recorded  # the journal names every step: a kill from here on is finished by the next run
        self.attempted: list[S] = []  # the steps this run began to stage

    @classmethod
    def resumed(cls, steps: list[S], journal: SwapJournal) -> Swap[S]:
        """The swap a killed run left, built from its journal's steps (already recorded)."""
        return cls(steps, journal, recorded=True)

    def record(self) -> None:
        """Write the journal: every step's entry."""
        self.journal.write([s.entry() for s in self.steps])
        self.recorded = True

    def stage(
        self, stage_one: Callable[[S], bool], steps: Iterable[S] | None = None, *, record_each: bool = False
    ) -> None:
        """Stage each step not done (``stage_one`` returns whether it made a copy this run); with ``record_each``
        the journal is rewritten after each copy (it then names the copies already verified)."""
        for step in self.steps if steps is None else steps:
            if step.done:
                continue  # never redone from a source that no longer holds the data
            self.attempted.append(step)
            if stage_one(step) and record_each:
                self.journal.write([s.entry() for s in self.steps])

    def swap(self, swap_one: Callable[[S], None], steps: Iterable[S] | None = None) -> None:
        """Swap each step in, in order."""
        for step in self.steps if steps is None else steps:
            swap_one(step)

    def mark_done(self) -> None:
        """Every step has let (or is about to let) its source go: journaled before the first source goes, so a
        rerun never stages one of them again."""
        if not all(s.done for s in self.steps):
            for s in self.steps:
                s.done = True
            self.record()

    @contextmanager
    def attempt(
        self,
        unstage: Callable[[S], None],
        roll_back: Callable[[BaseException], None] | None = None,
        *,
        drop_journal: bool = False,
    ) -> Iterator[None]:
        """Run stage (and swap) inside: an exception before the journal is recorded, or anywhere without
        ``roll_back``, removes this run's staged copies (``unstage`` for each step it began to stage) and, with
        ``drop_journal``, the journal this run wrote (nothing was swapped yet); after the journal is recorded,
        ``roll_back(exc)`` undoes the swap from the journal and raises. The exception propagates either way."""
        try:
            yield
        except BaseException as exc:
            if roll_back is None or not self.recorded:
                for step in self.attempted:
                    unstage(step)
                if drop_journal:
                    self.journal.remove()
                raise
            roll_back(exc)
            raise

    def finish(self) -> None:
        """The swap is over: remove the journal."""
        self.journal.remove()


def check_done(done: bool, holds: bool, refuse: Callable[[], Exception]) -> bool:
    """Whether a step is done (the journal says its source was let go); when it is, its destination must still
    hold the data (``holds``), else ``refuse()`` is raised: it is never redone from its old path."""
    if done and not holds:
        raise refuse()
    return done
