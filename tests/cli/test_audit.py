"""The audit and demo commands through click's CliRunner: exit codes, JSON schema, human output."""

from __future__ import annotations

import json
import sqlite3

import jsonschema
import pytest
from click.testing import CliRunner
from qdrant_client import QdrantClient

from mem0_hygiene import Memory
from mem0_hygiene.cli import cli
from mem0_hygiene.render import JSON_SCHEMA


@pytest.fixture
def app_config(make_deployment, persistent_dir):
    """A healthy deployment and its config file, as an app would have it."""

    def plant(m):
        m.add("Dana works on billing", user_id="dana", infer=False, source="chat 2026-08-01")

    d = make_deployment(persistent_dir, plant=plant, config_file=persistent_dir / "mem0.json")
    return d.config_path, d.memory


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_clean_store_exits_0_with_a_human_report(app_config):
    path, _ = app_config
    result = invoke("audit", "--config", str(path))
    assert result.exit_code == 0, result.output
    assert "mem0-hygiene audit" in result.output
    assert "BACKUP_LAST_VERIFIED" in result.output and "No verified backup" in result.output  # a warning
    assert "Skipped checks (0)" in result.output
    assert result.output.index("Findings") < result.output.index("history (")


def test_error_finding_exits_1_and_json_validates_against_the_schema(app_config):
    path, m = app_config
    with sqlite3.connect(m.ledger_path) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("UPDATE memories SET superseded_by = 'gone', superseded_at = created_at")
    runner = CliRunner()
    result = runner.invoke(cli, ["audit", "--config", str(path), "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, JSON_SCHEMA)
    assert doc["schema_version"] == 1
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["CHAIN_BROKEN"]
    assert "1 error" in result.stderr  # the summary goes to stderr, the report alone to stdout


def test_fail_on_warning_and_strict(app_config, clock):
    path, m = app_config
    mm = Memory.from_config({**json.loads(path.read_text()), "hygiene": {"clock": clock}})
    mm.add("no source here", user_id="dana", infer=False)
    mm.close()
    assert invoke("audit", "--config", str(path)).exit_code == 0
    assert invoke("audit", "--config", str(path), "--fail-on", "warning").exit_code == 1
    assert invoke("audit", "--config", str(path), "--strict").exit_code == 0  # nothing skipped
    holder = QdrantClient(path=json.loads(path.read_text())["vector_store"]["config"]["path"])
    try:  # a client holding the local Qdrant lock: the vector-store checks are skipped
        assert invoke("audit", "--config", str(path), "--strict").exit_code == 3
    finally:
        holder.close()


def test_usage_errors_exit_2(app_config, tmp_path):
    path, _ = app_config
    assert invoke("audit", "--config", str(path), "--fail-on", "loud").exit_code == 2
    missing = CliRunner().invoke(cli, ["audit", "--config", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2
    assert "nope.json" in missing.output


def test_nothing_to_audit_exits_3_with_the_reason(persistent_dir):
    result = CliRunner().invoke(
        cli, ["audit", "--qdrant-path", str(persistent_dir / "q"), "--history-db", str(persistent_dir / "h.db")]
    )
    assert result.exit_code == 3
    assert "found no mem0 store" in result.stderr


def test_html_and_output_files(app_config, tmp_path):
    path, _ = app_config
    html, out = tmp_path / "r.html", tmp_path / "r.txt"
    result = CliRunner().invoke(cli, ["audit", "--config", str(path), "--html", str(html), "-o", str(out)])
    assert result.exit_code == 0
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert "HISTORY_ACTIVITY" in out.read_text()
    assert "report written to" in result.stderr


@pytest.fixture
def demo_dir(tmp_path):
    import shutil

    from mem0_hygiene.demo import _ram_folder

    folder = tmp_path / "demo"
    yield folder
    ram = _ram_folder(folder)
    if ram is not None:
        shutil.rmtree(ram, ignore_errors=True)


def test_demo_builds_the_troubles_and_audits_them(demo_dir):
    tmp_path = demo_dir.parent
    result = CliRunner().invoke(cli, ["demo", "--dir", str(demo_dir), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, JSON_SCHEMA)
    found = {f["code"] for f in doc["findings"]}
    assert {
        "CHAIN_BROKEN",
        "SECRET_IN_MEMORY",
        "EXPIRED_NOT_PRUNED",
        "DELETED_TEXT_IN_HISTORY",
        "TOOL_SOURCED",
        "INSTRUCTION_MEMORY",
        "REVIEW_BACKLOG",
        "UNTRACKED_MEMORIES",
    } <= found
    assert (tmp_path / "demo" / "config.json").exists()
    # the config it prints is the one an operator re-audits with
    again = CliRunner().invoke(cli, ["audit", "--config", str(tmp_path / "demo" / "config.json"), "--json"])
    assert {f["code"] for f in json.loads(again.stdout)["findings"]} == found


def test_demo_refuses_a_folder_it_did_not_create(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path / "mine")])
    assert result.exit_code == 2  # bad input: the folder given with --dir
    assert "not a mem0-hygiene demo folder" in result.output
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_history_db_repeats_one_per_host_and_the_union_knows_every_hosts_memories(tmp_path):
    """Two hosts write one vector store, each keeping its own history.db: given both, a memory only host1's
    history knows is not "without history"; one path alone reads as before."""
    from mem0 import Memory as Mem0Memory

    from mem0_hygiene import offline_config
    from mem0_hygiene.config import build_mem0_config, split_config

    host0, host1 = tmp_path / "host0", tmp_path / "host1"
    cfg = offline_config(host0)
    m = Memory.from_config(cfg)
    m.add("Dana works on billing", user_id="dana", infer=False, source="chat")
    m.close()
    host1.mkdir()
    other = offline_config(host1)
    other["vector_store"]["config"]["path"] = cfg["vector_store"]["config"]["path"]
    plain = Mem0Memory(build_mem0_config(split_config(other)[0]))  # host1's replica, plain mem0
    plain.add("Dana deploys on Fridays", user_id="dana", infer=False)
    plain.close()
    plain.vector_store.client.close()
    (tmp_path / "mem0.json").write_text(json.dumps(cfg))
    base = ["audit", "--config", str(tmp_path / "mem0.json"), "--json"]
    alone = json.loads(invoke(*base, "--history-db", str(host0 / "history.db")).stdout)
    assert "POINTS_WITHOUT_HISTORY" in {f["code"] for f in alone["findings"]}
    assert [loc["note"] for loc in alone["locations"] if loc["role"] == "history_db"] == [""]
    both = json.loads(
        invoke(*base, "--history-db", str(host0 / "history.db"), "--history-db", str(host1 / "history.db")).stdout
    )
    found = {f["code"]: f for f in both["findings"]}
    assert "POINTS_WITHOUT_HISTORY" not in found and both["skipped"] == []
    assert found["HISTORY_ACTIVITY"]["details"]["rows_by_host"] == {"host0": 1, "host1": 1}
    assert [loc["note"] for loc in both["locations"] if loc["role"] == "history_db"] == ["host host0", "host host1"]
