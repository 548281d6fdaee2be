"""The ledger's contract for a memory's end and the ledger's own life, run on both databases (a SQLite file and a
PostgreSQL schema; the PostgreSQL half skipped, saying why, when it cannot be reached): tombstones and their
journal entries, untombstoning, deletion chains, the pending journal, scrubbing, purging for good, read-only
openings, scratch copies and the migration from an older schema version."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mem0_hygiene.errors import LedgerError, SupersedeError
from mem0_hygiene.stores.ledger import SCHEMA_VERSION, Ledger, open_ledger, scratch_copy

from .ledger_rows import T0, at, row
from .test_ledger_v4 import version_3


def test_a_tombstone_journals_a_pending_delete_until_settled(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b"), row("c")])
    ledger.tombstone(["a"], T0)
    ledger.tombstone_all(T0 + timedelta(hours=1))  # reset: b and c too (a keeps its first tombstone)
    assert ledger.get("a").deleted_at == at(0) and ledger.get("b").deleted_at == at(1)  # type: ignore[union-attr]
    assert [(p[0], p[1]) for p in ledger.pending("delete")] == [("a", "delete"), ("b", "delete"), ("c", "delete")]
    ledger.settle(["a", "b"], "delete")
    assert [p[0] for p in ledger.pending()] == ["c"]


def test_a_live_chain_is_tombstoned_oldest_first_once(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b"), row("c"), row("other")])
    ledger.link_supersede("a", "b", T0)
    ledger.link_supersede("b", "c", T0)
    assert ledger.tombstone_live_chain("missing", T0) is None
    assert ledger.tombstone_live_chain("c", T0) == ["a", "b", "c"]
    assert ledger.tombstone_live_chain("c", T0) is None  # deleted already: nothing written
    assert {p[0] for p in ledger.pending("delete")} == {"a", "b", "c"}
    assert ledger.get("other").deleted_at is None  # type: ignore[union-attr]


def test_rows_written_tombstoned_are_journaled_in_the_same_write(ledger: Ledger) -> None:
    ledger.insert_tombstoned([row("a"), row("b", deleted_at=at(-5))], T0)
    assert ledger.get("a").deleted_at == at(0) and ledger.get("b").deleted_at == at(-5)  # type: ignore[union-attr]
    assert sorted((p[0], p[2]) for p in ledger.pending("delete")) == [("a", at(0)), ("b", at(-5))]


def test_untombstoning_revives_the_rows_closes_their_entries_and_yields_a_taken_key(ledger: Ledger) -> None:
    ledger.insert([row("a", topic_key="db", created_at=at(-10)), row("b")])
    ledger.tombstone(["a", "b"], T0)
    ledger.insert([row("newer", topic_key="db", created_at=at(-1))])  # took the key while a was deleted
    ledger.untombstone(["a", "b"])
    a, b = ledger.get("a"), ledger.get("b")
    assert a is not None and a.deleted_at is None and a.superseded_by == "newer"
    assert b is not None and b.deleted_at is None and ledger.pending() == []


def test_the_journal_holds_operations_under_way_oldest_first(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b")])
    ledger.begin("b", "supersede", T0 + timedelta(hours=1))
    ledger.begin("a", "invalidate", T0)
    ledger.begin("a", "invalidate", T0 + timedelta(hours=2))  # the same operation again: its time moves
    assert ledger.pending() == [("b", "supersede", at(1)), ("a", "invalidate", at(2))]
    assert ledger.pending("supersede") == [("b", "supersede", at(1))]
    ledger.settle(["a"], "invalidate")
    assert ledger.pending() == [("b", "supersede", at(1))]


def test_scrubbing_blanks_every_field_holding_the_text_and_counts_them(ledger: Ledger) -> None:
    ledger.insert([row("a", source="chat with 50% of sk-secret", topic_key="sk-secret"), row("b", source="sk-secret")])
    assert ledger.scrub_fields(["a"], ["sk-secret"]) == 2
    a = ledger.get("a")
    assert a is not None and a.source is None and a.topic_key is None
    assert ledger.get("b").source == "sk-secret"  # type: ignore[union-attr]
    assert ledger.scrub_fields([], ["x"]) == 0 and ledger.scrub_fields(["b"], []) == 0


def test_purging_removes_old_tombstones_and_what_they_superseded_never_live_rows(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b"), row("live"), row("recent")])
    ledger.link_supersede("a", "b", T0)
    ledger.tombstone(["b"], T0)
    ledger.tombstone(["recent"], T0 + timedelta(days=5))
    assert ledger.purgeable_tombstones(T0 + timedelta(days=1)) == []  # a, still live, points at b
    ledger.tombstone(["a"], T0)
    assert ledger.purgeable_tombstones(T0 + timedelta(days=1)) == ["a", "b"]
    assert ledger.purge_rows(["b", "live"]) == 2  # b and, by the cascade, a; the live row is not touched
    assert ledger.get("a") is None and ledger.get("b") is None and ledger.get("live") is not None
    assert "b" not in [p[0] for p in ledger.pending("delete")]  # the purged ids' entries go with them
    assert ledger.purge_tombstones(T0 + timedelta(days=6)) == 1 and ledger.get("recent") is None
    fk, enforced, _mode = ledger.pragma_check()
    assert fk == [] and enforced


def test_the_public_ledger_api_behaves_alike_on_both(ledger: Ledger) -> None:
    led = ledger
    led.insert([row("a", topic_key="db"), row("b", quarantined=True), row("c")])
    led.insert([row("a", source="ignored")], ignore_existing=True)
    assert led.get("a").source is None  # type: ignore[union-attr]
    led.link_supersede("a", "b", T0)
    with pytest.raises(SupersedeError, match="cycle"):
        led.link_supersede("b", "a", T0)
    led.record_uses({"b": (2, T0)})
    led.record_uses({"b": (1, T0 - timedelta(days=1))})
    led.mark_guarded("c", ["openai_api_key"], None, quarantine=True)
    got = led.get_many(["a", "b", "c"])
    assert got["a"].superseded_by == "b" and got["b"].use_count == 3
    assert got["b"].last_used_at == "2026-08-01T09:00:00.000000+00:00" and got["b"].quarantined
    assert got["c"].redacted == "openai_api_key" and got["c"].quarantined
    assert [
        r.memory_id
        for r in led.iter_rows(
            f"{led.dialect.is_same('user_id')} AND {led.dialect.is_same('run_id')}", ["dana", None], order="memory_id"
        )
    ] == ["a", "b", "c"]
    assert led.predecessors("b") == ["a"] and led.successors("a") == ["b"]
    assert led.tombstone_live_chain("nope", T0) is None
    assert led.tombstone_live_chain("b", T0) == ["a", "b"]
    assert led.tombstone_live_chain("b", T0) is None  # deleted already: nothing written
    assert [p[:2] for p in led.pending()] == [("a", "delete"), ("b", "delete")]
    led.settle(["a", "b"], "delete")
    assert led.purgeable_tombstones(T0 + timedelta(days=1)) == ["a", "b"]
    assert led.purge_rows(["b"]) == 2  # b and, by the cascade, a
    assert led.get("a") is None and led.get("c") is not None


def test_a_read_only_opening_reads_the_rows_and_refuses_writes(location: str) -> None:
    with pytest.raises(LedgerError, match="no ledger at"):
        open_ledger(location, readonly=True)
    writer = open_ledger(location)
    writer.insert([row("a")])
    reader = open_ledger(location, readonly=True)
    try:
        assert reader.get("a") is not None and reader.schema_version() == SCHEMA_VERSION
        with pytest.raises(LedgerError):
            reader.insert([row("b")])
        assert writer.get("b") is None
    finally:
        reader.close()
        writer.close()


def test_a_scratch_copy_holds_the_rows_and_its_writes_go_nowhere(location: str) -> None:
    led = open_ledger(location)
    try:
        led.insert([row("a"), row("b")])
        led.link_supersede("a", "b", T0)
        led.confirm("b", T0)
        scratch = scratch_copy(location)
        try:
            assert not scratch.is_server and scratch.get("a").superseded_by == "b"  # type: ignore[union-attr]
            assert scratch.confirmations(["b"]) == {"b": [(at(0), "confirm")]}
            scratch.tombstone(["b"], T0)
            assert led.get("b").deleted_at is None  # type: ignore[union-attr]
        finally:
            scratch.close()
    finally:
        led.close()


def test_an_older_ledger_is_migrated_when_opened_for_writing_and_only_then(location: str) -> None:
    version_3(location, [row("a", topic_key="db", created_at=at(-2)), row("b", topic_key="db", created_at=at(-1))])
    reader = open_ledger(location, readonly=True)  # read-only: as it is (no log, both rows hold the key)
    try:
        assert reader.schema_version() == 3 and not reader.has_table("confirmations")
        assert reader.confirmations(["a"]) == {} and reader.get("a").superseded_by is None  # type: ignore[union-attr]
    finally:
        reader.close()
    led = open_ledger(location)
    try:
        assert led.schema_version() == SCHEMA_VERSION and led.has_table("confirmations")
        assert led.get("a").superseded_by == "b" and led.chained_on_upgrade == 1  # type: ignore[union-attr]
    finally:
        led.close()
