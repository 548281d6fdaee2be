"""mem0's FAISS store: ``PATH/COLLECTION.faiss`` (the index) beside ``COLLECTION.json`` (docstore: id -> payload,
and index_to_id: position -> id), or the legacy ``COLLECTION.pkl`` pickle of the same two dicts. Read from the
files, read-only (the pickle through mem0's restricted unpickler; vectors with ``faiss.read_index``). A snapshot
is the files copied, checked unchanged at the source while copied and equal in the copy; a restore swaps the
copies in by rename and verifies count and checksum. :meth:`FaissStore.erase` removes memories from a copy's
files (a backup set's, a folder relocated or migrated from), rewritten atomically."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

from ...errors import BackupError
from ..durable import sync_folder
from ..vectors import PAGE_SIZE
from .base import Point, Snapshot, VectorStore, new_snapshot_folder, payload_fields
from .files import copy_files_verified

SUFFIXES = (".faiss", ".json", ".pkl")
FOLDER = "faiss"
"""The copied files' folder inside a snapshot (a copy of the store's folder, holding this collection's files)."""


class FaissStore(VectorStore):
    """The collection ``collection`` of mem0's FAISS folder ``path``."""

    provider = "faiss"

    def __init__(
        self, path: str, collection: str, *, distance_strategy: str = "euclidean", normalize_L2: bool = False
    ) -> None:
        super().__init__(collection, path)
        self.path = path
        self.distance_strategy = distance_strategy
        """mem0's setting (its default: euclidean): how search scores read as cosine similarity."""
        self.normalize_L2 = normalize_L2

    def _scale_source(self) -> Any:
        return SimpleNamespace(distance_strategy=self.distance_strategy, normalize_L2=self.normalize_L2)

    def _file(self, suffix: str) -> str:
        return os.path.join(self.path, self.collection + suffix)

    def exists(self) -> bool:
        return os.path.isfile(self._file(".faiss")) and (
            os.path.isfile(self._file(".json")) or os.path.isfile(self._file(".pkl"))
        )

    def _docstore(self) -> tuple[dict[str, dict[str, Any]], dict[int, str]]:
        json_path = self._file(".json")
        try:
            if os.path.isfile(json_path):
                with open(json_path, encoding="utf-8") as fh:
                    data = json.load(fh)
                return dict(data.get("docstore") or {}), {int(k): v for k, v in (data.get("index_to_id") or {}).items()}
            from mem0.vector_stores.faiss import _safe_pickle_load, _validate_docstore_structure

            docstore, index_to_id = _validate_docstore_structure(_safe_pickle_load(self._file(".pkl")))
            return docstore, index_to_id
        except (OSError, ValueError) as exc:
            raise BackupError(f"the FAISS docstore of {self.describe()} cannot be read: {exc}") from exc

    def pages(self, page_size: int = PAGE_SIZE, *, with_vectors: bool = False) -> Iterator[list[Point]]:
        if not self.exists():
            return
        docstore, index_to_id = self._docstore()
        vectors: dict[str, list[float]] = {}
        if with_vectors:
            import faiss

            index = faiss.read_index(self._file(".faiss"))
            vectors = {vid: index.reconstruct(pos).tolist() for pos, vid in index_to_id.items() if pos < index.ntotal}
        ids = list(docstore)
        for start in range(0, len(ids), page_size):
            page: list[Point] = []
            for vid in ids[start : start + page_size]:
                point: Point = {"id": str(vid), "payload": docstore[vid]}
                if with_vectors:
                    point["vector"] = vectors.get(vid)
                page.append(point)
            yield page

    def field_pages(self, keys: tuple[str, ...], page_size: int = PAGE_SIZE) -> Iterator[list[tuple[Any, ...]]]:
        if not self.exists():
            return
        docstore = self._docstore()[0]
        ids = list(docstore)
        for start in range(0, len(ids), page_size):
            yield [payload_fields(vid, docstore[vid] or {}, keys) for vid in ids[start : start + page_size]]

    def count(self) -> int:
        return len(self._docstore()[0]) if self.exists() else 0

    def raw_files(self) -> list[str]:
        return [self._file(s) for s in SUFFIXES if os.path.isfile(self._file(s))]

    def snapshot(self, dest: str) -> Snapshot:
        if not self.exists():
            raise BackupError(f"there is no FAISS store at {self.describe()}: nothing to snapshot")
        new_snapshot_folder(dest)
        copy = os.path.join(dest, FOLDER)
        copy_files_verified(self.raw_files(), self.path, copy, f"the FAISS store {self.describe()}")
        count, digest = FaissStore(copy, self.collection).checksum()
        snap = Snapshot(self.provider, self.collection, count, digest, dest)
        snap.write()
        return snap

    def restore(self, snapshot: Snapshot) -> Snapshot:
        copy = FaissStore(os.path.join(snapshot.path, FOLDER), self.collection)
        copy.verify_against(snapshot, f"the snapshot {snapshot.path} does not match its manifest")
        os.makedirs(self.path, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".restore-", dir=self.path)
        try:
            staged = []
            for source in copy.raw_files():
                tmp = os.path.join(staging, os.path.basename(source))
                shutil.copy2(source, tmp)
                staged.append(tmp)
            for leftover in set(self.raw_files()) - {self._file(os.path.splitext(t)[1]) for t in staged}:
                os.remove(leftover)  # a legacy .pkl the snapshot does not have: mem0 would read it back
            for tmp in staged:
                os.replace(tmp, os.path.join(self.path, os.path.basename(tmp)))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return self.verify_against(snapshot, "the restored files do not match their snapshot")

    # -- erasure in a copy -----------------------------------------------------------------------
    def _erasing_folder(self) -> str:
        return os.path.join(self.path, f".{self.collection}.erasing")

    def erase(self, ids: Iterable[str]) -> int:
        """Remove these ids from the collection's files (a copy's: the app's own store changes through mem0's
        ``delete``): their entries of the docstore and of the id map, and their vectors from the index, rebuilt
        from the vectors kept as mem0's own delete does. The new index and docstore (JSON, as mem0 writes it; a
        legacy ``.pkl`` is removed) are written and fsynced in a staging folder beside them
        (``.COLLECTION.erasing``), marked complete, then renamed over the old ones; a run killed before the mark
        leaves the old files (the staging folder is dropped next time), one killed after it is finished by the
        next call. Returns how many entries were removed (0 when none of the ids is there)."""
        self.finish_erasure()
        if not self.exists():
            return 0
        wanted = {str(i) for i in ids}
        docstore, index_to_id = self._docstore()
        if not wanted.intersection(docstore) and not wanted.intersection(map(str, index_to_id.values())):
            return 0
        import faiss
        import numpy as np

        index = faiss.read_index(self._file(".faiss"))
        keep = [(pos, vid) for pos, vid in sorted(index_to_id.items()) if str(vid) not in wanted and pos < index.ntotal]
        vectors = [index.reconstruct(int(pos)) for pos, _ in keep]
        index.reset()
        if vectors:
            index.add(np.array(vectors, dtype=np.float32))
        kept = {k: v for k, v in docstore.items() if str(k) not in wanted}
        data = {"docstore": kept, "index_to_id": {str(n): vid for n, (_, vid) in enumerate(keep)}}
        stage = self._erasing_folder()
        shutil.rmtree(stage, ignore_errors=True)
        os.makedirs(stage)
        staged_index = os.path.join(stage, self.collection + ".faiss")
        faiss.write_index(index, staged_index)
        with open(staged_index, "rb+") as fh:
            os.fsync(fh.fileno())
        for name, text in ((self.collection + ".json", json.dumps(data, indent=2)), (_READY, "")):
            with open(os.path.join(stage, name), "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        sync_folder(stage)
        self.finish_erasure()
        return len(docstore) - len(kept)

    def finish_erasure(self) -> bool:
        """Finish an :meth:`erase` that was interrupted after its new files were complete (rename them in, remove
        a legacy ``.pkl``), or drop one interrupted before; True when one was finished."""
        stage = self._erasing_folder()
        if not os.path.isdir(stage):
            return False
        if not os.path.isfile(os.path.join(stage, _READY)):
            shutil.rmtree(stage, ignore_errors=True)
            return False
        for suffix in (".faiss", ".json"):
            staged = os.path.join(stage, self.collection + suffix)
            if os.path.isfile(staged):
                os.replace(staged, self._file(suffix))
        if os.path.isfile(self._file(".pkl")):
            os.remove(self._file(".pkl"))  # mem0 reads the JSON first; the pickle would still hold the texts
        sync_folder(self.path)
        shutil.rmtree(stage)
        sync_folder(self.path)
        return True


_READY = "complete"
"""The file marking a staged erasure's new index and docstore as complete (:meth:`FaissStore.erase`)."""
