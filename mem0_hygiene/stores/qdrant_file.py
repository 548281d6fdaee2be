"""Reading a local Qdrant folder this process may only read: its files, read-only, without taking its lock.

Local Qdrant opens ``PATH/.lock`` for writing and locks it before it reads anything, so with read access only (a
backup mounted read-only, an auditor's account, a store owned by the app's user) no client can open the folder.
:func:`lock_refusal` tells that case apart (the lock file cannot be opened for writing, or created: EACCES, EPERM
or EROFS); :class:`QdrantFolder` then reads what a client would load: ``meta.json`` and each collection's
``collection/NAME/storage.sqlite`` (table ``points``: the key, and the point pickled as qdrant-client's local mode
writes it, the newest row of a point winning, as its ``CollectionPersistence.load`` does), through a
``file:...?mode=ro`` URI. Nothing is created, changed or locked for writing.

``immutable=1`` (SQLite then takes no file locks and reads no journal) is added only where nothing can write the
file meanwhile: the folder's lock is free and held shared by the reader for as long as it is open (a client
needs it exclusively; ``flock`` works on a read-only descriptor and across mounts), or the lock file cannot even
be read on a filesystem mounted read-only. Otherwise (a client, the app, holds the lock, perhaps through another,
writable mount of the same files) the file is read as a normal read-only SQLite reader, which sees only committed
points and holds the app's writer back only for the moment SQLite reads the rows. A file a writer left with a hot
journal (it died mid-commit) is read from a rolled-back copy in a temporary folder
(:class:`~mem0_hygiene.stores.history.RecoveredCopy`).

:func:`readonly_client` copies one collection into an in-memory ``QdrantClient`` (:class:`ReadOnlyClient`) for
code that reads through mem0's vector-store class (filters, search, scroll with vectors); its point writes raise
:class:`~mem0_hygiene.errors.ReadOnlyStore`. :attr:`QdrantFolder.note` says which way the folder was read.

Unpickling the points trusts the store's files exactly as local Qdrant itself does when it opens them.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic_core import to_jsonable_python
from qdrant_client import QdrantClient

from ..errors import ReadOnlyStore
from .history import RecoveredCopy, needs_rollback
from .qdrant import LOCK_FILENAME
from .sqlite import BUSY_TIMEOUT_MS

STORAGE_FILE = "storage.sqlite"
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)
_FETCH = 2000  # rows per fetch when nothing can write the file (immutable)


def lock_refusal(path: str | os.PathLike[str]) -> str | None:
    """Why this process cannot take the lock of the local Qdrant folder ``path`` for lack of permission ("Read-only
    file system", "Permission denied"), or None when it may (or when there is no store there: opening it says so).

    Opens ``PATH/.lock`` for writing as local Qdrant does (nothing is written, created or locked), or, when it is
    missing, asks whether it could be created."""
    folder = os.fspath(path)
    if not os.path.isdir(folder):
        return None
    lock = os.path.join(folder, LOCK_FILENAME)
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        if os.access(folder, os.W_OK):
            return None
        return f"{lock} is missing and {folder} cannot be written ({_fs_reason(folder)})"
    except OSError as exc:
        if exc.errno in _DENIED:
            return f"cannot open {lock} for writing: {exc.strerror}"
        return None  # another trouble: opening the store reports it
    os.close(fd)
    return None


def _fs_reason(folder: str) -> str:
    return "Read-only file system" if readonly_filesystem(folder) else "Permission denied"


def readonly_filesystem(path: str) -> bool:
    """The filesystem holding ``path`` is mounted read-only (nobody can write any file on it)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _try_shared_lock(lock: str) -> int | None:
    """A read-only descriptor of the lock file holding a shared lock (no client can take it exclusively until it
    is closed), or None when a client holds it or it cannot be read."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        import fcntl
    except ImportError:  # Windows: no shared lock here; read as a plain reader
        os.close(fd)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _normalize(point_id: Any) -> Any:
    try:
        from qdrant_client.local.utils import normalize_point_id
    except ImportError:  # an older qdrant-client keeps ids as written
        return point_id
    return normalize_point_id(point_id)


class QdrantFolder:
    """The points of a local Qdrant folder, read from its files without its lock (see the module docstring). Use
    as a context manager, or :meth:`close` it (which releases the shared lock and removes rolled-back copies).

    Fields:
        path: the folder.
        immutable: the files are read with ``immutable=1`` (nothing can write them meanwhile).
        why: why the folder is read this way (the permission that was missing).
    """

    def __init__(self, path: str | os.PathLike[str], why: str = "") -> None:
        self.path = os.fspath(path)
        self.why = why
        lock = os.path.join(self.path, LOCK_FILENAME)
        self._lock_fd = _try_shared_lock(lock)
        # without the shared hold: immutable only when the lock cannot even be read on a read-only filesystem (a
        # lock someone holds means a writer, perhaps through another, writable mount of the same files)
        self._unreadable_on_readonly_fs = (
            self._lock_fd is None and not os.access(lock, os.R_OK) and readonly_filesystem(self.path)
        )
        self.immutable = self._lock_fd is not None or self._unreadable_on_readonly_fs
        self._copies: list[RecoveredCopy] = []
        self.recovered: list[str] = []  # notes of the files read from a rolled-back copy

    def __enter__(self) -> QdrantFolder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # the shared lock goes with it
            self._lock_fd = None
        for copy in self._copies:
            copy.close()
        self._copies = []

    @property
    def note(self) -> str:
        """What was done, for the user: the file read directly, how, and why the lock was not taken."""
        if self._lock_fd is not None:
            how = "immutable: no client had it open, and a shared lock on its .lock kept one out while reading"
        elif self._unreadable_on_readonly_fs:
            how = "immutable: the filesystem is read-only"
        else:
            how = "mode=ro, not immutable: a client (the app) may be writing it, so its committed points were read"
        note = f"read-only: read the collection's SQLite file directly, lock not taken ({self.path}; {how})" + (
            f"; {self.why}" if self.why else ""
        )
        return note + "".join(f"; {r}" for r in self.recovered)

    # -- what the folder holds --------------------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """``meta.json`` as local Qdrant wrote it ({} when missing or unreadable)."""
        try:
            with open(os.path.join(self.path, "meta.json"), encoding="utf-8") as fh:
                meta = json.load(fh)
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    def collections(self) -> list[str]:
        """The collection names ``meta.json`` lists, sorted."""
        found = self.meta().get("collections")
        return sorted(found) if isinstance(found, dict) else []

    def collection_config(self, collection: str) -> Any:
        """The collection's ``CreateCollection`` config, as local Qdrant rebuilds it from ``meta.json``."""
        from qdrant_client.http import models

        found = self.meta().get("collections") or {}
        if collection not in found:
            raise ReadOnlyStore(f"the local Qdrant store at {self.path} has no collection {collection!r}")
        config = dict(found[collection])
        config.pop("init_from", None)  # a field local Qdrant drops too
        return models.CreateCollection(**config)

    def storage_file(self, collection: str) -> str:
        """The collection's SQLite file (which may be missing: a collection never written to)."""
        base = os.path.realpath(os.path.join(self.path, "collection"))
        folder = os.path.realpath(os.path.join(base, collection))
        if folder == base or os.path.commonpath([base, folder]) != base:
            raise ReadOnlyStore(f"collection name {collection!r} points outside {self.path}")
        return os.path.join(self.path, "collection", collection, STORAGE_FILE)

    # -- points ----------------------------------------------------------------------------------------------
    def _connect(self, collection: str) -> sqlite3.Connection | None:
        from urllib.parse import quote

        path = self.storage_file(collection)
        if not os.path.isfile(path):
            return None
        if needs_rollback(path) or (self.immutable and _has_journal(path)):
            copy = RecoveredCopy(path)  # the last committed state, rolled back in a temporary folder
            self._copies.append(copy)
            self.recovered.append(copy.note)
            path, extra = copy.path, ""
        else:
            extra = "&immutable=1" if self.immutable else ""
        return sqlite3.connect(
            f"file:{quote(os.path.abspath(path))}?mode=ro{extra}",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )

    def _rows(self, conn: sqlite3.Connection) -> Iterator[list[tuple[Any, ...]]]:
        sql = "SELECT point FROM points ORDER BY rowid DESC"  # the newest row of a point first, as Qdrant loads
        try:
            cursor = conn.execute(sql)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return
            raise
        if not self.immutable:  # a writer may be waiting: read every row at once and let it go
            yield cursor.fetchall()
            return
        while rows := cursor.fetchmany(_FETCH):
            yield rows

    def points(self, collection: str) -> Iterator[Any]:
        """Every point of ``collection`` (qdrant-client ``PointStruct``s, vectors included), each once."""
        conn = self._connect(collection)
        if conn is None:
            return
        seen: set[Any] = set()
        try:
            for rows in self._rows(conn):
                for (blob,) in rows:
                    point = pickle.loads(blob)
                    pid = _normalize(point.id)
                    if pid in seen:
                        continue  # an older copy (another spelling of its id)
                    seen.add(pid)
                    if pid != point.id:
                        point = type(point).model_construct(id=pid, vector=point.vector, payload=point.payload)
                    yield point
        finally:
            conn.close()

    def pages(self, collection: str, page_size: int, *, with_payload: bool = True) -> Iterator[list[dict[str, Any]]]:
        """Every point as ``{"id", "payload"}`` dicts in pages, as :func:`~mem0_hygiene.stores.vectors.qdrant_pages`
        yields them (payloads as local Qdrant holds them in memory)."""
        page: list[dict[str, Any]] = []
        for point in self.points(collection):
            payload = to_jsonable_python(point.payload) or {} if with_payload else None  # as Qdrant holds it
            page.append({"id": point.id, "payload": payload})
            if len(page) >= page_size:
                yield page
                page = []
        if page:
            yield page

    def count(self, collection: str) -> int:
        """How many points ``collection`` holds."""
        return sum(1 for _ in self.points(collection))

    def retrieve(self, collection: str, ids: Iterable[Any]) -> dict[str, Any]:
        """``{str(id): point}`` for the ids the collection holds."""
        wanted = {str(_normalize(i)) for i in ids}
        return {str(p.id): p for p in self.points(collection) if str(p.id) in wanted}


def _has_journal(path: str) -> bool:
    """A non-empty rollback journal or WAL beside the file (``immutable=1`` would ignore what is in it)."""
    return any(os.path.isfile(path + s) and os.path.getsize(path + s) > 0 for s in ("-journal", "-wal"))


# ---------------------------------------------------------------------------------------------- mem0's view


_WRITES = (
    "upsert",
    "upload_points",
    "upload_collection",
    "delete",
    "set_payload",
    "overwrite_payload",
    "delete_payload",
    "clear_payload",
    "update_vectors",
    "delete_vectors",
    "batch_update_points",
    "delete_collection",
    "recreate_collection",
)


class ReadOnlyClient(QdrantClient):
    """An in-memory ``QdrantClient`` holding a copy of one collection of a folder read by :class:`QdrantFolder`:
    everything a client reads (scroll, retrieve, count, filters, search) works as on the folder; the point and
    collection writes raise :class:`~mem0_hygiene.errors.ReadOnlyStore` (nothing would reach the folder). Payload
    indexes, which local Qdrant ignores, are accepted and ignored without its warning (mem0 asks for them)."""

    folder_note: str = ""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise ReadOnlyStore(f"this store is open read-only ({self.folder_note}); nothing can be written to it here")

    def _ignore(self, *args: Any, **kwargs: Any) -> Any:
        return None


for _name in _WRITES:
    setattr(ReadOnlyClient, _name, ReadOnlyClient._refuse)
ReadOnlyClient.create_payload_index = ReadOnlyClient._ignore  # type: ignore[method-assign,assignment]

_LOAD_BATCH = 10_000


def readonly_client(path: str | os.PathLike[str], collection: str, why: str = "") -> ReadOnlyClient:
    """A :class:`ReadOnlyClient` holding ``collection`` of the local Qdrant folder ``path``, read through
    :class:`QdrantFolder` (``folder_note`` says how); the folder is let go once read. The caller closes it."""
    client = ReadOnlyClient(location=":memory:")
    try:
        with QdrantFolder(path, why) as folder:
            config = folder.collection_config(collection)
            client.create_collection(
                collection, vectors_config=config.vectors, sparse_vectors_config=config.sparse_vectors
            )
            batch: list[Any] = []
            for point in folder.points(collection):
                batch.append(point)
                if len(batch) >= _LOAD_BATCH:
                    QdrantClient.upsert(client, collection, points=batch)
                    batch = []
            if batch:
                QdrantClient.upsert(client, collection, points=batch)
            client.folder_note = folder.note
    except BaseException:
        client.close()
        raise
    return client
