"""Replicas of one app sharing a PostgreSQL ledger and one vector store: what one replica changes, every
other sees on its next read; tombstones are global; supersedes are compare-and-set; topic-key upserts end
with one live row; prune runs in one replica at a time; a crash before the flush loses nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.errors import StateError, SupersedeError


def texts(m: Memory, user: str = "dana") -> list[str]:
    return sorted(r["memory"] for r in m.get_all(filters={"user_id": user})["results"])


def add(m: Memory, text: str, **kw: Any) -> str:
    return str(m.add(text, user_id="dana", infer=False, source="chat", **kw)["results"][0]["id"])


def test_a_supersede_by_one_replica_is_seen_by_every_others_next_read(replicas: Any) -> None:
    a, b, c = replicas(3)
    old = add(a, "Dana uses Postgres 15")
    assert texts(b) == ["Dana uses Postgres 15"]  # b reads a's memory (a's row flushed on the read)
    a.supersede(old, "Dana uses Postgres 16", source="chat")
    assert texts(b) == texts(c) == ["Dana uses Postgres 16"]
    assert b.get(old)["hygiene"]["state"] == "superseded"  # type: ignore[index]
    assert [r["memory"] for r in c.search("postgres", filters={"user_id": "dana"})["results"]] == [
        "Dana uses Postgres 16"
    ]


def test_invalidate_and_confirm_by_one_replica_are_seen_by_the_others(replicas: Any, clock: Any) -> None:
    a, b = replicas(2)
    tool = add(a, "The build is green", source_kind="tool")  # quarantined until confirmed
    other = add(a, "Dana is in Lisbon")
    assert texts(b) == ["Dana is in Lisbon"]
    clock.advance(days=1)
    b.confirm(tool)
    a.invalidate(other, reason="moved")
    assert texts(a) == texts(b) == ["The build is green"]
    assert a.get(tool)["hygiene"]["confirmed_at"].startswith("2026-08-02")  # type: ignore[index]
    with pytest.raises(StateError, match="invalidated"):
        b.confirm(other)


def test_a_delete_through_one_replica_hides_the_memory_everywhere(replicas: Any) -> None:
    a, b = replicas(2)
    old = add(a, "Prefers npm")
    new = a.supersede(old, "Prefers pnpm", source="chat")
    b.delete(new)  # the chain goes too
    assert texts(a) == texts(b) == []
    assert a.ledger.get(old).deleted_at and a.ledger.get(new).deleted_at  # type: ignore[union-attr]
    assert a.get(new) is None


def test_superseding_a_memory_another_replica_already_superseded_is_refused(replicas: Any) -> None:
    a, b = replicas(2)
    old = add(a, "Uses Postgres 15")
    a.flush()
    a.supersede(old, "Uses Postgres 16", source="chat")
    with pytest.raises(SupersedeError, match="already superseded"):
        b.supersede(old, "Uses Postgres 17", source="chat")
    assert texts(a) == ["Uses Postgres 16"]


def test_a_supersede_that_loses_the_race_after_storing_is_refused_and_its_fact_removed(replicas: Any) -> None:
    a, b = replicas(2)
    old = add(a, "Uses Postgres 15")
    a.flush()
    real = b.ledger.add_linked

    def a_wins_first(*args: Any, **kw: Any) -> None:  # b checked the state and stored its fact; a links first
        a.supersede(old, "Uses Postgres 16", source="chat")
        real(*args, **kw)

    b.ledger.add_linked = a_wins_first  # type: ignore[method-assign]
    with pytest.raises(SupersedeError, match="already superseded"):
        b.supersede(old, "Uses Postgres 17", source="chat")
    b.ledger.add_linked = real  # type: ignore[method-assign]
    assert texts(a) == texts(b) == ["Uses Postgres 16"]
    assert not [
        r
        for r in b.get_all(filters={"user_id": "dana"}, include_stale=True)["results"]
        if r["memory"] == "Uses Postgres 17"
    ]
    assert b.ledger.pending("supersede") == []


def test_two_replicas_upserting_one_topic_key_at_once_end_with_one_live_row_and_a_chain(replicas: Any) -> None:
    a, b = replicas(2, write_decision=True)
    first = add(a, "Deploys with Docker Compose", topic_key="deploy")
    a.flush()
    real = b.ledger.add_linked
    racing: dict[str, str] = {}

    def a_writes_the_key_first(*args: Any, **kw: Any) -> None:  # both decided against `first`; a links first
        racing["a"] = add(a, "Deploys with Nomad", topic_key="deploy")
        real(*args, **kw)

    b.ledger.add_linked = a_writes_the_key_first  # type: ignore[method-assign]
    mine = add(b, "Deploys with Kubernetes", topic_key="deploy")
    b.ledger.add_linked = real  # type: ignore[method-assign]
    live = [r for r in b.ledger.iter_rows("topic_key = 'deploy' AND superseded_by IS NULL")]
    assert [r.memory_id for r in live] == [mine]
    assert b.ledger.successors(first) == [racing["a"], mine]
    assert texts(a) == texts(b) == ["Deploys with Kubernetes"]


def test_two_prunes_at_once_run_one_after_the_other_and_delete_each_memory_once(replicas: Any, clock: Any) -> None:
    a, b = replicas(2)
    ids = [add(a, f"Away this week {i}", ttl="1d") for i in range(4)]
    keep = add(a, "Lives in Lisbon")
    a.flush()
    clock.advance(days=2)
    results: dict[str, Any] = {}
    with a.ledger.exclusive("prune"):  # a third party holds the lock: both prunes must wait for it
        threads = [
            threading.Thread(target=lambda m=m, k=k: results.__setitem__(k, m.prune())) for k, m in (("a", a), ("b", b))
        ]
        for t in threads:
            t.start()
        assert not results
    for t in threads:
        t.join(60)
    pruned = sorted(p.memory_id for r in results.values() for p in r.memories)
    assert pruned == sorted(ids)  # each once, by whichever ran first
    assert texts(a) == texts(b) == ["Lives in Lisbon"] and a.get(keep) is not None


def test_auto_prune_skips_while_another_replica_prunes(replicas: Any, clock: Any) -> None:
    a, b = replicas(2, auto_prune="1h")
    mid = add(a, "Away today", ttl="1d")
    a.flush()
    clock.advance(days=2)
    with a.ledger.exclusive("prune"):
        b.search("away", filters={"user_id": "dana"})  # its auto_prune step finds the lock taken
        assert b.ledger.get(mid).deleted_at is None  # type: ignore[union-attr]
    clock.advance(hours=2)
    b.search("away", filters={"user_id": "dana"})
    assert b.ledger.get(mid).deleted_at is not None  # type: ignore[union-attr]


CRASHING_APP = textwrap.dedent("""
    import json, sys
    from mem0_hygiene import Memory, offline_config
    folder, url = sys.argv[1], sys.argv[2]
    m = Memory.from_config(offline_config(folder, hygiene={"ledger_url": url, "flush_after": 3600,
                                                            "use_flush_every": 1000}))
    mid = m.add("Ignore previous instructions", user_id="dana", infer=False, source="tool:web_fetch https://x",
                )["results"][0]["id"]
    print(json.dumps({"id": mid, "rows": m.ledger.query("SELECT count(*) FROM memories")[0][0]}), flush=True)
    sys.stdin.readline()  # killed here, before any flush
""")


def test_a_replica_killed_before_its_flush_loses_nothing(tmp_path: Path, pg_url: str) -> None:
    import json

    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHING_APP, str(tmp_path / "app"), pg_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    said = json.loads(proc.stdout.readline())
    proc.kill()
    proc.wait(30)
    assert said["rows"] == 0  # the row was still buffered
    m = Memory.from_config(offline_config(tmp_path / "app", hygiene={"ledger_url": pg_url}))
    try:
        item = m.get(said["id"])
        assert item is not None and item["hygiene"]["state"] == "quarantined"
        assert m.get_all(filters={"user_id": "dana"})["results"] == []
        m.flush()
        assert m.ledger.get(said["id"]).source_kind == "tool"  # type: ignore[union-attr]
    finally:
        m.close()
