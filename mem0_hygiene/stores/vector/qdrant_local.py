"""A local Qdrant folder (``QdrantClient(path=...)``), read through the client (its lock taken for as long as this
object is open) or, where this process may only read the folder, from the collection's own SQLite file without
the lock (:class:`~mem0_hygiene.stores.qdrant_file.QdrantFolder`). A snapshot is the whole folder copied while its
lock is held (:func:`~mem0_hygiene.stores.qdrant.copy_store_verified`); a restore copies it back beside the folder
and swaps it in, verified by count and checksum.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import BackupError
from .. import qdrant
from ..qdrant_file import QdrantFolder, lock_refusal
from ..vectors import PAGE_SIZE
from .base import Point, Snapshot, VectorStore, new_snapshot_folder
from .qdrant_server import QdrantClientStore

FOLDER = "qdrant"
"""The folder copy's name inside a snapshot."""


def open_local_client(path: str, action: str = "read") -> Any:
    """Open a local Qdrant folder (raises :class:`~mem0_hygiene.errors.StoreLocked` when another process holds
    it). Python's cyclic collector is paused for the load: it would scan the growing heap of long-lived points
    again and again (about 2 s at 100k points)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return qdrant.open_client(path, action)
    finally:
        if was_enabled:
            gc.enable()


class QdrantLocalStore(VectorStore):
    """The collection ``collection`` of the local Qdrant folder ``path``."""

    provider = "qdrant"

    def __init__(self, path: str, collection: str, *, action: str = "read") -> None:
        super().__init__(collection, path)
        self.path = path
        self.action = action
        self.read_only = lock_refusal(path) if os.path.isdir(path) else None
        """Why this process may only read the folder (then its file is read without the lock), or None."""
        self._client: QdrantClientStore | None = None
        self._folder: QdrantFolder | None = None

    @property
    def note(self) -> str:
        """How the folder was read, when it was read without its lock ("" otherwise)."""
        return self._folder.note if self._folder is not None else ""

    def _reader(self) -> QdrantClientStore | QdrantFolder:
        if self.read_only:
            if self._folder is None:
                self._folder = QdrantFolder(self.path, self.read_only)
            return self._folder
        if self._client is None:
            self._client = QdrantClientStore(
                open_local_client(self.path, self.action), self.collection, self.path, owned=True
            )
        return self._client

    def live_client(self) -> Any | None:
        """The open ``QdrantClient`` this object reads through (opened now if need be), or None when it reads the
        folder's file without the lock: for mem0's own Qdrant class over the same folder in this process (a second
        client would be refused the folder's lock)."""
        reader = self._reader()
        return reader.client if isinstance(reader, QdrantClientStore) else None

    def _scale_source(self) -> Any:
        reader = self._reader()
        if isinstance(reader, QdrantFolder):
            from ...errors import ConfigError

            raise ConfigError(
                f"the distance of the local Qdrant folder {self.path} cannot be read without opening it, and this "
                f"account may only read it ({self.read_only}); run as the store's owner"
            )
        return reader._scale_source()

    def collections(self) -> set[str]:
        return qdrant.collection_names(self.path)

    def exists(self) -> bool:
        return qdrant.is_qdrant_folder(self.path) and self.collection in self.collections()

    def pages(self, page_size: int = PAGE_SIZE, *, with_vectors: bool = False) -> Iterator[list[Point]]:
        if not self.exists():
            return
        reader = self._reader()
        if isinstance(reader, QdrantFolder):
            for page in reader.pages(self.collection, page_size):
                out = [{"id": str(p["id"]), "payload": p["payload"]} for p in page]
                if with_vectors:
                    found = reader.retrieve(self.collection, [p["id"] for p in page])
                    for item, p in zip(out, page):
                        vector = getattr(found.get(str(p["id"])) or found.get(p["id"]), "vector", None)
                        item["vector"] = list(vector) if vector is not None else None
                yield out
            return
        yield from reader.pages(page_size, with_vectors=with_vectors)

    def count(self) -> int:
        if not self.exists():
            return 0
        reader = self._reader()
        return reader.count(self.collection) if isinstance(reader, QdrantFolder) else reader.count()

    def get(self, ids: Iterable[str], *, with_vectors: bool = False) -> dict[str, Point]:
        reader = self._reader() if self.exists() else None
        if isinstance(reader, QdrantClientStore):
            return reader.get(ids, with_vectors=with_vectors)
        return super().get(ids, with_vectors=with_vectors)

    def raw_files(self) -> list[str]:
        return [os.path.join(root, name) for root, _, names in os.walk(self.path) for name in names]

    def snapshot(self, dest: str) -> Snapshot:
        self.close()  # the copy takes the folder's lock itself
        new_snapshot_folder(dest)
        copy = os.path.join(dest, FOLDER)
        qdrant.copy_store_verified(self.path, copy)
        with QdrantLocalStore(copy, self.collection, action="verify") as taken:
            count, digest = taken.checksum()
        snap = Snapshot(self.provider, self.collection, count, digest, dest)
        snap.write()
        return snap

    def restore(self, snapshot: Snapshot) -> Snapshot:
        if self.read_only:
            raise BackupError(f"cannot restore into {self.path}: this account may only read it ({self.read_only})")
        self.close()
        source = os.path.join(snapshot.path, FOLDER)
        with QdrantLocalStore(source, self.collection, action="verify") as kept:
            kept.verify_against(snapshot, f"the snapshot folder {source} does not match its manifest")
        parent = os.path.dirname(os.path.abspath(self.path)) or "."
        staging = tempfile.mkdtemp(prefix=".restore-", dir=parent)
        try:
            staged = os.path.join(staging, "new")
            qdrant.copy_store(source, staged)
            held: Any = (
                qdrant.held_lock(self.path, "restore")
                if qdrant.is_qdrant_folder(self.path)
                else contextlib.nullcontext()
            )
            with held:
                old = os.path.join(staging, "old")
                if os.path.exists(self.path):
                    os.rename(self.path, old)
                os.rename(staged, self.path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return self.verify_against(snapshot, "the restored folder does not match its snapshot")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._folder is not None:
            self._folder.close()
            self._folder = None
