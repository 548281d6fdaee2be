"""A Qdrant collection read through a ``QdrantClient``: a Qdrant server, or a client the app passed in.

No Qdrant server can run where this project is tested, so this module is exercised only through what it shares
with the local folder (:mod:`.qdrant_local`: paging, lookups, the client calls) and the rows snapshot format
(:mod:`.rows`, exercised on pgvector). A snapshot is the collection's points with their vectors, scrolled into
``rows.jsonl``; a restore recreates the collection with the same vector size and upserts them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

from ..vectors import PAGE_SIZE, qdrant_pages
from .base import Point, Snapshot, VectorStore, new_snapshot_folder
from .rows import read_rows, write_rows


class QdrantClientStore(VectorStore):
    """A collection behind an open client; closed with this object only when ``owned``."""

    provider = "qdrant"

    def __init__(self, client: Any, collection: str, where: str, *, owned: bool = False) -> None:
        super().__init__(collection, where)
        self.client = client
        self.owned = owned

    def _scale_source(self) -> Any:
        return SimpleNamespace(client=self.client, collection_name=self.collection)

    def exists(self) -> bool:
        return self.collection in {c.name for c in self.client.get_collections().collections}

    def collections(self) -> set[str]:
        return {c.name for c in self.client.get_collections().collections}

    def pages(self, page_size: int = PAGE_SIZE, *, with_vectors: bool = False) -> Iterator[list[Point]]:
        if not self.exists():
            return
        if not with_vectors:
            for page in qdrant_pages(self.client, self.collection, page_size):
                yield [{"id": str(p["id"]), "payload": p["payload"]} for p in page]
            return
        offset = None
        while True:
            points, offset = self.client.scroll(
                collection_name=self.collection, limit=page_size, offset=offset, with_payload=True, with_vectors=True
            )
            if points:
                yield [{"id": str(p.id), "payload": p.payload, "vector": list(p.vector)} for p in points]
            if offset is None:
                return

    def count(self) -> int:
        if not self.exists():
            return 0
        return int(self.client.count(collection_name=self.collection, exact=True).count)

    def get(self, ids: Iterable[str], *, with_vectors: bool = False) -> dict[str, Point]:
        wanted = [str(i) for i in ids]
        if not wanted or not self.exists():
            return {}
        records = self.client.retrieve(self.collection, ids=wanted, with_payload=True, with_vectors=with_vectors)
        out: dict[str, Point] = {}
        for r in records:
            out[str(r.id)] = {
                "id": str(r.id),
                "payload": r.payload,
                **({"vector": list(r.vector)} if with_vectors else {}),
            }
        return out

    def snapshot(self, dest: str) -> Snapshot:
        new_snapshot_folder(dest)
        snap = write_rows(dest, self.provider, self.collection, self.pages(with_vectors=True))
        return self.verify_against(snap, "the store changed while its snapshot was taken; retry when it is quiet")

    def restore(self, snapshot: Snapshot) -> Snapshot:
        from qdrant_client import models

        pages = list(read_rows(snapshot))
        size = next((len(p["vector"]) for page in pages for p in page if p.get("vector")), None)
        if size is None and self.exists():
            info = self.client.get_collection(self.collection)
            size = info.config.params.vectors.size
        if self.exists():
            self.client.delete_collection(self.collection)
        self.client.create_collection(
            self.collection, vectors_config=models.VectorParams(size=size or 1, distance=models.Distance.COSINE)
        )
        for page in pages:
            self.client.upsert(
                self.collection,
                points=[
                    models.PointStruct(id=p["id"], vector=p["vector"], payload=p.get("payload") or {}) for p in page
                ],
            )
        return self.verify_against(snapshot, "the restored collection does not match its snapshot")

    def close(self) -> None:
        if self.owned:
            self.client.close()
