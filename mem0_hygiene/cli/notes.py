"""Warnings the libraries underneath print, turned into the CLI's own one-line notes.

Local Qdrant warns, with a Python source line, each time it opens a collection of more than 20,000 points
(an audit or a prune may open the store more than once). The CLI shows that once, as a note with the
advice that applies here; every other warning is shown as Python would.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import click

LARGE_LOCAL = re.compile(
    r"Local mode is not recommended for collections with more than ([\d,]+) points\. "
    r"Collection <(?P<name>[^>]*)> contains (?P<count>\d+) points"
)

_shown: set[str] = set()


def large_store_note(message: str) -> str | None:
    """Our note for local Qdrant's large-collection warning, or None when ``message`` is another warning."""
    match = LARGE_LOCAL.search(message)
    if not match:
        return None
    count = int(match.group("count"))
    return (
        f"note: the local Qdrant collection {match.group('name')} holds {count:,} points; local mode loads "
        "them all into memory each time the store is opened (slow above 20,000). For a store this size run a "
        "Qdrant server and point vector_store.config url/host at it"
    )


def install() -> None:
    """Show local Qdrant's large-collection warning once per run as :func:`large_store_note` on stderr."""
    previous = warnings.showwarning

    def show(
        message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None
    ) -> None:
        note = large_store_note(str(message)) if issubclass(category, UserWarning) else None
        if note is None:
            previous(message, category, filename, lineno, file, line)
            return
        if note.split(";")[0] not in _shown:
            _shown.add(note.split(";")[0])
            click.echo(note, err=True)

    warnings.showwarning = show
