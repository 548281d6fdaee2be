"""While the app runs and holds its local Qdrant folder (a real second process with the drop-in Memory open),
``confirm``, ``invalidate``, ``review`` (the queue, c and i), ``digest`` and ``history`` work from the ledger and
history.db alone, print what the in-process route prints, and the app serves the change at its next read. In
``review``, s and d need the store: each says why it is off. (The commands that still need the store while it is
held are refused: tests/cli/test_maintenance.py::test_store_commands_explain_the_lock.)

The CLI uses the real clock, so memories are written with a FakeClock 200 days back."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mem0_hygiene import Memory, maintenance, offline_config
from mem0_hygiene.cli import cli, render_plain
from mem0_hygiene.render.json import to_json

SCOPE = {"user_id": "dana"}

APP = """
import json, sys
from mem0_hygiene import Memory
m = Memory.from_config(json.load(open(sys.argv[1])))
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() != "served":
        break
    served = m.get_all(filters={"user_id": "dana"}, top_k=100)["results"]
    print(json.dumps(sorted(r["memory"] for r in served)), flush=True)
m.close()
"""


def run(*args: Any, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


class App:
    """The running app: a real process with the drop-in Memory open over the config (it holds the store)."""

    def __init__(self, hold_qdrant_lock: Any, config_path: Path) -> None:
        self.process = hold_qdrant_lock(config_path, script=APP).process

    def served(self) -> list[str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("served\n")
        self.process.stdin.flush()
        return list(json.loads(self.process.stdout.readline()))


@pytest.fixture
def store(tmp_path: Path, clock: Any) -> dict[str, Any]:
    """Memories written 200 days ago (by the fake clock): a quarantined tool one and three from chat."""
    clock.current = datetime.now(timezone.utc) - timedelta(days=200)
    folder = tmp_path / "store"
    m = Memory.from_config(offline_config(folder, hygiene={"clock": clock, "trust_tool_output": True}))
    try:
        ids = {}
        for name, text, source in (
            ("tool", "Build uses Bazel", "tool:web_fetch https://example.com"),
            ("npm", "Uses npm", "chat 0"),
            ("down", "Staging is down", "chat 1"),
            ("haifa", "Office in Haifa", "chat 2"),
        ):
            ids[name] = str(m.add(text, **SCOPE, infer=False, source=source)["results"][0]["id"])
            clock.advance(hours=1)
    finally:
        m.close()
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(offline_config(folder)))
    return {"folder": folder, "path": path, "ids": ids}


def copy_of(store: dict[str, Any], folder: Path) -> dict[str, Any]:
    shutil.copytree(store["folder"], folder)
    return offline_config(folder)


def without_time(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "at"}


def rows_of(output: str) -> list[str]:
    """The table's lines without its heading (which names the time it was taken)."""
    lines = [line.rstrip() for line in output.splitlines() if not line.startswith("review queue at ")]
    assert len(lines) > 3
    return lines


def test_confirm_and_invalidate_reach_the_running_apps_next_read(store, hold_qdrant_lock):
    ids = store["ids"]
    app = App(hold_qdrant_lock, store["path"])
    assert "Build uses Bazel" not in app.served()  # quarantined until confirmed
    confirmed = run("confirm", ids["tool"], "--config", store["path"])
    assert confirmed.exit_code == 0, confirmed.output
    assert "Build uses Bazel" in confirmed.output and "quarantined" in confirmed.output
    invalidated = run("invalidate", ids["down"], "--reason", "back up since Monday", "--config", store["path"])
    assert invalidated.exit_code == 0, invalidated.output
    assert "back up since Monday" in invalidated.output
    assert app.served() == ["Build uses Bazel", "Office in Haifa", "Uses npm"]

    again = run("invalidate", ids["down"], "--reason", "twice", "--config", store["path"])
    assert again.exit_code == 2 and "already invalidated" in again.output
    assert len(again.output.strip().splitlines()) == 1 and "Traceback" not in again.output


def test_the_output_is_the_in_process_routes(store, tmp_path, hold_qdrant_lock):
    ids = store["ids"]
    m = Memory.from_config(copy_of(store, tmp_path / "in_app"))  # the same stores, through the app's Memory
    try:
        expected = [
            maintenance.confirm(m, [ids["tool"], ids["npm"]]),
            maintenance.invalidate(m, ids["down"], "back up since Monday"),
            maintenance.review_queue(m),
        ]
    finally:
        m.close()
    App(hold_qdrant_lock, store["path"])
    got = [
        run("confirm", ids["tool"], ids["npm"], "--config", store["path"], "--json"),
        run("invalidate", ids["down"], "--reason", "back up since Monday", "--config", store["path"], "--json"),
        run("review", "--config", store["path"], "--json"),
    ]
    for result, want in zip(got, expected):
        assert result.exit_code == 0, result.output
        assert without_time(json.loads(result.stdout)) == without_time(json.loads(to_json(want.to_dict())))
    report = tmp_path / "queue.txt"
    assert run("review", "--config", store["path"], "--list", "-o", report).exit_code == 0
    assert rows_of(report.read_text()) == rows_of(render_plain(expected[2]))


def test_review_lists_the_queue_from_the_ledger_and_says_so(store, hold_qdrant_lock):
    App(hold_qdrant_lock, store["path"])
    listed = run("review", "--config", store["path"], "--list")
    assert listed.exit_code == 0, listed.output
    assert "Uses npm" in listed.output and "Office in Haifa" in listed.output
    assert "Build uses Bazel" not in listed.output  # quarantined: not due for review
    assert "the queue is read from the ledger alone" in listed.output and "mem0-hygiene adopt" in listed.output


def test_review_answers_c_and_i_while_s_and_d_say_why_they_are_off(store, hold_qdrant_lock):
    ids = store["ids"]
    app = App(hold_qdrant_lock, store["path"])
    answers = "s\nd\nc\ni\nwrong now\nq\n"
    result = run("review", "--config", store["path"], "--interactive", input=answers)
    assert result.exit_code == 0, result.output
    out = result.output
    held = str(store["folder"] / "qdrant")
    assert f"supersede is off: the app holds the vector store at {held} (the new fact is stored there)" in out
    assert f"delete is off: the app holds the vector store at {held} (deletes go through mem0's API)" in out
    assert "m.supersede(id, 'new fact', source=...)" in out and "m.delete(id)" in out
    assert "s=supersede (off)" in out and "d=delete (off)" in out
    assert "[1/3] Uses npm" in out and "[2/3] Staging is down" in out
    assert "saved 2 answers (1 confirmed, 0 superseded, 1 invalidated, 0 deleted), 0 skipped, 1 not reached" in out
    assert app.served() == ["Office in Haifa", "Uses npm"]
    queue = json.loads(run("review", "--config", store["path"], "--json").stdout)
    assert [i["memory_id"] for i in queue["items"]] == [ids["haifa"]]


def test_digest_and_history_read_the_ledger_while_the_app_runs(store, hold_qdrant_lock):
    ids = store["ids"]
    App(hold_qdrant_lock, store["path"])
    assert run("invalidate", ids["npm"], "--reason", "moved to pnpm", "--config", store["path"]).exit_code == 0
    story = run("history", ids["npm"], "--config", store["path"], "--json")
    assert story.exit_code == 0, story.output
    events = [(e["event"], e["detail"]) for e in json.loads(story.stdout)["events"]]
    assert ("invalidated", "reason: moved to pnpm") in events and events[0][0] == "ADD"
    digest = run("digest", "--since", "300d", "--config", store["path"], "--json")
    assert digest.exit_code == 0, digest.output
    states = {i["memory_id"]: i["state"] for i in json.loads(digest.stdout)["items"]}
    assert states == {ids["tool"]: "quarantined", ids["npm"]: "invalidated", ids["down"]: "live", ids["haifa"]: "live"}
