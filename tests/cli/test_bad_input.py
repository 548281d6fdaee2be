"""Bad input on the command line exits 2 with one line naming the problem and the fix, in every command: a
`--config module:ATTR` that is not a config (sys:exit, os:abort, a class, a module), a YAML alias bomb, absurd
durations and far-off dates. Errors of the stores exit 3 (could not run); 1 is only for findings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mem0_hygiene.cli import cli

REPO = Path(__file__).resolve().parents[2]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def store(make_deployment, tmp_path):
    def plant(m):
        m.add("Dana works on billing", user_id="dana", infer=False, source="chat")

    d = make_deployment(tmp_path / "store", plant=plant, config_file=tmp_path / "mem0.json")
    return str(d.config_path)


def assert_usage_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    for needle in needles:
        assert needle in result.output, result.output


@pytest.mark.parametrize("command", [["audit"], ["where"], ["prune", "--dry-run"], ["digest"], ["review", "--list"]])
def test_config_sys_exit_is_refused_with_exit_2_in_every_command(command):
    assert_usage_error(run(*command, "--config", "sys:exit"), "sys:exit", "built-in function", "a dict")


def test_config_os_abort_does_not_abort_the_audit():
    done = subprocess.run(
        [sys.executable, "-m", "mem0_hygiene", "audit", "--config", "os:abort"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "MEM0_TELEMETRY": "False"},
    )
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "os:abort" in done.stderr and "built-in function" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_module_that_exits_while_imported_is_an_error_not_a_clean_audit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m0h_exiting_settings.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.delitem(sys.modules, "m0h_exiting_settings", raising=False)
    assert_usage_error(run("audit", "--config", "m0h_exiting_settings:CONFIG"), "m0h_exiting_settings", "SystemExit")


def test_a_yaml_alias_bomb_exits_2(tmp_path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        lines.append(f"{name}: &{name} [{','.join(['*' + 'abcdefghi'[i]] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert_usage_error(run("audit", "--config", str(path)), "bomb.yaml", "alias")
    assert_usage_error(run("where", "--config", str(path)), "bomb.yaml", "alias")


def test_a_missing_or_broken_config_file_exits_2_everywhere(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    for command in (["where"], ["prune", "--dry-run"], ["history", "some-id"], ["backup", str(tmp_path / "b")]):
        assert_usage_error(run(*command, "--config", str(bad)), "broken.json", "not valid JSON")


@pytest.mark.parametrize(
    "args, needles",
    [
        (["prune", "--unused", "999999999d"], ["unused '999999999d'", "100 years"]),
        (["review", "--list", "--older-than", "999999999d"], ["--older-than '999999999d'", "100 years"]),
        (["digest", "--since", "999999999d"], ["since '999999999d'", "100 years"]),
        (["digest", "--since", "9999-12-31T23:00:00-05:00"], ["since '9999-12-31T23:00:00-05:00'", "2999-12-31"]),
        (["digest", "--since", "soon"], ["since 'soon'", "'1d'"]),
        (["schedule", "--cron", "--every", "999999999d"], ["every '999999999d'", "100 years"]),
    ],
)
def test_absurd_durations_and_dates_exit_2_naming_the_value_and_the_range(store, args, needles):
    assert_usage_error(run(*args, "--config", store), *needles)


def test_a_hygiene_setting_out_of_range_makes_audit_exit_2_not_3(store, tmp_path):
    config = json.loads(Path(store).read_text())
    config["hygiene"] = {"retain_superseded": "999999999d"}
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(config))
    assert_usage_error(run("audit", "--config", str(path)), "hygiene.retain_superseded", "100 years")
    assert_usage_error(run("prune", "--dry-run", "--config", str(path)), "hygiene.retain_superseded")


def test_an_unknown_memory_id_is_bad_input(store):
    unknown = run("history", "no-such-id", "--config", store)
    assert unknown.exit_code == 2 and "no memory with id" in unknown.output


@pytest.mark.parametrize(
    "command", [["digest"], ["history", "some-id"], ["prune"], ["prune", "--dry-run"], ["audit"], ["review", "--list"]]
)
def test_a_history_db_that_is_not_sqlite_is_named_and_exits_2_changing_nothing(make_deployment, tmp_path, command):
    d = make_deployment(
        tmp_path / "store", plant=lambda m: m.add("Dana works on billing", user_id="dana", infer=False, source="chat")
    )
    wrong = tmp_path / "notes.db"
    wrong.write_text("a text file, not mem0's history database\n")
    args = ["--qdrant-path", str(d.folder / "qdrant"), "--history-db", str(wrong)]
    result = run(*command, *args)
    assert_usage_error(result, f"{wrong} is not a SQLite database", "--history-db")
    assert "DatabaseError" not in result.output and "unexpected" not in result.output
    assert wrong.read_text() == "a text file, not mem0's history database\n"


def test_a_yaml_syntax_error_is_one_line_with_its_line_and_column(tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text('vector_store:\n  provider: qdrant\n  config: {path: "x"\nllm: [\n')
    result = run("audit", "--config", str(path))
    assert_usage_error(
        result,
        "app.yaml is not valid YAML: expected ',' or '}'",
        "at line 4, column 1",
        "(while parsing a flow mapping at line 3, column 11)",
    )
    assert "\\n" not in result.output and "<unicode string>" not in result.output
    assert result.output.count("\n") == 1
