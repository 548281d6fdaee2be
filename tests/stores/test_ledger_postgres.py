"""The ledger on PostgreSQL (hygiene.ledger_url): the same API, schema versions and queries as on SQLite,
compare-and-set links, the server's clock, credentials kept out of messages, and several processes on one
database. Skipped, saying why, when PostgreSQL cannot be reached (see tests/fleet/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timezone

import pytest

from mem0_hygiene.errors import LedgerError, SupersedeError
from mem0_hygiene.stores.ledger import SCHEMA_VERSION, Ledger, LedgerRow, open_ledger, scratch_copy
from mem0_hygiene.stores.ledger.postgres import PostgresLedger

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)


def row(mid: str, **kw: object) -> LedgerRow:
    return LedgerRow(mid, user_id=str(kw.pop("user_id", "dana")), created_at="2026-07-01T00:00:00.000000+00:00", **kw)  # type: ignore[arg-type]


def test_a_postgresql_url_opens_a_postgres_ledger_at_the_current_schema_version(pg_url: str) -> None:
    led = open_ledger(pg_url)
    try:
        assert isinstance(led, PostgresLedger) and led.is_server
        assert led.schema_version() == SCHEMA_VERSION
        tables = {
            r[0]
            for r in led.query("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        }
        assert {"memories", "pending", "hygiene_meta", "live_memories"} <= tables
    finally:
        led.close()
    again = open_ledger(pg_url)  # a second open migrates nothing and keeps the rows
    again.close()


def test_an_older_postgres_ledger_is_migrated_to_the_current_version(pg_url: str) -> None:
    from mem0_hygiene.stores.ledger import postgres as lp
    from mem0_hygiene.stores.ledger.schema import statements

    conn = lp.PgConnection(pg_url)
    for statement in statements(lp.MIGRATIONS[1]):
        conn.script(statement)
    conn.execute(
        "INSERT INTO hygiene_meta VALUES ('application_id', ?), ('schema_version', '1')", (str(lp.APPLICATION_ID),)
    )
    conn.execute("INSERT INTO memories (memory_id, created_at) VALUES ('old', '2026-01-01')")
    conn.close()
    led = open_ledger(pg_url)
    try:
        assert led.schema_version() == SCHEMA_VERSION
        assert led.get("old") is not None and led.get("old").redacted is None  # type: ignore[union-attr]
        assert led.pending() == []
    finally:
        led.close()


def test_superseding_an_already_superseded_memory_is_refused_even_on_another_connection(pg_url: str) -> None:
    one, two = open_ledger(pg_url), open_ledger(pg_url)
    try:
        one.insert([row("old"), row("new1"), row("new2")])
        one.link_supersede("old", "new1", T0)
        with pytest.raises(SupersedeError, match="already superseded by new1"):
            two.link_supersede("old", "new2", T0)
        two.link_supersede("old", "new1", T0)  # the same link again is a no-op, not a refusal
        assert one.get("old").superseded_by == "new1"  # type: ignore[union-attr]
        two.link_supersede("old", "new2", T0, follow=True)  # an upsert that lost the race: the new head
        assert one.get("new1").superseded_by == "new2"  # type: ignore[union-attr]
    finally:
        one.close()
        two.close()


def test_a_dry_run_copy_of_a_postgres_ledger_is_sqlite_in_memory_and_writes_go_nowhere(pg_url: str) -> None:
    led = open_ledger(pg_url)
    led.insert([row("a"), row("b")])
    led.link_supersede("a", "b", T0)
    scratch = scratch_copy(pg_url)
    try:
        assert not scratch.is_server and scratch.get("a").superseded_by == "b"  # type: ignore[union-attr]
        scratch.tombstone(["b"], T0)
        assert led.get("b").deleted_at is None  # type: ignore[union-attr]
    finally:
        scratch.close()
        led.close()


def test_a_read_only_opening_refuses_writes_and_an_empty_schema(pg_url: str) -> None:
    with pytest.raises(LedgerError, match="no ledger at postgresql://127.0.0.1"):
        open_ledger(pg_url, readonly=True)
    open_ledger(pg_url).close()
    ro = open_ledger(pg_url, readonly=True)
    try:
        with pytest.raises(LedgerError, match="read-only"):
            ro.insert([row("a")])
    finally:
        ro.close()


def test_credentials_in_the_url_never_appear_in_errors_or_locations(pg_url: str) -> None:
    wrong = pg_url.replace("mem0_hygiene:mem0_hygiene@", "mem0_hygiene:s3cret-pw@")
    with pytest.raises(LedgerError) as info:
        open_ledger(wrong)
    assert "s3cret-pw" not in str(info.value) and "postgresql://127.0.0.1:5432/" in str(info.value)
    led = open_ledger(pg_url)
    try:
        assert "mem0_hygiene:mem0_hygiene@" not in led.shown and "options" not in led.shown
    finally:
        led.close()


def test_the_clock_of_a_postgres_ledger_is_the_servers(pg_url: str) -> None:
    led = open_ledger(pg_url)
    try:
        server = led.query("SELECT clock_timestamp()")[0][0]
        assert abs((led.now() - server).total_seconds()) < 1.0
        assert led.now().tzinfo is not None
    finally:
        led.close()


RACER = textwrap.dedent("""
    import sys
    from mem0_hygiene.stores.ledger import LedgerRow, open_ledger
    from mem0_hygiene.errors import SupersedeError
    from datetime import datetime, timezone
    url, me, follow = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    led = open_ledger(url)
    sys.stdout.write("ready\\n"); sys.stdout.flush(); sys.stdin.readline()
    new = LedgerRow(me, user_id="dana", topic_key="db", created_at="2026-08-01T09:00:00.000000+00:00")
    try:
        led.add_linked(new, "x", datetime.now(timezone.utc), follow=follow)
        print("linked")
    except SupersedeError:
        print("refused")
    led.close()
""")


def _race(pg_url: str, n: int, follow: bool) -> list[str]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, pg_url, f"r{i}", "1" if follow else "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:  # all connected: released as close together as pipes allow
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    return [p.communicate(timeout=60)[0].strip() for p in procs]


def test_processes_superseding_one_memory_at_once_one_wins_the_others_are_refused(pg_url: str) -> None:
    led = open_ledger(pg_url)
    led.insert([row("x", topic_key="db")])
    try:
        outcomes = _race(pg_url, 3, follow=False)
        assert sorted(outcomes) == ["linked", "refused", "refused"]
        winner = led.get("x").superseded_by  # type: ignore[union-attr]
        assert winner == f"r{outcomes.index('linked')}"
    finally:
        led.close()


def test_processes_upserting_one_topic_key_at_once_end_with_one_live_row_and_a_chain(pg_url: str) -> None:
    led = open_ledger(pg_url)
    led.insert([row("x", topic_key="db")])
    try:
        assert _race(pg_url, 3, follow=True) == ["linked"] * 3
        live = led.query("SELECT memory_id FROM memories WHERE topic_key = 'db' AND superseded_by IS NULL")
        assert len(live) == 1
        chain = ["x", *led.successors("x")]
        assert len(chain) == 4 and chain[-1] == live[0][0]
    finally:
        led.close()


def _drop_connection(pg_url: str, led: Ledger) -> None:
    import psycopg

    pid = led.query("SELECT pg_backend_pid()")[0][0]
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_a_connection_the_server_dropped_is_reopened_by_the_next_call(pg_url: str) -> None:
    led = open_ledger(pg_url)
    try:
        led.insert([row("a")])
        _drop_connection(pg_url, led)
        with pytest.raises(LedgerError, match="terminating connection"):
            led.get("a")  # the call that finds the connection gone fails, saying why
        assert led.get("a") is not None  # the next one reconnects
    finally:
        led.close()


def test_a_transaction_cut_by_a_lost_connection_commits_nothing(pg_url: str) -> None:
    led = open_ledger(pg_url)
    try:
        with pytest.raises(LedgerError):
            with led.transaction() as conn:
                conn.execute("INSERT INTO memories (memory_id, created_at) VALUES ('half', '2026-01-01')")
                _drop_connection(pg_url, led)
                conn.execute("INSERT INTO memories (memory_id, created_at) VALUES ('rest', '2026-01-01')")
        assert led.get("half") is None and led.get("rest") is None
    finally:
        led.close()
