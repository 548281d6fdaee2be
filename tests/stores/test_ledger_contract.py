"""The ledger's contract, run on both databases (a SQLite file and a PostgreSQL schema; the PostgreSQL half is
skipped, saying why, when it cannot be reached): rows written and read back, confirmations and their log,
expiry, supersede chains (links, add_linked, predecessors, successors, cycles refused), invalidation, uses,
scopes, and the dialect's own statements. The tombstones, the journal, purging, migration and read-only
openings are in test_ledger_contract_lifecycle.py."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mem0_hygiene.errors import SupersedeError
from mem0_hygiene.stores.ledger import SCHEMA_VERSION, Ledger, LedgerRow, open_ledger

from .ledger_rows import T0, at, row


def test_the_database_a_ledger_opens_on_is_the_one_its_location_names(ledger: Ledger, location: str) -> None:
    assert ledger.is_server == location.startswith("postgresql://")
    assert ledger.dialect.name == ("postgresql" if ledger.is_server else "sqlite")
    assert ledger.schema_version() == SCHEMA_VERSION


def test_rows_written_are_read_back_field_for_field(ledger: Ledger) -> None:
    written = [
        row("a", source="chat", source_kind="user", topic_key="db", expires_at=at(48)),
        row("b", quarantined=True, adopted=True, redacted="openai_api_key", flag="imperative_order"),
        row("c", agent_id="bot", run_id="r1", use_count=3, last_used_at=at(1)),
    ]
    assert ledger.insert(written) == 3
    assert ledger.get("a") == written[0] and ledger.get("missing") is None
    assert ledger.get_many(["c", "b", "missing"]) == {"b": written[1], "c": written[2]}
    assert [r.memory_id for r in ledger.iter_rows("use_count > ?", [0], order="memory_id")] == ["c"]


def test_an_existing_row_is_kept_replaced_or_given_only_its_birth_facts(ledger: Ledger) -> None:
    ledger.insert([row("a", source="first")])
    ledger.confirm("a", T0)
    ledger.insert([row("a", source="ignored")], ignore_existing=True)
    assert ledger.get("a").source == "first"  # type: ignore[union-attr]
    ledger.insert([row("a", source="birth", quarantined=True)], keep_state=True)
    kept = ledger.get("a")
    assert kept is not None and kept.source == "birth" and kept.confirmed_at == at(0) and not kept.quarantined
    ledger.insert([row("a", source="replaced")])
    assert ledger.get("a").confirmed_at is None  # type: ignore[union-attr]


def test_a_confirmation_sets_the_row_and_a_line_of_the_log_and_releases_quarantine(ledger: Ledger) -> None:
    ledger.insert([row("a", quarantined=True), row("b")])
    ledger.confirm("a", T0)
    ledger.confirm("a", T0 + timedelta(hours=2), via="update")
    ledger.confirm("nobody", T0)  # an unknown id changes nothing
    got = ledger.get("a")
    assert got is not None and got.confirmed_at == at(2) and not got.quarantined
    assert ledger.confirmations(["a", "b", "nobody"]) == {"a": [(at(0), "confirm"), (at(2), "update")]}


def test_a_confirmation_releasing_a_row_from_quarantine_takes_its_topic_key_over(ledger: Ledger) -> None:
    ledger.insert([row("old", topic_key="db"), row("new", topic_key="db", quarantined=True)])
    ledger.confirm("new", T0)
    assert ledger.get("old").superseded_by == "new"  # type: ignore[union-attr]


def test_expiry_set_and_cleared_decides_what_is_served_and_pruned(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b")])
    ledger.set_expiry("a", T0)
    assert ledger.get("a").expires_at == at(0)  # type: ignore[union-attr]
    assert ledger.not_live_among(["a", "b", "missing"], T0 + timedelta(seconds=1)) == {"a"}
    assert ledger.not_live_among(["a", "b"], T0 - timedelta(seconds=1)) == set()
    assert [(r.memory_id, why) for r, why in ledger.prune_candidates(T0, timedelta(days=7))] == [("a", "expired")]
    ledger.set_expiry("a", None)
    assert ledger.prune_candidates(T0, timedelta(days=7)) == []


def test_links_make_chains_read_both_ways_and_refuse_cycles_and_relinks(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b"), row("c"), row("d")])
    ledger.link_supersede("a", "b", T0)
    ledger.link_supersede("b", "c", T0)
    with pytest.raises(SupersedeError, match="cycle"):
        ledger.link_supersede("c", "a", T0)
    with pytest.raises(SupersedeError, match="itself"):
        ledger.link_supersede("d", "d", T0)
    with pytest.raises(SupersedeError, match="already superseded by b"):
        ledger.link_supersede("a", "d", T0)
    ledger.link_supersede("a", "d", T0, follow=True)  # the live end of a's chain (c) is superseded instead
    assert ledger.predecessors("d") == ["c", "b", "a"] and ledger.successors("a") == ["b", "c", "d"]
    assert ledger.deletion_chain("d") == ["a", "b", "c", "d"]


def test_add_linked_writes_the_new_row_links_the_old_one_and_closes_its_entry(ledger: Ledger) -> None:
    ledger.insert([row("old", topic_key="db"), row("wrong")])
    ledger.begin("old", "supersede", T0)
    ledger.begin("wrong", "invalidate", T0)
    ledger.add_linked(row("new", topic_key="db"), "old", T0)
    ledger.add_linked(row("fixed"), "wrong", T0, action="invalidate", reason="moved")
    assert ledger.get("old").superseded_by == "new"  # type: ignore[union-attr]
    invalid = ledger.get("wrong")
    assert invalid is not None and invalid.invalid_at == at(0) and invalid.invalid_reason == "moved"
    assert ledger.get("new") is not None and ledger.pending() == []


def test_invalidation_keeps_the_row_and_says_why(ledger: Ledger) -> None:
    ledger.insert([row("a")])
    ledger.invalidate("a", "untrue", T0)
    got = ledger.get("a")
    assert got is not None and got.state(T0) == "invalidated" and got.invalid_reason == "untrue"
    assert [(r.memory_id, why) for r, why in ledger.prune_candidates(T0 + timedelta(days=8), timedelta(days=7))] == [
        ("a", "invalidated")
    ]


def test_uses_add_up_and_keep_the_latest_time(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b")])
    ledger.record_uses({"a": (2, T0), "b": (1, T0)})
    ledger.record_uses({"a": (1, T0 - timedelta(days=1))})
    a, b = ledger.get("a"), ledger.get("b")
    assert a is not None and a.use_count == 3 and a.last_used_at == at(0)
    assert b is not None and b.use_count == 1


def test_scope_ids_are_the_undeleted_rows_of_one_scope(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b", agent_id="bot"), row("c", user_id="eli"), row("d")])
    ledger.tombstone(["d"], T0)
    assert sorted(ledger.scope_ids({"user_id": "dana"})) == ["a", "b"]
    assert ledger.scope_ids({"user_id": "dana", "agent_id": "bot"}) == ["b"]


def test_the_guard_marks_what_it_found_and_quarantines_on_request(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b")])
    ledger.mark_guarded("a", ["openai_api_key", "aws"], "imperative_order", quarantine=True)
    ledger.mark_guarded("b", [], None, quarantine=True)  # nothing found: nothing written
    a, b = ledger.get("a"), ledger.get("b")
    assert a is not None and a.redacted == "openai_api_key,aws" and a.flag == "imperative_order" and a.quarantined
    assert b is not None and not b.quarantined


def test_the_dialects_null_equal_comparison_matches_nulls_and_values(ledger: Ledger) -> None:
    ledger.insert([row("a"), row("b", run_id="r1"), row("c", user_id="eli")])
    same = f"{ledger.dialect.is_same('user_id')} AND {ledger.dialect.is_same('run_id')}"
    assert [r.memory_id for r in ledger.iter_rows(same, ["dana", None], order="memory_id")] == ["a"]
    assert [r.memory_id for r in ledger.iter_rows(same, ["dana", "r1"])] == ["b"]


def test_the_dialects_insert_builders_run_the_same_on_both(ledger: Ledger) -> None:
    dialect = ledger.dialect
    with ledger.transaction() as conn:
        conn.execute(
            dialect.upsert("pending", ("memory_id", "action", "since"), ("memory_id", "action")), ("a", "delete", at(0))
        )
        conn.execute(
            dialect.upsert("pending", ("memory_id", "action", "since"), ("memory_id", "action")), ("a", "delete", at(1))
        )
        conn.execute(dialect.insert_ignore("pending", ("memory_id", "action", "since")), ("a", "delete", at(2)))
    assert ledger.pending() == [("a", "delete", at(1))]


def test_claiming_runs_its_body_in_one_transaction_and_rolls_it_back_on_an_error(ledger: Ledger) -> None:
    ledger.insert([row("a")])

    def fails(conn: object) -> None:
        ledger.confirm_in(conn, ledger.get("a"), at(0))  # type: ignore[arg-type]
        raise RuntimeError("midway")

    with pytest.raises(RuntimeError):
        ledger.claiming(fails)
    assert ledger.get("a").confirmed_at is None and ledger.confirmations(["a"]) == {}  # type: ignore[union-attr]
    assert ledger.claiming(lambda conn: ledger.confirm_in(conn, ledger.get("a"), at(0))) == 1  # type: ignore[arg-type]
    assert ledger.confirmations(["a"]) == {"a": [(at(0), "confirm")]}


def test_exclusive_is_held_by_one_holder_at_a_time(location: str) -> None:
    one, two = open_ledger(location), open_ledger(location)
    try:
        with one.exclusive("prune") as held:
            assert held
            with two.exclusive("prune", wait=False) as other:
                assert other is (not one.is_server)  # a SQLite ledger has one app process: always held
        with two.exclusive("prune", wait=False) as other:
            assert other
    finally:
        one.close()
        two.close()


def test_rows_unused_and_unconfirmed_for_long_are_listed_least_recently_touched_first(ledger: Ledger) -> None:
    ledger.insert(
        [
            row("used", created_at=at(-100), last_used_at=at(-1)),
            row("old", created_at=at(-100)),
            row("older", created_at=at(-200)),
            row("confirmed", created_at=at(-200), confirmed_at=at(-2)),
        ]
    )
    assert [r.memory_id for r in ledger.unused_candidates(T0, timedelta(hours=50))] == ["older", "old"]


def test_review_lists_live_rows_without_expiry_not_confirmed_since(ledger: Ledger) -> None:
    ledger.insert(
        [row("a", created_at=at(-300)), row("b", created_at=at(-10)), row("c", created_at=at(-400), expires_at=at(100))]
    )
    assert [r.memory_id for r in ledger.review_candidates(T0, timedelta(hours=100), 10)] == ["a"]
    assert ledger.review_candidates(T0, timedelta(hours=100), 10, scope={"user_id": "eli"}) == []


def test_rows_built_with_of_equal_rows_built_by_the_dataclass() -> None:
    assert LedgerRow.of(memory_id="a", user_id="dana") == LedgerRow("a", user_id="dana")
