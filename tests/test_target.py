"""target.resolve: one resolution of "which deployment" for a config dict, a live Memory and the CLI, and
configs that mem0 would silently misread are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli
from mem0_hygiene.errors import ConfigError
from mem0_hygiene.target import Target, resolve


def test_a_config_and_the_memory_built_from_it_resolve_the_same_stores(tmp_path: Path):
    config = offline_config(tmp_path / "store")
    from_dict = resolve(config)
    m = Memory.from_config(config)
    try:
        live = resolve(m)
        assert live.in_process and not from_dict.in_process
        for attr in ("vector_path", "history_path", "ledger_path", "collection", "provider"):
            assert getattr(live, attr) == getattr(from_dict, attr), attr
        assert from_dict.vector_path == str(tmp_path / "store" / "qdrant")
    finally:
        m.close()


def test_resolve_returns_a_target_as_it_is_and_refuses_other_objects(tmp_path: Path):
    target = resolve(offline_config(tmp_path / "store"))
    assert resolve(target) is target
    with pytest.raises(ConfigError, match="expected a mem0 config dict or a Memory, not str"):
        resolve("config.json")


def test_mem0_defaults_resolve_to_mem0s_own_default_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "home"))
    target = resolve(None)
    assert target.description == "mem0 defaults"
    assert target.vector_path == "/tmp/qdrant" and target.collection == "mem0"
    assert target.history_path == str(tmp_path / "home" / "history.db")
    assert target.ledger_path == str(tmp_path / "home" / "hygiene.db")


def test_a_vector_store_key_mem0_rejects_is_refused_with_mem0s_message_and_no_key_value():
    config = {"vector_store": {"provider": "qdrant", "config": {"pth": "/srv/qdrant", "api_key": "sk-do-not-print"}}}
    with pytest.raises(ConfigError) as err:
        resolve(config)
    message = str(err.value)
    assert "mem0 rejected the config" in message and "pth" in message
    assert "sk-do-not-print" not in message and "/srv/qdrant" not in message


def test_a_top_level_typo_that_mem0_would_ignore_is_refused_with_the_likely_key():
    with pytest.raises(ConfigError, match="'history_db_pth': did you mean 'history_db_path'"):
        resolve({"history_db_pth": "/srv/mem0/history.db"})


def test_keys_mem0_reads_and_the_hygiene_section_are_accepted(tmp_path: Path):
    config: dict[str, Any] = offline_config(tmp_path / "store", hygiene={"retain_superseded": "30d"})
    config["version"] = "v1.1"
    target = resolve(config)
    assert isinstance(target, Target) and target.settings.retain_superseded.days == 30


@pytest.mark.parametrize("command", [["audit"], ["where"], ["prune", "--dry-run"], ["digest"]])
def test_every_command_refuses_a_config_typo_instead_of_reading_the_default_store(tmp_path: Path, command: list[str]):
    bad = tmp_path / "app.json"
    bad.write_text(json.dumps({"vector_store": {"provider": "qdrant", "config": {"pth": str(tmp_path / "q")}}}))
    result = CliRunner().invoke(cli, [*command, "--config", str(bad)])
    assert result.exit_code != 0
    assert "mem0 rejected the config" in result.output and "pth" in result.output
    assert "Traceback" not in result.output and "/tmp/qdrant" not in result.output
