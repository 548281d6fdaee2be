"""The erasure receipts of a deployment and the journal of a scope erasure under way, in one folder.

A scope erasure (``forget --user ID``) leaves a **receipt** per run: a JSON document (``erasure-STAMP-HASH.json``)
naming the scope, the time, each store and copy checked, the counts erased, the verification per file or table,
and sha256 digests of the erased texts (never the texts). Receipts live in a folder beside the ledger, named
after it (``hygiene.db`` -> ``hygiene.erasures/``; beside history.db for a ledger in memory or on PostgreSQL),
which is also their registry: :func:`list_receipts` reads every receipt in it, and a restore reads it
(:func:`erasures_undone_by`) to refuse a backup set made before an erasure that did not scrub it.

While an erasure runs, its **journal** (``.pending-HASH.json``, one per scope) holds what it is erasing: the
memory ids, the entity rows and, so that a rerun after a kill can still find and verify them once the live
stores have lost them, the texts themselves. It is written durably before anything is changed and removed
(overwritten with zeros first) once the receipt is written; a rerun of the same scope finds it and finishes.
Every write goes through :mod:`mem0_hygiene.stores.durable`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import BackupError, ConfigError
from ..timeutil import parse_time
from .durable import read_json, remove_file, sync_folder, temp_prefix, write_json
from .paths import side_file

RECEIPT_FORMAT = "mem0-hygiene-erasure-receipt"
JOURNAL_FORMAT = "mem0-hygiene-erasure-journal"
FOLDER_SUFFIX = ".erasures"
SCOPE_KEYS = ("user_id", "agent_id", "run_id")


def receipts_folder(ledger_path: str | None, history_path: str | None) -> str | None:
    """Where a deployment's erasure receipts live (the copies registry's rule, with the suffix ``.erasures``);
    None when every store is in memory."""
    registry = side_file("copies_registry", ledger_path, history_path)
    return registry[: -len(".copies.json")] + FOLDER_SUFFIX if registry else None


def scope_label(scope: dict[str, str]) -> str:
    """``user=dana agent=support``: the scope in words, in a fixed order."""
    return " ".join(f"{k.removesuffix('_id')}={scope[k]}" for k in SCOPE_KEYS if scope.get(k))


def scope_flags(scope: dict[str, str]) -> str:
    """``--user dana --agent support``: the ``forget`` options that erase the scope."""
    return " ".join(f"--{k.removesuffix('_id')} {scope[k]}" for k in SCOPE_KEYS if scope.get(k))


def scope_key(scope: dict[str, str]) -> str:
    """A short, stable name for a scope (the journal's and receipts' file names hold no id in clear)."""
    canon = json.dumps({k: scope[k] for k in SCOPE_KEYS if scope.get(k)}, sort_keys=True)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


def text_digest(text: str) -> str:
    """The sha256 of one text's UTF-8 bytes (hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def texts_digest(texts: Sequence[str]) -> str:
    """One sha256 over the texts: each text's own sha256, sorted, one per line."""
    lines = "".join(d + "\n" for d in sorted(text_digest(t) for t in texts))
    return hashlib.sha256(lines.encode("ascii")).hexdigest()


def _error(path: str) -> Any:
    return lambda why: BackupError(f"the erasure file {path} cannot be read ({why}); move it away and run again")


# ---------------------------------------------------------------------------------------------- the journal


def journal_path(folder: str, scope: dict[str, str]) -> str:
    return os.path.join(folder, f".pending-{scope_key(scope)}.json")


def read_journal(folder: str, scope: dict[str, str]) -> dict[str, Any] | None:
    """The journal of an erasure of this scope that has not finished; None when there is none."""
    path = journal_path(folder, scope)
    try:
        with open(path, "rb") as fh:
            wiped = not fh.read().strip(b"\0")
    except FileNotFoundError:
        return None
    if wiped:  # zeroed by remove_journal, killed before the unlink: its receipt is written
        _wipe(path)
        return None
    doc = read_json(path, _error(path))
    if doc is not None and (doc.get("format") != JOURNAL_FORMAT or doc.get("scope") != scope):
        raise BackupError(f"{path} is not the journal of an erasure of {scope_label(scope)}; move it away")
    return doc


def write_journal(folder: str, scope: dict[str, str], doc: dict[str, Any]) -> str:
    """Write (or rewrite) the journal, durably; the folder is made when missing (mode 0700). The temporary
    files of a write a kill interrupted (they hold the texts too) are wiped first."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = journal_path(folder, scope)
    _wipe_temporaries(path)
    return write_json(path, {"format": JOURNAL_FORMAT, "scope": scope, **doc})


def _wipe(path: str) -> None:
    """Overwrite a file with zeros, then remove it, durably (nothing when it is not there)."""
    try:
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.write(b"\0" * size)
            fh.flush()
            os.fsync(fh.fileno())
    except FileNotFoundError:
        return
    remove_file(path)


def _wipe_temporaries(path: str) -> None:
    folder, prefix = os.path.dirname(path), temp_prefix(path)
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        if name.startswith(prefix):
            _wipe(os.path.join(folder, name))


def remove_journal(folder: str, scope: dict[str, str]) -> None:
    """Overwrite the journal (and any temporary file of it) with zeros, as they hold the texts, then remove
    them, durably."""
    path = journal_path(folder, scope)
    _wipe_temporaries(path)
    _wipe(path)


# ---------------------------------------------------------------------------------------------- receipts


def write_receipt(folder: str, doc: dict[str, Any], at: datetime) -> str:
    """Write a receipt durably (never overwriting another); returns its path."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    stamp = at.strftime("%Y%m%dT%H%M%S%fZ")
    path = os.path.join(folder, f"erasure-{stamp}-{scope_key(doc['scope'])}.json")
    n = 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(folder, f"erasure-{stamp}-{scope_key(doc['scope'])}-{n}.json")
    write_json(path, {"format": RECEIPT_FORMAT, "version": 1, **doc})
    sync_folder(folder)
    return path


def read_receipt(path: str) -> dict[str, Any]:
    """A receipt's document; :class:`~mem0_hygiene.errors.BackupError` naming the file when it is none."""
    doc = read_json(path, _error(path))
    if doc is None:
        raise BackupError(f"there is no receipt at {path}; give the path `forget --user` printed")
    if not isinstance(doc, dict) or doc.get("format") != RECEIPT_FORMAT:
        raise BackupError(f"{path} is not an erasure receipt of mem0-hygiene (no format {RECEIPT_FORMAT!r})")
    return doc


def list_receipts(folder: str | None) -> list[tuple[str, dict[str, Any]]]:
    """Every receipt in the folder, (path, document), oldest first; unreadable files are skipped."""
    if not folder or not os.path.isdir(folder):
        return []
    out = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("erasure-") and name.endswith(".json"):
            try:
                out.append((os.path.join(folder, name), read_receipt(os.path.join(folder, name))))
            except BackupError:
                continue
    return out


@dataclass(frozen=True)
class ReceiptEntry:
    """One erasure receipt of a deployment, as ``where`` lists it (read from the file; no store opened).

    Fields:
        path: the receipt.
        scope: the erased scope, as the receipt records it.
        erased_at: when (UTC ISO).
        verified: the erasure's verification when it ran (every file and query clean).
        keep_backups: backup sets were left holding the scope on purpose (``--keep-backups``).
        memories: memories it erased.
    """

    path: str
    scope: dict[str, str]
    erased_at: str
    verified: bool
    keep_backups: bool = False
    memories: int = 0

    @property
    def label(self) -> str:
        return scope_label(self.scope)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "scope": dict(self.scope),
            "erased_at": self.erased_at,
            "verified": self.verified,
            "keep_backups": self.keep_backups,
            "memories": self.memories,
        }


def receipt_entries(folder: str | None) -> list[ReceiptEntry]:
    """Every receipt in the folder as a :class:`ReceiptEntry`, oldest first."""
    out = []
    for path, doc in list_receipts(folder):
        scope = {k: str(v) for k, v in dict(doc.get("scope") or {}).items() if k in SCOPE_KEYS and v}
        counts = doc.get("counts")
        counts = counts if isinstance(counts, dict) else {}
        out.append(
            ReceiptEntry(
                path,
                scope,
                str(doc.get("erased_at", "")),
                doc.get("verified") is True,
                bool(doc.get("keep_backups")),
                int(counts.get("memories") or 0),
            )
        )
    return out


def erasures_undone_by(folder: str | None, backup_path: str, backup_created_at: str) -> list[tuple[str, str]]:
    """The erasures a restore of this backup set would undo: (receipt path, the scope's ``forget`` options) of each
    receipt written after the set was made whose erasure did not scrub the set (left with ``--keep-backups``, or not
    registered then), unless a later receipt of the same scope did."""
    try:
        made = parse_time(backup_created_at)
    except (ConfigError, TypeError, ValueError):
        made = None
    real = os.path.realpath(backup_path)
    latest: dict[str, tuple[str, dict[str, Any]]] = {}
    scrubbed_by: dict[str, bool] = {}
    for path, doc in list_receipts(folder):
        key = scope_key(doc.get("scope") or {})
        done = any(
            os.path.realpath(str(c.get("path", ""))) == real and c.get("scrubbed") and not c.get("holds_text")
            for c in doc.get("copies", [])
        )
        latest[key] = (path, doc)
        scrubbed_by[key] = done
    out = []
    for key, (path, doc) in latest.items():
        try:
            erased = parse_time(str(doc.get("erased_at")))
        except (ConfigError, TypeError, ValueError):
            continue
        if (made is None or made < erased) and not scrubbed_by[key]:
            out.append((path, scope_flags(doc.get("scope") or {})))
    return out


__all__ = [
    "ReceiptEntry",
    "erasures_undone_by",
    "list_receipts",
    "read_journal",
    "read_receipt",
    "receipt_entries",
    "receipts_folder",
    "remove_journal",
    "scope_flags",
    "scope_key",
    "scope_label",
    "text_digest",
    "texts_digest",
    "write_journal",
    "write_receipt",
]
