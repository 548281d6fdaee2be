"""Writers racing on one topic key, in separate processes on one ledger (a SQLite file, or PostgreSQL): they end
with exactly one live row of the key, the newest, and every other row chained to it, nothing deleted. On
PostgreSQL the unique index holds even for writers that skip the link lock and all check before any of them
writes (they meet the index, and their transaction runs again). Also through the drop-in: plain adds with a
topic_key and the write decision off, on one Memory and on replicas sharing a PostgreSQL ledger."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from mem0_hygiene import Memory
from mem0_hygiene.stores.ledger import open_ledger
from mem0_hygiene.timeutil import to_iso

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)
WRITERS = 6

WRITER = textwrap.dedent("""
    import json, sys
    from datetime import datetime, timedelta, timezone
    from mem0_hygiene.stores import topic_keys
    from mem0_hygiene.stores.ledger import LedgerRow, open_ledger
    from mem0_hygiene.timeutil import to_iso

    where, index, mode, guard = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    led = open_ledger(where)
    if guard == "off":  # a writer that skips the link lock: only the unique index stands in its way
        led.link_guard = lambda conn: None
        real, calls = topic_keys.holder, []

        def checked_then_wait(conn, row):
            found = real(conn, row)
            calls.append(found)
            if len(calls) == 1:  # the first check only: every writer has looked before any of them writes
                print("checked", flush=True)
                sys.stdin.readline()
            return found

        topic_keys.holder = checked_then_wait
    stamp = to_iso(datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc) + timedelta(minutes=index))
    row = LedgerRow(f"m{index}", user_id="dana", source="chat", created_at=stamp, confirmed_at=stamp,
                    topic_key="deploy")
    print("ready", flush=True)
    sys.stdin.readline()
    if mode == "flush":
        led.insert([row], keep_state=True)  # a replica's buffered birth row
    else:
        led.insert([row], ignore_existing=True)  # an adoption from the point's birth facts
    print(json.dumps({"calls": len(calls) if guard == "off" else None}), flush=True)
    led.close()
""")


def race(where: str, *, guard: str = "on") -> list[dict[str, Any]]:
    """Start WRITERS processes on the ledger at ``where``, release them at once, wait for them all."""
    open_ledger(where).close()  # created (and migrated) before the race
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, where, str(i), "flush" if i % 2 else "adopt", guard],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(WRITERS)
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        for p in procs:  # the barrier: every writer is connected and waiting
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        if guard == "off":
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == "checked"
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
        said = []
        for p in procs:
            assert p.stdout is not None
            said.append(json.loads(p.stdout.readline()))
            assert p.wait(60) == 0
        return said
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def assert_one_live_row_and_a_chain(where: str) -> None:
    led = open_ledger(where, readonly=True)
    try:
        rows = {r.memory_id: r for r in led.iter_rows("topic_key = 'deploy'")}
        assert sorted(rows) == sorted(f"m{i}" for i in range(WRITERS))  # nothing lost, nothing deleted
        live = [mid for mid, r in rows.items() if r.superseded_by is None]
        newest = f"m{WRITERS - 1}"
        assert live == [newest]  # the newest row holds the key, whichever writer committed first
        for mid in rows:
            assert mid == newest or led.successors(mid)[-1] == newest  # every other row leads to it
        assert not [r for r in rows.values() if r.deleted_at or r.invalid_at]
        assert led.pragma_check()[0] == []
        if not led.is_server:
            assert led.query("PRAGMA integrity_check") == [("ok",)]
    finally:
        led.close()


def test_processes_racing_on_one_topic_key_in_a_sqlite_ledger_end_with_one_live_row(tmp_path: Path) -> None:
    where = str(tmp_path / "hygiene.db")
    race(where)
    assert_one_live_row_and_a_chain(where)


def test_processes_racing_on_one_topic_key_in_a_postgres_ledger_end_with_one_live_row(pg_url: str) -> None:
    race(pg_url)
    assert_one_live_row_and_a_chain(pg_url)


def test_without_the_link_lock_the_unique_index_and_a_rerun_still_leave_one_live_row(pg_url: str) -> None:
    said = race(pg_url, guard="off")
    assert_one_live_row_and_a_chain(pg_url)
    # every writer found no holder before any wrote, so all but one met the index and ran again
    assert sum(s["calls"] for s in said) >= WRITERS + (WRITERS - 1)


# ------------------------------------------------------------------------------------ through the drop-in


def add(m: Memory, text: str, key: str = "deploy") -> str:
    return str(m.add(text, user_id="dana", infer=False, source="chat", topic_key=key)["results"][0]["id"])


def test_plain_adds_with_one_topic_key_leave_one_live_memory_and_a_chain(make_memory: Any, clock: Any) -> None:
    m = make_memory()  # the write decision is off: nothing compares the texts
    first = add(m, "Deploys with Docker Compose")
    clock.advance(minutes=1)
    second = add(m, "Deploys with Kubernetes")
    other = add(m, "Prefers pnpm", key="packages")
    m.flush()
    assert sorted(r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"]) == [
        "Deploys with Kubernetes",
        "Prefers pnpm",
    ]
    assert m.ledger.get(first).superseded_by == second  # type: ignore[union-attr]
    assert m.get(first)["hygiene"]["state"] == "superseded"  # type: ignore[index]
    assert m.ledger.get(other).superseded_by is None  # type: ignore[union-attr]


def test_replicas_adding_one_topic_key_at_once_end_with_one_live_memory(replicas: Any, clock: Any) -> None:
    a, b = replicas(2)
    start = threading.Barrier(2)
    ids: dict[str, str] = {}

    def write(name: str, m: Memory, text: str) -> None:
        start.wait()
        ids[name] = add(m, text)
        m.flush()

    threads = [
        threading.Thread(target=write, args=("a", a, "Deploys with Nomad")),
        threading.Thread(target=write, args=("b", b, "Deploys with Kubernetes")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    live = [r.memory_id for r in a.ledger.iter_rows("topic_key = 'deploy' AND superseded_by IS NULL")]
    assert len(live) == 1 and set(ids.values()) == {live[0], *a.ledger.predecessors(live[0])}
    served = [r["memory"] for r in b.get_all(filters={"user_id": "dana"})["results"]]
    assert len(served) == 1 and served == [r["memory"] for r in a.get_all(filters={"user_id": "dana"})["results"]]


def test_a_late_flush_of_an_older_memory_does_not_hide_the_newer_one(replicas: Any, clock: Any) -> None:
    a, b = replicas(2, flush_after=3600, use_flush_every=1000)
    old = add(a, "Deploys with Nomad")  # buffered in a
    clock.advance(minutes=5)
    new = add(b, "Deploys with Kubernetes")
    b.flush()
    a.flush()  # a's older row arrives after b's newer one
    assert a.ledger.get(old).superseded_by == new  # type: ignore[union-attr]
    assert to_iso(T0 + timedelta(minutes=5)) == a.ledger.get(old).superseded_at  # type: ignore[union-attr]
    assert [r["memory"] for r in a.get_all(filters={"user_id": "dana"})["results"]] == ["Deploys with Kubernetes"]
