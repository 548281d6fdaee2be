"""Reading a local Qdrant folder from its files without its lock (mem0_hygiene.stores.qdrant_file): the points are
the ones local Qdrant itself loads, the file is read immutable only while nothing can write it, and the in-memory
client made from it refuses writes."""

from __future__ import annotations

import pickle
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient, models

from mem0_hygiene.errors import ReadOnlyStore
from mem0_hygiene.stores.qdrant_file import QdrantFolder, lock_refusal, readonly_client

COLLECTION = "mem0"


def build_store(folder: Path, n: int = 12) -> list[str]:
    """A local Qdrant store with ``n`` points, one of them updated and one deleted afterwards; the ids kept."""
    ids = [str(uuid.uuid4()) for _ in range(n)]
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            COLLECTION, vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE)
        )
        client.upsert(
            COLLECTION,
            points=[
                models.PointStruct(
                    id=pid, vector=[float(i), 1.0, 0.5, 2.0], payload={"data": f"fact {i}", "user_id": "dana"}
                )
                for i, pid in enumerate(ids)
            ],
        )
        client.set_payload(COLLECTION, payload={"data": "fact 0, updated"}, points=[ids[0]])
        client.delete(COLLECTION, points_selector=models.PointIdsList(points=[ids[-1]]))
    finally:
        client.close()
    return ids[:-1]


def as_loaded(folder: Path) -> dict[str, tuple[Any, Any]]:
    """{id: (payload, vector)} as a local Qdrant client loads the folder."""
    client = QdrantClient(path=str(folder))
    try:
        records, _ = client.scroll(COLLECTION, limit=1000, with_payload=True, with_vectors=True)
        return {str(r.id): (r.payload, r.vector) for r in records}
    finally:
        client.close()


def test_the_points_read_from_the_file_are_the_ones_local_qdrant_loads(tmp_path: Path):
    ids = build_store(tmp_path / "q")
    with QdrantFolder(tmp_path / "q") as folder:
        read = {str(p.id): (p.payload, p.vector) for p in folder.points(COLLECTION)}
        pages = list(folder.pages(COLLECTION, 5))
        assert folder.count(COLLECTION) == len(ids)
        assert set(folder.retrieve(COLLECTION, [ids[0], str(uuid.uuid4())])) == {ids[0]}
    assert read == as_loaded(tmp_path / "q")
    assert read[ids[0]][0]["data"] == "fact 0, updated"
    assert [len(page) for page in pages] == [5, 5, 1]
    assert sorted(p["id"] for page in pages for p in page) == sorted(ids)


@pytest.mark.filterwarnings("ignore:Removed 1 outdated copies")
def test_a_point_stored_twice_reads_as_its_newest_copy_as_qdrant_loads_it(tmp_path: Path):
    ids = build_store(tmp_path / "q", n=3)
    storage = tmp_path / "q" / "collection" / COLLECTION / "storage.sqlite"
    newer = models.PointStruct(id=ids[1].upper(), vector=[9.0, 9.0, 9.0, 9.0], payload={"data": "newer copy"})
    with sqlite3.connect(storage) as conn:  # an older client wrote another spelling of the id as its own row
        conn.execute("INSERT INTO points VALUES (?, ?)", ("legacy-key", pickle.dumps(newer)))
    conn.close()
    with QdrantFolder(tmp_path / "q") as folder:
        read = {str(p.id): (p.payload, p.vector) for p in folder.points(COLLECTION)}
    assert read[ids[1]] == ({"data": "newer copy"}, [9.0, 9.0, 9.0, 9.0]) and len(read) == 2
    assert read == as_loaded(tmp_path / "q")


def test_a_free_folder_is_read_immutable_while_a_shared_lock_keeps_clients_out(tmp_path: Path):
    build_store(tmp_path / "q")
    with QdrantFolder(tmp_path / "q") as folder:
        assert folder.immutable and "immutable" in folder.note
        with pytest.raises(RuntimeError, match="already accessed"):
            QdrantClient(path=str(tmp_path / "q"))
    QdrantClient(path=str(tmp_path / "q")).close()  # released when the reader closes


def test_a_folder_the_app_holds_is_read_as_a_plain_read_only_reader(
    tmp_path: Path, hold_qdrant_lock: Callable[..., Any]
):
    ids = build_store(tmp_path / "q")
    hold_qdrant_lock(tmp_path / "q")
    with QdrantFolder(tmp_path / "q", "no write access") as folder:
        assert not folder.immutable
        assert "mode=ro, not immutable" in folder.note and "no write access" in folder.note
        assert folder.count(COLLECTION) == len(ids)


def test_the_in_memory_client_reads_like_the_folder_and_refuses_writes(tmp_path: Path):
    ids = build_store(tmp_path / "q")
    client = readonly_client(tmp_path / "q", COLLECTION)
    try:
        assert client.count(COLLECTION, exact=True).count == len(ids)
        hits = client.query_points(COLLECTION, query=[0.0, 1.0, 0.5, 2.0], limit=1, with_payload=True).points
        assert hits[0].payload == {"data": "fact 0, updated", "user_id": "dana"}
        with pytest.raises(ReadOnlyStore, match="read-only"):
            client.upsert(COLLECTION, points=[models.PointStruct(id=ids[0], vector=[1.0, 1.0, 1.0, 1.0])])
        with pytest.raises(ReadOnlyStore):
            client.delete(COLLECTION, points_selector=models.PointIdsList(points=[ids[0]]))
    finally:
        client.close()
    QdrantClient(path=str(tmp_path / "q")).close()  # the folder was let go once read


def test_a_writable_folder_gives_no_reason_to_read_it_without_its_lock(tmp_path: Path):
    build_store(tmp_path / "q")
    assert lock_refusal(tmp_path / "q") is None
    assert lock_refusal(tmp_path / "missing") is None
