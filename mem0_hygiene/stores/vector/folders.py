"""A vector store kept as a local folder (local Qdrant, Chroma, FAISS), for moving it: its collections and their
points counted through the seam, whether another process holds it, and a verified copy.

- :func:`folder_counts`: points per collection of the folder, each counted by the provider's
  :class:`~.base.VectorStore` (``{}`` when the folder holds none); what this process cached of the folder
  (Chroma keeps one system per folder) is released after.
- :func:`check_not_held`: local Qdrant takes a lock on its folder, so the check is that lock
  (:class:`~mem0_hygiene.errors.StoreLocked` while a client holds it). Chroma and FAISS take none: the check is
  whether another process has a file of the folder open (``/proc/PID/fd``; Chroma's app keeps ``chroma.sqlite3``
  open), refused the same way, and the sentence returned says what was checked (mem0's FAISS opens its files only
  while it reads or writes them, so a running FAISS app cannot be seen: the copy's own checks catch its writes).
- :func:`copy_folder_verified` (Chroma, FAISS; local Qdrant has
  :func:`~mem0_hygiene.stores.qdrant.copy_store_verified`, which holds the lock meanwhile): counted, copied under
  a temporary name beside the destination, every file compared by sha256 with the source, the source checked
  unchanged, the copy counted and its ids and payloads checksummed through the seam, then renamed into place.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass

from ...errors import RelocateError, StoreLocked
from .. import qdrant
from ..staging import remove_stale_copies, staging_prefix
from .files import file_digests, folder_files

FOLDER_PROVIDERS = ("qdrant", "chroma", "faiss")
"""The providers whose store is a local folder that relocation moves."""

Signature = tuple[tuple[str, int, int], ...]


def collection_names(provider: str, path: str) -> list[str]:
    """The collections the folder holds, read from its files without opening the store (sorted)."""
    if provider == "qdrant":
        return sorted(qdrant.collection_names(path))
    if provider == "chroma":
        database = os.path.join(path, "chroma.sqlite3")
        if not os.path.isfile(database):
            return []
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5.0)
        try:
            return sorted(str(row[0]) for row in conn.execute("SELECT name FROM collections"))
        except sqlite3.DatabaseError:  # another Chroma version's schema: the configured collection only
            return []
        finally:
            conn.close()
    if provider == "faiss":
        try:
            names = os.listdir(path)
        except OSError:
            return []
        return sorted(
            n[: -len(".faiss")]
            for n in names
            if n.endswith(".faiss") and any(n[: -len(".faiss")] + s in names for s in (".json", ".pkl"))
        )
    return []


def is_store_folder(provider: str, path: str) -> bool:
    """``path`` holds a store of ``provider`` (a local Qdrant folder, Chroma's ``chroma.sqlite3``, a FAISS index
    with its docstore)."""
    if provider == "qdrant":
        return qdrant.is_qdrant_folder(path)
    if provider == "chroma":
        return os.path.isfile(os.path.join(path, "chroma.sqlite3"))
    return bool(collection_names(provider, path))


def release(provider: str, path: str) -> None:
    """Drop what this process caches of the folder (Chroma's system), so nothing here holds its files."""
    from . import forget_cached

    forget_cached(provider, path)


REWRITES_ON_OPEN = ("chroma",)
"""Providers whose client writes to the folder when it opens and closes it (Chroma persists its index and touches
``chroma.sqlite3``): a count that must write nothing is taken on a scratch copy."""


def folder_counts(
    provider: str, path: str, collection: str, *, action: str = "relocate", scratch: bool = False
) -> dict[str, int]:
    """Points per collection in the folder (the configured ``collection`` when its files name none), each counted
    through the provider's seam module; {} when there is no store. ``scratch``: the folder is left byte for byte as
    it was (a provider that writes when opened is counted on a copy in a temporary folder, removed after)."""
    if not os.path.isdir(path):
        return {}
    if scratch and provider in REWRITES_ON_OPEN:
        work = tempfile.mkdtemp(prefix="mem0-hygiene-count-")
        try:
            copy = os.path.join(work, "store")
            shutil.copytree(path, copy, symlinks=True)
            return folder_counts(provider, copy, collection, action=action)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    from . import open_vector_store

    names = collection_names(provider, path) or ([collection] if is_store_folder(provider, path) else [])
    counts: dict[str, int] = {}
    try:
        for name in names:
            with open_vector_store(provider, {"path": path}, name, action=action) as store:
                counts[name] = store.count()
    finally:
        release(provider, path)
    return counts


def open_by_others(path: str) -> dict[int, str] | None:
    """``{pid: file}`` for the processes (this one left out) that have a file under ``path`` open, read from
    ``/proc/PID/fd``; None where there is no /proc to read. Processes of other users are seen only by root."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    root = os.path.realpath(path).rstrip("/") + "/"
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        fds = f"/proc/{entry}/fd"
        try:
            links = os.listdir(fds)
        except OSError:  # gone, or another user's
            continue
        for fd in links:
            try:
                target = os.readlink(os.path.join(fds, fd))
            except OSError:
                continue
            if target.startswith(root):
                found[int(entry)] = target
                break
    return found


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return "?"


def check_not_held(provider: str, path: str, action: str = "relocate") -> str:
    """Refuse (:class:`StoreLocked`) while another process holds the folder; returns what was checked."""
    if provider == "qdrant":
        qdrant.ensure_unlocked(path, action)
        return "local Qdrant's lock is free: no client has the folder open"
    holders = open_by_others(path)
    if holders is None:
        return (
            f"{provider} takes no lock and this system has no /proc to see who has its files open: stop the app "
            "before moving it (a write during the copy is caught, one after the switch is not)"
        )
    if holders:
        pid, file = sorted(holders.items())[0]
        raise StoreLocked(
            f"cannot {action} the {provider} store at {path}: process {pid} ({_command(pid)}) has {file} open, most "
            f"likely the running app{f' (and {len(holders) - 1} more)' if len(holders) > 1 else ''}. "
            f"{provider.capitalize()} takes no lock, so moving it now would lose what the app writes next: stop "
            "the app and retry"
        )
    whose = "" if _sees_every_process() else " of this user (other users' processes cannot be seen from here)"
    if provider == "faiss":
        return (
            f"FAISS takes no lock and no process{whose} has its files open (mem0 opens them only to read or write): "
            "the files were checked unchanged while copied and up to the switch"
        )
    return f"{provider} takes no lock; checked /proc: no other process{whose} has a file of the folder open"


def _sees_every_process() -> bool:
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


@dataclass(frozen=True)
class FolderCopy:
    """What :func:`copy_folder_verified` made: points per collection at the source and in the copy (counted
    through the seam), the collections whose ids and payloads were checksummed equal, and the source's
    :func:`~mem0_hygiene.stores.qdrant.folder_signature` at copy time."""

    counts_before: dict[str, int]
    counts_after: dict[str, int]
    checksummed: int
    signature: Signature


def _checksums(provider: str, path: str, names: list[str]) -> dict[str, tuple[int, str]]:
    from . import open_vector_store

    out = {}
    try:
        for name in names:
            with open_vector_store(provider, {"path": path}, name) as store:
                out[name] = store.checksum()
    finally:
        release(provider, path)
    return out


def copy_folder_verified(provider: str, src: str, dst: str, collection: str) -> FolderCopy:
    """Copy the ``provider`` store folder ``src`` to ``dst`` (missing, or an empty folder), verified, then renamed
    into place; :class:`RelocateError` when the copy differs or the source changed meanwhile (``src`` is left as
    it was). Half-built copies an interrupted run left beside ``dst`` are removed first."""
    parent = os.path.dirname(dst)
    os.makedirs(parent, exist_ok=True)
    remove_stale_copies(dst)
    names = collection_names(provider, src) or [collection]
    before = _checksums(provider, src, names)  # opening Chroma touches its files: the signature is taken after
    signature = qdrant.folder_signature(src)
    digests = file_digests(folder_files(src), src)
    tmp = tempfile.mkdtemp(prefix=staging_prefix(dst), dir=parent)
    try:
        staged = os.path.join(tmp, "store")
        shutil.copytree(src, staged, symlinks=True)
        if qdrant.folder_signature(src) != signature or file_digests(folder_files(src), src) != digests:
            raise RelocateError(
                f"{src} changed while it was copied (the app wrote to it); nothing was switched, the source is "
                "untouched. Stop the app and run the same command again"
            )
        if file_digests(folder_files(staged), staged) != digests:
            raise RelocateError(f"the copy of {src} differs from it (disk full?); nothing was switched")
        after = _checksums(provider, staged, names)
        if after != before:
            raise RelocateError(
                f"the copy of {src} does not hold what it holds: points per collection "
                f"{ {k: v[0] for k, v in before.items()} } at the source, { {k: v[0] for k, v in after.items()} } in "
                "the copy (or their ids and payloads differ); nothing was switched, the source is untouched"
            )
        qdrant.check_destination_free(dst)
        if os.path.isdir(dst):
            os.rmdir(dst)  # an empty folder the user prepared
        os.rename(staged, dst)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    counts = {k: v[0] for k, v in before.items()}
    return FolderCopy(counts, {k: v[0] for k, v in after.items()}, len(after), signature)


__all__ = [
    "FOLDER_PROVIDERS",
    "FolderCopy",
    "check_not_held",
    "collection_names",
    "copy_folder_verified",
    "folder_counts",
    "is_store_folder",
    "open_by_others",
    "release",
]
