"""The provider modules' erasure in a copy, file by file: FAISS's index and docstore rewritten without the ids (the
legacy pickle replaced by mem0's JSON; a staged rewrite interrupted before it was complete dropped, one interrupted
after finished), a rows snapshot's lines and manifest (a manifest left behind by a killed run fixed by the next),
and the unused capacity of a Chroma HNSW data file zeroed (only where its header reads as expected)."""

from __future__ import annotations

import json
import os
import pickle
import struct
from pathlib import Path

import pytest

from mem0_hygiene.stores.vector.base import Snapshot
from mem0_hygiene.stores.vector.chroma import clear_unused_capacity
from mem0_hygiene.stores.vector.rows import ROWS_FILE, erase_rows, read_rows, write_rows

SECRET = "Dana's passport number is X1234567"


def faiss_folder(folder: Path, legacy: bool = False) -> dict[str, list[float]]:
    """A FAISS collection ``mem0`` of three points (ids a, b, c) as mem0 writes it; returns the vectors by id."""
    faiss = pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install -e '.[stores]')")
    import numpy as np

    vectors = {"a": [1.0, 0.0, 0.0], "b": [0.0, 1.0, 0.0], "c": [0.0, 0.0, 1.0]}
    index = faiss.IndexFlatL2(3)
    index.add(np.array(list(vectors.values()), dtype=np.float32))
    folder.mkdir()
    faiss.write_index(index, str(folder / "mem0.faiss"))
    docstore = {
        "a": {"data": "Bob works on billing"},
        "b": {"data": SECRET},
        "c": {"data": "Carol likes tea"},
    }
    index_to_id = {0: "a", 1: "b", 2: "c"}
    if legacy:
        (folder / "mem0.pkl").write_bytes(pickle.dumps((docstore, index_to_id)))
    else:
        data = {"docstore": docstore, "index_to_id": {str(k): v for k, v in index_to_id.items()}}
        (folder / "mem0.json").write_text(json.dumps(data))
    return vectors


@pytest.mark.parametrize("legacy", [False, True])
def test_faiss_erase_removes_the_entries_and_their_vectors(tmp_path: Path, legacy: bool) -> None:
    from mem0_hygiene.stores.vector.faiss import FaissStore

    vectors = faiss_folder(tmp_path / "f", legacy)
    store = FaissStore(str(tmp_path / "f"), "mem0")

    assert store.erase(["b", "not-there"]) == 1

    assert sorted(os.listdir(tmp_path / "f")) == ["mem0.faiss", "mem0.json"]  # the pickle replaced by JSON
    assert not [p for p in (tmp_path / "f").iterdir() if SECRET.encode() in p.read_bytes()]
    got = {p["id"]: p["vector"] for page in store.pages(with_vectors=True) for p in page}
    assert got == {"a": pytest.approx(vectors["a"]), "c": pytest.approx(vectors["c"])}
    assert store.erase(["b"]) == 0  # nothing more to do


def test_faiss_erase_interrupted_is_dropped_before_its_mark_and_finished_after(tmp_path: Path) -> None:
    from mem0_hygiene.stores.vector.faiss import FaissStore

    faiss_folder(tmp_path / "f")
    store = FaissStore(str(tmp_path / "f"), "mem0")
    before = {p.name: p.read_bytes() for p in (tmp_path / "f").iterdir()}
    stage = tmp_path / "f" / ".mem0.erasing"
    stage.mkdir()
    (stage / "mem0.json").write_text("{half")  # killed while staging: no mark
    assert store.finish_erasure() is False
    assert not stage.exists() and {p.name: p.read_bytes() for p in (tmp_path / "f").iterdir()} == before

    assert store.erase(["b"]) == 1
    after = {p.name: p.read_bytes() for p in (tmp_path / "f").iterdir()}
    (tmp_path / "f" / "mem0.json").write_bytes(before["mem0.json"])  # killed between the two renames
    stage.mkdir()
    (stage / "mem0.json").write_bytes(after["mem0.json"])
    (stage / "complete").write_text("")
    assert store.finish_erasure() is True
    assert {p.name: p.read_bytes() for p in (tmp_path / "f").iterdir()} == after
    assert sorted(p["id"] for page in store.pages() for p in page) == ["a", "c"]


def test_rows_snapshot_erase_rewrites_the_lines_and_the_manifest(tmp_path: Path) -> None:
    points = [
        {"id": "a", "vector": [1.0, 0.0], "payload": {"data": "Bob works on billing"}},
        {"id": "b", "vector": [0.0, 1.0], "payload": {"data": SECRET}},
    ]
    snap = write_rows(str(tmp_path), "pgvector", "mem0", [points])

    removed, now = erase_rows(str(tmp_path), ["b"])

    assert removed == 1 and now.count == 1 and Snapshot.read(str(tmp_path)) == now
    assert SECRET not in (tmp_path / ROWS_FILE).read_text()
    assert [p["id"] for page in read_rows(now) for p in page] == ["a"]
    snap.write()  # a run killed after the rows were rewritten, before the manifest was
    removed, again = erase_rows(str(tmp_path), ["b"])
    assert removed == 0 and again == now == Snapshot.read(str(tmp_path))


def hnsw_segment(folder: Path, capacity: int, used: int, size: int, version: int = 1) -> Path:
    """A Chroma HNSW segment folder: header (format ``version``) and a data file with ``SECRET`` in every slot."""
    folder.mkdir()
    header = struct.pack("<iqqqqqqii", version, 0, capacity, used, size, size - 8, 4, -1, -1)
    (folder / "header.bin").write_bytes(header + b"\0" * (100 - len(header)))
    slot = (SECRET.encode() * (size // len(SECRET) + 1))[:size]
    (folder / "data_level0.bin").write_bytes(slot * capacity)
    return folder / "data_level0.bin"


def test_chroma_unused_hnsw_capacity_is_zeroed_and_the_used_slots_kept(tmp_path: Path) -> None:
    data = hnsw_segment(tmp_path / "seg", capacity=4, used=1, size=64)
    odd = hnsw_segment(tmp_path / "other", capacity=4, used=1, size=64, version=2)
    odd_before = odd.read_bytes()

    assert clear_unused_capacity(str(tmp_path)) == 3 * 64

    raw = data.read_bytes()
    assert len(raw) == 4 * 64 and raw[64:] == b"\0" * (3 * 64) and SECRET.encode() in raw[:64]
    assert odd.read_bytes() == odd_before  # a header it does not know: left alone
    clear_unused_capacity(str(tmp_path))  # again: nothing changes
    assert data.read_bytes() == raw
