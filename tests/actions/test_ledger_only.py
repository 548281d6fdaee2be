"""confirm, invalidate, the review queue, digest and a memory's story from outside the app need only the ledger
and history.db: they succeed while a real second process holds the local Qdrant folder, open no Qdrant client
at all, write each change in one compare-and-set ledger transaction, and give the same rows and the same output
as the route through the app's own drop-in Memory. A memory without a ledger row still needs the store."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import qdrant_client
from rich.console import Console

from mem0_hygiene import Memory, maintenance, offline_config
from mem0_hygiene.errors import MemoryNotFound, StateError, StoreLocked
from mem0_hygiene.stores.ledger import COLUMNS, open_ledger

SCOPE = {"user_id": "dana"}
_B62 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6"
KEY = f"sk-proj-{_B62[:48]}"  # fabricated, of a kind the write guard's scanner knows


def add(m: Memory, text: str, **kwargs: Any) -> str:
    kwargs.setdefault("source", "chat 2026-08-01")
    return str(m.add(text, **SCOPE, infer=False, **kwargs)["results"][0]["id"])


def plant(m: Memory) -> dict[str, str]:
    ids = {
        "tool": add(m, "Build uses Bazel", source="tool:web_fetch https://example.com"),
        "live": add(m, "Staging is down"),
        "old": add(m, "Uses npm"),
        "key": add(m, f"The staging key is {KEY}"),
    }
    ids["new"] = m.supersede(ids["old"], "Uses pnpm", source="chat 2026-08-02")
    ids["gone"] = add(m, "Office in Haifa")
    m.delete(ids["gone"])
    ids["wrong"] = add(m, "Deploys on Fridays")
    m.invalidate(ids["wrong"], "not any more")
    return ids


def ledger_rows(folder: Path) -> dict[str, tuple[Any, ...]]:
    """The ledger's rows, read through a read-only connection closed at once: a read-write one left for the
    garbage collector checkpoints the WAL whenever it is collected, which a test of "writes nothing" would see."""
    with contextlib.closing(sqlite3.connect(f"{(folder / 'hygiene.db').as_uri()}?mode=ro", uri=True)) as conn:
        return {r[0]: tuple(r) for r in conn.execute(f"SELECT {', '.join(COLUMNS)} FROM memories")}


def render(obj: Any) -> str:
    console = Console(width=240, record=True, color_system=None)
    console.print(obj)
    return console.export_text()


@pytest.fixture
def deployment(make_deployment: Any, tmp_path: Path, clock: Any) -> Any:
    """A drop-in deployment planted at the fake clock's time, 100 days ago by that clock (its Memory closed)."""
    d = make_deployment(tmp_path / "store", hygiene={"clock": clock, "secrets": "allow"}, plant=plant)
    clock.advance(days=100)
    return d


def twin(d: Any, folder: Path, clock: Any) -> dict[str, Any]:
    """A byte-for-byte copy of the deployment's stores in ``folder``, and its config (same ids, same rows)."""
    shutil.copytree(d.folder, folder)
    return offline_config(folder, hygiene={"clock": clock})


@pytest.fixture
def no_qdrant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening any Qdrant client fails the test: proof that nothing opened the vector store."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a Qdrant client was opened")

    monkeypatch.setattr(qdrant_client.QdrantClient, "__init__", refuse)


# ------------------------------------------------------------------------------------------------ the ledger alone


def test_confirm_and_invalidate_succeed_while_another_process_holds_the_store(deployment, hold_qdrant_lock, clock):
    d, ids = deployment, deployment.planted
    hold_qdrant_lock(d.folder / "qdrant")
    done = maintenance.confirm(d.config, [ids["tool"], ids["live"]])
    assert [(c.state_before, c.state_after) for c in done.changes] == [("quarantined", "live"), ("live", "live")]
    assert [c.text for c in done.changes] == ["Build uses Bazel", "Staging is down"]  # from history.db
    inv = maintenance.invalidate(d.config, ids["new"], "moved to bun")
    assert (inv.changes[0].state_before, inv.changes[0].state_after, inv.changes[0].text) == (
        "live",
        "invalidated",
        "Uses pnpm",
    )
    rows = ledger_rows(d.folder)
    stamp = clock().isoformat(timespec="microseconds")
    tool = dict(zip(COLUMNS, rows[ids["tool"]]))
    assert tool["quarantined"] == 0 and tool["confirmed_at"] == stamp
    new = dict(zip(COLUMNS, rows[ids["new"]]))
    assert (new["invalid_reason"], new["invalid_at"]) == ("moved to bun", stamp)


def test_no_qdrant_client_is_opened_for_memories_with_ledger_rows(deployment, no_qdrant):
    d, ids = deployment, deployment.planted
    maintenance.confirm(d.config, [ids["tool"]], dry_run=True)
    maintenance.confirm(d.config, [ids["tool"]])
    maintenance.invalidate(d.config, ids["live"], "back up", dry_run=True)
    maintenance.invalidate(d.config, ids["live"], "back up")
    assert dict(zip(COLUMNS, ledger_rows(d.folder)[ids["live"]]))["invalid_reason"] == "back up"
    maintenance.digest(d.config, since="200d")
    maintenance.memory_story(d.config, ids["old"])


def test_the_shown_text_is_read_from_history_and_redacted(deployment, hold_qdrant_lock):
    d, ids = deployment, deployment.planted
    hold_qdrant_lock(d.folder / "qdrant")
    done = maintenance.confirm(d.config, [ids["key"]])
    assert done.changes[0].text == f"The staging key is {KEY}"  # the field holds the store's text
    assert KEY not in render(done) and KEY not in str(done.to_dict())
    assert "[redacted openai_api_key]" in render(done)


def written_files(folder):
    """Every file's modification time, but SQLite's ``-shm`` index, which a read of a WAL database updates too."""
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file() and not p.name.endswith("-shm")}


def test_a_dry_run_writes_nothing_and_says_what_the_change_would_give(deployment, hold_qdrant_lock):
    d, ids = deployment, deployment.planted
    hold_qdrant_lock(d.folder / "qdrant")
    before = ledger_rows(d.folder)
    files = written_files(d.folder)
    dry = maintenance.confirm(d.config, [ids["tool"]], dry_run=True)
    assert dry.dry_run and (dry.changes[0].state_before, dry.changes[0].state_after) == ("quarantined", "live")
    inv = maintenance.invalidate(d.config, ids["live"], "back up", dry_run=True)
    assert inv.changes[0].state_after == "invalidated"
    assert ledger_rows(d.folder) == before
    assert written_files(d.folder) == files


# ------------------------------------------------------------------------------------------------ refusals


def test_invalidating_a_superseded_deleted_or_invalidated_memory_is_refused_naming_its_state(
    deployment, hold_qdrant_lock
):
    d, ids = deployment, deployment.planted
    hold_qdrant_lock(d.folder / "qdrant")
    before = ledger_rows(d.folder)
    with pytest.raises(StateError) as superseded:
        maintenance.invalidate(d.config, ids["old"], "wrong")
    text = str(superseded.value)
    assert f"superseded by {ids['new']}" in text and f"invalidate {ids['new']} instead" in text
    with pytest.raises(MemoryNotFound, match="it was deleted on .*nothing to invalidate"):
        maintenance.invalidate(d.config, ids["gone"], "wrong")
    with pytest.raises(StateError, match="already invalidated on"):
        maintenance.invalidate(d.config, ids["wrong"], "wrong again")
    assert "\n" not in text  # one line
    assert ledger_rows(d.folder) == before  # the reason stays the first one


def test_confirm_checks_every_id_in_one_transaction(deployment, hold_qdrant_lock):
    d, ids = deployment, deployment.planted
    hold_qdrant_lock(d.folder / "qdrant")
    before = ledger_rows(d.folder)
    with pytest.raises(StateError, match=f"cannot confirm {ids['old']}: it was superseded by {ids['new']}"):
        maintenance.confirm(d.config, [ids["tool"], ids["old"]])
    with pytest.raises(StateError, match="invalidated"):
        maintenance.confirm(d.config, [ids["live"], ids["wrong"]])
    assert ledger_rows(d.folder) == before  # the first ids of each call were not confirmed either
    twice = maintenance.confirm(d.config, [ids["live"], ids["live"]])
    assert [c.memory_id for c in twice.changes] == [ids["live"]]


def test_a_change_another_writer_made_first_is_refused_not_overwritten(deployment, clock):
    d, ids = deployment, deployment.planted
    other = open_ledger(str(d.folder / "hygiene.db"))  # another writer on the same ledger (a replica, the app)
    try:
        other.link_supersede(ids["live"], ids["tool"], clock())
    finally:
        other.close()
    with pytest.raises(StateError, match=f"superseded by {ids['tool']}"):
        maintenance.invalidate(d.config, ids["live"], "wrong")
    with pytest.raises(StateError, match=f"superseded by {ids['tool']}"):
        maintenance.confirm(d.config, [ids["live"]])


RACER = """
import json, sys
from mem0_hygiene import maintenance
from mem0_hygiene.errors import StateError
config = json.load(open(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
try:
    maintenance.invalidate(config, sys.argv[2], sys.argv[3])
    print("won", flush=True)
except StateError as exc:
    print("refused: " + str(exc), flush=True)
"""


def test_of_three_processes_invalidating_one_memory_exactly_one_wins(deployment, tmp_path, hold_qdrant_lock):
    d, target = deployment, deployment.planted["live"]
    config = tmp_path / "app.json"
    config.write_text(json.dumps(offline_config(d.folder)))
    hold_qdrant_lock(d.folder / "qdrant")
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(config), target, f"reason {i}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    try:
        for p in racers:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        for p in racers:  # all at once: each has loaded everything and waits on its stdin
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outcomes = [p.communicate(timeout=120)[0].strip() for p in racers]
    finally:
        for p in racers:
            p.kill()
    winners = [i for i, out in enumerate(outcomes) if out == "won"]
    assert len(winners) == 1, outcomes
    assert all("already invalidated" in out for i, out in enumerate(outcomes) if i != winners[0]), outcomes
    assert dict(zip(COLUMNS, ledger_rows(d.folder)[target]))["invalid_reason"] == f"reason {winners[0]}"


# ------------------------------------------------------------------------------------------------ untracked


def test_an_untracked_memory_needs_the_store_and_says_so_while_it_is_held(
    tmp_path, plain_mem0, close_plain, hold_qdrant_lock
):
    m = plain_mem0(tmp_path)
    untracked = m.add("Prefers tea", user_id="dana", infer=False)["results"][0]["id"]
    close_plain(m)
    config = offline_config(tmp_path)
    holder = hold_qdrant_lock(tmp_path / "qdrant")
    with pytest.raises(StoreLocked) as err:
        maintenance.confirm(config, [untracked])
    text = str(err.value)
    assert untracked in text and "no row" in text and "plain mem0" in text
    assert str(tmp_path / "qdrant") in text and "stop the app" in text and "mem0-hygiene adopt" in text
    assert "In the app: m.confirm(id)." in text and "\n" not in text
    with pytest.raises(StoreLocked, match="history.db does not know it either: check the id"):
        maintenance.invalidate(config, "00000000-0000-0000-0000-000000000000", "typo")
    assert not (tmp_path / "hygiene.db").exists()  # nothing was created meanwhile

    holder.release()  # the app stopped: the same call adopts the memory from the store, then confirms it
    done = maintenance.confirm(config, [untracked])
    assert (done.changes[0].state_before, done.changes[0].text) == ("live", "Prefers tea")
    assert untracked in ledger_rows(tmp_path)
    with pytest.raises(MemoryNotFound):
        maintenance.confirm(config, ["00000000-0000-0000-0000-000000000000"])


# ------------------------------------------------------------------------------------------------ same as the drop-in


def test_the_ledger_route_gives_the_rows_and_output_of_the_drop_in_route(deployment, tmp_path, clock, hold_qdrant_lock):
    d, ids = deployment, deployment.planted
    in_app = twin(d, tmp_path / "in_app", clock)
    methods = twin(d, tmp_path / "methods", clock)
    outside = twin(d, tmp_path / "outside", clock)

    m = Memory.from_config(in_app)  # the app's own Memory: the in-process route
    try:
        app_results = [
            maintenance.confirm(m, [ids["tool"], ids["live"]]),
            maintenance.invalidate(m, ids["new"], "moved to bun"),
            maintenance.review_queue(m, older_than="30d"),
        ]
        with pytest.raises(StateError) as app_refusal:
            maintenance.invalidate(m, ids["old"], "wrong")
    finally:
        m.close()
    m = Memory.from_config(methods)  # the drop-in's own verbs
    try:
        m.confirm(ids["tool"])
        m.confirm(ids["live"])
        m.invalidate(ids["new"], reason="moved to bun")
    finally:
        m.close()

    hold_qdrant_lock(tmp_path / "outside" / "qdrant")  # the app runs: only the ledger route is open
    cli_results = [
        maintenance.confirm(outside, [ids["tool"], ids["live"]]),
        maintenance.invalidate(outside, ids["new"], "moved to bun"),
        maintenance.review_queue(outside, older_than="30d"),
    ]
    with pytest.raises(StateError) as cli_refusal:
        maintenance.invalidate(outside, ids["old"], "wrong")

    assert [r.to_dict() for r in cli_results] == [r.to_dict() for r in app_results]
    assert [render(r) for r in cli_results] == [render(r) for r in app_results]
    assert str(cli_refusal.value) == str(app_refusal.value)
    assert ledger_rows(tmp_path / "outside") == ledger_rows(tmp_path / "in_app") == ledger_rows(tmp_path / "methods")
    assert [i.memory_id for i in cli_results[2].items] == [ids["key"]]  # the others were answered or are stale


def test_the_review_queue_and_story_from_the_ledger_match_the_apps(deployment, tmp_path, clock, hold_qdrant_lock):
    d, ids = deployment, deployment.planted
    in_app = twin(d, tmp_path / "in_app", clock)
    outside = twin(d, tmp_path / "outside", clock)
    m = Memory.from_config(in_app)
    try:
        queue = maintenance.review_queue(m, older_than="30d", limit=10)
        story = maintenance.memory_story(m, ids["old"])
        scoped = maintenance.review_queue(m, older_than="30d", filters={"user_id": "nobody"})
    finally:
        m.close()
    hold_qdrant_lock(tmp_path / "outside" / "qdrant")
    held_queue = maintenance.review_queue(outside, older_than="30d", limit=10)
    assert held_queue.to_dict() == queue.to_dict()
    assert {i.memory_id for i in queue.items} == {ids["live"], ids["key"], ids["new"]}  # tool: quarantined
    assert maintenance.memory_story(outside, ids["old"]).to_dict() == story.to_dict()
    assert (
        maintenance.review_queue(outside, older_than="30d", filters={"user_id": "nobody"}).to_dict() == scoped.to_dict()
    )


def test_the_queue_from_the_ledger_leaves_out_a_memory_plain_mem0_deleted(
    deployment, tmp_path, clock, plain_mem0, close_plain, hold_qdrant_lock
):
    d, ids = deployment, deployment.planted
    plain = plain_mem0(d.folder)
    plain.delete(ids["live"])  # behind the ledger's back: history.db says DELETE, the row stays live
    close_plain(plain)
    outside = offline_config(d.folder, hygiene={"clock": clock})
    in_store = {i.memory_id for i in maintenance.review_queue(outside, older_than="30d").items}
    hold_qdrant_lock(d.folder / "qdrant")
    held = {i.memory_id for i in maintenance.review_queue(outside, older_than="30d").items}
    assert held == in_store and ids["live"] not in held
