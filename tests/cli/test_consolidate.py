"""``mem0-hygiene consolidate`` through click's CliRunner over a real store: a plan (diff) by default without a
terminal, applied only with --apply or a "y" at the prompt, --json, --scope, bad input, and history after."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mem0_hygiene import Memory
from mem0_hygiene.cli import cli

DANA = {"user_id": "dana"}


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.fixture
def store(make_deployment: Any, tmp_path: Path, clock: Any) -> dict[str, Any]:
    clock.current = datetime.now(timezone.utc) - timedelta(days=100)

    def plant(m: Memory) -> dict[str, str]:
        ids = {}
        for name, text, scope in (
            ("old", "Dana uses Postgres 15", DANA),
            ("new", "Dana uses Postgres 16", DANA),
            ("copy", "dana uses postgres 16!", DANA),
            ("omer", "Omer uses Postgres 15", {"user_id": "omer"}),
            ("omer_new", "Omer uses Postgres 16", {"user_id": "omer"}),
        ):
            clock.advance(days=1)
            ids[name] = m.add(text, **scope, infer=False, source=f"chat {name}")["results"][0]["id"]
        return ids

    d = make_deployment(tmp_path / "store", plant=plant, config_file=tmp_path / "mem0.json")
    return {"path": str(d.config_path), "config": d.config, "ids": d.planted}


def states(config: dict[str, Any], ids: dict[str, str]) -> dict[str, str]:
    m = Memory.from_config(config)
    try:
        return {name: m.get(mid)["hygiene"]["state"] for name, mid in ids.items()}
    finally:
        m.close()


def test_without_a_terminal_it_only_shows_the_plan_as_a_diff(store):
    ids = store["ids"]
    result = run("consolidate", "--config", store["path"])
    assert result.exit_code == 0, result.output
    assert "dry run: nothing changed" in result.output
    assert f"- {ids['old']}  Dana uses Postgres 15" in result.output
    # the two copies of version 16 become one (the newest confirmed), and version 15 is superseded by that one
    assert f"- {ids['new']}  Dana uses Postgres 16" in result.output
    assert f"+ {ids['copy']}  dana uses postgres 16!" in result.output
    assert "consolidate --apply" in result.output
    assert set(states(store["config"], ids).values()) == {"live"}


def test_apply_changes_the_store_and_history_explains_it(store):
    ids = store["ids"]
    result = run("consolidate", "--config", store["path"], "--apply")
    assert result.exit_code == 0, result.output
    assert "applied 3 change(s)" in result.output
    got = states(store["config"], ids)
    assert got["old"] == "superseded" and got["omer"] == "superseded" and got["omer_new"] == "live"
    assert sorted([got["new"], got["copy"]]) == ["live", "superseded"]  # one of the two copies is kept
    story = run("history", "--config", store["path"], ids["omer"], "--json")
    assert story.exit_code == 0, story.output
    details = [e["detail"] for e in json.loads(story.output)["events"] if e["event"] == "superseded"]
    assert details and f"consolidate: older fact, superseded by {ids['omer_new']} (similarity" in details[0]
    again = run("consolidate", "--config", store["path"], "--dry-run")
    assert again.exit_code == 0 and "nothing to consolidate" in again.output


def test_the_prompt_applies_only_on_yes(store):
    ids = store["ids"]
    no = run("consolidate", "--config", store["path"], "--interactive", input="n\n")
    assert no.exit_code == 0 and "apply these 3 change(s)?" in no.output and "nothing changed" in no.output
    assert set(states(store["config"], ids).values()) == {"live"}
    yes = run("consolidate", "--config", store["path"], "--interactive", input="y\n")
    assert yes.exit_code == 0 and "applied 3 change(s)" in yes.output
    assert states(store["config"], ids)["old"] == "superseded"


def test_json_and_scope(store):
    ids = store["ids"]
    result = run("consolidate", "--config", store["path"], "--scope", "user_id=omer", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["dry_run"] is True and data["memories"] == 2 and data["scopes"] == 1
    assert [(s["action"], s["memory_id"], s["into_id"]) for s in data["steps"]] == [
        ("supersede", ids["omer"], ids["omer_new"])
    ]
    assert states(store["config"], ids)["omer"] == "live"


@pytest.mark.parametrize(
    "args, message",
    [
        (("--scope", "dana"), "is not KEY=VALUE"),
        (("--scope", "user=dana"), "unknown scope key 'user'"),
        (("--dry-run", "--apply"), "choose --dry-run or --apply"),
        (("--neighbours", "0"), "--neighbours"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(store, args, message):
    result = run("consolidate", "--config", store["path"], *args)
    assert result.exit_code == 2 and message in result.output, result.output


def test_while_the_app_holds_the_store_it_refuses_and_names_the_in_process_route(store, hold_qdrant_lock, tmp_path):
    hold_qdrant_lock(tmp_path / "store" / "qdrant")
    result = run("consolidate", "--config", store["path"], "--dry-run")
    assert result.exit_code == 3, result.output  # could not run: the store is held
    assert result.output.startswith("Error: ") and "consolidate(m, dry_run=True)" in result.output
