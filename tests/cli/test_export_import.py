"""``mem0-hygiene export`` and ``import``: the files and the summary, a dry run that writes nothing, the same store
again after the import, and a damaged file refused with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli


def config_file(folder: Path) -> str:
    path = folder / "config.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(offline_config(folder / "store")))
    return str(path)


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_export_then_import_moves_the_memories_into_the_other_config(tmp_path: Path) -> None:
    source = config_file(tmp_path / "a")
    m = Memory.from_config(json.loads(Path(source).read_text()))
    m.add("Dana deploys on Fridays", user_id="dana", infer=False)
    m.close()

    out = tmp_path / "dana.jsonl"
    exported = run("export", str(out), "--with-vectors", "--config", source)
    assert exported.exit_code == 0, exported.output
    assert f"Exported 1 memory to {out}" in exported.output
    assert (tmp_path / "dana.history.jsonl").is_file()

    target = config_file(tmp_path / "b")
    plan = run("import", str(out), "--dry-run", "--config", target)
    assert plan.exit_code == 0, plan.output
    assert "dry run: would import" in plan.output
    assert not (tmp_path / "b" / "store" / "hygiene.db").exists()

    imported = run("import", str(out), "--config", target, "--json")
    assert imported.exit_code == 0, imported.output
    doc = json.loads(imported.stdout)
    assert (doc["inserted"], doc["ledger_written"], doc["verified"]) == (1, 1, True)

    again = Memory.from_config(json.loads(Path(target).read_text()))
    try:
        assert [r["memory"] for r in again.get_all(filters={"user_id": "dana"})["results"]] == [
            "Dana deploys on Fridays"
        ]
    finally:
        again.close()


def test_a_damaged_export_is_refused_with_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "an export"}\n')
    result = run("import", str(bad), "--config", config_file(tmp_path / "b"))
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {bad} is not a mem0-hygiene-export file")
    assert "export the store again with `mem0-hygiene export`" in result.output
