"""Adoption: memories written by plain mem0 stay visible and get a ledger row with source "unknown"."""

from __future__ import annotations

SCOPE = {"user_id": "dana"}


def test_memories_written_by_plain_mem0_are_adopted_on_read(tmp_path, make_memory, plain_mem0, close_plain):
    plain = plain_mem0(tmp_path / "store")
    written = plain.add("Prefers dark mode", **SCOPE, infer=False)["results"][0]["id"]
    created = plain.get(written)["created_at"]
    close_plain(plain)

    mem = make_memory(tmp_path / "store")
    found = mem.get_all(filters=SCOPE)["results"]
    assert [r["id"] for r in found] == [written]
    facts = found[0]["hygiene"]
    assert facts["state"] == "live"
    assert facts["source"] == "unknown"
    mem.flush()
    row = mem.ledger.get(written)
    assert row.adopted and row.source == "unknown"
    assert row.confirmed_at[:19] == created[:19]


def test_adopt_scans_the_whole_store(tmp_path, make_memory, plain_mem0, close_plain):
    plain = plain_mem0(tmp_path / "store")
    for i in range(7):
        plain.add(f"old fact {i}", user_id=f"u{i % 3}", infer=False)
    close_plain(plain)
    mem = make_memory(tmp_path / "store")
    assert mem.adopt() == 7
    assert mem.adopt() == 0
