"""Filtering never shrinks a page, and a tombstone outlives a point that comes back from a snapshot."""

from __future__ import annotations

import shutil

SCOPE = {"user_id": "dana"}


def test_top_k_returns_min_k_live_even_when_stale_rows_rank_first(make_memory):
    mem = make_memory(use_flush_every=1000)
    live = []
    for i in range(6):
        live.append(mem.add(f"deploy notes item {i} about kubernetes", **SCOPE, infer=False)["results"][0]["id"])
    # 30 stale rows that match the query better than the live ones
    for i in range(30):
        old = mem.add(f"deploy deploy deploy with docker compose {i}", **SCOPE, infer=False)["results"][0]["id"]
        if i % 2:
            mem.invalidate(old, reason="moved to kubernetes")
        else:
            mem.supersede(old, new_id=live[i % len(live)])
    for k in (1, 3, 5, 6, 10):
        got = mem.search("deploy deploy deploy docker compose", filters=SCOPE, top_k=k, threshold=0.0)["results"]
        assert len(got) == min(k, 6), k
        assert all(r["hygiene"]["state"] == "live" for r in got)
        got_all = mem.get_all(filters=SCOPE, top_k=k)["results"]
        assert len(got_all) == min(k, 6)


def test_tombstoned_memory_stays_hidden_when_an_old_snapshot_brings_its_point_back(make_memory, tmp_path):
    store = tmp_path / "store"
    mem = make_memory(store)
    keep = mem.add("Team standup is at 10:00", **SCOPE, infer=False)["results"][0]["id"]
    gone = mem.add("Dana's API key is in the vault", **SCOPE, infer=False)["results"][0]["id"]
    mem.close()
    shutil.copytree(store / "qdrant", tmp_path / "snapshot")  # an older vector snapshot

    mem = make_memory(store)
    mem.delete(gone)
    mem.close()
    shutil.rmtree(store / "qdrant")
    shutil.copytree(tmp_path / "snapshot", store / "qdrant")  # restored alone: the point is back

    mem = make_memory(store)
    assert Memory_get_raw(mem, gone) is not None  # the point really is in the store again
    assert [r["id"] for r in mem.get_all(filters=SCOPE, include_stale=True)["results"]] == [keep]
    assert [r["id"] for r in mem.search("API key vault", filters=SCOPE)["results"]] in ([keep], [])
    assert mem.get(gone)["hygiene"]["state"] == "deleted"


def Memory_get_raw(mem, memory_id):
    return mem.vector_store.get(vector_id=memory_id)


def test_reads_record_last_use_in_batches(make_memory, clock):
    mem = make_memory(use_flush_every=3)
    a = mem.add("Likes green tea", **SCOPE, infer=False)["results"][0]["id"]
    mem.flush()
    mem.search("green tea", filters=SCOPE)
    assert mem.ledger.get(a).use_count == 0  # buffered, not one write per result
    mem.search("green tea", filters=SCOPE)
    mem.search("green tea", filters=SCOPE)
    mem.flush()
    row = mem.ledger.get(a)
    assert row.use_count == 3
    assert row.last_used_at == clock().isoformat(timespec="microseconds")


def test_a_read_builds_the_hygiene_facts_of_the_page_it_serves_only(make_memory, monkeypatch):
    mem = make_memory(use_flush_every=1000)
    for i in range(30):
        mid = mem.add(f"Dana note {i} about the deploy", **SCOPE, infer=False)["results"][0]["id"]
        if i % 3 == 0:
            mem.invalidate(mid, reason="outdated")
    mem.flush()
    built = []
    facts = type(mem).hygiene_facts

    def counted(*args, **kwargs):
        built.append(args[0].memory_id)
        return facts(*args, **kwargs)

    monkeypatch.setattr(type(mem), "hygiene_facts", staticmethod(counted))
    got = mem.get_all(filters=SCOPE, top_k=5)["results"]  # over-fetched: a third of the scope is stale
    assert len(got) == 5
    assert built == [r["id"] for r in got]  # not one for the live items mem0 returned past the page
