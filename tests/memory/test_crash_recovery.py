"""A process killed in the middle of a supersede, a write-time decision, a delete or a prune leaves nothing
half done for long: the next start links a replacement mem0 already stored (or forgets the attempt) and
finishes the deletes, whatever the tombstones' age, so plain mem0 stops serving their points at once; a prune,
an auto-prune or the first delete of a process finishes them too. Each crash is a real SIGKILL of a child
process before one chosen SQLite statement (see tests/faults_sqlite.py)."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from mem0_hygiene import Memory
from mem0_hygiene.errors import MemoryNotFound

from ..crash_operations import BY_NAME
from ..faults_sqlite import SCOPE, crash_at, zygote

NPM, PNPM = "Prefers npm for JavaScript packages", "Prefers pnpm for JavaScript packages"
STALE = ["The office is closed on Mondays", "Uses Python 3.11", "Uses Python 3.9"]


@pytest.fixture(scope="module")
def zyg():
    with zygote() as z:
        yield z


def served(m):
    return sorted(r["memory"] for r in m.get_all(filters=SCOPE, top_k=100)["results"])


def plain_serves(crash, plain_mem0, close_plain):
    plain = plain_mem0(crash.folder)
    try:
        return sorted(r["memory"] for r in plain.get_all(filters=SCOPE, top_k=100)["results"])
    finally:
        close_plain(plain)


# -- supersede ------------------------------------------------------------------------------------------------


def test_a_supersede_killed_after_mem0_stored_the_new_fact_serves_only_the_new_one_and_the_retry_stores_nothing(
    zyg, tmp_path, plain_mem0, close_plain
):
    # killed before the ledger transaction that records the new memory and links the two
    crash = crash_at(BY_NAME["supersede"], tmp_path, zyg, "hygiene.db", "BEGIN IMMEDIATE")
    assert plain_serves(crash, plain_mem0, close_plain).count(PNPM) == 1  # mem0 did store it
    m = Memory.from_config(crash.config())
    try:
        assert served(m) == [PNPM, "Works on the billing service"]
        assert [r["memory"] for r in m.search("JavaScript packages", filters=SCOPE)["results"]] == [PNPM]
        old = m.get(crash.ids["old"])["hygiene"]
        assert old["state"] == "superseded"
        new_id = old["superseded_by"]
        assert m.ledger.get(new_id).source == "chat 2026-08-02"  # recorded from its birth facts, not adopted
        assert m.ledger.pending() == []
        assert m.supersede(crash.ids["old"], PNPM, source="chat 2026-08-02") == new_id  # the retry finds it
    finally:
        m.close()
    assert plain_serves(crash, plain_mem0, close_plain).count(PNPM) == 1


def test_a_supersede_killed_before_mem0_committed_the_new_fact_keeps_the_old_one_and_the_retry_stores_it_once(
    zyg, tmp_path, plain_mem0, close_plain
):
    crash = crash_at(BY_NAME["supersede"], tmp_path, zyg, "storage.sqlite", "COMMIT")
    m = Memory.from_config(crash.config())
    try:
        assert served(m) == [NPM, "Works on the billing service"]
        assert m.ledger.pending() == []  # the attempt is forgotten: nothing of it landed
        m.supersede(crash.ids["old"], PNPM, source="chat 2026-08-02")
        assert served(m) == [PNPM, "Works on the billing service"]
    finally:
        m.close()
    assert plain_serves(crash, plain_mem0, close_plain).count(PNPM) == 1


def test_a_write_time_update_killed_before_its_link_serves_only_the_new_fact_and_the_retry_is_a_duplicate(
    zyg, tmp_path
):
    crash = crash_at(BY_NAME["add_deciding"], tmp_path, zyg, "hygiene.db", "BEGIN IMMEDIATE")
    m = Memory.from_config(crash.config())
    try:
        assert served(m) == ["Dana uses Postgres 16", "Works on the billing service"]
        assert m.get(crash.ids["old"])["hygiene"]["state"] == "superseded"
        again = m.add("Dana uses Postgres 16", **SCOPE, infer=False, source="chat 2")["results"]
        assert [r["event"] for r in again] == ["NONE"]
        assert served(m) == ["Dana uses Postgres 16", "Works on the billing service"]
    finally:
        m.close()


# -- deletes and prunes ---------------------------------------------------------------------------------------


@pytest.fixture
def interrupted_prune(zyg, tmp_path):
    """A prune killed after it tombstoned everything and before mem0 deleted the first point."""
    return crash_at(BY_NAME["prune"], tmp_path, zyg, "storage.sqlite", "DELETE FROM points")


def history_events(crash, memory_id: str) -> list[str]:
    """mem0's history.db events for one memory."""
    with contextlib.closing(sqlite3.connect(crash.config()["history_db_path"])) as conn:
        return [e for (e,) in conn.execute("SELECT event FROM history WHERE memory_id = ?", (memory_id,))]


def test_an_interrupted_prune_is_finished_when_the_drop_in_next_starts(interrupted_prune, plain_mem0, close_plain):
    crash = interrupted_prune
    assert set(STALE) <= set(plain_serves(crash, plain_mem0, close_plain))  # the crash left them served
    stale = [crash.ids[n] for n in ("a", "b", "wrong")]
    m = Memory.from_config(crash.config())  # the same moment: the tombstones are seconds old
    try:
        assert [mid for mid in stale if m.vector_store.get(vector_id=mid) is not None] == []  # qdrant itself
        assert m.ledger.pending() == []
        assert m.prune().leftovers == ()  # nothing left for the next prune
    finally:
        m.close()
    assert plain_serves(crash, plain_mem0, close_plain) == ["Lives in Haifa", "Uses Python 3.12"]
    assert all("DELETE" in history_events(crash, mid) for mid in stale)


def test_an_interrupted_prune_is_finished_by_the_next_delete_of_any_memory(interrupted_prune, plain_mem0, close_plain):
    crash = interrupted_prune
    m = Memory.from_config(crash.config())
    try:
        m.delete(crash.ids["other"])
    finally:
        m.close()
    assert plain_serves(crash, plain_mem0, close_plain) == ["Uses Python 3.12"]


def test_an_interrupted_prune_is_finished_by_the_next_auto_prune_step(interrupted_prune, plain_mem0, close_plain):
    crash = interrupted_prune
    m = Memory.from_config({**crash.config(), "hygiene": {**crash.config()["hygiene"], "auto_prune": "24h"}})
    try:
        m.search("Python", filters=SCOPE)  # the app's own call does one bounded step
    finally:
        m.close()
    assert not set(STALE) & set(plain_serves(crash, plain_mem0, close_plain))


def test_a_delete_killed_midway_is_finished_when_the_drop_in_next_starts(zyg, tmp_path, plain_mem0, close_plain):
    crash = crash_at(BY_NAME["delete"], tmp_path, zyg, "storage.sqlite", "DELETE FROM points", occurrence=2)
    chain = [crash.ids[n] for n in ("a", "b", "c")]
    assert plain_serves(crash, plain_mem0, close_plain) != ["Lives in Haifa"]  # the crash left some served
    m = Memory.from_config(crash.config())
    try:
        assert [mid for mid in chain if m.vector_store.get(vector_id=mid) is not None] == []  # qdrant itself
        assert m.ledger.pending() == []
        assert served(m) == ["Lives in Haifa"]
        with pytest.raises(MemoryNotFound, match="already deleted"):  # the app's retry: nothing left to do
            m.delete(crash.ids["c"])
    finally:
        m.close()
    assert plain_serves(crash, plain_mem0, close_plain) == ["Lives in Haifa"]
    assert all("DELETE" in history_events(crash, mid) for mid in chain)
