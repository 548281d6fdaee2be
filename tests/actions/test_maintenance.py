"""The maintenance library (mem0_hygiene.maintenance): prune with unused memories and ledger compaction,
auto_prune inside the app's calls, review answers, digest, a memory's story, opening a store from
outside the app. Real stores throughout: local Qdrant on disk, SQLite files, a real second process
holding the Qdrant lock."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from mem0_hygiene import Memory, StoreLocked, maintenance, offline_config
from mem0_hygiene.errors import ConfigError, MemoryNotFound, StateError

SCOPE = {"user_id": "dana"}


def add(m: Memory, text: str, **kwargs: Any) -> str:
    kwargs.setdefault("source", "chat 2026-08-01")
    return str(m.add(text, **SCOPE, infer=False, **kwargs)["results"][0]["id"])


def history_events(folder: Path) -> dict[str, list[str]]:
    with sqlite3.connect(folder / "history.db") as conn:
        out: dict[str, list[str]] = {}
        for mid, event in conn.execute("SELECT memory_id, event FROM history ORDER BY rowid"):
            out.setdefault(mid, []).append(event)
        return out


def render(obj: Any) -> str:
    console = Console(width=240, record=True, color_system=None)
    console.print(obj)
    return console.export_text()


@pytest.fixture
def holder(make_deployment: Any, tmp_path: Path, hold_qdrant_lock: Any) -> Path:
    """A real second process (the "running app") holding the store's local Qdrant folder."""
    d = make_deployment(
        tmp_path / "store", hygiene={}, plant=lambda m: m.add("held fact", **SCOPE, infer=False, source="chat")
    )
    hold_qdrant_lock(d.folder / "qdrant")
    return d.folder


# ------------------------------------------------------------------------------------------------ opening


def test_open_memory_refuses_a_store_another_process_holds(holder: Path):
    with pytest.raises(StoreLocked) as err:
        maintenance.open_memory(offline_config(holder), action="prune")
    text = str(err.value)
    assert str(holder / "qdrant") in text
    assert "stop the app" in text and "prune(m)" in text and "auto_prune" in text
    with pytest.raises(StoreLocked):
        maintenance.prune(offline_config(holder))


def test_in_process_prune_works_while_the_app_holds_the_store(make_memory, clock, tmp_path):
    app = make_memory()  # the running app: it holds the folder's lock
    gone = add(app, "On call this week", ttl="7d")
    keep = add(app, "Lives in Haifa")
    clock.advance(days=8)
    with pytest.raises(StoreLocked):  # from outside: refused...
        maintenance.prune(offline_config(tmp_path / "store"))
    result = maintenance.prune(app)  # ...in-process: fine
    assert [(p.memory_id, p.reason) for p in result.memories] == [(gone, "expired")]
    assert app.get(gone) is None and app.get(keep) is not None
    assert history_events(tmp_path / "store")[gone][-1] == "DELETE"


def test_open_memory_for_new_text_needs_the_apps_embedder(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = offline_config(tmp_path / "store")
    config["embedder"] = {"provider": "openai", "config": {"model": "text-embedding-3-small"}}
    with pytest.raises(maintenance.EmbedderUnavailable) as err:
        maintenance.open_memory(config, for_writing_text=True, must_exist=False)
    assert "OPENAI_API_KEY" in str(err.value) and "openai text-embedding-3-small" in str(err.value)
    assert not (tmp_path / "store").exists()  # refused before any store was opened or created
    with pytest.raises(maintenance.StoreMissing, match="no local Qdrant store"):
        maintenance.open_memory(config)
    assert not (tmp_path / "store").exists()
    m = maintenance.open_memory(config, must_exist=False)  # reading and deleting: no key needed
    try:
        assert m.hygiene_settings.auto_prune is None
    finally:
        m.close()


def test_targets_must_be_the_drop_in_or_a_config(tmp_path, plain_mem0, close_plain):
    plain = plain_mem0(tmp_path / "plain")
    try:
        with pytest.raises(ConfigError, match="drop-in"):
            maintenance.prune(plain)
    finally:
        close_plain(plain)
    with pytest.raises(ConfigError):
        maintenance.prune(42)


# ------------------------------------------------------------------------------------------------ prune


def test_prune_unused_lists_then_deletes_through_mem0(make_memory, clock, tmp_path):
    m = make_memory()
    stale = add(m, "Prefers tabs")
    used = add(m, "Prefers dark mode")
    confirmed = add(m, "Works from Haifa")
    clock.advance(days=170)
    assert m.search("dark mode", filters=SCOPE, top_k=1)["results"][0]["id"] == used
    m.confirm(confirmed)
    clock.advance(days=20)
    fresh = add(m, "Started learning Go")

    listed = maintenance.prune(m, unused="180d")
    assert [p.memory_id for p in listed.unused] == [stale]
    assert listed.unused[0].text == "Prefers tabs" and listed.unused[0].reason == "unused"
    assert listed.unused_older_than == "180d" and not listed.unused_deleted
    assert m.get(stale) is not None  # listed only

    dry = maintenance.prune(m, unused="180d", delete_unused=True, dry_run=True)
    assert [p.memory_id for p in dry.unused] == [stale] and not dry.unused_deleted
    assert m.get(stale) is not None

    done = maintenance.prune(m, unused="180d", delete_unused=True)
    assert done.unused_deleted and [p.memory_id for p in done.unused] == [stale]
    assert m.get(stale) is None
    assert all(m.get(i) is not None for i in (used, confirmed, fresh))
    assert history_events(tmp_path / "store")[stale] == ["ADD", "DELETE"]
    data = done.to_dict()
    assert data["unused"][0]["memory_id"] == stale and data["unused_deleted"] is True

    with pytest.raises(ConfigError, match="unused"):
        maintenance.prune(m, delete_unused=True)


def test_prune_compacts_old_tombstones_with_secure_delete(make_memory, clock, tmp_path):
    m = make_memory(retain_superseded="30d")
    marker = "chat-SECRET-MARKER-7731"
    victim = add(m, "Temporary fact", source=marker)
    m.delete(victim)
    ledger_file = Path(m.ledger_path)
    clock.advance(days=10)
    assert maintenance.prune(m).tombstones_purged == 0  # too recent: still guards against a restore
    assert m.ledger.get(victim) is not None

    clock.advance(days=25)
    dry = maintenance.prune(m, dry_run=True)
    assert dry.tombstones_purged == 1 and m.ledger.get(victim) is not None
    result = maintenance.prune(m)
    assert result.tombstones_purged == 1
    assert m.ledger.get(victim) is None
    raw = ledger_file.read_bytes() + (
        Path(str(ledger_file) + "-wal").read_bytes() if Path(str(ledger_file) + "-wal").exists() else b""
    )
    assert marker.encode() not in raw  # overwritten, not left in a free page
    assert victim.encode() not in raw


def test_compaction_deletes_a_point_that_came_back_before_dropping_its_tombstone(make_memory, clock, tmp_path):
    m = make_memory(retain_superseded="30d")
    back = add(m, "Deleted once, restored by an old snapshot")
    m.flush()  # the new row is buffered until then
    m.ledger.tombstone([back], clock())  # the tombstone is there, and so is the point
    assert m.get(back)["hygiene"]["state"] == "deleted"
    clock.advance(days=31)
    dry = maintenance.prune(m, dry_run=True)
    assert dry.leftovers == (back,) and m.get(back) is not None
    result = maintenance.prune(m)
    assert result.leftovers == (back,) and result.tombstones_purged == 1
    assert m.get(back) is None  # gone from the store first: the purged tombstone cannot resurrect it
    assert m.ledger.get(back) is None
    assert history_events(tmp_path / "store")[back][-1] == "DELETE"
    m.adopt()
    assert m.get_all(filters=SCOPE)["results"] == []


def test_prune_result_renders_as_table_html_and_json(make_memory, clock):
    m = make_memory()
    add(m, "<script>alert(1)</script> on call", ttl="1d")
    clock.advance(days=2)
    result = maintenance.prune(m, dry_run=True)
    assert isinstance(result.__rich__(), Table)
    text = render(result)
    assert "expired" in text and "would delete 1 memory" in text
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert result.to_dict()["by_reason"] == {"expired": 1}


# ------------------------------------------------------------------------------------------------ auto_prune


def test_auto_prune_runs_once_per_interval_one_step_per_call(make_memory, clock):
    m = make_memory(auto_prune="24h")
    add(m, "first call of the day starts a run")  # nothing to do yet: the run ends at once
    a = add(m, "Parking spot B12", ttl="1h")
    b = add(m, "Parking spot C3", ttl="1h")
    clock.advance(hours=2)
    m.search("parking", filters=SCOPE)
    assert m.get(a) is not None and m.get(b) is not None  # expired, hidden, but not due yet
    clock.advance(hours=23)
    m.search("parking", filters=SCOPE)  # due: one deletion in this call
    assert [m.get(i) is None for i in (a, b)].count(True) == Memory.AUTO_PRUNE_STEP == 1
    m.search("parking", filters=SCOPE)  # the run goes on in the next call
    assert m.get(a) is None and m.get(b) is None
    c = add(m, "Parking spot D9", ttl="1h")
    clock.advance(hours=2)
    for _ in range(3):
        m.search("parking", filters=SCOPE)
    assert m.get(c) is not None  # the run ended; the next one starts a day after the last began
    clock.advance(hours=22)
    m.search("parking", filters=SCOPE)
    assert m.get(c) is None


def test_auto_prune_never_raises_into_the_apps_call(make_memory, clock, tmp_path, caplog):
    m = make_memory(auto_prune="24h")
    mid = add(m, "Parking spot B12", ttl="1h")
    clock.advance(hours=25)
    with sqlite3.connect(tmp_path / "store" / "history.db") as conn:  # mem0's DELETE record will fail
        conn.execute("ALTER TABLE history RENAME TO history_moved")
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene.memory.core"):
        res = m.search("parking", filters=SCOPE)
    assert res["results"] == []  # the app's call answered as usual
    assert "auto_prune failed" in caplog.text
    caplog.clear()
    with sqlite3.connect(tmp_path / "store" / "history.db") as conn:
        conn.execute("ALTER TABLE history_moved RENAME TO history")
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene.memory.core"):
        m.search("parking", filters=SCOPE)
        assert caplog.text == ""  # no retry before the interval
    assert m.get(mid) is None or m.get(mid)["hygiene"]["state"] == "deleted"


def test_auto_prune_skips_when_another_step_is_running(make_memory, clock):
    m = make_memory(auto_prune="24h")
    mid = add(m, "Parking spot B12", ttl="1h")
    clock.advance(hours=25)
    assert m._auto_prune_lock.acquire(blocking=False)  # as if another thread were in a step
    try:
        m.search("parking", filters=SCOPE)
        assert m.get(mid) is not None
    finally:
        m._auto_prune_lock.release()
    m.search("parking", filters=SCOPE)
    assert m.get(mid) is None


def test_maintenance_opened_memory_never_auto_prunes(tmp_path, clock):
    config = offline_config(tmp_path / "store", hygiene={"auto_prune": "1h", "clock": clock})
    m = maintenance.open_memory(config, must_exist=False)
    try:
        mid = add(m, "Parking", ttl="1h")
        clock.advance(hours=5)
        m.search("parking", filters=SCOPE)
        assert m.get(mid) is not None
    finally:
        m.close()


# ------------------------------------------------------------------------------------------------ review


def test_review_queue_and_answers(make_memory, clock):
    m = make_memory()
    ids = []
    for i in range(3):
        ids.append(add(m, f"standing fact {i}", source=f"chat {i}"))
        clock.advance(hours=1)
    clock.advance(days=100)
    queue = maintenance.review_queue(m, older_than="90d", limit=2)
    assert [i.memory_id for i in queue.items] == ids[:2]
    assert queue.items[0].text == "standing fact 0" and queue.items[0].source == "chat 0"
    assert queue.items[0].age_days == 100.1 and queue.items[0].scope == SCOPE
    assert "standing fact 0" in render(queue) and "standing fact 0" in queue._repr_html_()

    dry = maintenance.confirm(m, [ids[0]], dry_run=True)
    assert dry.dry_run and dry.changes[0].state_after == "live"
    assert m.get(ids[0])["hygiene"]["age_days"] == 100.1

    done = maintenance.confirm(m, [ids[0]])
    assert done.changes[0].action == "confirm" and m.get(ids[0])["hygiene"]["age_days"] == 0.0
    inv = maintenance.invalidate(m, ids[1], "moved to Rust")
    assert inv.changes[0].state_after == "invalidated"
    assert m.get(ids[1])["hygiene"]["invalid_reason"] == "moved to Rust"
    sup = maintenance.supersede(m, ids[2], "standing fact 2, revised", source="review 2026-11-09")
    new_id = sup.changes[0].new_id
    assert new_id and m.get(ids[2])["hygiene"]["superseded_by"] == new_id
    assert m.get(new_id)["hygiene"]["source"] == "review 2026-11-09"
    served = {r["memory"] for r in m.get_all(filters=SCOPE)["results"]}
    assert served == {"standing fact 0", "standing fact 2, revised"}
    assert [i.memory_id for i in maintenance.review_queue(m).items] == []


def test_confirm_checks_every_id_before_changing_any(make_memory, clock):
    m = make_memory()
    good = add(m, "fact one")
    bad = add(m, "fact two")
    m.invalidate(bad, "wrong")
    clock.advance(days=100)
    with pytest.raises(StateError, match="invalidated"):
        maintenance.confirm(m, [good, bad])
    assert m.get(good)["hygiene"]["age_days"] == 100.0  # untouched
    with pytest.raises(MemoryNotFound):
        maintenance.confirm(m, ["00000000-0000-0000-0000-000000000000"])
    with pytest.raises(ConfigError, match="reason"):
        maintenance.invalidate(m, good, "  ")
    with pytest.raises(StateError, match="invalidated"):
        maintenance.supersede(m, bad, "something")


# ------------------------------------------------------------------------------------------------ digest


def test_digest_puts_tool_sourced_first_and_respects_since(make_memory, clock, tmp_path):
    m = make_memory(trust_tool_output=True)
    add(m, "Old fact", source="chat 2026-07-01")
    clock.advance(days=2)
    user = add(m, "Prefers pnpm", source="chat 2026-08-03")
    clock.advance(hours=1)
    tool = add(m, "The deploy key is in /srv/keys", source="tool:web_fetch https://example.com/x")
    clock.advance(hours=1)

    d = maintenance.digest(m, since="1d")
    assert [i.memory_id for i in d.items] == [tool, user]
    assert d.items[0].tool_sourced and d.items[0].state == "quarantined"
    assert d.items[0].text == "The deploy key is in /srv/keys"
    assert d.items[1].source == "chat 2026-08-03" and d.items[1].state == "live"
    assert d.counts() == {"tool": 1, "user": 1}
    assert len(maintenance.digest(m, since="3d")) == 3
    assert len(maintenance.digest(m, since="2026-08-03T09:30:00+00:00")) == 1
    text = render(d)
    assert text.index("/srv/keys") < text.index("Prefers pnpm")
    with pytest.raises(ConfigError, match="duration"):
        maintenance.digest(m, since="yesterday")


def test_digest_from_config_reads_sqlite_only_and_sees_plain_mem0_writes(holder: Path):
    d = maintenance.digest(offline_config(holder), since="1d")  # the store is locked: not needed
    assert [i.text for i in d.items] == ["held fact"]
    assert d.items[0].source == "chat"


def test_digest_lists_untracked_writes_of_plain_mem0(tmp_path, plain_mem0, close_plain):
    plain = plain_mem0(tmp_path / "store")
    plain.add("written around the wrapper", user_id="dana", infer=False)
    close_plain(plain)
    d = maintenance.digest(offline_config(tmp_path / "store"), since="1d")
    assert [(i.text, i.state, i.source_kind) for i in d.items] == [
        ("written around the wrapper", "untracked", "unknown")
    ]


# ------------------------------------------------------------------------------------------------ story


def test_story_shows_the_chain_both_ways_oldest_first(make_memory, clock, tmp_path):
    m = make_memory()
    a = add(m, "Uses npm", source="chat 2026-08-01")
    clock.advance(days=1)
    b = m.supersede(a, "Uses pnpm", source="chat 2026-08-02")
    clock.advance(days=1)
    c = m.supersede(b, "Uses bun", source="chat 2026-08-03")
    clock.advance(days=1)
    m.confirm(c)

    story = maintenance.memory_story(m, b)
    assert [(link.memory_id, link.position, link.state) for link in story.chain] == [
        (a, -1, "superseded"),
        (b, 0, "superseded"),
        (c, 1, "live"),
    ]
    seen = [(e.memory_id, e.event) for e in story.events]
    assert seen == [
        (a, "ADD"),
        (a, "recorded"),
        (b, "ADD"),
        (b, "recorded"),
        (a, "superseded"),
        (c, "ADD"),
        (c, "recorded"),
        (b, "superseded"),
        (c, "confirmed"),
    ]
    times = [e.at for e in story.events]
    assert times == sorted(times)
    assert story.events[4].detail == f"by {b}"
    assert "Uses pnpm" in render(story) and f"{a}" in story._repr_html_()

    same = maintenance.memory_story(offline_config(tmp_path / "store", hygiene={"clock": clock}), b)
    assert [(e.memory_id, e.event) for e in same.events] == seen  # from the files, no vector store
    ids = [link.memory_id for link in story.chain]
    assert [link.memory_id for link in maintenance.memory_story(m, a).chain] == ids
    assert [link.memory_id for link in maintenance.memory_story(m, c).chain] == ids

    with pytest.raises(MemoryNotFound):
        maintenance.memory_story(m, "00000000-0000-0000-0000-000000000000")


def test_story_includes_invalidation_and_deletion(make_memory, clock):
    m = make_memory()
    mid = add(m, "Staging is down", source="chat")
    clock.advance(hours=1)
    m.invalidate(mid, "back up")
    story = maintenance.memory_story(m, mid)
    assert [e.event for e in story.events] == ["ADD", "recorded", "invalidated"]
    assert story.events[-1].detail == "reason: back up"
    m.delete(mid)
    events = [e.event for e in maintenance.memory_story(m, mid).events]
    assert "tombstoned" in events and "DELETE" in events
