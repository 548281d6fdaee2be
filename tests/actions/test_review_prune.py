"""Review queue (oldest confirmations first) and prune (through mem0's API, with a dry run)."""

from __future__ import annotations

import sqlite3

from mem0_hygiene import format_for_prompt

SCOPE = {"user_id": "dana"}


def test_review_queue_orders_oldest_confirmation_first_and_limits(mem, clock):
    ids = []
    for i in range(5):
        ids.append(mem.add(f"standing fact {i}", **SCOPE, infer=False)["results"][0]["id"])
        clock.advance(days=10)
    mem.add("temporary fact", **SCOPE, infer=False, ttl="365d")  # expiring: decays, not reviewed
    clock.advance(days=100)
    mem.confirm(ids[0])  # re-checked today: leaves the queue
    queue = mem.review_queue(limit=3)
    assert [q["id"] for q in queue] == ids[1:4]
    assert all(q["hygiene"]["age_days"] > 90 for q in queue)
    assert [q["id"] for q in mem.review_queue(older_than="120d")] == ids[1:3]


def test_prune_deletes_expired_and_old_superseded_through_mem0(make_memory, clock, tmp_path):
    mem = make_memory(retain_superseded="30d")
    exp = mem.add("On call this week", **SCOPE, infer=False, ttl="7d")["results"][0]["id"]
    old = mem.add("Uses npm", **SCOPE, infer=False)["results"][0]["id"]
    new = mem.supersede(old, "Uses pnpm")
    keep = mem.add("Lives in Haifa", **SCOPE, infer=False)["results"][0]["id"]

    clock.advance(days=8)
    dry = mem.prune(dry_run=True)
    assert [(p.memory_id, p.reason) for p in dry.memories] == [(exp, "expired")]
    assert mem.get(exp) is not None  # dry run deleted nothing

    clock.advance(days=30)
    result = mem.prune()
    assert sorted((p.memory_id, p.reason) for p in result.memories) == sorted([(exp, "expired"), (old, "superseded")])
    assert mem.get(exp) is None and mem.get(old) is None
    assert mem.get(new) is not None and mem.get(keep) is not None
    history = sqlite3.connect(tmp_path / "store" / "history.db")
    events = dict(history.execute("SELECT memory_id, group_concat(event) FROM history GROUP BY memory_id"))
    assert events[exp].endswith("DELETE") and events[old].endswith("DELETE")
    assert mem.prune().count == 0


def test_auto_prune_runs_at_most_once_per_interval(make_memory, clock):
    mem = make_memory(auto_prune="24h")
    mid = mem.add("Parking spot B12 today", **SCOPE, infer=False, ttl="12h")["results"][0]["id"]
    clock.advance(hours=13)
    mem.search("parking", filters=SCOPE)
    assert mem.get(mid) is not None  # expired, hidden, but the interval has not passed yet
    clock.advance(hours=12)
    mem.search("parking", filters=SCOPE)
    assert mem.get(mid) is None


def test_format_for_prompt_gives_each_memory_its_age(mem, clock):
    mem.add("Uses pnpm", **SCOPE, infer=False, source="chat")
    mem.add("Travelling until Friday", **SCOPE, infer=False, ttl="3d")
    text = format_for_prompt(mem.get_all(filters=SCOPE))
    assert sorted(text.splitlines()) == [
        "- Travelling until Friday (confirmed 2026-08-01, until 2026-08-04)",
        "- Uses pnpm (confirmed 2026-08-01)",
    ]
    assert (
        format_for_prompt([{"memory": "plain", "created_at": "2026-01-02T00:00:00"}]) == "- plain (recorded 2026-01-02)"
    )
