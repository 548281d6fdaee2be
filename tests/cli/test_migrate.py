"""``mem0-hygiene migrate``: the plan with --dry-run (nothing written), the copy with the config to use printed,
a destination with another embedder refused with one line naming --reembed (exit 2), and --remove-source saying
what it deletes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli


def config_file(folder: Path, **embedder: Any) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    config = offline_config(folder / "store")
    if embedder:
        config["embedder"]["config"] = embedder
        config["vector_store"]["config"]["embedding_model_dims"] = embedder["embedding_dims"]
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_migrate_plans_copies_and_removes_the_old_store_saying_what(tmp_path: Path) -> None:
    source = config_file(tmp_path / "a")
    m = Memory.from_config(json.loads(Path(source).read_text()))
    m.add("Dana deploys on Fridays", user_id="dana", infer=False)
    m.close()
    target = config_file(tmp_path / "b")

    plan = run("migrate", "--config", source, "--to", target, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert "Migration plan:" in plan.output and "user_id=dana: 1" in plan.output
    assert not (tmp_path / "b" / "store" / "hygiene.db").exists()

    done = run("migrate", "--config", source, "--to", target)
    assert done.exit_code == 0, done.output
    assert "verified" in done.output and "Use this config in the app" in done.output
    assert str(tmp_path / "b" / "store" / "qdrant") in done.output

    removed = run("migrate", "--remove-source", "--config", target, "--yes")
    assert removed.exit_code == 0, removed.output
    assert f"vector_store: {tmp_path / 'a' / 'store' / 'qdrant'}" in removed.output
    assert not (tmp_path / "a" / "store" / "qdrant").exists()


def test_another_embedder_without_reembed_is_refused_naming_it(tmp_path: Path) -> None:
    source = config_file(tmp_path / "a")
    m = Memory.from_config(json.loads(Path(source).read_text()))
    m.add("Dana deploys on Fridays", user_id="dana", infer=False)
    m.close()
    result = run("migrate", "--config", source, "--to", config_file(tmp_path / "b", embedding_dims=64))
    assert result.exit_code == 2
    assert "64 dims) is not the source's (offline , 256 dims)" in result.output
    assert "pass --reembed" in result.output


def test_a_new_collection_beside_the_source_in_its_own_folder_is_refused_naming_the_fix(tmp_path: Path) -> None:
    source = config_file(tmp_path / "a")
    m = Memory.from_config(json.loads(Path(source).read_text()))
    m.add("Dana deploys on Fridays", user_id="dana", infer=False)
    m.close()
    beside = json.loads(Path(source).read_text())
    beside["vector_store"]["config"]["collection_name"] = "mem0_v2"
    beside["history_db_path"] = str(tmp_path / "a" / "v2-history.db")
    (tmp_path / "b").mkdir()
    to = tmp_path / "b" / "config.json"
    to.write_text(json.dumps(beside))
    result = run("migrate", "--config", source, "--to", str(to), "--reembed")
    assert result.exit_code == 2
    assert "cannot migrate into collection 'mem0_v2': its local Qdrant folder already holds 'mem0'" in result.output
    assert "Give the destination a folder of its own" in result.output
    assert "--collection mem0" not in result.output  # the advice for a source, wrong for a destination
