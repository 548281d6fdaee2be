"""The CLI over a deployment whose ledger is on PostgreSQL: digest, history and the audit read it (the audit
on the server), confirm/invalidate/prune write it, and no output shows the
password of the URL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli


@pytest.fixture
def fleet_config(tmp_path: Path, pg_url: str) -> tuple[Path, dict[str, str]]:
    cfg = offline_config(tmp_path, hygiene={"ledger_url": pg_url})
    m = Memory.from_config(cfg)
    ids = {"old": m.add("Uses Postgres 15", user_id="dana", infer=False, source="chat")["results"][0]["id"]}
    ids["new"] = m.supersede(ids["old"], "Uses Postgres 16", source="chat")
    ids["tool"] = m.add("Build is green", user_id="dana", infer=False, source="tool:ci https://ci")["results"][0]["id"]
    m.close()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path, ids


def run(*args: Any) -> Any:
    out = CliRunner().invoke(cli, [str(a) for a in args])
    assert ":mem0_hygiene@" not in out.output  # the URL's password
    return out


def test_digest_and_history_read_a_postgres_ledger(fleet_config: tuple[Path, dict[str, str]]) -> None:
    cfg, ids = fleet_config
    digest = run("digest", "--since", "1d", "--config", cfg, "--json")
    assert digest.exit_code == 0, digest.output
    states = {m["memory_id"]: m["state"] for m in json.loads(digest.stdout)["items"]}
    assert states[ids["old"]] == "superseded" and states[ids["tool"]] == "quarantined"
    story = run("history", ids["old"], "--config", cfg, "--json")
    assert story.exit_code == 0 and ids["new"] in story.output


def test_confirm_invalidate_and_prune_write_a_postgres_ledger(
    fleet_config: tuple[Path, dict[str, str]], pg_url: str
) -> None:
    cfg, ids = fleet_config
    assert run("confirm", ids["tool"], "--config", cfg).exit_code == 0
    assert run("invalidate", ids["new"], "--reason", "moved to 17", "--config", cfg).exit_code == 0
    from mem0_hygiene.stores.ledger import open_ledger

    led = open_ledger(pg_url)
    try:
        assert not led.get(ids["tool"]).quarantined  # type: ignore[union-attr]
        assert led.get(ids["new"]).invalid_reason == "moved to 17"  # type: ignore[union-attr]
    finally:
        led.close()
    assert run("prune", "--dry-run", "--config", cfg).exit_code == 0


def test_the_audit_runs_the_ledger_checks_on_a_postgres_ledger(fleet_config: tuple[Path, dict[str, str]]) -> None:
    cfg, _ids = fleet_config
    out = run("audit", "--config", cfg, "--json")
    report = json.loads(out.stdout)
    codes = {f["code"] for f in report["findings"]}
    assert "LEDGER_BACKLOG" in codes and "TOOL_SOURCED" in codes
    assert not [s for s in report["skipped"] if s["area"] == "ledger"]
    where = run("where", "--config", cfg, "--json")
    ledger = [loc for loc in json.loads(where.stdout)["locations"] if loc["role"] == "ledger"][0]
    assert ledger["provider"] == "postgresql" and ledger["remote"].startswith("postgresql://127.0.0.1:5432/")


def test_backup_dumps_a_postgres_ledger_into_the_set_without_its_password(
    fleet_config: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    cfg, _ids = fleet_config
    out = run("backup", tmp_path / "sets", "--config", cfg)
    assert out.exit_code == 0, out.output
    assert (
        "hygiene.db ok" in out.output
        and "ledger rows: confirmations=0, consolidation=0, embedder=3, memories=3" in out.output
    )
    assert (
        "ledger: postgresql://127.0.0.1:5432/mem0_hygiene_test dumped into hygiene.db from one REPEATABLE READ"
        in out.output
    )
    assert "pg_dump" not in out.output


def test_forget_scrub_blanks_the_text_in_postgres_ledger_rows(tmp_path: Path, pg_url: str) -> None:
    m = Memory.from_config(offline_config(tmp_path, hygiene={"ledger_url": pg_url}))
    try:
        mid = m.add(
            "Dana's flat is at 12 Rua Nova", user_id="dana", infer=False, source="chat: Dana's flat is at 12 Rua Nova"
        )["results"][0]["id"]
        m.flush()
        result = m.forget([mid], scrub=True)
        assert result.ledger_fields_blanked == 1
        row = m.ledger.get(mid)
        assert row is not None and row.deleted_at and row.source is None
    finally:
        m.close()


def test_inspect_reads_the_states_from_a_postgres_ledger_on_the_server_without_a_copy(
    fleet_config: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pandas", reason="inspect() needs the notebook extra")
    from mem0_hygiene import inspect
    from mem0_hygiene.stores.ledger import postgres as ledger_postgres

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("inspect() copied the ledger")

    monkeypatch.setattr(ledger_postgres.PostgresLedger, "copy_into", refuse)
    cfg, ids = fleet_config
    insp = inspect(json.loads(cfg.read_text()))
    frame = insp.memories
    assert sorted(frame["state"]) == ["live", "quarantined", "superseded"]
    by_id = frame.set_index("id")
    assert by_id.loc[ids["old"], "superseded_by"] == ids["new"] and by_id.loc[ids["tool"], "quarantined"]
    assert frame["in_ledger"].all() and not insp.missing
