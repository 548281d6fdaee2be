"""relocate on every vector store mem0 users run: a local-folder store (local Qdrant, Chroma, FAISS) is moved,
counted before and after through the provider seam, its old path linked and the config rewritten; a Chroma folder
another process has open is refused (Chroma takes no lock: its open files are the check), and what was checked is
said; on pgvector, whose points live on the server, only history.db and the ledger move, with one line saying so;
a provider without a module stops with one line naming it and what to do."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory
from mem0_hygiene.actions.relocate import relocate
from mem0_hygiene.cli import cli
from mem0_hygiene.config_loader import load_config
from mem0_hygiene.errors import RelocateError, StoreLocked
from mem0_hygiene.stores.vector import forget_cached
from mem0_hygiene.stores.vector.files import file_digests, folder_files

TEXTS = ("Dana deploys with Kubernetes", "Dana lives in Haifa", "Dana prefers pnpm")


def fill(config: dict[str, Any]) -> None:
    m = Memory.from_config(config)
    try:
        for text in TEXTS:
            m.add(text, user_id="dana", infer=False, source="chat")
    finally:
        m.close()
        release(config)


def release(config: dict[str, Any]) -> None:
    conf = config["vector_store"]["config"]
    if conf.get("path"):
        forget_cached(config["vector_store"]["provider"], conf["path"])


def served(config: dict[str, Any]) -> list[str]:
    m = Memory.from_config(config)
    try:
        return sorted(r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"])
    finally:
        m.close()
        release(config)


def config_file(config: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps({**config, "hygiene": {}}, indent=2))
    return path


@pytest.mark.parametrize("provider", ["qdrant", "chroma", "faiss"], indirect=True)
def test_a_local_folder_store_is_moved_counted_through_the_seam_and_its_old_path_links_to_it_a_dry_run_writes_nothing(
    provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    config = provider_config(tmp_path / "old")
    fill(config)
    old = config["vector_store"]["config"].get("path") or str(tmp_path / "old" / "qdrant")
    app = config_file(config, tmp_path / "app.json")

    files = file_digests(folder_files(old), old)
    planned = relocate(load_config(str(app)), tmp_path / "new", dry_run=True)
    assert planned.move("vector_store").counts_before == {"mem0": len(TEXTS)}  # type: ignore[union-attr]
    assert not (tmp_path / "new").exists()
    assert file_digests(folder_files(old), old) == files  # the dry run wrote nothing (Chroma: counted on a copy)

    result = relocate(load_config(str(app)), tmp_path / "new", update_config=app)
    move = result.move("vector_store")
    assert move is not None and move.provider == provider
    assert move.destination == str(tmp_path / "new" / provider)
    assert move.counts_before == move.counts_after == {"mem0": len(TEXTS)}
    assert os.path.islink(old) and os.path.realpath(old) == move.destination
    assert result.config_changes == ("vector_store.config.path",)
    assert json.loads(app.read_text())["vector_store"]["config"]["path"] == move.destination
    assert served(load_config(str(app))) == sorted(TEXTS)  # the rewritten config
    assert served(config) == sorted(TEXTS)  # the old config, through the link
    if provider == "qdrant":
        assert "lock" in move.held_check
    else:
        assert move.sampled == 1  # the collection's ids and payloads checksummed equal in the copy
        text = CliRunner().invoke(cli, ["where", "--config", str(app)]).output
        assert str(tmp_path / "new" / provider) in text.replace("\n", "")


@pytest.mark.parametrize("provider", ["chroma", "faiss"], indirect=True)
def test_relocate_says_what_it_checked_for_a_store_that_takes_no_lock(
    provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    config = provider_config(tmp_path / "old")
    fill(config)
    result = CliRunner().invoke(
        cli, ["relocate", "--config", str(config_file(config, tmp_path / "app.json")), "--to", str(tmp_path / "new")]
    )
    assert result.exit_code == 0, result.output
    held = [line.strip() for line in result.output.splitlines() if line.strip().startswith("not held:")]
    assert len(held) == 1, result.output
    assert "takes no lock" in held[0]
    assert ("/proc" in held[0]) if provider == "chroma" else ("checked unchanged while copied" in held[0])
    assert f'"provider": "{provider}"' in result.output  # the config to use from now on


@pytest.mark.parametrize("provider", ["chroma", "faiss"], indirect=True)
def test_a_folder_holding_no_store_of_the_provider_is_not_moved(
    provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    config = provider_config(tmp_path / "old")
    folder = Path(config["vector_store"]["config"]["path"])
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("not a store")
    with pytest.raises(RelocateError, match=rf"nothing to relocate: there is no {provider.capitalize()} store at"):
        relocate(config, tmp_path / "new")
    assert not (tmp_path / "new").exists() and (folder / "notes.txt").is_file()


HOLD_CHROMA = """
import sys
from mem0_hygiene import Memory
from mem0_hygiene.config_loader import load_config
m = Memory.from_config(load_config(sys.argv[1]))
m.get_all(filters={"user_id": "dana"})
print("ready", flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize("provider", ["chroma"], indirect=True)
def test_a_chroma_store_the_running_app_has_open_is_refused_and_nothing_moves(
    provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path, hold_qdrant_lock: Any
) -> None:
    config = provider_config(tmp_path / "old")
    fill(config)
    app = config_file(config, tmp_path / "app.json")
    holder = hold_qdrant_lock(app, script=HOLD_CHROMA)  # the app, running with the store open
    with pytest.raises(StoreLocked, match=rf"process {holder.process.pid} \(python[^)]*\) has .*chroma.sqlite3 open"):
        relocate(config, tmp_path / "new")
    assert not (tmp_path / "new").exists()
    assert not os.path.islink(config["vector_store"]["config"]["path"])
    result = CliRunner().invoke(cli, ["relocate", "--config", str(app), "--to", str(tmp_path / "new")])
    assert result.exit_code == 3 and "stop the app and retry" in result.output, result.output
    holder.release()
    assert relocate(config, tmp_path / "new").move("vector_store").counts_after == {"mem0": len(TEXTS)}  # type: ignore[union-attr]


@pytest.mark.parametrize("provider", ["pgvector"], indirect=True)
def test_on_pgvector_only_the_sqlite_files_move_and_one_line_says_the_vector_store_stays(
    provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    config = provider_config(tmp_path / "old")
    fill(config)
    app = config_file(config, tmp_path / "app.json")
    result = CliRunner().invoke(cli, ["relocate", "--config", str(app), "--to", str(tmp_path / "new")])
    assert result.exit_code == 0, result.output
    stays = [line for line in result.output.splitlines() if "vector_store" in line and "server" in line]
    assert len(stays) == 1 and "stays" in stays[0] and "password" not in stays[0].lower(), result.output
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["history.db", "hygiene.db"]
    assert os.path.islink(tmp_path / "old" / "history.db") and os.path.islink(tmp_path / "old" / "hygiene.db")
    assert served(config) == sorted(TEXTS)


def test_a_provider_without_a_module_stops_with_one_line_naming_it(tmp_path: Path) -> None:
    from .stores import store_config

    config = store_config("qdrant", tmp_path / "old")
    fill(config)  # history.db and the ledger exist: nothing of them moves either
    config["vector_store"] = {"provider": "milvus", "config": {"url": "http://127.0.0.1:1", "collection_name": "m"}}
    app = config_file(config, tmp_path / "app.json")
    result = CliRunner().invoke(cli, ["relocate", "--with-sqlite", "--config", str(app), "--to", str(tmp_path / "new")])
    assert result.exit_code == 3, result.output  # as the other commands stop on a provider the seam lacks
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: cannot relocate a 'milvus' vector store"), result.output
    assert "nothing was moved" in lines[0] and "the store's own tools" in lines[0] and "unexpected" not in lines[0]
    assert not (tmp_path / "new").exists()
    assert not os.path.islink(tmp_path / "old" / "history.db")
