"""Schema version 4 on SQLite and PostgreSQL: the confirmations log (every confirmation, seeded by the upgrade,
gone with its memory), one live row per topic key and scope (a unique index, and every write chaining the older
row to the newer instead of breaking it), the upgrade chaining rows that already share a key, and the
consolidation record and the judge's decisions in the ledger of either dialect. PostgreSQL cases are skipped,
saying why, when it cannot be reached."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from mem0_hygiene.errors import LedgerError
from mem0_hygiene.memory.judge import Judgement, judged_decisions, record_judgement
from mem0_hygiene.stores import consolidation_log as log
from mem0_hygiene.stores import ledger as ledger_module
from mem0_hygiene.stores.ledger import (
    COLUMNS,
    SCHEMA_VERSION,
    Ledger,
    LedgerRow,
    open_ledger,
    scratch_copy,
    sqlite_file,
)
from mem0_hygiene.stores.ledger import postgres as ledger_postgres
from mem0_hygiene.stores.ledger import sqlite as ledger_sqlite
from mem0_hygiene.stores.ledger.schema import statements
from mem0_hygiene.stores.topic_keys import TopicConflict
from mem0_hygiene.timeutil import to_iso

from .old_ledgers import as_version

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)


def at(hours: float) -> str:
    return to_iso(T0 + timedelta(hours=hours))


def row(mid: str, hours: float = 0, key: str | None = "deploy", **kw: Any) -> LedgerRow:
    kw.setdefault("user_id", "dana")
    return LedgerRow(mid, created_at=at(hours), confirmed_at=at(hours), topic_key=key, **kw)


def live_ids(led: Ledger, key: str = "deploy") -> list[str]:
    return [
        r[0]
        for r in led.query(
            "SELECT memory_id FROM memories WHERE topic_key = ? AND superseded_by IS NULL "
            "AND invalid_at IS NULL AND deleted_at IS NULL AND quarantined = 0 "
            "ORDER BY memory_id",
            (key,),
        )
    ]


def links(led: Ledger) -> dict[str, str]:
    return {
        str(a): str(b)
        for a, b in led.query("SELECT memory_id, superseded_by FROM memories WHERE superseded_by IS NOT NULL")
    }


def orphans(led: Ledger) -> list[Any]:
    """Rows pointing at nothing: foreign_key_check on SQLite; the same question as SQL on PostgreSQL."""
    if led.is_server:
        return (
            led.query(
                "SELECT c.memory_id FROM confirmations c LEFT JOIN memories m USING (memory_id) "
                "WHERE m.memory_id IS NULL"
            )
            + led.pragma_check()[0]
        )
    return led.query("PRAGMA foreign_key_check")


@pytest.fixture
def opened() -> Iterator[Callable[[str], Ledger]]:
    ledgers: list[Ledger] = []

    def open_(where: str) -> Ledger:
        ledgers.append(open_ledger(where))
        return ledgers[-1]

    yield open_
    for led in ledgers:
        led.close()


def version_3(where: str, rows: list[LedgerRow]) -> None:
    """A ledger at schema version 3 at ``where`` holding ``rows`` as they are (duplicates of a key included):
    what an older mem0-hygiene leaves."""
    insert = f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})"
    if where.startswith("postgresql://"):
        conn = ledger_postgres.PgConnection(where)
        try:
            conn.execute("BEGIN")
            for version in (1, 2, 3):
                for statement in statements(ledger_postgres.MIGRATIONS[version]):
                    conn.script(statement)
            conn.execute(
                "INSERT INTO hygiene_meta VALUES ('application_id', ?), ('schema_version', '3')",
                (str(ledger_module.APPLICATION_ID),),
            )
            for r in rows:
                conn.execute(insert, r.as_tuple())
            conn.execute("COMMIT")
        finally:
            conn.close()
        return
    open_ledger(where).close()
    as_version(where, 3)
    raw = sqlite3.connect(where)
    with raw:
        raw.executemany(insert, [r.as_tuple() for r in rows])
    raw.close()


# ------------------------------------------------------------------------------------------ the upgrade


def test_the_upgrade_seeds_the_confirmations_and_chains_rows_sharing_a_key_to_the_newest(
    location: str, opened: Callable[[str], Ledger], caplog: pytest.LogCaptureFixture
) -> None:
    version_3(
        location,
        [
            row("a", 0),
            row("b", 1),
            row("c", 2),  # one key, one scope, three live rows: b and a are chained
            row("other", 0, user_id="sam"),  # the same key in another scope is another fact
            row("agent", 0, agent_id="bot"),  # (dana, bot) is not (dana, no agent)
            row("tool", 3, quarantined=True),  # quarantined: holds no key until confirmed
            row("gone", 4, deleted_at=at(5)),  # tombstoned: holds nothing
            replace_confirmed(row("seen", 0, key=None), at(30)),  # confirmed after its birth: seeded
        ],
    )
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene.stores.ledger"):
        led = opened(location)
    assert led.query("SELECT count(*) FROM confirmations")[0][0] == 1
    assert led.confirmations(["seen", "a"]) == {"seen": [(at(30), "seeded")]}
    assert links(led) == {"a": "b", "b": "c"}
    assert sorted(live_ids(led)) == ["agent", "c", "other"]
    assert led.chained_on_upgrade == 2
    assert any("chained 2 row(s)" in note for note in led.migration_notes)
    assert "chained 2 row(s)" in caplog.text
    if led.is_server:
        assert led.schema_version() == SCHEMA_VERSION
    else:
        assert led.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert orphans(led) == []
    assert led.get("a").superseded_at is not None  # type: ignore[union-attr]


def replace_confirmed(r: LedgerRow, when: str) -> LedgerRow:
    from dataclasses import replace

    return replace(r, confirmed_at=when)


def test_a_second_live_row_of_a_key_in_a_scope_is_refused_by_the_index_itself(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("a", 0)])
    insert = f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})"
    with pytest.raises(TopicConflict):
        with led.transaction() as conn:
            conn.execute(insert, row("b", 1).as_tuple())  # a writer that skipped making room
    with led.transaction() as conn:  # NULL scopes are equal: one live row per key without any scope either
        conn.execute(insert, row("x", 0, user_id=None).as_tuple())
    with pytest.raises(TopicConflict):
        with led.transaction() as conn:
            conn.execute(insert, row("y", 1, user_id=None).as_tuple())
    assert live_ids(led) == ["a", "x"]


# ------------------------------------------------------------------------------- writes make room


def test_a_new_row_of_a_key_takes_it_over_and_the_older_points_at_it(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("a", 0)], keep_state=True)
    led.insert([row("b", 1)], keep_state=True)  # a plain add with the same topic_key, no write decision
    led.insert([row("c", 2), row("d", 2)], keep_state=True)  # two of one batch: the later one wins
    assert live_ids(led) == ["d"]
    assert links(led) == {"a": "b", "b": "c", "c": "d"}
    assert led.get("a").superseded_at == at(1)  # type: ignore[union-attr] # when the newer one was written
    assert led.successors("a") == ["b", "c", "d"]
    assert orphans(led) == []


def test_a_row_flushed_after_a_newer_one_of_its_key_is_written_superseded_by_it(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("newer", 5)], keep_state=True)  # another replica flushed first
    led.insert([row("late", 1)], keep_state=True)  # this replica's buffered row, created before it
    assert live_ids(led) == ["newer"]
    assert links(led) == {"late": "newer"}
    assert led.get("late").superseded_at == at(5)  # type: ignore[union-attr]


def test_adoption_and_birth_facts_onto_an_existing_row_make_room_too(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("held", 0)])
    led.insert([row("adopted", 2)], ignore_existing=True)  # a row rebuilt from a point's birth facts
    assert links(led) == {"held": "adopted"}
    led.insert([row("plain", 3, key=None)], ignore_existing=True)  # adopted by a reader, no key yet
    led.insert([row("plain", 1)], keep_state=True)  # its birth facts arrive: older than "adopted"
    assert live_ids(led) == ["adopted"] and links(led)["plain"] == "adopted"
    assert led.insert([row("adopted", 9)], ignore_existing=True) == 0  # kept as it is
    assert orphans(led) == []


def test_a_quarantined_row_never_displaces_the_fact_and_its_confirmation_makes_it_the_newer(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("user", 1)])
    led.insert([row("tool", 0, quarantined=True, source_kind="tool")])  # tool output: hidden, holds no key
    assert live_ids(led) == ["user"] and links(led) == {}
    led.confirm("tool", T0 + timedelta(days=1))  # a person checked it: it is the fact now
    assert live_ids(led) == ["tool"] and links(led) == {"user": "tool"}


def test_a_supersede_a_link_and_an_invalidation_keep_one_live_row(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("a", 0)])
    led.add_linked(row("b", 1), "a", T0 + timedelta(hours=1))  # supersede: the new row takes the key over
    led.add_linked(row("c", 2), "b", T0 + timedelta(hours=2), "invalidate", "wrong")  # a contradiction
    assert live_ids(led) == ["c"]
    assert links(led) == {"a": "b"} and led.get("b").invalid_at == at(2)  # type: ignore[union-attr]
    led.insert([row("d", 3)])
    led.add_linked(row("e", 4, key="other"), "d", T0 + timedelta(hours=4))  # a replacement under another key
    assert live_ids(led) == [] and live_ids(led, "other") == ["e"]


def test_a_revived_tombstone_is_chained_to_a_newer_row_of_its_key(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("a", 0)])
    led.tombstone(["a"], T0)
    led.insert([row("b", 1)])
    led.untombstone(["a"])  # its delete through mem0 failed: it is served again, as the older fact
    assert live_ids(led) == ["b"] and links(led) == {"a": "b"}
    assert led.get("a").deleted_at is None and led.pending("delete") == []  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------- confirmations


def test_every_confirmation_is_logged_with_how_and_goes_with_its_memory(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("a", 0, key=None), row("b", 0, key=None)])
    for day in (1, 2, 3):
        led.confirm("a", T0 + timedelta(days=day))
    led.confirm("a", T0 + timedelta(days=4), via="update")
    led.confirm("missing", T0)  # an unknown id changes nothing
    said = led.confirmations(["a", "b", "missing"])
    assert said == {
        "a": [(to_iso(T0 + timedelta(days=d)), "confirm") for d in (1, 2, 3)]
        + [(to_iso(T0 + timedelta(days=4)), "update")]
    }
    assert led.get("a").confirmed_at == to_iso(T0 + timedelta(days=4))  # type: ignore[union-attr]
    led.tombstone(["a"], T0 + timedelta(days=5))
    assert led.purge_rows(["a"]) == 1  # prune and forget remove rows this way
    assert led.query("SELECT count(*) FROM confirmations")[0][0] == 0
    assert orphans(led) == []


def test_replacing_a_row_keeps_its_confirmations_and_the_rows_it_superseded(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("old", 0, key=None), row("new", 1, key=None)])
    led.link_supersede("old", "new", T0 + timedelta(hours=1))
    led.confirm("new", T0 + timedelta(days=1))
    led.insert([row("new", 1, key=None)])  # a row written over (SQLite's REPLACE used to delete it first)
    assert led.get("old").superseded_by == "new"  # type: ignore[union-attr]
    assert len(led.confirmations(["new"])["new"]) == 1


# ------------------------------------------------------------------------- the tables of either dialect


def test_the_consolidation_record_and_the_judges_decisions_live_in_the_ledger_of_either_dialect(
    location: str, opened: Callable[[str], Ledger]
) -> None:
    led = opened(location)
    led.insert([row("a", 0, key=None), row("b", 0, key=None)])
    assert log.has_log(led) and log.unfinished(led) == []
    step = log.LoggedStep("p1", 1, "merge", "a", "b", 0.9312345678901, "consolidate: duplicate of b", at(1))
    log.write_plan(led, [step])
    assert log.unfinished(led) == [step]  # a float keeps every digit (PostgreSQL: double precision)
    log.mark(led, step, "applied", at(2))
    assert log.unfinished(led) == [] and log.applied_reasons(led, ["a"]) == {"a": "consolidate: duplicate of b"}
    record_judgement(led, "b", "a", "UPDATE", Judgement("UPDATE", "UPDATE", "moved on"), 0.8, T0)
    record_judgement(led, "a", None, "ADD", Judgement("ADD", "ADD", "new"), None, T0)
    assert [(d["memory_id"], d["event"]) for d in judged_decisions(led)] == [("b", "UPDATE"), ("a", "ADD")]


def test_a_ledger_newer_than_this_version_is_refused_saying_upgrade(
    location: str, opened: Callable[[str], Ledger], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened(location).close()  # at the current version
    for module in (ledger_sqlite, sqlite_file, ledger_postgres):  # as a mem0-hygiene that knows version 3 sees it
        monkeypatch.setattr(module, "SCHEMA_VERSION", 3)
    with pytest.raises(LedgerError, match=rf"schema version {SCHEMA_VERSION}, newer .*\(3\); upgrade mem0-hygiene"):
        open_ledger(location)
    with pytest.raises(LedgerError, match="upgrade mem0-hygiene"):
        open_ledger(location, readonly=True)


def test_a_copy_of_an_older_ledger_is_upgraded_in_the_copy_only(location: str, opened: Callable[[str], Ledger]) -> None:
    version_3(location, [row("a", 0), row("b", 1), replace_confirmed(row("c", 0, key=None), at(9))])
    scratch = scratch_copy(location)  # what dry runs and the audit read
    try:
        assert links(scratch) == {"a": "b"} and scratch.confirmations(["c"]) == {"c": [(at(9), "seeded")]}
        assert scratch.query("PRAGMA foreign_key_check") == []
    finally:
        scratch.close()
    readonly = open_ledger(location, readonly=True)
    try:
        assert links(readonly) == {} and readonly.confirmations(["c"]) == {}  # the ledger itself: untouched
    finally:
        readonly.close()


def test_a_row_built_on_the_hot_path_equals_one_built_by_the_dataclass() -> None:
    import dataclasses

    from mem0_hygiene.stores.ledger import LedgerRow

    quick = LedgerRow.of(memory_id="m1", user_id="dana", source_kind="tool", created_at="t", quarantined=True)
    assert quick == LedgerRow(memory_id="m1", user_id="dana", source_kind="tool", created_at="t", quarantined=True)
    assert hash(quick) == hash(dataclasses.replace(quick))
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.user_id = "noa"  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'colour'"):
        LedgerRow.of(memory_id="m2", colour="red")
    with pytest.raises(TypeError, match="needs a memory_id"):
        LedgerRow.of(user_id="dana")
