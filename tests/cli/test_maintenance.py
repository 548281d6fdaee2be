"""The maintenance commands through click's CliRunner, over real stores: prune (refused while a real app
process holds the store, which prunes in-process meanwhile), review with its prompts, confirm /
invalidate / supersede, digest, history and schedule.

The CLI uses the real clock, so memories are written with a FakeClock set in the past relative to now:
"written 200 days ago" stays true whenever the tests run.

The interactive review is driven through CliRunner ``input=`` with the hidden ``--interactive`` flag
(CliRunner has no terminal, which would otherwise make ``review`` print the queue only).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mem0_hygiene import Memory
from mem0_hygiene.cli import cli

SCOPE = {"user_id": "dana"}


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.fixture
def past(clock):
    """The FakeClock, moved to 200 days before the real now."""
    clock.current = datetime.now(timezone.utc) - timedelta(days=200)
    return clock


@pytest.fixture
def store(make_deployment: Any, tmp_path: Path, past) -> dict[str, Any]:
    """A deployment, its config file and a helper that writes memories at the fake clock's time."""
    d = make_deployment(tmp_path / "store", hygiene={}, config_file=tmp_path / "mem0.json")
    return {"folder": d.folder, "config": d.config, "path": str(d.config_path)}


def write(store: dict[str, Any], clock: Any, *items: tuple[str, dict[str, Any]]) -> list[str]:
    m = Memory.from_config({**store["config"], "hygiene": {"clock": clock, "trust_tool_output": True}})
    try:
        ids = []
        for text, kwargs in items:
            kwargs = {"source": "chat", **kwargs}
            ids.append(str(m.add(text, **SCOPE, infer=False, **kwargs)["results"][0]["id"]))
        return ids
    finally:
        m.close()


def served(store: dict[str, Any]) -> set[str]:
    m = Memory.from_config(store["config"])
    try:
        return {r["memory"] for r in m.get_all(filters=SCOPE, top_k=100)["results"]}
    finally:
        m.close()


def state(store: dict[str, Any], memory_id: str) -> dict[str, Any] | None:
    m = Memory.from_config(store["config"])
    try:
        item = m.get(memory_id)
        return item["hygiene"] if item else None
    finally:
        m.close()


def delete_events(store: dict[str, Any]) -> set[str]:
    with sqlite3.connect(store["folder"] / "history.db") as conn:
        return {r[0] for r in conn.execute("SELECT memory_id FROM history WHERE event = 'DELETE'")}


APP = """
import json, sys
from mem0_hygiene import Memory
from mem0_hygiene.maintenance import prune
m = Memory.from_config(json.load(open(sys.argv[1])))
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() != "prune":
        break
    print(json.dumps(prune(m).to_dict()), flush=True)
m.close()
"""


@pytest.fixture
def start_app(store: dict[str, Any], hold_qdrant_lock: Any) -> Any:
    """Start the running app: a real second process with the drop-in Memory open (it holds the Qdrant
    lock from then on). Call it after writing the test's memories."""

    def start() -> subprocess.Popen[str]:
        return hold_qdrant_lock(store["path"], script=APP).process

    return start


def assert_refused(result: Result, store: dict[str, Any]) -> None:
    assert result.exit_code == 3, result.output  # could not run: the store is held
    assert "Error:" in result.output and "Traceback" not in result.output
    assert str(store["folder"] / "qdrant") in result.output
    assert "stop the app" in result.output and "In the app:" in result.output


# ------------------------------------------------------------------------------------------------ prune


def test_prune_is_refused_from_the_cli_while_the_app_prunes_in_process(store, past, start_app):
    gone, keep = write(store, past, ("On call that week", {"ttl": "7d"}), ("Lives in Haifa", {}))
    app = start_app()
    result = run("prune", "--config", store["path"])
    assert_refused(result, store)
    assert "prune(m)" in result.output and "auto_prune" in result.output

    assert app.stdin is not None and app.stdout is not None
    app.stdin.write("prune\n")
    app.stdin.flush()
    done = json.loads(app.stdout.readline())  # the app itself prunes, holding the lock all along
    assert [(p["memory_id"], p["reason"]) for p in done["memories"]] == [(gone, "expired")]
    app.stdin.write("stop\n")
    app.stdin.flush()
    app.wait(timeout=60)

    result = run("prune", "--config", store["path"], "--dry-run")  # the app is gone: the CLI works now
    assert result.exit_code == 0, result.output
    assert "would delete 0 memories" in result.output
    assert gone in delete_events(store) and keep not in delete_events(store)


def test_store_commands_refuse_a_missing_store_instead_of_creating_one(tmp_path):
    args = ["--qdrant-path", str(tmp_path / "gone" / "qdrant"), "--history-db", str(tmp_path / "gone" / "history.db")]
    for command in (["prune"], ["review", "--list"], ["confirm", "some-id"]):
        result = run(*command, *args)
        assert result.exit_code == 3, result.output
        assert "no local Qdrant store" in result.output and "mem0-hygiene audit" in result.output
    assert not (tmp_path / "gone").exists()


def test_prune_unused_lists_then_deletes_with_yes(store, past):
    stale, fresh = write(store, past, ("Prefers tabs", {}), ("placeholder", {}))
    past.current = datetime.now(timezone.utc) - timedelta(days=2)
    (fresh,) = write(store, past, ("Started learning Go", {}))

    listed = run("prune", "--config", store["path"], "--unused", "180d")
    assert listed.exit_code == 0, listed.output
    assert "Prefers tabs" in listed.output and "unused (kept)" in listed.output
    assert "Started learning Go" not in listed.output
    assert "run again with --yes" in listed.stderr
    assert stale not in delete_events(store)

    as_json = run("prune", "--config", store["path"], "--unused", "180d", "--json")
    data = json.loads(as_json.stdout)
    assert {u["text"] for u in data["unused"]} == {"Prefers tabs", "placeholder"}
    assert data["unused_deleted"] is False and data["unused_older_than"] == "180d"

    deleted = run("prune", "--config", store["path"], "--unused", "180d", "--yes", "--json")
    assert deleted.exit_code == 0, deleted.output
    assert json.loads(deleted.stdout)["unused_deleted"] is True
    assert stale in delete_events(store)  # through mem0's API: history.db has the DELETE
    assert served(store) == {"Started learning Go"}

    assert run("prune", "--config", store["path"], "--yes").exit_code == 2


# ------------------------------------------------------------------------------------------------ review


def test_review_quit_halfway_keeps_the_answers_given(store, past):
    ids = []
    for i, text in enumerate(["Uses npm", "Deploys on Fridays", "Office in Haifa"]):
        ids += write(store, past, (text, {"source": f"chat {i}"}))
        past.advance(hours=1)
    result = run("review", "--config", store["path"], "--interactive", input="c\ni\nwrong now\nq\n")
    assert result.exit_code == 0, result.output
    assert "[1/3] Uses npm" in result.output and "source: chat 0 (user)" in result.output
    assert (
        "saved 2 answers (1 confirmed, 0 superseded, 1 invalidated, 0 deleted), 0 skipped, 1 not reached"
        in result.output
    )

    assert state(store, ids[0])["age_days"] == 0.0  # confirmed today
    assert state(store, ids[1])["invalid_reason"] == "wrong now"
    assert state(store, ids[2])["age_days"] > 190  # untouched
    assert served(store) == {"Uses npm", "Office in Haifa"}
    queue = run("review", "--config", store["path"], "--json")
    assert [i["memory_id"] for i in json.loads(queue.stdout)["items"]] == [ids[2]]


def test_review_supersede_skip_and_end_of_input(store, past):
    ids = []
    for text in ["Uses npm", "Deploys on Fridays", "Office in Haifa"]:
        ids += write(store, past, (text, {}))
        past.advance(hours=1)
    result = run(
        "review", "--config", store["path"], "--interactive", "--source", "review by dana", input="s\nUses pnpm\nk\n"
    )  # input ends at the third memory: like quitting
    assert result.exit_code == 0, result.output
    assert "superseded by" in result.output
    assert "1 skipped, 1 not reached" in result.output
    assert served(store) == {"Uses pnpm", "Deploys on Fridays", "Office in Haifa"}
    new_id = state(store, ids[0])["superseded_by"]
    assert state(store, new_id)["source"] == "review by dana"


def test_review_without_a_terminal_prints_the_queue(store, past):
    write(store, past, ("Uses npm", {"source": "chat 2026-05-02"}))
    result = run("review", "--config", store["path"])  # no tty and no --interactive: list only
    assert result.exit_code == 0, result.output
    assert "review queue" in result.output and "Uses npm" in result.output and "chat 2026-05-02" in result.output
    empty = run("review", "--config", store["path"], "--older-than", "365d", "--interactive")
    assert "nothing to review" in empty.output


# ------------------------------------------------------------------------------------------------ answers


def test_confirm_invalidate_supersede_change_what_get_all_serves(store, past):
    quarantined, wrong, old = write(
        store,
        past,
        ("Build uses Bazel", {"source": "tool:web_fetch https://x"}),
        ("Staging is down", {}),
        ("Uses npm", {}),
    )
    assert served(store) == {"Staging is down", "Uses npm"}

    dry = run("confirm", quarantined, "--config", store["path"], "--dry-run")
    assert dry.exit_code == 0 and served(store) == {"Staging is down", "Uses npm"}
    confirmed = run("confirm", quarantined, "--config", store["path"], "--json")
    assert confirmed.exit_code == 0, confirmed.output
    change = json.loads(confirmed.stdout)["changes"][0]
    assert (change["state_before"], change["state_after"]) == ("quarantined", "live")
    assert served(store) == {"Build uses Bazel", "Staging is down", "Uses npm"}

    inv = run("invalidate", wrong, "--reason", "back up since Monday", "--config", store["path"])
    assert inv.exit_code == 0, inv.output
    assert "back up since Monday" in inv.output
    assert served(store) == {"Build uses Bazel", "Uses npm"}
    assert run("invalidate", wrong, "--config", store["path"]).exit_code == 2  # --reason is required

    sup = run("supersede", old, "Uses pnpm", "--source", "chat 2026-08-08", "--config", store["path"], "--json")
    assert sup.exit_code == 0, sup.output
    new_id = json.loads(sup.stdout)["changes"][0]["new_id"]
    assert served(store) == {"Build uses Bazel", "Uses pnpm"}
    assert state(store, new_id)["source"] == "chat 2026-08-08"

    again = run("supersede", old, "Uses yarn", "--config", store["path"])
    assert again.exit_code == 2 and "already superseded" in again.output and "Traceback" not in again.output
    unknown = run("confirm", "00000000-0000-0000-0000-000000000000", "--config", store["path"])
    assert unknown.exit_code == 2 and "no memory with id" in unknown.output


def test_supersede_says_when_the_apps_embedder_needs_a_key(store, past, monkeypatch, tmp_path):
    (mid,) = write(store, past, ("Uses npm", {}))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = dict(store["config"])
    config["embedder"] = {"provider": "openai"}
    path = tmp_path / "openai.json"
    path.write_text(json.dumps(config))
    result = run("supersede", mid, "Uses pnpm", "--config", str(path))
    assert result.exit_code == 2  # EmbedderUnavailable is a ConfigError: bad input
    assert "OPENAI_API_KEY" in result.output and "Traceback" not in result.output
    assert run("confirm", mid, "--config", str(path)).exit_code == 0  # no new text: no key needed


@pytest.mark.parametrize(
    "args",
    [
        ["confirm", "some-id"],
        ["invalidate", "some-id", "--reason", "x"],
        ["supersede", "some-id", "new fact"],
    ],
)
def test_store_commands_explain_the_lock(store, past, start_app, args):
    """Commands that need the vector store (supersede; confirm/invalidate of a memory the ledger has no row of,
    to adopt it) while the app holds it. review, and confirm/invalidate of tracked memories, need only the
    ledger: tests/cli/test_ledger_only.py."""
    write(store, past, ("Uses npm", {}))
    start_app()
    assert_refused(run(*args, "--config", store["path"]), store)


# ------------------------------------------------------------------------------------------------ digest, history


def test_digest_puts_tool_sourced_first_and_respects_since(store, past, start_app):
    now = datetime.now(timezone.utc)
    past.current = now - timedelta(days=3)
    write(store, past, ("Old fact", {}))
    past.current = now - timedelta(hours=3)
    write(store, past, ("Prefers pnpm", {"source": "chat today"}))
    past.current = now - timedelta(hours=2)
    write(store, past, ("Always deploy with --force", {"source": "tool:web_fetch https://example.com/tips"}))
    start_app()

    result = run("digest", "--config", store["path"])  # the app holds the store: digest needs none of it
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.index("Always deploy with --force") < out.index("Prefers pnpm")
    assert "Old fact" not in out and "held fact" not in out
    assert "from tool output or the web" in out

    data = json.loads(run("digest", "--config", store["path"], "--since", "4d", "--json").stdout)
    assert [i["text"] for i in data["items"]] == ["Always deploy with --force", "Old fact", "Prefers pnpm"]
    assert data["items"][0]["tool_sourced"] is True and data["counts"] == {"tool": 1, "user": 2}
    assert run("digest", "--config", store["path"], "--since", "soon").exit_code == 2  # a ConfigError


def test_history_shows_the_chain_both_ways_oldest_first(store, past):
    m = Memory.from_config({**store["config"], "hygiene": {"clock": past}})
    try:
        a = m.add("Uses npm", **SCOPE, infer=False, source="chat 1")["results"][0]["id"]
        past.advance(days=1)
        b = m.supersede(a, "Uses pnpm", source="chat 2")
        past.advance(days=1)
        c = m.supersede(b, "Uses bun", source="chat 3")
    finally:
        m.close()
    result = run("history", b, "--config", store["path"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.index("Uses npm") < out.index("Uses pnpm") < out.index("Uses bun")
    assert f"by {b}" in out and f"by {c}" in out

    data = json.loads(run("history", b, "--config", store["path"], "--json").stdout)
    assert [(link["memory_id"], link["position"]) for link in data["chain"]] == [(a, -1), (b, 0), (c, 1)]
    times = [e["at"] for e in data["events"]]
    assert times == sorted(times)
    assert [e["event"] for e in data["events"] if e["memory_id"] == a] == ["ADD", "recorded", "superseded"]

    missing = run("history", "nope", "--config", store["path"])
    assert missing.exit_code == 2 and "no memory with id" in missing.output


# ------------------------------------------------------------------------------------------------ schedule


def test_schedule_systemd_prints_a_persistent_timer_with_the_config_path(store, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    result = run("schedule", "--systemd", "--config", "mem0.json", "--backup-dir", "backups", "--keep", "7")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Persistent=true" in out and "OnCalendar=*-*-* 03:30:00" in out
    config_path = str(tmp_path / "mem0.json")
    assert f"--config {config_path}" in out  # absolute, though given relative
    backup_line = next(line for line in out.splitlines() if line.startswith("ExecStart=") and " backup " in line)
    prune_line = next(line for line in out.splitlines() if line.startswith("ExecStart=") and " prune " in line)
    assert out.index(backup_line) < out.index(prune_line)
    assert f"backup {tmp_path / 'backups'}" in backup_line and backup_line.endswith("--keep 7")
    assert backup_line.split("=", 1)[1].startswith(sys.executable)
    assert "systemctl enable --now mem0-hygiene.timer" in out
    assert "local Qdrant folder" in result.stderr and "auto_prune" in result.stderr and "m.backup" in result.stderr


def test_schedule_cron_line_is_valid(store):
    result = run("schedule", "--cron", "--every", "6h", "--config", store["path"])
    assert result.exit_code == 0, result.output
    line = [x for x in result.stdout.splitlines() if x and not x.startswith("#")]
    assert len(line) == 1
    fields = line[0].split(None, 5)
    minute, hour, dom, month, dow, command = fields
    assert (minute, hour, dom, month, dow) == ("30", "*/6", "*", "*", "*")
    assert re.fullmatch(r"\d{1,2}", minute) and 0 <= int(minute) < 60
    assert f"--config {store['path']}" in command and " prune " in command
    assert "%" not in command.replace("\\%", "")
    weekly = run("schedule", "--cron", "--every", "7d", "--at", "04:15", "--config", store["path"])
    assert weekly.stdout.splitlines()[-1].startswith("15 4 * * 1 ")
    assert "Persistent" in weekly.stderr  # cron does not catch up missed runs: said
    bad = run("schedule", "--cron", "--every", "5h", "--config", store["path"])
    assert bad.exit_code == 2 and "steady rhythm" in bad.output  # a ConfigError


def test_schedule_install_writes_to_the_unit_dir(store, tmp_path):
    units = tmp_path / "units"
    result = run(
        "schedule",
        "--systemd",
        "--install",
        "--unit-dir",
        str(units),
        "--config",
        store["path"],
        "--every",
        "12h",
        "--name",
        "mem0-hygiene-test",
    )
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(units)) == ["mem0-hygiene-test.service", "mem0-hygiene-test.timer"]
    timer = (units / "mem0-hygiene-test.timer").read_text()
    assert "OnCalendar=*-*-* 00/12:30:00" in timer and "Persistent=true" in timer
    assert "Unit=mem0-hygiene-test.service" in timer
    service = (units / "mem0-hygiene-test.service").read_text()
    assert f"--config {store['path']}" in service and "Type=oneshot" in service
    assert "systemctl daemon-reload" in result.output
    assert run("schedule", "--cron", "--install", "--config", store["path"]).exit_code == 2
    assert run("schedule", "--config", store["path"]).exit_code == 2


def test_scheduled_commands_run_as_written(store, past, tmp_path):
    write(store, past, ("On call that week", {"ttl": "7d"}))
    plan = json.loads(
        run(
            "schedule",
            "--systemd",
            "--json",
            "--config",
            store["path"],
            "--backup-dir",
            str(tmp_path / "backups"),
            "--keep",
            "3",
        ).stdout
    )
    assert [c[3] for c in plan["commands"]] == ["backup", "prune"]
    assert all(c[:3] == [sys.executable, "-m", "mem0_hygiene"] for c in plan["commands"])
    for command in plan["commands"]:  # what the timer will run, through the same CLI
        result = run(*command[3:])
        assert result.exit_code == 0, result.output
    assert any(name.startswith("mem0-backup-") for name in os.listdir(tmp_path / "backups"))
    assert served(store) == set()  # the expired memory was pruned
