"""Helpers for a local (embedded) Qdrant folder: lock detection, point counts, copying, payload checks.

Local Qdrant keeps a collection per sub-folder plus ``meta.json`` and takes an exclusive, non-blocking
lock on ``PATH/.lock`` (portalocker, i.e. ``flock`` on POSIX) for as long as a client is open. A second
client, in this process or another, cannot open the folder until the first one is closed. Everything
here says so with :class:`~mem0_hygiene.errors.StoreLocked`, naming the remedies.

:func:`relocate_qdrant_folder` (built on :func:`copy_store_verified`) is the verified copy of a folder
to a new place: used by the drop-in's start-up rescue of a store on tmpfs and by
:func:`mem0_hygiene.actions.relocate.relocate`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import RelocateError, StoreLocked
from .staging import remove_stale_copies, staging_prefix
from .vectors import qdrant_pages

LOCK_FILENAME = ".lock"
DEFAULT_SAMPLE = 25  # points whose payload and vector a verified copy compares with the source


def lock_file(path: str | os.PathLike[str]) -> str:
    """The file local Qdrant locks while a client has the folder open."""
    return os.path.join(os.fspath(path), LOCK_FILENAME)


def locked_message(path: str | os.PathLike[str], action: str = "open") -> str:
    """The explanation and remedies used by every :class:`StoreLocked` raised for ``path``."""
    return (
        f"cannot {action} the local Qdrant store at {os.fspath(path)}: another Qdrant client holds its "
        f"lock ({lock_file(path)}), most likely the running app. Local Qdrant allows one client at a time. "
        "Either stop the app and retry, or run the operation inside the app on its own Memory object "
        "(e.g. m.backup(...), m.prune(): the app's Memory must be mem0_hygiene's, `from mem0_hygiene import "
        "Memory`, as plain mem0's lacks them), or move the store to a Qdrant server (vector_store.config "
        "url/host), which any number of processes can share."
    )


def _try_flock(fd: int, keep: bool = False) -> bool:
    """Take an exclusive non-blocking lock on ``fd`` and release it again (``keep``: hold it until ``fd`` is
    closed); False when someone else holds one."""
    try:
        import fcntl
    except ImportError:  # Windows: the same lock through portalocker, as local Qdrant takes it
        import portalocker

        with open(fd, closefd=False) as fh:
            try:
                portalocker.lock(fh, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
            except portalocker.exceptions.LockException:
                return False
            if not keep:
                portalocker.unlock(fh)
            return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:  # EWOULDBLOCK/EACCES on some systems
        import errno

        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    if not keep:
        fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def is_locked(path: str | os.PathLike[str]) -> bool:
    """True when a Qdrant client (in any process, this one included) has the folder open.

    Tries the same exclusive non-blocking lock local Qdrant takes on ``PATH/.lock`` and releases it at
    once. A folder without a lock file (or no folder at all) is not locked.
    """
    lock = lock_file(path)
    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        # Unreadable lock file: we could not open the store either; let opening it report the reason.
        return False
    try:
        return not _try_flock(fd)
    finally:
        os.close(fd)


def ensure_unlocked(path: str | os.PathLike[str], action: str = "open") -> None:
    """Raise :class:`StoreLocked` when another client holds the folder."""
    if is_locked(path):
        raise StoreLocked(locked_message(path, action))


@contextlib.contextmanager
def held_lock(path: str | os.PathLike[str], action: str = "move") -> Iterator[None]:
    """Hold local Qdrant's own lock on the folder for the block, as an open client would: no client can open
    it meanwhile. :class:`StoreLocked` when one has it open now. The lock follows the folder if it is
    renamed, and goes when the block ends (or the process dies)."""
    fd = os.open(lock_file(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_flock(fd, keep=True):
            raise StoreLocked(locked_message(path, action))
        yield
    finally:
        os.close(fd)


def is_qdrant_folder(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` looks like a local Qdrant store (has ``meta.json`` or a ``collection`` folder)."""
    p = os.fspath(path)
    return os.path.isfile(os.path.join(p, "meta.json")) or os.path.isdir(os.path.join(p, "collection"))


def open_client(path: str | os.PathLike[str], action: str = "open") -> Any:
    """A ``QdrantClient`` on a local folder; :class:`StoreLocked` when another client holds it.

    The caller closes it (``client.close()``) to release the lock; :func:`opened` does that for you.
    """
    from qdrant_client import QdrantClient

    ensure_unlocked(path, action)
    try:
        return QdrantClient(path=os.fspath(path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise StoreLocked(locked_message(path, action)) from exc
        raise


@contextlib.contextmanager
def opened(path: str | os.PathLike[str], action: str = "open") -> Iterator[Any]:
    """``with opened(path) as client:`` a local client that is closed (and unlocked) afterwards."""
    client = open_client(path, action)
    try:
        yield client
    finally:
        client.close()


def client_counts(client: Any) -> dict[str, int]:
    """Exact point count per collection of an open client, sorted by collection name."""
    names = sorted(c.name for c in client.get_collections().collections)
    return {name: int(client.count(name, exact=True).count) for name in names}


def collection_counts(path: str | os.PathLike[str]) -> dict[str, int]:
    """Exact point count per collection of the local store at ``path`` ({} when there is no store).

    Opens the folder (so it fails with :class:`StoreLocked` while another client holds it) and closes
    it again. A missing folder is not created.
    """
    if not os.path.isdir(os.fspath(path)):
        return {}
    with opened(path, "count the points of") as client:
        return client_counts(client)


def all_ids(client: Any, collection: str) -> list[Any]:
    """Every point id of a collection, paging through it without payloads or vectors."""
    return [p["id"] for page in qdrant_pages(client, collection, with_payload=False) for p in page]


def sample_ids(ids: list[Any], size: int) -> list[Any]:
    """Up to ``size`` ids spread evenly over ``ids`` (first and last included): deterministic."""
    if size <= 0 or not ids:
        return []
    if len(ids) <= size:
        return list(ids)
    if size == 1:
        return [ids[0]]
    step = (len(ids) - 1) / (size - 1)
    return [ids[round(i * step)] for i in range(size)]


def fetch_points(client: Any, collection: str, ids: list[Any]) -> dict[str, tuple[Any, Any]]:
    """``{str(id): (payload, vector)}`` for the given ids (missing ids are absent)."""
    if not ids:
        return {}
    records = client.retrieve(collection, ids=ids, with_payload=True, with_vectors=True)
    return {str(r.id): (r.payload, r.vector) for r in records}


def copy_store(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Copy the folder ``src`` to ``dst`` (which must not exist), file by file, metadata included.

    The caller makes sure no client writes to ``src`` meanwhile (holding its lock, e.g. with an open
    client that only reads); the copy is then a consistent snapshot, SQLite journals included.
    """
    shutil.copytree(os.fspath(src), os.fspath(dst), symlinks=True)


def folder_size(path: str | os.PathLike[str]) -> int:
    """Bytes in all regular files under ``path`` (a file's own size when ``path`` is a file)."""
    p = os.fspath(path)
    if os.path.isfile(p):
        return os.path.getsize(p)
    total = 0
    for root, _dirs, files in os.walk(p):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if not os.path.islink(os.path.join(root, name)):
                total += st.st_size
    return total


# ---------------------------------------------------------------------------------------------- verified copies


def folder_signature(path: str) -> tuple[tuple[str, int, int], ...]:
    """(relative path, size, mtime) of every file but the lock: changes when a client writes."""
    sig = []
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if rel == LOCK_FILENAME:
                continue
            try:
                st = os.lstat(full)
            except OSError:
                continue
            sig.append((rel, st.st_size, st.st_mtime_ns))
    return tuple(sorted(sig))


def check_destination_free(dst: str) -> None:
    """:class:`~mem0_hygiene.errors.RelocateError` unless ``dst`` is missing or an empty folder."""
    if os.path.lexists(dst) and not (os.path.isdir(dst) and not os.listdir(dst)):
        raise RelocateError(
            f"{dst} already exists and is not empty; choose another destination, or move it away first "
            "(nothing was copied)"
        )


def check_not_nested(src: str, dst: str) -> None:
    """:class:`~mem0_hygiene.errors.RelocateError` when ``src`` and ``dst`` are one folder or one holds the other."""
    rs, rd = os.path.realpath(src), os.path.realpath(dst)
    if rs == rd:
        raise RelocateError(f"the store is already at {dst}")
    if rd.startswith(rs.rstrip("/") + "/") or rs.startswith(rd.rstrip("/") + "/"):
        raise RelocateError(f"cannot move {src} into {dst}: one folder contains the other")


@dataclass(frozen=True)
class QdrantCopy:
    """What :func:`copy_store_verified` made: points per collection at the source and in the copy, how
    many sampled points were compared, and the source's :func:`folder_signature` at copy time."""

    counts_before: dict[str, int]
    counts_after: dict[str, int]
    sampled: int
    signature: tuple[tuple[str, int, int], ...]


def copy_store_verified(src: str, dst: str, sample_size: int = DEFAULT_SAMPLE) -> QdrantCopy:
    """Copy a local Qdrant folder to ``dst`` through a temporary folder beside it, verified, then renamed.

    The source is held open (its lock taken, nothing written) for the whole copy, so no other client
    can change it meanwhile. Half-built copies an earlier, interrupted run left beside ``dst`` are removed
    first (while the source is held, so no other mover is building one).
    """
    parent = os.path.dirname(dst)
    os.makedirs(parent, exist_ok=True)
    with opened(src, "relocate") as src_client:
        remove_stale_copies(dst)
        before = client_counts(src_client)
        expected: dict[str, dict[str, tuple[Any, Any]]] = {}
        for name in before:
            ids = sample_ids(all_ids(src_client, name), sample_size)
            expected[name] = fetch_points(src_client, name, ids)
        signature = folder_signature(src)
        tmp = tempfile.mkdtemp(prefix=staging_prefix(dst), dir=parent)
        try:
            staged = os.path.join(tmp, "store")
            copy_store(src, staged)
            with opened(staged, "verify") as copy_client:
                after = client_counts(copy_client)
                if after != before:
                    raise RelocateError(
                        f"the copy of {src} does not match it: points per collection {before} at the "
                        f"source, {after} in the copy; nothing was switched, the source is untouched"
                    )
                sampled = 0
                for name, points in expected.items():
                    got = fetch_points(copy_client, name, list(points))
                    for pid, (payload, vector) in points.items():
                        if pid not in got or got[pid][0] != payload or got[pid][1] != vector:
                            raise RelocateError(
                                f"point {pid} of collection {name!r} differs between {src} and its copy; "
                                "nothing was switched, the source is untouched"
                            )
                        sampled += 1
            check_destination_free(dst)
            if os.path.isdir(dst):
                os.rmdir(dst)  # an empty folder the user prepared
            os.rename(staged, dst)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return QdrantCopy(before, after, sampled, signature)


def relocate_qdrant_folder(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], *, sample_size: int = DEFAULT_SAMPLE
) -> dict[str, int]:
    """Copy the local Qdrant folder ``src`` to ``dst`` and verify it; returns the points per collection.

    ``dst`` must not exist (or be an empty folder); the copy is built beside it and renamed into place
    only after its point counts per collection and a sample of payloads match the source. ``src`` is
    left as it was: the caller switches its path to ``dst`` (and may delete ``src`` later). Raises
    :class:`~mem0_hygiene.errors.StoreLocked` when another client holds ``src``, and
    :class:`~mem0_hygiene.errors.RelocateError` when there is nothing to copy, ``dst`` is taken, or the
    copy does not verify.
    """
    src_s = os.path.abspath(os.path.expanduser(os.fspath(src)))
    dst_s = os.path.abspath(os.path.expanduser(os.fspath(dst)))
    if not os.path.isdir(src_s):
        raise RelocateError(f"there is no local Qdrant store at {src_s}")
    check_not_nested(src_s, dst_s)
    check_destination_free(dst_s)
    ensure_unlocked(src_s, "relocate")
    return copy_store_verified(src_s, dst_s, sample_size).counts_after


def collection_names(path: str | os.PathLike[str]) -> set[str]:
    """The collections a local Qdrant folder holds, read from its ``meta.json`` without opening (or locking)
    it; an empty set when there is no readable store."""
    import json

    try:
        with open(os.path.join(os.fspath(path), "meta.json"), encoding="utf-8") as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return set()
    collections = meta.get("collections") if isinstance(meta, dict) else None
    return set(collections) if isinstance(collections, dict) else set()


def check_collection_named(where: str, collection: str, present: set[str]) -> None:
    """Raise :class:`~mem0_hygiene.errors.CollectionNotFound` when a store holds collections but not
    ``collection`` (mem0 2.x keeps ``{collection}_entities`` beside it: such a collection alone does not count).
    A store holding none is a new one: nothing to tell."""
    from ..errors import CollectionNotFound

    if any(not name.endswith("_entities") for name in present) and collection not in present:
        raise CollectionNotFound(where, collection, sorted(present))
