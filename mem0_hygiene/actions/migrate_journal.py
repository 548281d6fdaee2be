"""The journal of a store migration in progress (``mem0-hygiene migrate``), so a rerun after a crash resumes it.

The migration works in a folder beside the destination's history.db, ``.mem0-hygiene.migrating/``
(:func:`work_folder`): ``journal.json`` says which source goes to which destination and the last step finished
(:data:`STEPS`), and ``export.jsonl`` (with its history file) is the copy of the source being moved, written whole
or not at all. The journal is written (durably: :func:`~mem0_hygiene.stores.durable.write_json`) before the first
write to the destination and after each step; it is removed, with the folder, as the very last step. While it
exists, a rerun with the same source and destination takes up the migration where it stopped: the journal is what
proves that a non-empty destination holds this migration's own writes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Any

from ..errors import HygieneError
from ..stores.durable import read_json, remove_file, sync_folder, write_json

WORK_FOLDER = ".mem0-hygiene.migrating"
JOURNAL = "journal.json"
EXPORT = "export.jsonl"
FORMAT = "mem0-hygiene-migration"
STEPS = ("planned", "exported", "imported", "ledger", "verified", "registered")
"""The steps, in order; the journal names the last one finished."""


class MigrationError(HygieneError):
    """A migration that cannot go on (a journal of another migration, a verification that failed); the message
    says what and what to do."""


def work_folder(history_path: str) -> str:
    """The migration's folder, beside the destination's history.db."""
    return os.path.join(os.path.dirname(os.path.abspath(history_path)), WORK_FOLDER)


def read_journal(folder: str) -> dict[str, Any] | None:
    """The journal in ``folder`` (None when there is none); :class:`MigrationError` when it is unreadable."""
    path = os.path.join(folder, JOURNAL)
    doc = read_json(
        path,
        lambda why: MigrationError(
            f"the migration journal {path} cannot be read ({why}); the source is untouched: remove the folder "
            f"{folder} and the destination's stores, then run the migration again"
        ),
    )
    if doc is None:
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("step") not in STEPS:
        raise MigrationError(f"{path} is not a mem0-hygiene migration journal; move {folder} away and run again")
    return doc


def write_journal(folder: str, doc: dict[str, Any], step: str) -> dict[str, Any]:
    """Record ``step`` as finished (the folder is made on the first write)."""
    out = {**doc, "format": FORMAT, "version": 1, "step": step}
    write_json(os.path.join(folder, JOURNAL), out, sort_keys=True, make_folder=True, prefix=f".{JOURNAL}.")
    return out


def done(doc: dict[str, Any] | None, step: str) -> bool:
    """``step`` was finished by the run that wrote ``doc``."""
    return doc is not None and STEPS.index(str(doc["step"])) >= STEPS.index(step)


def clear_temporaries(folder: str) -> None:
    """Remove what a killed export left in the folder (its temporary files); the journal and a whole export
    stay."""
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(folder):
            if name.startswith("."):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(folder, name))


def remove_work(folder: str) -> None:
    """The migration is complete: remove the export copy (it holds the memories, credentials included), then the
    journal, then the folder."""
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(folder)):
            if name != JOURNAL:
                path = os.path.join(folder, name)
                if os.path.isdir(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
    remove_file(os.path.join(folder, JOURNAL))
    with contextlib.suppress(OSError):
        os.rmdir(folder)
    sync_folder(os.path.dirname(folder))
