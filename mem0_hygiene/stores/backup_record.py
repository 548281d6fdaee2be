"""The backup RECORD: the small JSON file that lists a deployment's verified backups and its last restore.

It lives beside the ledger, named after it: ``hygiene.db`` -> ``hygiene.backups.json`` (beside
history.db when the ledger is in memory; :func:`record_path_for`). It lists the recent backups (path,
time, counts; at most :data:`RECORD_KEEP`) and the last restore. It is deliberately not a table in the
ledger: a restore puts back an older ledger, and the record of the backups must survive that. The
audit reads it (:func:`backup_status_for_paths`) for ``BACKUP_LAST_VERIFIED``; backup and restore
update it (:func:`update_record`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BackupError
from .backup_set import BackupInfo, check_set, info_of, read_manifest
from .durable import read_json, write_json
from .paths import SIDE_FILES, side_file

RECORD_SUFFIX = SIDE_FILES["backup_record"]
RECORD_FORMAT = "mem0-hygiene-backup-record"
RECORD_KEEP = 50  # entries kept in the record (rotation removes entries of deleted backups earlier)


@dataclass(frozen=True)
class BackupStatus:
    """What the backup record of a deployment says, checked against the disk (read by the audit).

    Fields:
        record_path: the record file (``hygiene.backups.json`` beside the ledger).
        recorded: how many backups the record lists.
        last: the newest recorded backup that is still complete on disk (None: none is).
        gone: recorded backups that are missing or incomplete now, each "PATH: reason".
        last_restore: the record of the last restore (src, at, backup_created_at), if any.
    """

    record_path: str
    recorded: int
    last: BackupInfo | None
    gone: tuple[str, ...] = ()
    last_restore: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "record_path": self.record_path,
            "recorded": self.recorded,
            "last": self.last.to_dict() if self.last else None,
            "gone": list(self.gone),
            "last_restore": dict(self.last_restore) if self.last_restore else None,
        }


def record_path_for(ledger_path: str | None, history_path: str | None) -> str | None:
    """Where a deployment's backup record lives: beside the ledger file and named after it
    (``hygiene.db`` -> ``hygiene.backups.json``); beside history.db for an in-memory ledger; None when
    both are in memory (:func:`~mem0_hygiene.stores.paths.side_file`)."""
    return side_file("backup_record", ledger_path, history_path)


def _read_record(path: str) -> dict[str, Any]:
    doc = read_json(
        path,
        lambda why: BackupError(
            f"the backup record {path} cannot be read ({why}); move it away, "
            "the next `mem0-hygiene backup` writes a new one"
        ),
    )
    if doc is None:
        return {"format": RECORD_FORMAT, "version": 1, "backups": []}
    if not isinstance(doc, dict) or doc.get("format") != RECORD_FORMAT or not isinstance(doc.get("backups"), list):
        raise BackupError(
            f"{path} is not a mem0-hygiene backup record; move it away, the next `mem0-hygiene backup` writes a new one"
        )
    return doc


def _write_record(path: str, doc: dict[str, Any]) -> None:
    write_json(path, doc, sort_keys=True, make_folder=True)  # a record moved by relocate: the real file is written


def update_record(
    path: str | None,
    add: dict[str, Any] | None = None,
    drop: tuple[str, ...] = (),
    restore: dict[str, Any] | None = None,
) -> str:
    """Add/drop entries (and set the last restore); returns "" or a note saying why the record could
    not be written. A damaged record is rewritten."""
    if path is None:
        return "the stores are in memory: no backup record was written, so the audit cannot see this backup"
    try:
        try:
            doc = _read_record(path)
        except BackupError:
            doc = {"format": RECORD_FORMAT, "version": 1, "backups": []}  # a damaged record is rewritten
        entries = [e for e in doc["backups"] if isinstance(e, dict) and e.get("path") not in drop]
        if add is not None:
            entries = [e for e in entries if e.get("path") != add["path"]] + [add]
        doc["backups"] = entries[-RECORD_KEEP:]
        if restore is not None:
            doc["last_restore"] = restore
        _write_record(path, doc)
    except OSError as exc:
        return f"could not update the backup record {path} ({exc}); the audit will not see this backup"
    return ""


def recorded_backups(path: str | None) -> list[dict[str, Any]]:
    """The backups the record at ``path`` lists (each with at least a ``path``); [] when there is no
    record. :class:`BackupError` when it cannot be read. The registry of copies
    (:mod:`mem0_hygiene.stores.copies`) lists these too."""
    if not path:
        return []
    return [e for e in _read_record(path)["backups"] if isinstance(e, dict) and e.get("path")]


def backup_status_for_paths(ledger_path: str | None, history_path: str | None, *, verify: bool = False) -> BackupStatus:
    """The backup record of the deployment with this ledger and history.db, checked against the disk.

    Each recorded backup counts only while its folder still holds its manifest and every listed file
    with the listed size (``verify=True``: the same sha256 too). Raises :class:`BackupError` when
    there is no place for a record (in-memory stores) or the record cannot be read.
    """
    path = record_path_for(ledger_path, history_path)
    if path is None:
        raise BackupError("the ledger and history.db are in memory: there is no place for a backup record")
    doc = _read_record(path)
    entries = [e for e in doc["backups"] if isinstance(e, dict) and e.get("path")]
    entries.sort(key=lambda e: (str(e.get("created_at", "")), str(e["path"])))
    last: BackupInfo | None = None
    gone: list[str] = []
    for entry in reversed(entries):
        folder = str(entry["path"])
        try:
            doc_b = read_manifest(folder)
            problems = check_set(folder, doc_b, checksums=verify)
        except BackupError as exc:
            problems = [str(exc)]
        if problems:
            gone.append(f"{folder}: {'; '.join(problems[:3])}")
            continue
        if last is None:
            last = info_of(folder, doc_b, "checksums" if verify else "sizes")
    restore = doc.get("last_restore")
    return BackupStatus(
        record_path=path,
        recorded=len(entries),
        last=last,
        gone=tuple(gone),
        last_restore=restore if isinstance(restore, dict) else None,
    )
