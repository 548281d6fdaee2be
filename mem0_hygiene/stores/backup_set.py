"""The backup SET format: what a backup folder holds, and reading and verifying one.

A set is one dated folder, ``DEST/mem0-backup-YYYYMMDDTHHMMSSZ/`` (:data:`PREFIX`, :data:`STAMP_FORMAT`),
holding ``history.db``, ``hygiene.db`` (the ledger, when there is one), ``qdrant/`` (a local Qdrant
folder) and ``manifest.json`` (:data:`MANIFEST`): format and version (:data:`FORMAT`,
:data:`MANIFEST_VERSION`), times, counts per store, the integrity results, the paths the set came from,
the sha256 and size of every other file, ``consistency`` (how the stores were taken together:
:data:`LEDGER_CONSISTENCY`) and, for a PostgreSQL ledger dumped into ``hygiene.db``, the rows and sha256 of each
of its tables, which :func:`check_set` recomputes (``changes`` lists what was done to the set since, e.g. an
erasure, after which :func:`reseal` rewrote the checksums). Writing a set is :func:`mem0_hygiene.actions.backup.backup`;
restoring one is :func:`mem0_hygiene.actions.restore.restore`.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import sqlite3
import stat
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from ..errors import BackupError, ConfigError
from ..timeutil import as_utc, parse_time
from .durable import read_json, write_json

FORMAT = "mem0-hygiene-backup"
MANIFEST_VERSION = 1
MANIFEST = "manifest.json"
PREFIX = "mem0-backup-"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
HISTORY_FILE = "history.db"
LEDGER_FILE = "hygiene.db"
QDRANT_DIR = "qdrant"
LEDGER_CONSISTENCY = {
    "sqlite": "one moment: every SQLite file (history.db, the ledger, local Qdrant's storage) held with BEGIN "
    "IMMEDIATE while the copies were made",
    "postgresql": "one moment: the PostgreSQL ledger read from one REPEATABLE READ snapshot taken while history.db "
    "and the vector store were held still; ledger writes committed after that snapshot are not in the "
    "set",
}
"""How the stores of a set were taken together (the manifest's and the backup record's ``consistency``), by
where the ledger was: a SQLite file, or PostgreSQL (``hygiene.ledger_url``, dumped into ``hygiene.db``)."""
_NAME_RE = re.compile(r"^" + re.escape(PREFIX) + r"\d{8}T\d{6}Z(-\d+)?$")


@dataclass(frozen=True)
class BackupInfo:
    """A backup that was verified when it was made and is still complete on disk.

    Fields:
        path: the backup folder.
        created_at: when it was taken (UTC ISO).
        counts: ``points`` (per collection), ``history`` and ``ledger`` (rows per table).
        files: how many files its manifest lists.
        size_bytes: their total size.
        vector_store: how the vector store was taken.
        checked: what was checked just now: "sizes" (every listed file present with its size) or
            "checksums" (every file's sha256 recomputed).
    """

    path: str
    created_at: str
    counts: dict[str, dict[str, int]]
    files: int
    size_bytes: int
    vector_store: str
    checked: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "created_at": self.created_at,
            "counts": {k: dict(v) for k, v in self.counts.items()},
            "files": self.files,
            "size_bytes": self.size_bytes,
            "vector_store": self.vector_store,
            "checked": self.checked,
        }


# ---------------------------------------------------------------------------------------------- files


def sha256_of(path: str) -> str:
    """The sha256 of a regular file, read in 1 MiB blocks. A link is never followed, and anything but a regular
    file (a FIFO, a device) is refused unread: :class:`BackupError`."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise BackupError(f"{path} is a symbolic link; a backup set holds only regular files") from None
        raise BackupError(f"cannot read {path}: {exc}") from None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise BackupError(f"{path} is not a regular file; a backup set holds only regular files")
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def set_entries(folder: str) -> tuple[dict[str, str], list[str]]:
    """Every regular file under ``folder`` but the manifest (relative posix path -> absolute path), and what
    else is there that a backup set never holds, one problem per entry naming it: a symbolic link (file or
    folder; never followed), a device, FIFO or socket, or a file hard-linked to a file outside the set."""
    files: dict[str, str] = {}
    problems: list[str] = []
    inodes: dict[tuple[int, int], list[str]] = {}
    links: dict[str, int] = {}
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"cannot list {os.path.relpath(current, folder)}: {exc}")
            continue
        for entry in entries:
            rel = os.path.relpath(entry.path, folder).replace(os.sep, "/")
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                problems.append(f"{rel} is a symbolic link (to {os.readlink(entry.path)})")
            elif stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
            elif not stat.S_ISREG(info.st_mode):
                problems.append(f"{rel} is a device, FIFO or socket, not a regular file")
            elif rel != MANIFEST:
                files[rel] = entry.path
                if info.st_nlink > 1:
                    inodes.setdefault((info.st_dev, info.st_ino), []).append(rel)
                    links[rel] = info.st_nlink
            elif info.st_nlink > 1:
                problems.append(f"{rel} is hard-linked to a file outside the set")
    for names in inodes.values():
        problems += [f"{rel} is hard-linked to a file outside the set" for rel in names if links[rel] > len(names)]
    return dict(sorted(files.items())), sorted(problems)


def set_files(folder: str) -> dict[str, str]:
    """relative posix path -> absolute path, for every regular file under ``folder`` but the manifest (links,
    devices and FIFOs are left out: :func:`set_entries` names them)."""
    return set_entries(folder)[0]


def safe_relative(rel: Any) -> bool:
    """True when ``rel`` (a manifest path) names something inside the set: relative, posix, with no empty,
    ``.`` or ``..`` part."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def unsafe_entries(folder: str, manifest: dict[str, Any]) -> list[str]:
    """What makes a set unsafe to restore, one problem per entry: links, devices, FIFOs and files hard-linked
    outside the set on disk (:func:`set_entries`), and manifest paths that are absolute, hold ``..`` or
    otherwise point outside the set. Empty = safe to read."""
    problems = list(set_entries(folder)[1])
    manifest_path = os.path.join(folder, MANIFEST)
    if os.path.islink(manifest_path):
        problems.insert(0, f"{MANIFEST} is a symbolic link (to {os.readlink(manifest_path)})")
    for rel in manifest.get("files") or {}:
        if not safe_relative(rel):
            problems.append(f"the manifest lists {rel!r}, a path outside the set")
    for role, store in (manifest.get("stores") or {}).items():
        if not isinstance(store, dict):
            continue
        for key in ("file", "folder"):
            if key in store and not safe_relative(store[key]):
                problems.append(f"the manifest names {role} at {store[key]!r}, a path outside the set")
    return problems


def file_checksums(folder: str) -> dict[str, dict[str, Any]]:
    """The manifest's file list: relative path -> ``{"sha256", "size"}`` of every file but the manifest."""
    return {
        rel: {"sha256": sha256_of(full), "size": os.path.getsize(full)}
        for rel, full in sorted(set_files(folder).items())
    }


def ledger_digests(path: str) -> dict[str, dict[str, Any]]:
    """Rows and sha256 of every table of a ledger file in a set (:mod:`mem0_hygiene.stores.ledger.tables`): the
    manifest of a dumped PostgreSQL ledger keeps them, and :func:`check_set` recomputes them. The file is opened
    read-only and immutable, so nothing is written beside it."""
    from .ledger.tables import sqlite_tables, table_digest

    conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro&immutable=1", uri=True)
    try:

        def query(sql: str) -> list[Any]:
            return conn.execute(sql).fetchall()

        out = {}
        for shape in sqlite_tables(query):
            rows, digest = table_digest(query, shape)
            out[shape.name] = {"rows": rows, "sha256": digest}
        return out
    finally:
        conn.close()


def _ledger_problems(folder: str, store: dict[str, Any]) -> list[str]:
    """The dumped ledger's tables against the digests its manifest keeps."""
    try:
        got = ledger_digests(os.path.join(folder, str(store["file"])))
    except (sqlite3.Error, BackupError) as exc:
        return [f"the ledger {store['file']} cannot be read: {exc}"]
    want = store.get("tables") or {}
    return [
        f"ledger table {name} differs from the manifest ({(got.get(name) or {}).get('rows', 0)} row(s), "
        f"manifest {(want.get(name) or {}).get('rows', 0)})"
        for name in sorted(set(got) | set(want))
        if got.get(name) != want.get(name)
    ]


def time_stamp(moment: datetime) -> str:
    """The UTC time stamp in set names (and in the names restore moves replaced stores to)."""
    return as_utc(moment).strftime(STAMP_FORMAT)


def free_name(folder: str, base: str) -> str:
    """``base``, or ``base-2``, ``base-3``, ...: the first name not yet taken in ``folder``."""
    name, n = base, 1
    while os.path.lexists(os.path.join(folder, name)):
        n += 1
        name = f"{base}-{n}"
    return name


def parse_backup_time(value: str) -> datetime | None:
    """A manifest/record time back to a datetime (None when it cannot be read)."""
    try:
        return parse_time(value)
    except (ConfigError, ValueError, TypeError):
        return None


# ---------------------------------------------------------------------------------------------- manifests


def write_manifest(folder: str, manifest: dict[str, Any]) -> None:
    """Write ``manifest`` as the set's ``manifest.json`` (sorted keys, indented), atomically: a temp file
    beside it, fsync, ``os.replace`` (a crash leaves the old manifest or the new one, never half of one)."""
    write_json(os.path.join(folder, MANIFEST), manifest, sort_keys=True)


_COUNT_KEYS = {"vector_store": "points", "history_db": "history", "ledger": "ledger"}


def reseal(
    folder: str,
    manifest: dict[str, Any],
    *,
    counts: dict[str, dict[str, int]],
    integrity: dict[str, str],
    change: dict[str, Any],
) -> dict[str, Any]:
    """Rewrite a set's manifest after its files were changed on purpose (erasure), so it verifies again:
    the new ``counts`` (``points``/``history``/``ledger``, per store too), ``integrity`` results, every
    file's sha256 and size, and ``change`` appended to the manifest's ``changes`` (what was done, when).
    Returns the new manifest. The caller has checked the changed files (integrity_check, counts)."""
    doc = copy.deepcopy(manifest)
    doc["counts"] = {**(doc.get("counts") or {}), **{k: dict(v) for k, v in counts.items()}}
    for role, key in _COUNT_KEYS.items():
        store = doc["stores"].get(role)
        if isinstance(store, dict) and key in counts:
            store["counts"] = dict(counts[key])
            if store.get("file") in integrity:
                store["integrity"] = integrity[store["file"]]
    c = doc["counts"]
    doc["totals"] = {
        "points": sum((c.get("points") or {}).values()),
        "history_rows": (c.get("history") or {}).get("history", 0),
        "ledger_rows": (c.get("ledger") or {}).get("memories", 0),
    }
    doc["integrity"] = {**(doc.get("integrity") or {}), **integrity}
    doc["changes"] = [*(doc.get("changes") or []), change]
    ledger = doc["stores"].get("ledger")
    if isinstance(ledger, dict) and ledger.get("tables"):
        ledger["tables"] = ledger_digests(os.path.join(folder, str(ledger["file"])))
    doc["files"] = file_checksums(folder)
    write_manifest(folder, doc)
    return doc


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a backup folder; :class:`BackupError` when it is missing or not one of ours."""
    path = os.path.join(os.fspath(folder), MANIFEST)
    doc = read_json(path, lambda why: BackupError(f"cannot read the manifest {path}: {why}"))
    if doc is None:
        raise BackupError(f"{os.fspath(folder)} is not a complete backup: it has no {MANIFEST}")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BackupError(f"{path} is not a mem0-hygiene backup manifest")
    if not isinstance(doc.get("version"), int) or doc["version"] > MANIFEST_VERSION:
        raise BackupError(
            f"{path} has manifest version {doc.get('version')}, newer than this mem0-hygiene understands "
            f"({MANIFEST_VERSION}); upgrade mem0-hygiene"
        )
    if not isinstance(doc.get("files"), dict) or not isinstance(doc.get("stores"), dict):
        raise BackupError(f"{path} is damaged: it lacks the file list or the store list")
    return doc


def check_set(
    folder: str | os.PathLike[str], manifest: dict[str, Any] | None = None, *, checksums: bool = True
) -> list[str]:
    """Problems with a backup set: links, devices, FIFOs, files hard-linked outside it and manifest paths
    outside it (:func:`unsafe_entries`; then nothing else is checked), files missing, extra, of another size
    or (with ``checksums``) another sha256, and stores the manifest names whose files are not listed. Empty =
    complete and intact. Links are never followed."""
    folder = os.fspath(folder)
    doc = manifest if manifest is not None else read_manifest(folder)
    unsafe = unsafe_entries(folder, doc)
    if unsafe:
        return unsafe  # nothing more is read from a set that links out of itself
    listed: dict[str, Any] = doc["files"]
    present = set_files(folder)
    problems = [f"missing: {rel}" for rel in sorted(set(listed) - set(present))]
    problems += [f"extra: {rel}" for rel in sorted(set(present) - set(listed))]
    for rel in sorted(set(listed) & set(present)):
        want = listed[rel] if isinstance(listed[rel], dict) else {}
        full = present[rel]
        size = os.lstat(full).st_size
        if size != want.get("size"):
            problems.append(f"size differs: {rel} ({size} bytes, manifest {want.get('size')})")
        elif checksums and sha256_of(full) != want.get("sha256"):
            problems.append(f"checksum mismatch: {rel}")
    for role, store in doc["stores"].items():
        if not isinstance(store, dict):
            continue
        if store.get("file") and store["file"] not in listed:
            problems.append(f"the manifest names {role} ({store['file']}) but does not list its file")
        if store.get("folder") and not any(r.startswith(store["folder"] + "/") for r in listed):
            problems.append(f"the manifest names {role} ({store['folder']}/) but lists none of its files")
    ledger = doc["stores"].get("ledger")
    if checksums and not problems and isinstance(ledger, dict) and ledger.get("tables"):
        problems += _ledger_problems(folder, ledger)  # a dumped PostgreSQL ledger: every table's rows too
    return problems


def info_of(folder: str, doc: dict[str, Any], checked: str) -> BackupInfo:
    """The :class:`BackupInfo` of a set from its manifest; ``checked`` says what was just verified."""
    files = doc["files"]
    return BackupInfo(
        path=folder,
        created_at=str(doc.get("created_at", "")),
        counts=doc.get("counts") or {},
        files=len(files),
        size_bytes=sum(int(f.get("size", 0)) for f in files.values() if isinstance(f, dict)),
        vector_store=str((doc["stores"].get("vector_store") or {}).get("taken", "")),
        checked=checked,
    )


def complete_backups(dest: str) -> list[tuple[str, dict[str, Any]]]:
    """(folder, manifest) of every backup folder in DEST with a readable manifest, oldest first."""
    found = []
    try:
        names = os.listdir(dest)
    except FileNotFoundError:
        return []
    for name in names:
        full = os.path.join(dest, name)
        if not _NAME_RE.match(name) or not os.path.isdir(full):
            continue
        try:
            found.append((full, read_manifest(full)))
        except BackupError:
            continue
    found.sort(key=lambda item: (str(item[1].get("created_at", "")), os.path.basename(item[0])))
    return found
