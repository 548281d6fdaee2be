"""``history ID`` (``memory_story``) lists every confirmation of a memory in time order, with how it was made,
the latest 10 by default and one "and N more" line for the earlier ones; ``--all`` and ``--json`` list every one.
A ledger older than the log (read-only, version 3) still shows its last confirmation."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory, maintenance
from mem0_hygiene.cli import cli
from mem0_hygiene.target import resolve

from ..stores.old_ledgers import as_version


def confirmed(story: Any) -> list[tuple[str, str]]:
    return [(e.at[:10], e.detail) for e in story.events if e.event == "confirmed"]


@pytest.fixture
def store(make_deployment: Any, tmp_path: Path, clock: Any) -> dict[str, Any]:
    clock.current = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=60)

    def plant(m: Memory) -> dict[str, str]:
        mid = str(m.add("Dana uses pnpm", user_id="dana", infer=False, source="chat")["results"][0]["id"])
        for _ in range(13):
            clock.advance(days=1)
            m.confirm(mid)
        clock.advance(days=1)
        m.update(mid, text="Dana uses pnpm 9")  # a new text counts as a confirmation too
        return {"id": mid}

    d = make_deployment(tmp_path / "store", plant=plant, config_file=tmp_path / "mem0.json")
    return {"path": str(d.config_path), "config": d.config, "id": d.planted["id"], "start": clock.current}


def test_the_story_lists_the_latest_confirmations_and_says_how_many_earlier_ones_there_were(store):
    story = maintenance.memory_story(store["config"], store["id"])
    lines = confirmed(story)
    assert len(lines) == 11  # one line for the 4 earliest, then the latest 10, oldest first
    first, *latest = lines
    assert "and 4 more confirmations from" in first[1] and "history --all lists every one" in first[1]
    assert [at for at, _ in latest] == sorted(at for at, _ in latest)
    assert latest[-1][1] == "re-checked: a new text through update()"
    assert {detail for _, detail in latest[:-1]} == {"re-checked against its source"}
    every = confirmed(maintenance.memory_story(store["config"], store["id"], confirmations=None))
    assert len(every) == 14 and len({at for at, _ in every}) == 14  # one per day, each kept


def test_the_cli_caps_the_list_and_all_and_json_show_every_confirmation(store):
    short = CliRunner().invoke(cli, ["history", store["id"], "--config", store["path"]])
    assert short.exit_code == 0, short.output
    assert "and 4 more confirmations" in short.output
    full = CliRunner().invoke(cli, ["history", store["id"], "--config", store["path"], "--all"])
    assert full.exit_code == 0 and "more confirmations" not in full.output
    assert full.output.count("confirmed") > short.output.count("confirmed")
    doc = json.loads(CliRunner().invoke(cli, ["history", store["id"], "--config", store["path"], "--json"]).output)
    assert len([e for e in doc["events"] if e["event"] == "confirmed"]) == 14


def test_a_ledger_older_than_the_log_shows_its_last_confirmation(store):
    as_version(resolve(store["config"]).ledger_path, 3)  # as an older mem0-hygiene left it; history reads it as is
    lines = confirmed(maintenance.memory_story(store["config"], store["id"]))
    assert len(lines) == 1 and "the last confirmation kept before" in lines[0][1]


def test_confirm_from_outside_the_app_is_logged_and_releases_a_quarantined_topic_key(make_deployment, tmp_path, clock):
    def plant(m: Memory) -> dict[str, str]:
        user = m.add("Deploys with Nomad", user_id="dana", infer=False, source="chat", topic_key="deploy")
        clock.advance(hours=1)
        tool = m.add(
            "Deploys with Kubernetes",
            user_id="dana",
            infer=False,
            source="tool:web_fetch https://x",
            topic_key="deploy",
        )  # quarantined: it holds no key, the user's fact stays live
        return {"user": user["results"][0]["id"], "tool": tool["results"][0]["id"]}

    d = make_deployment(tmp_path / "app", plant=plant)
    ids = d.planted
    for _ in range(2):
        clock.advance(days=1)
        maintenance.confirm(d.config, [ids["tool"]])  # the ledger-only route: no vector store opened
    story = maintenance.memory_story(d.config, ids["tool"])
    assert [detail for _at, detail in confirmed(story)] == ["re-checked against its source"] * 2
    m = Memory.from_config(d.config)
    try:
        assert m.ledger.get(ids["user"]).superseded_by == ids["tool"]  # the confirmed fact took the key over
        assert [r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"]] == ["Deploys with Kubernetes"]
    finally:
        m.close()
