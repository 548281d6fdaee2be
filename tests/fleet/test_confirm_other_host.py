"""``confirm`` run on one host shows the text of a memory another replica wrote: its history.db is one of
``hygiene.history_dbs``."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import offline_config
from mem0_hygiene.cli import cli


def test_confirm_shows_the_text_of_a_memory_another_replica_wrote(replicas: Any, tmp_path: Any, pg_url: str) -> None:
    here, there = replicas(2)
    mid = there.add("Build is green", user_id="dana", infer=False, source="tool:ci https://ci")["results"][0]["id"]
    there.flush()
    assert here.db.get_history(mid) == []  # this host's history.db never saw it
    config = offline_config(tmp_path / "host0", hygiene={"ledger_url": pg_url})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    alone = CliRunner().invoke(cli, ["confirm", mid, "--config", str(path), "--json", "--dry-run"])
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.stdout)["changes"][0]["text"] is None  # without the other host's file: unknown
    config["hygiene"]["history_dbs"] = [f"host1={tmp_path / 'host1' / 'history.db'}"]
    path.write_text(json.dumps(config))
    out = CliRunner().invoke(cli, ["confirm", mid, "--config", str(path), "--json"])
    assert out.exit_code == 0, out.output
    change = json.loads(out.stdout)["changes"][0]
    assert (change["text"], change["state_before"], change["state_after"]) == ("Build is green", "quarantined", "live")
