"""A drop-in search over mem0's FAISS store builds mem0's results for the scope's points only
(mem0_hygiene/memory/faiss_search.py), and answers exactly as mem0's own FAISS search does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mem0 import Memory as PlainMemory

from mem0_hygiene import Memory
from mem0_hygiene.memory.faiss_search import search_like_mem0

from .stores import missing, store_config

pytestmark = pytest.mark.skipif(missing("faiss") is not None, reason=str(missing("faiss")))

USERS = ("dana", "omer", "lior", "noa")
WORDS = "deploy docker compose kubernetes tea coffee haifa berlin monday review oncall billing cache".split()


class NoCopy(dict):  # type: ignore[type-arg]
    """A payload that refuses to be copied: a point of another scope, which a drop-in search must not build."""

    def copy(self) -> dict[str, Any]:
        raise AssertionError("the payload of a point outside the searched scope was copied")


@pytest.fixture
def faiss_memory(tmp_path: Path, clock: Any) -> Any:
    m = Memory.from_config(store_config("faiss", tmp_path / "store", hygiene={"clock": clock}))
    for i in range(48):
        words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(4))
        m.add(f"prefers {words} {i}", user_id=USERS[i % len(USERS)], infer=False)
    m.flush()
    yield m
    m.close()


def test_a_drop_in_search_never_copies_the_payloads_of_other_scopes(faiss_memory: Any) -> None:
    store = faiss_memory.vector_store
    plain = PlainMemory.search(faiss_memory, "deploy docker", filters={"user_id": "dana"}, top_k=5)["results"]
    for vid, payload in list(store.docstore.items()):
        if payload.get("user_id") != "dana":
            store.docstore[vid] = NoCopy(payload)
    got = faiss_memory.search("deploy docker", filters={"user_id": "dana"}, top_k=5)["results"]
    assert [r["id"] for r in got] == [r["id"] for r in plain]
    assert [r["score"] for r in got] == [r["score"] for r in plain]
    with pytest.raises(AssertionError, match="outside the searched scope"):
        PlainMemory.search(faiss_memory, "deploy docker", filters={"user_id": "dana"}, top_k=5)


@pytest.mark.parametrize("top_k", [1, 3, 8, 60, 200])
def test_the_drop_in_answers_a_faiss_search_as_mem0_does(faiss_memory: Any, top_k: int) -> None:
    store = faiss_memory.vector_store
    original = type(store).search
    for n, query in enumerate(("deploy docker", "tea in haifa", "oncall billing cache monday")):
        vector = faiss_memory.embedding_model.embed(query, "search")
        for filters in ({"user_id": USERS[n]}, {"user_id": "nobody"}, None, {}):
            ours = search_like_mem0(store, vector, top_k, filters)
            mem0s = original(store, query=query, vectors=vector, top_k=top_k, filters=filters)
            assert [(o.id, o.score, o.payload) for o in ours] == [(o.id, o.score, o.payload) for o in mem0s]
