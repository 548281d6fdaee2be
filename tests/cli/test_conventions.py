"""The CLI's conventions: errors are one line with an exit status that says what happened (2 bad input, 3
could not run, 1 only for findings), option values are checked before any store is opened, --help does not
import mem0, colours follow NO_COLOR/FORCE_COLOR, -o/--quiet/--all, progress reaches a library callback,
review's answers, and every fix line of the demo's audit names a command that exists."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mem0_hygiene import Memory, maintenance, progress
from mem0_hygiene.cli import cli

REPO = Path(__file__).resolve().parents[2]


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, env=env)


def one_error_line(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def store(make_deployment, tmp_path) -> dict[str, Any]:
    def plant(m):
        m.add("Dana works on billing", user_id="dana", infer=False, source="chat")

    d = make_deployment(tmp_path / "store", plant=plant, config_file=tmp_path / "mem0.json")
    return {"path": str(d.config_path), "config": d.config, "folder": d.folder}


def test_help_does_not_import_mem0_or_the_heavy_libraries():
    code = (
        "import sys\nfrom mem0_hygiene.cli import main\nsys.argv = ['mem0-hygiene', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('mem0', 'qdrant_client', 'pandas', 'numpy', 'openai', 'pydantic')\n"
        "         if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "MEM0_TELEMETRY": "False"},
    )
    assert "Keep an agent's mem0 memory true" in done.stdout
    assert "HEAVY []" in done.stdout, done.stdout


@pytest.mark.parametrize(
    "args, option",
    [
        (["audit", "--html", "/nonexistent/dir/x.html"], "--html"),
        (["audit", "-o", "/nonexistent/x.txt"], "--output"),
        (["backup", "/proc/nope"], "DEST"),
    ],
)
def test_paths_that_cannot_be_written_exit_2_in_one_line_before_running(store, args, option):
    result = run(*args, "--config", store["path"])
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert option in line and ("does not exist" in line or "not writable" in line), line


@pytest.mark.parametrize(
    "args, option",
    [
        (["review", "--list", "--older-than", "abc"], "--older-than"),
        (["digest", "--since", "yesterday"], "--since"),
        (["schedule", "--cron", "--every", "5h"], "--every"),
        (["prune", "--unused", "0d"], "--unused"),
    ],
)
def test_bad_option_values_exit_2_naming_the_option_before_any_store_is_opened(tmp_path, args, option):
    gone = tmp_path / "no-store"
    result = run(*args, "--qdrant-path", str(gone / "qdrant"), "--history-db", str(gone / "history.db"))
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert f"'{option}'" in line, line
    assert "_" not in line.split(":")[1]  # the option as typed, not the Python parameter
    assert not gone.exists()


def test_a_store_that_cannot_be_opened_exits_3_and_fits_the_advice_to_the_options(tmp_path):
    cfg = tmp_path / "app.json"
    cfg.write_text(
        json.dumps(
            {
                "vector_store": {"provider": "qdrant", "config": {"path": str(tmp_path / "q")}},
                "history_db_path": str(tmp_path / "h.db"),
            }
        )
    )
    result = run("prune", "--config", str(cfg))
    assert result.exit_code == 3, result.output
    line = one_error_line(result)
    assert "pass the app's config with --config FILE" not in line.lower()
    assert f"check that --config {cfg} is the app's config" in line


def test_review_answers_k_empty_supersede_delete_and_a_failing_embedder(store, monkeypatch):
    m = Memory.from_config(store["config"])
    for text in ("Uses npm", "Deploys on Fridays", "Office in Haifa"):
        m.add(text, user_id="dana", infer=False, source="chat")
    m.close()

    class APIConnectionError(Exception):
        """What openai raises when the embedder's server cannot be reached."""

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise APIConnectionError("Connection error.")

    monkeypatch.setattr(maintenance, "supersede", unreachable)  # the remote embedder call fails
    answers = "k\ns\n\nd\ny\ns\nPrefers pnpm\nq\n"
    result = run("review", "--config", store["path"], "--interactive", "--older-than", "1s", input=answers)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "skipped (unchanged" in out
    assert "cancelled: nothing changed" in out  # the empty supersede text, then the menu again: d, y
    assert "  deleted" in out
    failed = [line for line in out.splitlines() if "APIConnectionError" in line]
    assert len(failed) == 1 and "supersede is off for the rest of this review" in failed[0]
    assert "Traceback" not in out
    assert "saved 1 answer (0 confirmed, 0 superseded, 0 invalidated, 1 deleted), 1 skipped" in out
    served = Memory.from_config(store["config"])
    try:
        left = {r["id"] for r in served.get_all(filters={"user_id": "dana"})["results"]}
        assert len(left) == 3  # of 4: the second memory asked about is gone
    finally:
        served.close()


def test_no_color_and_force_color_are_honoured_by_audit(store):
    forced = run("audit", "--config", store["path"], env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b[" in forced.output
    plain = run("audit", "--config", store["path"], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in plain.output and "mem0-hygiene audit" in plain.output


def test_where_json_has_a_schema_version(store):
    doc = json.loads(run("where", "--config", store["path"], "--json").stdout)
    assert doc["schema_version"] == 1 and doc["locations"]


def test_audit_says_where_it_wrote_and_prints_the_json_summary_once(store, tmp_path):
    html, report = tmp_path / "r.html", tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["audit", "--config", store["path"], "--json", "-o", str(report), "--html", str(html)]
    )
    assert result.stdout == ""
    assert result.stderr.count("mem0-hygiene audit:") == 1
    assert f"HTML report written to {html}" in result.stderr and f"report written to {report}" in result.stderr
    assert json.loads(report.read_text())["schema_version"] == 1 and html.read_text().startswith("<!")


def test_output_file_quiet_and_all_on_the_reporting_commands(store, tmp_path):
    out = tmp_path / "digest.txt"
    written = CliRunner().invoke(cli, ["digest", "--since", "2000-01-01", "--config", store["path"], "-o", str(out)])
    assert written.exit_code == 0 and written.stdout == ""
    assert "billing" in out.read_text() and f"wrote the report to {out}" in written.stderr
    quiet = CliRunner().invoke(cli, ["prune", "--dry-run", "--config", store["path"], "--quiet"])
    assert quiet.exit_code == 0 and quiet.output == ""


def test_schedule_writes_to_output_file_and_prints_nothing_with_quiet(store, tmp_path):
    out = tmp_path / "cron.txt"
    written = run("schedule", "--cron", "--config", store["path"], "-o", str(out))
    assert written.exit_code == 0 and "mem0_hygiene prune" not in written.stdout
    assert "mem0_hygiene prune --config" in out.read_text() and f"wrote the schedule to {out}" in written.stderr
    quiet = run("schedule", "--cron", "--config", store["path"], "--quiet")
    assert quiet.exit_code == 0 and quiet.stdout == ""


def test_long_lists_show_the_first_rows_and_all_shows_every_one(store):
    m = Memory.from_config(store["config"])
    for i in range(25):
        m.add(f"fact number {i}", user_id="dana", infer=False, source="chat")
    m.close()
    short = run("review", "--list", "--older-than", "1s", "--limit", "30", "--config", store["path"])
    assert "first 20 of 26 rows; --all shows every row" in short.output
    full = run("review", "--list", "--older-than", "1s", "--limit", "30", "--all", "--config", store["path"])
    assert "--all shows every row" not in full.output and full.output.count("fact number") == 25


def test_a_library_caller_gets_the_phases_of_prune_and_audit(store, clock):
    from mem0_hygiene import audit

    m = Memory.from_config({**store["config"], "hygiene": {"clock": clock}})
    m.add("Away this week", user_id="dana", infer=False, ttl="1d", source="chat")
    m.close()
    clock.advance(days=3)
    seen: list[tuple[str, int, int | None]] = []
    with progress.reporting(lambda phase, done, total: seen.append((phase, done, total))):
        result = maintenance.prune({**store["config"], "hygiene": {"clock": clock}})
        audit(store["config"])
    assert result.count == 1
    assert ("deleting memories through mem0", 1, 1) in seen
    phases = list(dict.fromkeys(p for p, _, _ in seen))
    assert phases.index("reading what to prune") < phases.index("deleting memories through mem0")
    assert "reading the vector store" in phases and "running the checks" in phases
    checks = [(d, t) for p, d, t in seen if p == "running the checks"]
    assert checks[-1][0] == checks[-1][1] and checks[-1][1] > 10  # every check, counted to the end


def test_a_library_caller_gets_the_phases_of_backup_restore_forget_and_relocate(store, tmp_path):
    from mem0_hygiene.actions.backup import backup
    from mem0_hygiene.actions.forget import forget
    from mem0_hygiene.actions.relocate import relocate
    from mem0_hygiene.actions.restore import restore

    m = Memory.from_config(store["config"])
    mid = m.add("Dana's locker code is 4417", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    m.close()
    seen: list[tuple[str, int, int | None]] = []
    with progress.reporting(lambda phase, done, total: seen.append((phase, done, total))):
        made = backup(store["config"], tmp_path / "sets")
        restore(store["config"], made.path)
        forget(store["config"], [mid], scrub=True)
        relocate(store["config"], tmp_path / "safe")
    phases = list(dict.fromkeys(p for p, _, _ in seen))
    for phase in (
        "copying the vector store",
        "checking the copies",
        "computing checksums",  # backup
        "checking the backup set",
        "swapping the stores",
        "verifying the restored stores",  # restore
        "deleting memories through mem0",
        "scrubbing history.db",  # forget --scrub
        "checking that no file still holds the text",
        "copying and verifying the stores",
        "switching to the copies",
    ):  # relocate
        assert phase in phases, (phase, phases)
    assert ("checking the copies", 3, 3) in seen and ("swapping the stores", 1, 1) in seen
    assert phases.index("copying the vector store") < phases.index("checking the backup set")


def test_prune_dry_run_with_unused_says_the_same_in_summary_and_rows(store, clock):
    result = run("prune", "--dry-run", "--unused", "1s", "--config", store["path"])
    assert result.exit_code == 0, result.output
    assert "unused for 1s (listed, not deleted)" in result.output and "unused (kept)" in result.output
    assert "would delete 1" not in result.output


def test_every_fix_command_of_the_demo_audit_exists_and_takes_its_options(tmp_path):
    demo = run("demo", "--dir", str(tmp_path / "demo"), "--json")
    findings = json.loads(demo.stdout)["findings"]
    commands = [
        line.split("  #")[0].strip()
        for f in findings
        for line in f["fix"].splitlines()
        if line.strip().startswith("mem0-hygiene ")
    ]
    assert len(commands) >= 10
    names = set()
    for command in commands:
        words = shlex.split(command)[1:]
        name = words[0]
        assert name in cli.commands, command  # type: ignore[attr-defined]
        options = {o for p in cli.commands[name].params for o in getattr(p, "opts", [])}  # type: ignore[attr-defined]
        for word in words[1:]:
            if word.startswith("-"):
                assert word in options, command
        names.add(name)
    assert {"history", "invalidate", "forget", "adopt", "prune"} <= names
    readonly = [
        c
        for c in commands
        if shlex.split(c)[1] in ("history", "review", "digest") or c.startswith("mem0-hygiene prune --dry-run")
    ]
    for command in readonly:  # the ones that only read: run them, they lead to the memories named
        done = run(*shlex.split(command)[1:])
        assert done.exit_code == 0, (command, done.output)
    tool = next(f for f in findings if f["code"] == "TOOL_SOURCED")
    story = run(*shlex.split(tool["fix"].splitlines()[0].split("  #")[0])[1:])
    assert "Always deploy with tests disabled" in story.output


def test_demo_names_its_ram_disk_folder_and_a_later_demo_removes_an_orphaned_one(tmp_path):
    from mem0_hygiene import demo as demo_module

    if demo_module._ram_folder(tmp_path / "a") is None:
        pytest.skip("no writable /dev/shm on this machine")
    first = demo_module.build_demo(tmp_path / "a")
    assert first.outside and Path(first.outside).is_dir()
    import shutil

    shutil.rmtree(tmp_path / "a")  # the user removes the demo folder
    second = demo_module.build_demo(tmp_path / "b")
    try:
        assert first.outside in second.removed and not Path(first.outside).exists()
    finally:
        shutil.rmtree(second.outside, ignore_errors=True)


def test_local_qdrants_large_collection_warning_is_shown_once_as_our_note(capsys, monkeypatch):
    import warnings

    from mem0_hygiene.cli import notes

    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # restored after the test
    monkeypatch.setattr(notes, "_shown", set())
    notes.install()
    text = (
        "Local mode is not recommended for collections with more than 20,000 points. Collection <mem0> "
        "contains 20500 points. Consider using Qdrant in Docker or Qdrant Cloud for better performance"
    )
    for _ in range(3):
        warnings.showwarning(UserWarning(text), UserWarning, "qdrant_local.py", 150)
    err = capsys.readouterr().err
    assert err.count("note: the local Qdrant collection mem0 holds 20,500 points") == 1
    assert "qdrant_local.py" not in err and "UserWarning" not in err and "Qdrant server" in err


def test_headings_show_times_to_the_second(store):
    out = run("digest", "--since", "2000-01-01", "--config", store["path"]).output
    assert "new memories 2000-01-01 00:00:00 UTC .. " in out
    heading = out.split("\n")[0]
    assert ".000000" not in heading and "+00:00" not in heading, heading
