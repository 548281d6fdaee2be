"""The ledger's read log (schema version 5) on a SQLite file and a PostgreSQL schema alike: reads written in a batch
are read back by memory and by scope, counted since each memory's own time, and removed by an erasure."""

from __future__ import annotations

from mem0_hygiene.stores.ledger import Ledger
from mem0_hygiene.stores.ledger.reads import Read, forget_reads, reads_in_scope, reads_of, record_reads, served_counts

T = "2026-08-01T{:02d}:00:00+00:00"


def test_reads_are_read_back_by_memory_and_scope_counted_since_and_erased(ledger: Ledger) -> None:
    record_reads(
        ledger,
        [
            Read(T.format(9), "search", "a", "dana", None, None, "bot"),
            Read(T.format(10), "get_all", "a", "dana", "support", None, None),
            Read(T.format(11), "get", "b", "bob", None, None, "digest"),
        ],
    )

    assert [(r.op, r.caller) for r in reads_of(ledger, "a")] == [("search", "bot"), ("get_all", None)]
    assert [r.memory_id for r in reads_in_scope(ledger, {"user_id": "dana", "agent_id": "support"})] == ["a"]
    assert [r.read_at for r in reads_of(ledger, "a", since=T.format(10))] == [T.format(10)]
    assert served_counts(ledger, {"a": T.format(10), "b": T.format(0)}) == {"a": 1, "b": 1}
    assert forget_reads(ledger, ["a"], {"user_id": "bob"}) == 3
    assert reads_of(ledger, "a") == [] and reads_in_scope(ledger, {"user_id": "bob"}) == []
