"""The registry of COPIES: every copy of a deployment's stores that the tool leaves behind, in one list.

Backups (``backup_set``), the stores a restore moved aside (``replaced_aside``, ``<store>.replaced-STAMP``) and
the stores a relocation moved away from (``relocation_source``) are copies of the same memories. They are
listed in one JSON file beside the ledger, named after it: ``hygiene.db`` -> ``hygiene.copies.json``
(:func:`copies_path_for`; beside history.db when the ledger is in memory), written atomically (temp file,
fsync, ``os.replace``). Each entry: ``kind``, ``path``, ``roles`` (the stores it holds a copy of:
"vector_store", "history_db", "ledger"), ``created_at``, ``size_bytes`` (at registration) and ``note``.
:func:`register_copy` and :func:`unregister_copy` change it; :func:`list_copies` reads it, together with the
backups listed in the backup record (``hygiene.backups.json``, :mod:`mem0_hygiene.stores.backup_record`), and
says what is on disk now. ``where``, the audit (``STORE_COPIES``) and ``forget --scrub`` all read that one list.

Temporary files and folders of an operation are never registered: they are named
``.<name>.<marker>-<suffix>`` (:data:`TEMPORARY_MARKERS`: ``partial`` for backup, ``restoring`` for
restore, ``relocating`` for relocate) beside what they become. The operation holds an advisory lock on
its own (:func:`holding`) while it runs and removes them when it ends; :func:`clean_leftovers`, at the
start of the next run of the same operation, removes those that a crash left behind (never one that a
running operation still holds).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..errors import BackupError
from .backup_record import record_path_for, recorded_backups
from .backup_set import parse_backup_time, read_manifest
from .durable import read_json, write_json
from .paths import side_file
from .qdrant import folder_size
from .sqlite import SIDECARS

COPIES_SUFFIX = ".copies.json"
COPIES_FORMAT = "mem0-hygiene-copies"
KINDS = ("backup_set", "replaced_aside", "relocation_source", "migration_source")
ROLES = ("vector_store", "history_db", "ledger")
TEMPORARY_MARKERS = {"backup": "partial", "restore": "restoring", "relocate": "relocating"}
_TEMP_RE = re.compile(r"^\.(?P<stem>.+)\.(?P<marker>partial|restoring|relocating)-[^/]*$")


@dataclass(frozen=True)
class StoreCopy:
    """One registered copy, as it is on disk now.

    Fields:
        kind: "backup_set", "replaced_aside" or "relocation_source".
        path: the copy: a folder (a backup set, a Qdrant folder) or a SQLite file (its ``-wal``/``-shm``/
            ``-journal`` files belong to it).
        roles: the stores it holds a copy of ("vector_store", "history_db", "ledger").
        created_at: when it was made (UTC ISO).
        exists: the path is there now.
        size_bytes: bytes in it now (every file, SQLite sidecars included); None when it is gone.
        note: what made it (e.g. "moved aside by the restore of ...").
        source: "registry" (``hygiene.copies.json``) or "backup record" (a backup listed only there).
    """

    kind: str
    path: str
    roles: tuple[str, ...]
    created_at: str
    exists: bool
    size_bytes: int | None
    note: str = ""
    source: str = "registry"

    @property
    def is_folder(self) -> bool:
        return os.path.isdir(self.path)

    def files(self) -> list[str]:
        """Every regular file that belongs to the copy (a folder's files; a SQLite file and its sidecars)."""
        if os.path.isdir(self.path) and not os.path.islink(self.path):
            out = []
            for root, _dirs, names in os.walk(self.path):
                out += [os.path.join(root, n) for n in sorted(names) if not os.path.islink(os.path.join(root, n))]
            return sorted(out)
        return [p for p in [self.path, *(self.path + s for s in SIDECARS)] if os.path.isfile(p)]

    def created(self) -> datetime | None:
        """When it was made (None when the time cannot be read)."""
        return parse_backup_time(self.created_at)

    def age(self, now: datetime) -> timedelta | None:
        """How old the copy is at ``now`` (None when its time cannot be read)."""
        then = self.created()
        return max(timedelta(0), now - then) if then is not None else None

    def to_dict(self, now: datetime | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "path": self.path,
            "roles": list(self.roles),
            "created_at": self.created_at,
            "exists": self.exists,
            "size_bytes": self.size_bytes,
            "note": self.note,
            "source": self.source,
        }
        if now is not None:
            age = self.age(now)
            out["age_days"] = round(age.total_seconds() / 86400, 2) if age is not None else None
        return out


# ---------------------------------------------------------------------------------------------- the file


def copies_path_for(ledger_path: str | None, history_path: str | None) -> str | None:
    """Where a deployment's registry of copies lives: beside the ledger and named after it
    (``hygiene.db`` -> ``hygiene.copies.json``); beside history.db for an in-memory ledger; None when both
    are in memory. The same rule as the backup record's :func:`record_path_for`."""
    return side_file("copies_registry", ledger_path, history_path)


def _empty() -> dict[str, Any]:
    return {"format": COPIES_FORMAT, "version": 1, "copies": []}


def read_registry(path: str) -> list[dict[str, Any]]:
    """The registry's entries as stored ([] when there is no file yet); :class:`BackupError` when it is
    unreadable or not ours."""
    doc = read_json(
        path,
        lambda why: BackupError(
            f"the registry of copies {path} cannot be read ({why}); move it away (the next backup or restore writes a "
            "new one) and check the folders it listed by hand"
        ),
    )
    if doc is None:
        return []
    if not isinstance(doc, dict) or doc.get("format") != COPIES_FORMAT or not isinstance(doc.get("copies"), list):
        raise BackupError(
            f"{path} is not a mem0-hygiene registry of copies; move it away (the next backup or "
            "restore writes a new one)"
        )
    return [e for e in doc["copies"] if isinstance(e, dict) and isinstance(e.get("path"), str)]


def _write(path: str, entries: list[dict[str, Any]]) -> None:
    """Write the registry durably (:func:`~mem0_hygiene.stores.durable.write_json`; a registry moved by relocate:
    the real file is written, the link kept)."""
    write_json(path, {**_empty(), "copies": entries}, sort_keys=True, make_folder=True)


def _present(path: str) -> bool:
    return os.path.lexists(path) or any(os.path.lexists(path + s) for s in SIDECARS)


def size_of(path: str) -> int | None:
    """Bytes in a copy: every file under a folder, or a SQLite file with its sidecars; None when it is gone."""
    if not _present(path):
        return None
    if os.path.isdir(path):
        return folder_size(path)
    return sum(os.path.getsize(p) for p in [path, *(path + s for s in SIDECARS)] if os.path.isfile(p))


def _change(registry: str | None, add: dict[str, Any] | None, drop: Iterable[str]) -> str:
    if registry is None:
        return "the stores are in memory: there is no place for the registry of copies"
    gone = {os.path.abspath(p) for p in drop}
    try:
        try:
            entries = read_registry(registry)
        except BackupError as exc:  # never overwritten: what it lists would be lost for erasure
            return f"{exc}; this change was not recorded in it"
        keep = [
            e
            for e in entries
            if e["path"] not in gone and (add is None or e["path"] != add["path"]) and _present(e["path"])
        ]  # entries whose copy was removed by hand go
        if add is not None:
            keep.append(add)
        _write(registry, keep)
    except OSError as exc:
        return f"could not update the registry of copies {registry} ({exc})"
    return ""


def register_copy(
    registry: str | None,
    kind: str,
    path: str | os.PathLike[str],
    *,
    roles: Iterable[str],
    created_at: str,
    note: str = "",
    size_bytes: int | None = None,
) -> str:
    """List a copy in the registry ``registry`` (:func:`copies_path_for`); returns "" or why it could not.

    ``kind`` is one of :data:`KINDS`; ``path`` the copy (a folder, or a SQLite file whose sidecars come with
    it); ``roles`` the stores it holds ("vector_store", "history_db", "ledger"); ``created_at`` a UTC ISO
    time; ``size_bytes`` its size (default: :func:`size_of` the path now; give the size of what is about to
    be renamed there). Registering a path again replaces its entry. Register a copy *before* the step that
    creates it (a rename), so a crash right after leaves it accounted for; an entry whose path never
    appeared, or was removed by hand, is dropped at the next change. Used by backup, restore and relocate.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind of copy {kind!r}; one of {', '.join(KINDS)}")
    roles_t = tuple(roles)
    bad = [r for r in roles_t if r not in ROLES]
    if bad or not roles_t:
        raise ValueError(f"roles must name stores among {', '.join(ROLES)}, not {list(roles_t)}")
    full = os.path.abspath(os.path.expanduser(os.fspath(path)))
    entry = {
        "kind": kind,
        "path": full,
        "roles": list(roles_t),
        "created_at": created_at,
        "size_bytes": size_of(full) if size_bytes is None else size_bytes,
        "note": note,
    }
    return _change(registry, entry, ())


def unregister_copy(registry: str | None, paths: Iterable[str | os.PathLike[str]]) -> str:
    """Take copies off the registry (deleted, or put back where they came from); returns "" or why not."""
    return _change(registry, None, [os.path.abspath(os.path.expanduser(os.fspath(p))) for p in paths])


def _roles_of_set(folder: str) -> tuple[str, ...]:
    try:
        stores = read_manifest(folder)["stores"]
    except BackupError:
        return ROLES
    return tuple(r for r in ROLES if stores.get(r)) or ROLES


def list_copies(
    ledger_path: str | None, history_path: str | None, *, include_gone: bool = False
) -> tuple[StoreCopy, ...]:
    """Every copy of the deployment with this ledger and history.db, oldest first: the registry's entries
    and the backups listed in the backup record (one entry per path), checked against the disk now.

    Copies that are gone are left out unless ``include_gone``. Only reads. Raises :class:`BackupError`
    when the registry or the backup record cannot be read (then nobody can say which copies exist).
    """
    registry = copies_path_for(ledger_path, history_path)
    if registry is None:
        return ()
    found: dict[str, StoreCopy] = {}
    for e in read_registry(registry):
        path = e["path"]
        roles = tuple(str(r) for r in e.get("roles") or ()) or ROLES
        found[path] = StoreCopy(
            kind=str(e.get("kind", "")),
            path=path,
            roles=roles,
            created_at=str(e.get("created_at", "")),
            exists=_present(path),
            size_bytes=size_of(path),
            note=str(e.get("note", "")),
        )
    for entry in recorded_backups(record_path_for(ledger_path, history_path) or ""):
        path = os.path.abspath(str(entry["path"]))
        if path in found:
            continue
        found[path] = StoreCopy(
            kind="backup_set",
            path=path,
            roles=_roles_of_set(path),
            created_at=str(entry.get("created_at", "")),
            exists=os.path.isdir(path),
            size_bytes=size_of(path),
            note="listed in the backup record",
            source="backup record",
        )
    out = [c for c in found.values() if include_gone or c.exists]
    return tuple(sorted(out, key=lambda c: (c.created_at, c.path)))


# ---------------------------------------------------------------------------------------------- temporary files


def temporary_name(stem: str, operation: str) -> str:
    """The prefix of a temporary file or folder of ``operation`` ("backup", "restore", "relocate") that will
    become ``stem``: ``.STEM.MARKER-`` (add a unique suffix)."""
    return f".{stem}.{TEMPORARY_MARKERS[operation]}-"


def _lock(fd: int, blocking: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory lock; a crash's leftovers are still removed
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


@contextlib.contextmanager
def holding(path: str) -> Iterator[None]:
    """Hold an advisory lock (``flock``) on a temporary file or folder while the operation that made it runs,
    so :func:`clean_leftovers` in another process leaves it alone. A crash releases it with the process."""
    fd = os.open(path, os.O_RDONLY)
    try:
        _lock(fd, blocking=True)
        yield
    finally:
        os.close(fd)


def _held(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return not _lock(fd, blocking=False)
    finally:
        os.close(fd)


def find_leftovers(folder: str, operation: str, *, stems: Iterable[str] = (), stem_prefix: str = "") -> list[str]:
    """Temporary files and folders of ``operation`` in ``folder`` that no running operation holds: names
    ``.STEM.MARKER-*`` where STEM is one of ``stems`` or starts with ``stem_prefix``. Only reads."""
    marker = TEMPORARY_MARKERS[operation]
    wanted = set(stems)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        m = _TEMP_RE.match(name)
        if not m or m.group("marker") != marker:
            continue
        stem = m.group("stem")
        if stem in wanted or (stem_prefix and stem.startswith(stem_prefix)):
            full = os.path.join(folder, name)
            if not _held(full):
                out.append(full)
    return out


def clean_leftovers(
    folder: str, operation: str, *, stems: Iterable[str] = (), stem_prefix: str = ""
) -> tuple[list[str], list[str]]:
    """Remove what :func:`find_leftovers` finds (a crashed run's temporary copies); returns (removed paths,
    problems, each "PATH: reason")."""
    removed: list[str] = []
    problems: list[str] = []
    for path in find_leftovers(folder, operation, stems=stems, stem_prefix=stem_prefix):
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(path)
        except OSError as exc:
            problems.append(f"{path}: {exc}")
    return removed, problems
