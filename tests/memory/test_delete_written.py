"""Deleting a memory the ledger already holds: its tombstone and those of the chain it heads go in one write,
guarded on its row being live, and the other buffered ledger writes wait for their own batch (a memory adopted
on read has its row written first)."""

from __future__ import annotations

import pytest
from qdrant_client.models import PointStruct

from mem0_hygiene import MemoryNotFound

SCOPE = {"user_id": "dana"}


def first_id(result):
    return result["results"][0]["id"]


def test_a_live_memory_is_tombstoned_with_what_it_superseded_in_one_write_oldest_first(mem, clock):
    a = first_id(mem.add("Uses Python 3.9", **SCOPE, infer=False))
    b = mem.supersede(a, "Uses Python 3.11")
    c = mem.supersede(b, "Uses Python 3.12")
    other = first_id(mem.add("Drinks tea", **SCOPE, infer=False))
    mem.flush()
    assert mem.ledger.tombstone_live_chain(other, clock()) == [other]
    assert mem.ledger.tombstone_live_chain(c, clock()) == [a, b, c]
    assert all(mem.ledger.get(x).deleted_at == mem.ledger.get(c).deleted_at is not None for x in (a, b))
    assert {p[:2] for p in mem.ledger.pending()} == {(x, "delete") for x in (a, b, c, other)}
    clock.advance(days=1)
    stamp = mem.ledger.get(c).deleted_at
    # deleted already, or unknown: nothing is written and the caller is told
    assert mem.ledger.tombstone_live_chain(c, clock()) is None and mem.ledger.get(c).deleted_at == stamp
    assert mem.ledger.tombstone_live_chain("00000000-0000-0000-0000-000000000000", clock()) is None


def test_deleting_a_deleted_memory_whose_point_came_back_deletes_it_again_with_its_chain(mem):
    a = first_id(mem.add("Uses Python 3.9", **SCOPE, infer=False))
    b = mem.supersede(a, "Uses Python 3.11")
    mem.flush()
    points = {x: mem.vector_store.client.retrieve("mem0", [x], with_vectors=True)[0] for x in (a, b)}
    mem.delete(b)
    for p in points.values():  # an old snapshot brings them back
        mem.vector_store.client.upsert("mem0", [PointStruct(id=p.id, vector=p.vector, payload=p.payload)])
    assert mem.get_all(filters=SCOPE, include_stale=True)["results"] == []  # hidden by the tombstones meanwhile
    mem.delete(b)
    assert [mem.vector_store.get(vector_id=x) for x in (a, b)] == [None, None]
    with pytest.raises(MemoryNotFound, match="already deleted"):
        mem.delete(b)


def test_deleting_a_written_memory_leaves_the_other_buffered_rows_to_their_batch(make_memory):
    mem = make_memory(use_flush_every=64, flush_after=3600)
    old = first_id(mem.add("Prefers npm", **SCOPE, infer=False))
    mem.flush()
    new = first_id(mem.add("Prefers dark mode", **SCOPE, infer=False))
    mem.delete(old)
    assert mem.ledger.get(old).deleted_at is not None  # its tombstone is written at once
    # the point is gone; its journal entry is closed with the next batch
    assert [p[:2] for p in mem.ledger.pending()] == [(old, "delete")] and mem.settled_unwritten() == {old}
    assert mem.ledger.get(new) is None  # still buffered: the delete did not flush it
    assert [r["id"] for r in mem.get_all(filters=SCOPE)["results"]] == [new]
    mem.flush()
    assert mem.ledger.get(new) is not None and mem.ledger.pending() == []
    assert mem.vector_store.get(vector_id=old) is None


def test_deleting_a_memory_adopted_on_read_writes_its_adoption_row_then_its_tombstone(
    tmp_path, make_memory, plain_mem0, close_plain
):
    plain = plain_mem0(tmp_path / "store")
    written = first_id(plain.add("Prefers light mode", **SCOPE, infer=False))
    close_plain(plain)
    mem = make_memory(tmp_path / "store", use_flush_every=64, flush_after=3600)
    assert [r["id"] for r in mem.get_all(filters=SCOPE)["results"]] == [written]  # adopted, its row buffered
    assert mem.ledger.get(written) is None
    mem.delete(written)
    row = mem.ledger.get(written)
    assert row.adopted and row.source == "unknown" and row.deleted_at is not None
    assert mem.get(written) is None and mem.get_all(filters=SCOPE)["results"] == []
