"""Drift: supersede keeps the chain, hides the old fact, and deleting the new one takes the old along."""

from __future__ import annotations

import sqlite3

import pytest

from mem0_hygiene import MemoryNotFound, SupersedeError

SCOPE = {"user_id": "dana"}


def ids(result):
    return [r["id"] for r in result["results"]]


def test_npm_superseded_by_pnpm_then_pnpm_deleted_never_brings_npm_back(mem, clock):
    old = mem.add("Prefers npm for JavaScript packages", **SCOPE, infer=False, source="chat 2026-05-02")
    old_id = old["results"][0]["id"]
    clock.advance(days=30)
    new_id = mem.supersede(old_id, "Prefers pnpm for JavaScript packages", source="chat 2026-06-01")

    found = mem.search("JavaScript packages", filters=SCOPE)["results"]
    assert [r["memory"] for r in found] == ["Prefers pnpm for JavaScript packages"]
    assert mem.get(old_id)["hygiene"]["state"] == "superseded"
    assert mem.get(old_id)["hygiene"]["superseded_by"] == new_id

    mem.delete(new_id)

    assert mem.search("JavaScript packages", filters=SCOPE)["results"] == []
    assert mem.get_all(filters=SCOPE, include_stale=True)["results"] == []
    assert mem.get(old_id) is None  # deleted through mem0's API, not just hidden
    history = {h["event"] for h in mem.history(old_id)}
    assert "DELETE" in history
    conn = sqlite3.connect(mem.ledger_path)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


def test_laravel_superseded_by_go_so_search_returns_go_only(mem):
    old = mem.add("The API is built with Laravel", **SCOPE, infer=False, source="chat")
    mem.supersede(old["results"][0]["id"], "We moved the API to Go", source="chat")
    found = [r["memory"] for r in mem.search("what is the API built with", filters=SCOPE)["results"]]
    assert found == ["We moved the API to Go"]


def test_supersede_keeps_the_old_scope(mem):
    old = mem.add("Deploys with Docker Compose", agent_id="ops-bot", infer=False)
    new_id = mem.supersede(old["results"][0]["id"], "Deploys with Kubernetes")
    assert mem.get(new_id)["agent_id"] == "ops-bot"
    assert [r["memory"] for r in mem.get_all(filters={"agent_id": "ops-bot"})["results"]] == ["Deploys with Kubernetes"]


def test_supersede_links_two_existing_memories(mem):
    a = mem.add("DB is Postgres 15", **SCOPE, infer=False)["results"][0]["id"]
    b = mem.add("DB is Postgres 16", **SCOPE, infer=False)["results"][0]["id"]
    assert mem.supersede(a, new_id=b) == b
    assert ids(mem.get_all(filters=SCOPE)) == [b]


def test_cycle_is_refused_and_nothing_changes(mem):
    a = mem.add("Fact A", **SCOPE, infer=False)["results"][0]["id"]
    b = mem.add("Fact B", **SCOPE, infer=False)["results"][0]["id"]
    mem.supersede(a, new_id=b)
    with pytest.raises(SupersedeError, match="already superseded"):
        mem.supersede(a, new_id=b)
    with pytest.raises(SupersedeError, match="superseded and cannot be the replacement"):
        mem.supersede(b, new_id=a)
    with pytest.raises(SupersedeError, match="itself"):
        mem.supersede(b, new_id=b)
    assert mem.ledger.get(b).superseded_by is None
    assert ids(mem.get_all(filters=SCOPE)) == [b]


def test_chain_of_three_deleting_the_head_deletes_the_whole_chain(mem):
    a = mem.add("Uses Python 3.9", **SCOPE, infer=False)["results"][0]["id"]
    b = mem.supersede(a, "Uses Python 3.11")
    c = mem.supersede(b, "Uses Python 3.12")
    assert mem.ledger.predecessors(c) == [b, a]
    mem.delete(c)
    assert [mem.get(x) for x in (a, b, c)] == [None, None, None]
    assert all(mem.ledger.get(x).deleted_at for x in (a, b, c))


def test_unknown_ids_name_the_problem(mem):
    with pytest.raises(MemoryNotFound, match="no memory with id 'nope'"):
        mem.supersede("nope", "x")
    with pytest.raises(MemoryNotFound):
        mem.confirm("nope")
    with pytest.raises(MemoryNotFound):
        mem.invalidate("nope", reason="x")
    with pytest.raises(ValueError):  # mem0's own contract: delete of an unknown id is a ValueError
        mem.delete("nope")


def test_invalidate_hides_and_keeps_for_audit(mem, clock):
    mid = mem.add("The office wifi password rotates monthly", **SCOPE, infer=False)["results"][0]["id"]
    mem.invalidate(mid, reason="IT says it is quarterly")
    assert mem.get_all(filters=SCOPE)["results"] == []
    item = mem.get(mid)
    assert item["hygiene"]["state"] == "invalidated"
    assert item["hygiene"]["invalid_reason"] == "IT says it is quarterly"
