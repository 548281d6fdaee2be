"""A local Chroma store (a ``PersistentClient`` folder): points read with ``collection.get(include=["metadatas"])``
in pages by offset and limit. A snapshot is the folder copied while it is quiet (checked: every file the same
before and after the copy) and verified by opening the copy and comparing count and checksum; a restore swaps
the copy back in and verifies the same way. The app must not be writing meanwhile. :meth:`ChromaStore.erase` deletes
memories from a copy's folder (a backup set's, a folder relocated or migrated from) through Chroma's client."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

from ...errors import BackupError
from ..vectors import PAGE_SIZE
from .base import Point, Snapshot, VectorStore, new_snapshot_folder, payload_fields
from .files import copy_files_verified, folder_files, swap_folder_in

FOLDER = "chroma"
"""The folder copy's name inside a snapshot."""


def _client(path: str) -> Any:
    import chromadb
    from chromadb.config import Settings

    # the settings mem0's Chroma class opens a folder with: chromadb refuses a second client of the same folder in
    # one process with other settings
    return chromadb.Client(Settings(anonymized_telemetry=False, persist_directory=path, is_persistent=True))


def forget_cached_clients(path: str) -> None:
    """Drop chromadb's cached system for ``path`` in this process, so the next client reads the files afresh."""
    from chromadb.api.client import SharedSystemClient

    cache = getattr(SharedSystemClient, "_identifier_to_system", {})
    for key in [k for k in cache if os.path.abspath(str(k)) == os.path.abspath(path)]:
        system = cache.pop(key)
        try:
            system.stop()
        except Exception:  # a system already stopped: nothing held
            pass


def collection_names(path: str) -> list[str]:
    """The collections of the Chroma folder ``path`` ([] when it holds no Chroma database)."""
    if not os.path.isfile(os.path.join(path, "chroma.sqlite3")):
        return []
    return sorted(str(getattr(c, "name", c)) for c in _client(path).list_collections())


def clear_unused_capacity(path: str) -> int:
    """Zero the unused tail of every HNSW segment's ``data_level0.bin`` and ``length.bin`` in the Chroma folder
    ``path`` (a copy: call after :func:`forget_cached_clients`; a live store: see
    :meth:`ChromaStore.zero_unused_capacity`). hnswlib allocates room for ``max_elements`` and
    persists all of it, but clears a slot only when a point is added to it, so the slots past ``cur_element_count``
    hold whatever the writing process's memory held there: texts of memories included. The header (``header.bin``,
    format version 1: ``offsetLevel0``, ``max_elements``, ``cur_element_count``, ``size_data_per_element`` ...) says
    where the used part ends; a segment whose header or sizes do not read as expected is left alone. Returns the
    bytes zeroed (in place, fsynced; running it again changes nothing)."""
    import struct

    zeroed = 0
    for header in sorted(glob.glob(os.path.join(glob.escape(path), "*", "header.bin"))):
        data = os.path.join(os.path.dirname(header), "data_level0.bin")
        try:
            with open(header, "rb") as fh:
                raw = fh.read(36)
            version, offset, capacity, used, size = struct.unpack("<iqqqq", raw)
            length = os.path.getsize(data)
        except (OSError, struct.error):
            continue
        if version != 1 or offset != 0 or size <= 0 or not 0 <= used <= capacity or length != capacity * size:
            continue
        zeroed += _zero_tail(data, used * size)
        levels = os.path.join(os.path.dirname(header), "length.bin")  # one 4-byte level size per slot, as long
        try:
            if os.path.getsize(levels) == capacity * 4:
                zeroed += _zero_tail(levels, used * 4)
        except OSError:
            pass
    return zeroed


def _zero_tail(path: str, start: int) -> int:
    """Zero ``path`` from byte ``start`` to its end, in place, fsynced; the bytes zeroed."""
    length = os.path.getsize(path)
    if start >= length:
        return 0
    with open(path, "r+b") as fh:
        fh.seek(start)
        remaining = length - start
        while remaining:
            block = min(remaining, 1 << 20)
            fh.write(b"\0" * block)
            remaining -= block
        fh.flush()
        os.fsync(fh.fileno())
    return length - start


class ChromaStore(VectorStore):
    """The collection ``collection`` of the Chroma folder ``path``."""

    provider = "chroma"

    def __init__(self, path: str, collection: str) -> None:
        super().__init__(collection, path)
        self.path = path
        self._collection: Any = None

    def _scale_source(self) -> Any:
        return SimpleNamespace(collection=self._col())

    def use_collection(self, collection: Any) -> None:
        """Read through this open Chroma collection object (the app's own) instead of opening the folder."""
        self._collection = collection

    def _col(self) -> Any:
        if self._collection is None:
            self._collection = _client(self.path).get_collection(self.collection)
        return self._collection

    def exists(self) -> bool:
        if self._collection is not None:
            return True
        if not os.path.isfile(os.path.join(self.path, "chroma.sqlite3")):
            return False
        try:
            self._col()
        except Exception:  # chromadb raises its own NotFound (the class moved between versions)
            return False
        return True

    def pages(self, page_size: int = PAGE_SIZE, *, with_vectors: bool = False) -> Iterator[list[Point]]:
        if not self.exists():
            return
        include = ["metadatas", "embeddings"] if with_vectors else ["metadatas"]
        offset = 0
        while True:
            got = self._col().get(include=include, offset=offset, limit=page_size)
            yield from ([_points(got, with_vectors)] if got["ids"] else [])
            if len(got["ids"]) < page_size:
                return
            offset += page_size

    def field_pages(self, keys: tuple[str, ...], page_size: int = PAGE_SIZE) -> Iterator[list[tuple[Any, ...]]]:
        if not self.exists():
            return
        offset = 0
        while True:
            got = self._col().get(include=["metadatas"], offset=offset, limit=page_size)
            ids = got["ids"]
            if ids:
                metas = got.get("metadatas") or [None] * len(ids)
                yield [payload_fields(i, m or {}, keys) for i, m in zip(ids, metas)]
            if len(ids) < page_size:
                return
            offset += page_size

    def count(self) -> int:
        return int(self._col().count()) if self.exists() else 0

    def get(self, ids: Iterable[str], *, with_vectors: bool = False) -> dict[str, Point]:
        wanted = [str(i) for i in ids]
        if not wanted or not self.exists():
            return {}
        include = ["metadatas", "embeddings"] if with_vectors else ["metadatas"]
        return {p["id"]: p for p in _points(self._col().get(ids=wanted, include=include), with_vectors)}

    def find(self, **fields: Any) -> list[Point]:
        if not self.exists() or not fields:
            return super().find(**fields)
        where = [{k: {"$eq": v}} for k, v in fields.items()]
        got = self._col().get(where=where[0] if len(where) == 1 else {"$and": where}, include=["metadatas"])
        return _points(got, False)

    def scrub_log(self, ids: Iterable[str]) -> int:
        """Blank the metadata (mem0's payload: the text) that Chroma's own write-ahead log (table
        ``embeddings_queue`` in ``chroma.sqlite3``) still keeps for these ids once they are deleted from the
        collection; the operations stay, so replaying the log gives the same collection. Returns the rows blanked.
        Ids still in the collection are left alone."""
        import sqlite3

        gone = [i for i in (str(x) for x in ids) if i not in self.get([i])]
        database = os.path.join(self.path, "chroma.sqlite3")
        if not gone or not os.path.isfile(database):
            return 0
        conn = sqlite3.connect(database, timeout=5.0)
        try:
            conn.execute("PRAGMA secure_delete = ON")
            marks = ",".join("?" * len(gone))
            with conn:
                cur = conn.execute(
                    f"UPDATE embeddings_queue SET metadata = NULL WHERE id IN ({marks}) AND metadata IS NOT NULL", gone
                )
            return int(cur.rowcount)
        except sqlite3.OperationalError:  # another Chroma version without this table: nothing kept there
            return 0
        finally:
            conn.close()

    def zero_unused_capacity(self) -> int:
        """Zero the unused tail of this folder's HNSW files (:func:`clear_unused_capacity`) while the store is in
        use: the process that wrote a file left its own memory there (texts of memories included), and Chroma's
        index afterwards writes only the slots that change (``persist_dirty``), so the zeros stay. Returns the
        bytes zeroed."""
        return clear_unused_capacity(self.path)

    def erase(self, ids: Iterable[str]) -> int:
        """Delete these ids from the collection through Chroma's own client (for a copy's folder: the app's own store
        changes through mem0's ``delete``), then blank what Chroma's write-ahead log still keeps of them
        (:meth:`scrub_log`). The deleted rows' bytes stay in ``chroma.sqlite3``'s free pages until it is vacuumed
        (with ``secure_delete``), which the caller does once every client of the folder is let go
        (:func:`forget_cached_clients`). Returns how many points were deleted."""
        present = list(self.get(ids))
        if present:
            self._col().delete(ids=present)
        self.scrub_log(ids)
        return len(present)

    def raw_files(self) -> list[str]:
        return folder_files(self.path)

    def snapshot(self, dest: str) -> Snapshot:
        count, digest = self.checksum()
        new_snapshot_folder(dest)
        copy = os.path.join(dest, FOLDER)
        copy_files_verified(folder_files(self.path), self.path, copy, f"the Chroma folder {self.path}")
        snap = Snapshot(self.provider, self.collection, count, digest, dest)
        with ChromaStore(copy, self.collection) as taken:
            taken.verify_against(snap, "the copy does not hold what the store held")
        forget_cached_clients(copy)
        snap.write()
        return snap

    def restore(self, snapshot: Snapshot) -> Snapshot:
        source = os.path.join(snapshot.path, FOLDER)
        if not os.path.isdir(source):
            raise BackupError(f"{source} is missing: the snapshot is incomplete; restore from another backup set")
        self.close()
        forget_cached_clients(self.path)
        swap_folder_in(source, self.path)
        forget_cached_clients(source)
        return self.verify_against(snapshot, "the restored folder does not match its snapshot")

    def close(self) -> None:
        self._collection = None


def _points(got: dict[str, Any], with_vectors: bool) -> list[Point]:
    metas = got.get("metadatas") or [None] * len(got["ids"])
    out: list[Point] = [{"id": str(i), "payload": dict(m or {})} for i, m in zip(got["ids"], metas)]
    if with_vectors:
        vectors: Any = got.get("embeddings")
        for point, vector in zip(out, vectors if vectors is not None else []):
            point["vector"] = [float(x) for x in vector]
    return out
