"""A search over a mostly stale scope leaves the stale points out inside mem0's own vector query: it returns the
nearest live memories (as plain mem0 would on a store holding only those), in one Qdrant query, and every call
that is not a drop-in search reaches Qdrant untouched."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import mem0.memory.main as mem0_main
import pytest
from mem0 import Memory as Mem0Memory
from qdrant_client.local.local_collection import LocalCollection

from mem0_hygiene.config import build_mem0_config, offline_config, split_config
from mem0_hygiene.memory.live_query import LiveOnly, live_only

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect")  # plain mem0 over local Qdrant

SCOPE = {"user_id": "dana"}
QUERY = "which database does the billing service use"


def stale_scope(mem: Any, live: int = 4, stale: int = 36) -> list[str]:
    """`live` memories kept and `stale` ones superseded or invalidated (9 in 10 stale by default), every one
    near the query; returns the live ids."""
    kept = [
        mem.add(f"billing service uses postgres {i} for its database", **SCOPE, infer=False)["results"][0]["id"]
        for i in range(live)
    ]
    for i in range(stale):
        old = mem.add(f"billing service database is mysql {i}", **SCOPE, infer=False)["results"][0]["id"]
        if i % 2:
            mem.invalidate(old, reason="moved to postgres")
        else:
            mem.supersede(old, new_id=kept[i % live])
    mem.flush()
    return kept


def plain_over(mem: Any, tmp_path: Any) -> Any:
    """Plain mem0 over the drop-in's own Qdrant client (local Qdrant allows one client per folder)."""
    (tmp_path / "plain").mkdir(exist_ok=True)
    cfg = offline_config(tmp_path / "plain")
    cfg["vector_store"]["config"] = {
        "client": mem.vector_store.client,
        "collection_name": "mem0",
        "embedding_model_dims": 256,
    }
    return Mem0Memory(build_mem0_config(split_config(cfg)[0]))


@pytest.fixture
def queries(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The limit of every query local Qdrant answers (what reaches the store, under any hook)."""
    seen: list[int] = []
    real = LocalCollection.search

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("limit", 10))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(LocalCollection, "search", counted)
    return seen


def test_search_at_90_percent_stale_returns_the_nearest_live_memories_from_one_query(make_memory, tmp_path, queries):
    mem = make_memory()
    live = stale_scope(mem)
    plain = plain_over(mem, tmp_path)
    everything = plain.search(QUERY, filters=SCOPE, top_k=100, threshold=0.0)["results"]
    assert len(everything) == 40  # plain mem0 serves the stale ones too
    for k in (1, 3, 4, 10):
        queries.clear()
        got = mem.search(QUERY, filters=SCOPE, top_k=k, threshold=0.0)["results"]
        nearest_live = [r["id"] for r in everything if r["id"] in live][:k]
        assert [r["id"] for r in got] == nearest_live, k
        assert [r["score"] for r in got] == [r["score"] for r in everything if r["id"] in live][:k]
        assert all(r["hygiene"]["state"] == "live" for r in got)
        assert len(queries) == 1, k  # no second scan of the scope


def test_plain_mem0_sharing_the_client_still_sees_every_memory(make_memory, tmp_path):
    mem = make_memory()
    live = stale_scope(mem)
    mem.search(QUERY, filters=SCOPE, top_k=10)  # the hook is installed on the shared client by now
    plain = plain_over(mem, tmp_path)
    got = plain.search(QUERY, filters=SCOPE, top_k=10, threshold=0.0)["results"]
    assert len(got) == 10
    assert any(r["id"] not in live for r in got)  # outside a drop-in search nothing is left out


def test_calls_that_are_not_a_drop_in_search_pass_the_hook_untouched(make_memory):
    mem = make_memory()
    live = stale_scope(mem)
    client = mem.vector_store.client
    vector = mem.embedding_model.embed(QUERY, "search")
    asked: list[int] = []

    def not_live(ids: Any) -> set[str]:
        asked.append(len(ids))
        return mem.ledger.not_live_among(ids, mem.now())

    spec = LiveOnly("mem0", 0.1, not_live)
    with live_only(spec):
        extra = client.query_points(collection_name="mem0", query=vector, limit=40, with_payload=True).points
        assert len(extra) == 40 and not asked  # an argument mem0's search never passes: untouched
        hooked = client.query_points(collection_name="mem0", query=vector, limit=40).points
        assert asked and sorted(str(p.id) for p in hooked) == sorted(live)  # control: mem0's own call shape
        assert all(p.payload and p.payload.get("data") for p in hooked)
    asked.clear()
    with live_only(replace(spec, collection="entities")):
        other = client.query_points(collection_name="mem0", query=vector, limit=40).points
    assert len(other) == 40 and not asked  # a search of another collection (mem0's entity store)
    assert len(client.query_points(collection_name="mem0", query=vector, limit=40).points) == 40  # outside


def test_mem0_scores_the_top_k_when_its_rank_is_the_vector_score_and_its_whole_pool_otherwise(make_memory, monkeypatch):
    mem = make_memory()
    stale_scope(mem, live=30, stale=270)
    assert mem.live_query is not None and mem.live_query.semantic_only  # no fastembed, no spaCy offline
    pools: list[int] = []
    real = mem0_main.score_and_rank

    def sized(*args: Any, **kwargs: Any) -> Any:
        pools.append(len(kwargs["semantic_results"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(mem0_main, "score_and_rank", sized)
    lean = [r["id"] for r in mem.search(QUERY, filters=SCOPE, top_k=5, threshold=0.0)["results"]]
    mem.live_query = replace(mem.live_query, semantic_only=False)  # as with BM25 or entity boosts
    full = [r["id"] for r in mem.search(QUERY, filters=SCOPE, top_k=5, threshold=0.0)["results"]]
    assert pools == [5, 30]  # then every live point of mem0's pool of max(4 * 5, 60), here all 30
    assert lean == full


def test_a_memory_the_ledger_has_no_row_for_is_served_beside_stale_ones(make_memory, tmp_path):
    mem = make_memory()
    stale_scope(mem)
    plain = plain_over(mem, tmp_path)
    untracked = plain.add("billing service database moved to postgres 16", **SCOPE, infer=False)["results"][0]["id"]
    got = [r["id"] for r in mem.search(QUERY, filters=SCOPE, top_k=10, threshold=0.0)["results"]]
    assert untracked in got and len(got) == 5


def test_a_supersede_by_another_drop_in_on_the_same_client_hides_the_memory_at_once(make_memory, tmp_path):
    mem = make_memory()
    live = stale_scope(mem)
    other_cfg = offline_config(tmp_path / "store", hygiene={"clock": mem.hygiene_settings.clock})
    other_cfg["vector_store"]["config"] = {
        "client": mem.vector_store.client,
        "collection_name": "mem0",
        "embedding_model_dims": 256,
    }
    mem.search(QUERY, filters=SCOPE, top_k=10)  # the scope's live share is cached now
    from mem0_hygiene import Memory

    other = Memory.from_config(other_cfg)  # the same ledger file, its own connection
    try:
        other.invalidate(live[0], reason="wrong")
        got = [r["id"] for r in mem.search(QUERY, filters=SCOPE, top_k=10, threshold=0.0)["results"]]
        assert sorted(got) == sorted(live[1:])
    finally:
        other.close()
