"""Time travel: ``as_of`` answers "what did the agent believe at T" from the superseded and invalidated
memories that stay in the store until prune; ``since``/``until`` select by creation time."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mem0_hygiene import ConfigError

SCOPE = {"user_id": "dana"}


def texts(result):
    return [r["memory"] for r in result["results"]]


def believed(m, when, query="which database does the API use"):
    return sorted(texts(m.search(query, filters=SCOPE, as_of=when))), sorted(
        texts(m.get_all(filters=SCOPE, as_of=when))
    )


def test_as_of_walks_a_supersede_chain(mem, clock):
    day0 = clock()
    v1 = mem.add("The API database is Postgres 13", **SCOPE, infer=False)["results"][0]["id"]
    clock.advance(days=10)
    day10 = clock()
    v2 = mem.supersede(v1, "The API database is Postgres 15")
    clock.advance(days=10)
    day20 = clock()
    mem.supersede(v2, "The API database is Postgres 16")
    clock.advance(days=1)

    assert believed(mem, day0 - timedelta(hours=1)) == ([], [])  # before anything was written
    assert believed(mem, day0) == (["The API database is Postgres 13"],) * 2
    assert believed(mem, day0 + timedelta(days=5)) == (["The API database is Postgres 13"],) * 2
    assert believed(mem, day10 - timedelta(seconds=1)) == (["The API database is Postgres 13"],) * 2
    assert believed(mem, day10) == (["The API database is Postgres 15"],) * 2  # the switch happens at T
    assert believed(mem, (day10 + timedelta(days=5)).isoformat()) == (["The API database is Postgres 15"],) * 2
    assert believed(mem, day20 + timedelta(hours=1)) == (["The API database is Postgres 16"],) * 2
    assert sorted(texts(mem.get_all(filters=SCOPE))) == ["The API database is Postgres 16"]  # now, as before
    # each item still says what it is now
    past = mem.get_all(filters=SCOPE, as_of=day0 + timedelta(days=1))["results"]
    assert past[0]["hygiene"]["state"] == "superseded" and past[0]["hygiene"]["superseded_by"] == v2


def test_as_of_across_a_chain_built_by_the_write_decision(make_memory, clock):
    m = make_memory(write_decision=True)
    m.add("Standup is at 09:30 every weekday", **SCOPE, infer=False)
    clock.advance(days=7)
    week1 = clock()
    res = m.add("Standup is at 10:00 every weekday", **SCOPE, infer=False)["results"]
    assert res[0]["event"] == "UPDATE"
    clock.advance(days=7)
    res = m.add("We stopped doing the weekday standup", **SCOPE, infer=False)["results"]
    assert [r["event"] for r in res] == ["ADD", "DELETE"]
    q = "when is standup"
    assert texts(m.search(q, filters=SCOPE, as_of=week1 - timedelta(days=1))) == ["Standup is at 09:30 every weekday"]
    assert texts(m.search(q, filters=SCOPE, as_of=week1 + timedelta(days=1))) == ["Standup is at 10:00 every weekday"]
    assert texts(m.search(q, filters=SCOPE)) == ["We stopped doing the weekday standup"]


def test_invalidated_and_expired_memories_drop_out_at_their_time(mem, clock):
    start = clock()
    wrong = mem.add("Dana is allergic to cats", **SCOPE, infer=False)["results"][0]["id"]
    mem.add("Dana is travelling this week", **SCOPE, infer=False, ttl="7d")
    clock.advance(days=3)
    mem.invalidate(wrong, "she was not")
    clock.advance(days=10)
    at = start + timedelta(days=1)
    assert sorted(texts(mem.get_all(filters=SCOPE, as_of=at))) == [
        "Dana is allergic to cats",
        "Dana is travelling this week",
    ]
    assert texts(mem.get_all(filters=SCOPE, as_of=start + timedelta(days=5))) == ["Dana is travelling this week"]
    assert texts(mem.get_all(filters=SCOPE, as_of=start + timedelta(days=8))) == []
    assert texts(mem.get_all(filters=SCOPE, as_of=start + timedelta(days=8), show_expired=True)) == [
        "Dana is travelling this week"
    ]


def test_deleted_memories_never_come_back_even_for_the_past(mem, clock):
    start = clock()
    gone = mem.add("Dana's door code is 4711", **SCOPE, infer=False)["results"][0]["id"]
    clock.advance(days=2)
    mem.delete(gone)
    assert texts(mem.get_all(filters=SCOPE, as_of=start + timedelta(days=1))) == []


def test_a_tool_fact_counts_from_its_release(make_memory, clock):
    m = make_memory(trust_tool_output=True)
    start = clock()
    mid = m.add(
        "The staging VPN is vpn2.example.invalid",
        **SCOPE,
        infer=False,
        source="tool:web_fetch https://wiki.example.invalid",
    )["results"][0]["id"]
    assert texts(m.get_all(filters=SCOPE, as_of=start + timedelta(days=1))) == []  # still quarantined
    clock.advance(days=5)
    m.confirm(mid)
    clock.advance(days=1)
    assert texts(m.get_all(filters=SCOPE, as_of=start + timedelta(days=2))) == []  # confirmed only on day 5
    assert texts(m.get_all(filters=SCOPE, as_of=clock())) == ["The staging VPN is vpn2.example.invalid"]


def test_since_and_until_select_by_creation_time(mem, clock):
    start = clock()
    for day, text in (
        (0, "Sprint 1 goal: billing export"),
        (5, "Sprint 2 goal: search filters"),
        (10, "Sprint 3 goal: audit log"),
    ):
        clock.current = start + timedelta(days=day)
        mem.add(text, **SCOPE, infer=False)
    clock.advance(days=1)
    window = {"filters": SCOPE}
    assert sorted(texts(mem.get_all(**window, since=start + timedelta(days=3)))) == [
        "Sprint 2 goal: search filters",
        "Sprint 3 goal: audit log",
    ]
    assert texts(mem.get_all(**window, until=start + timedelta(days=5))) == ["Sprint 1 goal: billing export"]
    assert texts(mem.get_all(**window, since=start + timedelta(days=5), until=start + timedelta(days=10))) == [
        "Sprint 2 goal: search filters"
    ]  # since inclusive, until exclusive
    assert texts(mem.search("sprint goal", **window, since=(start + timedelta(days=9)).date().isoformat())) == [
        "Sprint 3 goal: audit log"
    ]


def test_since_keeps_the_state_filter_unless_asked(mem, clock):
    start = clock()
    old = mem.add("Uses npm", **SCOPE, infer=False)["results"][0]["id"]
    clock.advance(days=1)
    mem.supersede(old, "Uses pnpm")
    assert texts(mem.get_all(filters=SCOPE, since=start)) == ["Uses pnpm"]
    both = mem.get_all(filters=SCOPE, since=start, include_stale=True)["results"]
    assert sorted((r["memory"], r["hygiene"]["state"]) for r in both) == [
        ("Uses npm", "superseded"),
        ("Uses pnpm", "live"),
    ]
    assert texts(mem.get_all(filters=SCOPE, since=start + timedelta(hours=1), include_stale=True)) == ["Uses pnpm"]


def test_as_of_fills_the_page_past_many_newer_memories(mem, clock):
    start = clock()
    for i in range(6):
        mem.add(f"Old fact number {i} about the billing service", **SCOPE, infer=False)
    clock.advance(days=1)
    for i in range(12):
        mem.add(f"New fact number {i} about the billing service", **SCOPE, infer=False)
    page = mem.search("billing service fact", filters=SCOPE, top_k=4, as_of=start + timedelta(hours=1))["results"]
    assert len(page) == 4 and all(r["memory"].startswith("Old fact") for r in page)
    assert len(mem.get_all(filters=SCOPE, top_k=5, as_of=start)["results"]) == 5


def test_a_question_about_the_past_is_not_a_use(mem, clock):
    mid = mem.add("Prefers tea", **SCOPE, infer=False)["results"][0]["id"]
    clock.advance(days=1)
    mem.search("tea", filters=SCOPE, as_of=clock())
    mem.flush()
    assert mem.ledger.get(mid).use_count == 0
    mem.search("tea", filters=SCOPE)
    mem.flush()
    assert mem.ledger.get(mid).use_count == 1


def test_bad_windows_are_refused(mem, clock):
    with pytest.raises(ConfigError, match="must be before until"):
        mem.get_all(filters=SCOPE, since=clock(), until=clock())
    with pytest.raises(ConfigError, match="not an ISO date"):
        mem.search("tea", filters=SCOPE, as_of="last tuesday")
