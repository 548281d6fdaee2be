"""The backup, restore and forget commands through click's CliRunner: exit codes, messages, JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli
from mem0_hygiene.stores.qdrant import collection_counts

U = {"user_id": "dana"}
SECRET = "Dana's passport number is X1234567"


@pytest.fixture
def app_config(make_deployment, persistent_dir):
    """A deployment and its config file, as an app would have it; returns (config path, folder, ids)."""

    def plant(m):
        return [
            m.add(text, **U, infer=False, source="chat")["results"][0]["id"]
            for text in (SECRET, "Dana works on billing", "Dana prefers pnpm")
        ]

    d = make_deployment(persistent_dir / "app", plant=plant, hygiene={}, config_file=persistent_dir / "mem0.json")
    return d.config_path, d.folder, d.planted


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_backup_prints_what_it_verified_and_json_carries_the_result(app_config, persistent_dir):
    path, _, _ = app_config
    dest = persistent_dir / "backups"
    result = invoke("backup", str(dest), "--config", str(path))
    assert result.exit_code == 0, result.output
    assert "backed up into" in result.output and "integrity_check: history.db ok" in result.output
    assert "points: mem0=3" in result.output and "hygiene.backups.json" in result.output
    doc = json.loads(invoke("backup", str(dest), "--config", str(path), "--keep", "1", "--json").stdout)
    assert doc["counts"]["points"] == {"mem0": 3} and not doc["dry_run"] and len(doc["rotated"]) == 1
    assert os.listdir(dest) == [Path(doc["path"]).name]


def test_backup_dry_run_writes_nothing(app_config, persistent_dir):
    path, _, _ = app_config
    dest = persistent_dir / "backups"
    result = invoke("backup", str(dest), "--config", str(path), "--dry-run")
    assert result.exit_code == 0 and "dry run: would back up into" in result.output
    assert not dest.exists()


def test_backup_while_the_app_holds_the_store_explains_the_in_process_route(app_config, persistent_dir):
    path, folder, _ = app_config
    m = Memory.from_config(offline_config(folder))  # the running app
    try:
        result = CliRunner().invoke(cli, ["backup", str(persistent_dir / "backups"), "--config", str(path)])
    finally:
        m.close()
    assert result.exit_code == 3
    assert "Error: cannot back up the local Qdrant store" in result.output
    assert "m.backup(" in result.output
    assert not (persistent_dir / "backups").exists()


def test_restore_asks_first_and_keeps_the_current_stores_aside(app_config, persistent_dir):
    path, folder, ids = app_config
    made = json.loads(invoke("backup", str(persistent_dir / "backups"), "--config", str(path), "--json").stdout)
    m = Memory.from_config(offline_config(folder))
    m.delete(ids[1])
    m.close()
    qdrant = str(folder / "qdrant")

    declined = CliRunner().invoke(cli, ["restore", made["path"], "--config", str(path)], input="n\n")
    assert declined.exit_code == 0 and "not restored: nothing was changed" in declined.output
    assert "Replace the current stores with this backup?" in declined.output
    assert collection_counts(qdrant) == {"mem0": 2}

    dry = invoke("restore", made["path"], "--config", str(path), "--dry-run")
    assert dry.exit_code == 0 and "dry run: would restore" in dry.output and "would be moved to" in dry.output
    assert collection_counts(qdrant) == {"mem0": 2}

    accepted = invoke("restore", made["path"], "--config", str(path), input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "restored the backup taken" in accepted.output and ".replaced-" in accepted.output
    assert collection_counts(qdrant) == {"mem0": 3}

    again = json.loads(invoke("restore", made["path"], "--config", str(path), "--yes", "--json").stdout)
    assert {s["role"] for s in again["stores"]} == {"vector_store", "history_db", "ledger"}


def test_restore_refuses_a_damaged_set_with_exit_3(app_config, persistent_dir):
    path, _, _ = app_config
    made = json.loads(invoke("backup", str(persistent_dir / "backups"), "--config", str(path), "--json").stdout)
    (Path(made["path"]) / "hygiene.db").unlink()
    result = CliRunner().invoke(cli, ["restore", made["path"], "--config", str(path), "--yes"])
    assert result.exit_code == 3
    assert "refusing to restore" in result.output and "missing: hygiene.db" in result.output


def test_forget_scrub_verifies_and_reports(app_config):
    path, folder, ids = app_config
    dry = invoke("forget", ids[0], "--scrub", "--dry-run", "--config", str(path))
    assert dry.exit_code == 0 and "would delete" in dry.output and "the text is found now in" in dry.output
    assert SECRET.encode() in (folder / "history.db").read_bytes()

    result = invoke("forget", ids[0], "--scrub", "--config", str(path))
    assert result.exit_code == 0, result.output
    assert f"deleted (through mem0's API): {ids[0]}" in result.output
    assert "verified: the text is found in none of the" in result.output
    assert SECRET not in result.output
    assert all(SECRET.encode() not in p.read_bytes() for p in folder.rglob("*") if p.is_file())

    doc = json.loads(invoke("forget", ids[1], "--json", "--config", str(path)).stdout)
    assert doc["deleted"] == [ids[1]] and doc["scrub"] is False and "not scrubbed" in doc["notes"][0]


def test_forget_exit_codes_for_unknown_ids_and_unverified_erasure(app_config):
    path, folder, ids = app_config
    unknown = CliRunner().invoke(cli, ["forget", "no-such-id", "--config", str(path)])
    assert unknown.exit_code == 2 and "no memory with id 'no-such-id'" in unknown.output
    assert CliRunner().invoke(cli, ["forget", "--config", str(path)]).exit_code == 2  # no ID given

    m = Memory.from_config(offline_config(folder))
    twin = m.add("Dana works on billing", user_id="sam", infer=False, source="chat")["results"][0]["id"]
    m.close()
    result = CliRunner().invoke(cli, ["forget", ids[1], "--scrub", "--config", str(path)])
    assert result.exit_code == 1
    assert "still found in" in result.output and "Error: the erasure could not be verified" in result.output
    assert twin in result.output  # the reason names the other memory holding the same text


def test_forget_while_the_app_holds_the_store_explains_the_in_process_route(app_config):
    path, folder, ids = app_config
    m = Memory.from_config(offline_config(folder))  # the running app
    try:
        result = CliRunner().invoke(cli, ["forget", ids[0], "--scrub", "--config", str(path)])
        assert result.exit_code == 3
        assert "Error: cannot forget memories in the local Qdrant store" in result.output
        assert "m.forget([memory_id, ...], scrub=True)" in result.output
        assert m.get(ids[0])["memory"] == SECRET
    finally:
        m.close()
