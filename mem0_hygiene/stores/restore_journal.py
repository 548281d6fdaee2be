"""The RESTORE JOURNAL: what a restore under way is swapping, kept outside every store it swaps.

A restore moves the current vector store, history.db and ledger aside and puts the backup's copies in their
place, one rename at a time. Before the first of those renames it writes this journal: a small JSON file beside
the ledger, named after it (``hygiene.db`` -> ``hygiene.restore-journal.json``; beside history.db when the ledger
is in memory or on PostgreSQL, beside the vector-store folder when both are; :func:`journal_path_for`), written
atomically (temp file, fsync, ``os.replace``). It cannot live in the ledger: the ledger is one of the files being
swapped (on PostgreSQL, one of the stores being replaced).

It names the backup set, the exact command that finishes the restore, and per store its target, the staged copy
that goes in and the ``<store>.replaced-STAMP`` path the current one goes to. A ledger on PostgreSQL is one step
too (its target the URL without credentials, which the command names through ``--config``): the rows it replaces
are dumped to ``ledger-postgresql.db.replaced-STAMP`` and the set's rows loaded in one transaction that also sets
a mark in the ledger's ``hygiene_meta``, so a rerun knows whether that transaction committed. A pgvector table is
one step the same way (its current rows saved to ``pgvector-TABLE.rows.replaced-STAMP`` beside the journal before
the set's rows are loaded in one transaction; loading either again is harmless), and the command names
``--config`` for it too.

Its ``state`` is ``swapping`` (the next ``restore`` of the same set rolls it forward; another set, or a set that no
longer checks out, rolls it back first), ``undoing`` (a failed restore was putting everything back: the next run
finishes that) or ``erasing`` (``restore --reapply-erasures``: every store is back and the erasures the set
predates, its ``reapply`` receipts, are being applied to it again; the next restore of the same set finishes that,
and a restore of another set is refused until then). The restore removes the journal as its last step. While it is
there, nothing opens the stores: :func:`refuse_while_restoring` raises (the drop-in ``Memory``, backup, digest and
history, the audit), so no process creates a fresh, empty ledger beside a store whose ledger the restore moved
aside, and no app serves a person a restored set brought back before the erasure is re-applied. The one exception
is the re-application itself, in the restoring process: :func:`reapplying` lets it open the stores of an
``erasing`` journal.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shlex
from collections.abc import Iterator
from typing import Any

from ..errors import BackupError
from .durable import read_json, remove_file, write_json
from .paths import SIDE_FILES, side_file

JOURNAL_SUFFIX = SIDE_FILES["restore_journal"]
JOURNAL_FORMAT = "mem0-hygiene-restore-journal"
STATES = ("swapping", "undoing", "erasing")
_REAPPLYING: contextvars.ContextVar[str | None] = contextvars.ContextVar("mem0_hygiene_reapplying", default=None)


def journal_path_for(ledger_path: str | None, history_path: str | None, vector_path: str | None = None) -> str | None:
    """Where the restore journal of a deployment lives (see the module docstring); None when every store is
    in memory or on a server (:func:`~mem0_hygiene.stores.paths.side_file`)."""
    return side_file("restore_journal", ledger_path, history_path, vector_path)


CONFIG_PLACEHOLDER = "APP_CONFIG"
"""Stands for the app's config file in a finish command when the restore was not given it (a PostgreSQL ledger's
URL, password and all, is never written into the journal: the config names it)."""


def finish_command(
    src: str,
    vector_path: str | None,
    collection: str | None,
    history_path: str | None,
    ledger_path: str | None,
    config: str | None = None,
    reapply: bool = False,
    server_vector: bool = False,
) -> str:
    """The CLI command that finishes (rolls forward) an interrupted restore of ``src`` into these stores. A
    ledger on PostgreSQL, or a vector store on a server (``server_vector``: a pgvector table), is named through
    ``--config`` (``config``, else :data:`CONFIG_PLACEHOLDER`), never by its URL. ``reapply``: the restore
    re-applies erasures (``--reapply-erasures``)."""
    parts = ["mem0-hygiene", "restore", src]
    on_postgres = bool(ledger_path and "://" in ledger_path)
    if on_postgres or server_vector:
        parts += ["--config", config or CONFIG_PLACEHOLDER]
    if on_postgres:
        ledger_path = None
    if vector_path:
        parts += ["--qdrant-path", vector_path]
    if collection:
        parts += ["--collection", collection]
    if history_path and history_path != ":memory:":
        parts += ["--history-db", history_path]
    if ledger_path and ledger_path != ":memory:":
        parts += ["--ledger", ledger_path]
    if reapply:
        parts.append("--reapply-erasures")
    return " ".join(shlex.quote(p) for p in [*parts, "--yes"])


def read_journal(path: str | None) -> dict[str, Any] | None:
    """The journal at ``path`` (None when there is none); :class:`BackupError` when it cannot be read."""
    if path is None:
        return None
    doc = read_json(
        path,
        lambda why: BackupError(
            f"the restore journal {path} cannot be read ({why}): a restore was interrupted; compare the stores with "
            "their *.replaced-* copies by hand, then move the journal away"
        ),
    )
    if doc is None:
        return None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != JOURNAL_FORMAT
        or doc.get("state") not in STATES
        or not isinstance(doc.get("steps"), list)
        or not isinstance(doc.get("src"), str)
    ):
        raise BackupError(f"{path} is not a mem0-hygiene restore journal; move it away if you know it is not one")
    return doc


def write_journal(path: str, doc: dict[str, Any]) -> None:
    """Write the journal durably (:func:`~mem0_hygiene.stores.durable.write_json`)."""
    write_json(path, {**doc, "format": JOURNAL_FORMAT, "version": 1}, sort_keys=True, make_folder=True)


def remove_journal(path: str) -> None:
    """The restore is over (finished or undone): remove its journal."""
    remove_file(path)


def unfinished_message(path: str, doc: dict[str, Any], action: str = "open the stores") -> str:
    """One line: which restore is unfinished, why nothing opens the stores, and the command that finishes it."""
    command = doc.get("command") or f"mem0-hygiene restore {shlex.quote(str(doc['src']))} --yes"
    config = (
        f" ({CONFIG_PLACEHOLDER}: the app's config file, which names the database the stores are on)"
        if f"--config {CONFIG_PLACEHOLDER}" in command
        else ""
    )
    if doc.get("state") == "erasing":
        return (
            f"cannot {action}: {doc['src']} was restored into them and the erasures it predates are not yet applied "
            f"to it again (journal {path}), so nothing opens the stores until they are; run `{command}`{config} to "
            "apply them"
        )
    return (
        f"cannot {action}: a restore of {doc['src']} into them was interrupted (started {doc.get('started_at')}; "
        f"journal {path}) and the stores may be half swapped, so nothing opens them until it is finished; run "
        f"`{command}`{config} to finish it (restoring another set instead rolls it back first)"
    )


def refuse_while_restoring(
    ledger_path: str | None, history_path: str | None, vector_path: str | None = None, action: str = "open the stores"
) -> None:
    """Raise :class:`BackupError` (see :func:`unfinished_message`) when a restore of these stores is unfinished."""
    path = journal_path_for(ledger_path, history_path, vector_path)
    if path is None or not os.path.lexists(path):
        return
    doc = read_journal(path)
    if doc is None:
        return
    allowed = _REAPPLYING.get()
    if doc.get("state") == "erasing" and allowed is not None and os.path.realpath(allowed) == os.path.realpath(path):
        return  # the restore re-applying its erasures, in this process
    raise BackupError(unfinished_message(path, doc, action))


@contextlib.contextmanager
def reapplying(path: str) -> Iterator[None]:
    """Within it (this thread or task only), the stores of the ``erasing`` journal at ``path`` may be opened: the
    restore re-applies its erasures through the drop-in while every other process is still refused."""
    token = _REAPPLYING.set(path)
    try:
        yield
    finally:
        _REAPPLYING.reset(token)
