"""confirm, invalidate, review, digest and history on a PostgreSQL ledger need no vector store: they succeed while
a real process holds the local Qdrant folder. Their state changes are compare-and-set across processes: of three
processes invalidating one memory at once exactly one wins, and a change that waits on another writer's
uncommitted supersede sees it and is refused."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, maintenance, offline_config
from mem0_hygiene.cli import cli
from mem0_hygiene.errors import StateError
from mem0_hygiene.stores.ledger import open_ledger

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


@pytest.fixture
def fleet(tmp_path: Path, pg_url: str, clock: Any) -> dict[str, Any]:
    """A deployment with its ledger on PostgreSQL and a local Qdrant folder, its config file (no clock: the
    CLI's own), and the ids of what was planted."""
    folder = tmp_path / "store"
    clock.current = datetime.now(timezone.utc) - timedelta(days=200)  # the CLI reads with the real clock
    m = Memory.from_config(offline_config(folder, hygiene={"ledger_url": pg_url, "clock": clock}))
    try:
        ids = {
            "tool": m.add("Build is green", user_id="dana", infer=False, source="tool:ci https://ci")["results"][0][
                "id"
            ],
            "old": m.add("Uses Postgres 15", user_id="dana", infer=False, source="chat")["results"][0]["id"],
        }
        ids["new"] = m.supersede(ids["old"], "Uses Postgres 16", source="chat")
    finally:
        m.close()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(offline_config(folder, hygiene={"ledger_url": pg_url})))
    return {"folder": folder, "path": path, "ids": ids, "url": pg_url}


def run(*args: Any) -> Any:
    out = CliRunner().invoke(cli, [str(a) for a in args])
    assert ":mem0_hygiene@" not in out.output  # the URL's password
    return out


def row(url: str, memory_id: str) -> Any:
    ledger = open_ledger(url)
    try:
        return ledger.get(memory_id)
    finally:
        ledger.close()


def test_the_ledger_commands_work_on_postgres_while_the_store_is_held(
    fleet: dict[str, Any], hold_qdrant_lock: Any
) -> None:
    ids, cfg = fleet["ids"], fleet["path"]
    hold_qdrant_lock(fleet["folder"] / "qdrant")
    queue = run("review", "--config", cfg, "--json")
    assert queue.exit_code == 0, queue.output
    assert [i["memory_id"] for i in json.loads(queue.stdout)["items"]] == [ids["new"]]  # tool: quarantined
    confirmed = run("confirm", ids["tool"], "--config", cfg, "--json")
    assert confirmed.exit_code == 0, confirmed.output
    change = json.loads(confirmed.stdout)["changes"][0]
    assert (change["text"], change["state_before"], change["state_after"]) == ("Build is green", "quarantined", "live")
    invalidated = run("invalidate", ids["new"], "--reason", "moved to 17", "--config", cfg)
    assert invalidated.exit_code == 0, invalidated.output
    assert not row(fleet["url"], ids["tool"]).quarantined
    assert row(fleet["url"], ids["new"]).invalid_reason == "moved to 17"

    refused = run("invalidate", ids["old"], "--reason", "x", "--config", cfg)
    assert refused.exit_code == 2 and f"superseded by {ids['new']}" in refused.output
    assert json.loads(run("review", "--config", cfg, "--json").stdout)["items"] == []  # answered
    story = run("history", ids["old"], "--config", cfg, "--json")
    assert story.exit_code == 0 and ids["new"] in story.output
    digest = run("digest", "--since", "300d", "--config", cfg, "--json")
    states = {i["memory_id"]: i["state"] for i in json.loads(digest.stdout)["items"]}
    assert states == {ids["tool"]: "live", ids["old"]: "superseded", ids["new"]: "invalidated"}


def test_of_three_processes_invalidating_one_memory_exactly_one_wins(fleet: dict[str, Any]) -> None:
    target = fleet["ids"]["tool"]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(fleet["path"]), target, f"reason {i}"],
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
    assert row(fleet["url"], target).invalid_reason == f"reason {winners[0]}"


def test_a_change_waiting_on_another_writers_supersede_sees_it_and_is_refused(fleet: dict[str, Any]) -> None:
    import psycopg

    ids, url = fleet["ids"], fleet["url"]
    config = json.loads(fleet["path"].read_text())
    other = psycopg.connect(url)  # another replica, in the middle of its transaction
    try:
        other.execute(
            "UPDATE memories SET superseded_by = %s, superseded_at = %s WHERE memory_id = %s",
            (ids["new"], "2026-08-01T10:00:00.000000+00:00", ids["tool"]),
        )
        outcome: dict[str, BaseException | None] = {}

        def invalidate() -> None:
            try:
                maintenance.invalidate(config, ids["tool"], "wrong")
                outcome["error"] = None
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                outcome["error"] = exc

        worker = threading.Thread(target=invalidate)
        worker.start()
        watcher = psycopg.connect(url, autocommit=True)
        try:  # until the invalidation waits on the other writer's row lock
            blocked = "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))"
            while not watcher.execute(blocked, (other.info.backend_pid,)).fetchone()[0]:
                assert worker.is_alive(), outcome
        finally:
            watcher.close()
        other.commit()
        worker.join(timeout=60)
    finally:
        other.close()
    assert isinstance(outcome["error"], StateError) and f"superseded by {ids['new']}" in str(outcome["error"])
    assert row(url, ids["tool"]).invalid_at is None
