"""The journal of a relocation in progress: what moves where, so a rerun after a crash resumes it.

:func:`~mem0_hygiene.actions.relocate.relocate` writes ``DEST/.mem0-hygiene.relocating-journal.json`` before
it copies anything, rewrites it as each copy is verified (with the source's signature at copy time, so a
rerun can tell whether the source changed since), and removes it as the very last step. While it exists, a
rerun with the same destination picks the relocation up where it stopped instead of refusing because
DEST already holds a store: the journal is what proves that store is this relocation's own copy.
A store marked ``switched`` (written before ``remove_source`` removes the links) is done: a rerun never copies
its old path again, whatever is there by then.
Each write is durable (:func:`~mem0_hygiene.stores.durable.write_json`: temp file, fsync, ``os.replace``, folder
fsynced); a temporary file a crash left is removed.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ..errors import RelocateError
from ..stores.durable import read_json, remove_file, write_json

JOURNAL_NAME = ".mem0-hygiene.relocating-journal.json"
JOURNAL_FORMAT = "mem0-hygiene-relocation"
ROLES = ("vector_store", "history_db", "ledger", "backup_record", "copies_registry")
KINDS = ("qdrant", "chroma", "faiss", "sqlite", "file")
"""What each journaled move is: a vector-store folder of its provider, a SQLite database, or a plain file."""


def journal_path(to_dir: str) -> str:
    return os.path.join(to_dir, JOURNAL_NAME)


def _remove_temporaries(to_dir: str) -> None:
    try:
        names = os.listdir(to_dir)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(JOURNAL_NAME + "."):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(to_dir, name))


def signature_of(value: Any) -> tuple[tuple[str, int, int], ...] | None:
    """A signature read back from JSON (lists) as the tuples the stores layer compares."""
    if value is None:
        return None
    return tuple((str(a), int(b), int(c)) for a, b, c in value)


def read_journal(to_dir: str) -> dict[str, Any] | None:
    """The journal in ``to_dir`` (None when there is none); :class:`RelocateError` when it is unreadable."""
    path = journal_path(to_dir)
    doc = read_json(
        path,
        lambda why: RelocateError(
            f"the relocation journal {path} cannot be read ({why}); check that every store is intact at its old path, "
            "then delete the journal and run again"
        ),
    )
    if doc is None:
        return None
    moves = doc.get("moves") if isinstance(doc, dict) else None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != JOURNAL_FORMAT
        or not isinstance(moves, list)
        or not all(
            isinstance(m, dict)
            and m.get("role") in ROLES
            and m.get("kind") in KINDS
            and all(isinstance(m.get(k), str) for k in ("source", "store", "destination"))
            for m in moves
        )
    ):
        raise RelocateError(f"{path} is not a mem0-hygiene relocation journal; move it away and run again")
    return doc


def write_journal(to_dir: str, moves: list[dict[str, Any]], remove_source: bool) -> None:
    """Write (or rewrite) the journal atomically."""
    _remove_temporaries(to_dir)
    doc = {"format": JOURNAL_FORMAT, "version": 1, "remove_source": remove_source, "moves": moves}
    write_json(journal_path(to_dir), doc, prefix=JOURNAL_NAME + ".")


def remove_journal(to_dir: str) -> None:
    """The relocation is complete: remove the journal (and any temporary file a crash left)."""
    _remove_temporaries(to_dir)
    remove_file(journal_path(to_dir))
