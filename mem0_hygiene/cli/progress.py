"""The progress display of the long commands: the library's phases (:mod:`mem0_hygiene.progress`) drawn as a
rich progress display on stderr, one line per phase with its counts and elapsed time.

Shown only when stderr is a terminal, and never with ``--json`` or ``--quiet`` (nothing then reaches a pipe or
a log). The display is transient: when the command ends it is replaced by the command's own output.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .group import current_output


class RichProgress:
    """A :class:`~mem0_hygiene.progress.ProgressCallback` drawing each phase as a rich progress task: the phase
    that is running shows a bar (or a spinner when its total is unknown), counts and elapsed time; finished
    phases stay listed with their time."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}
        self.current: str | None = None

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        task = self.tasks.get(phase)
        if task is None:
            if self.current is not None:
                self._finish(self.current)
            task = self.tasks[phase] = self.progress.add_task(phase, total=total)
            self.current = phase
        self.progress.update(task, completed=done, total=total)

    def _finish(self, phase: str) -> None:
        task = self.tasks[phase]
        info = self.progress.tasks[task] if isinstance(task, int) else None
        done = info.completed if info is not None else 0
        self.progress.update(
            task,
            total=max(done, 1) if info is None or info.total is None else info.total,
            completed=done if info is None or info.total is None else info.total,
        )
        self.progress.stop_task(task)

    def close(self, finished: bool = True) -> None:
        """Mark the running phase done (``finished``), or only stop it where it got (the command was stopped
        or failed: its bar must not jump to the end)."""
        if self.current is None:
            return
        if finished:
            self._finish(self.current)
        else:
            self.progress.stop_task(self.tasks[self.current])


def wanted(as_json: bool) -> bool:
    """Whether to draw progress: stderr is a terminal, and neither ``--json`` nor ``--quiet`` was given."""
    import sys

    return not as_json and not current_output().quiet and sys.stderr.isatty()


@contextlib.contextmanager
def progress_shown(as_json: bool = False) -> Iterator[None]:
    """Within the block, the library's phases are drawn on stderr when :func:`wanted`; else nothing."""
    from ..progress import reporting

    if not wanted(as_json):
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    progress = Progress(
        SpinnerColumn(finished_text="[green]✓[/green]"),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    display = RichProgress(progress)
    with progress, reporting(display):
        try:
            yield
        except BaseException:
            display.close(finished=False)
            raise
        display.close()
