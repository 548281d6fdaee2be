"""relocate leaves no second live copy: each old path becomes a link to the moved store (or, with remove_source,
nothing), SQLite copies keep their mode and WAL, the backup record follows the ledger, the app's config file is
rewritten on request, and a rerun after an interruption resumes."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory
from mem0_hygiene.actions import relocate as relocate_mod
from mem0_hygiene.actions.relocate import relocate
from mem0_hygiene.actions.relocate_journal import JOURNAL_NAME
from mem0_hygiene.config import offline_config
from mem0_hygiene.errors import ConfigError, RelocateError
from mem0_hygiene.stores.backup_record import backup_status_for_paths
from mem0_hygiene.stores.copies import list_copies


@pytest.fixture
def deployment(tmp_path: Path, clock: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A drop-in deployment in tmp_path/old with a verified backup; returns (config, id -> text)."""
    config = offline_config(tmp_path / "old")
    m = Memory.from_config({**config, "hygiene": {"clock": clock}})
    try:
        ids = {
            m.add(f"fact {i}", user_id="u", infer=False, source=f"chat {i}")["results"][0]["id"]: f"fact {i}"
            for i in range(3)
        }
        m.backup(tmp_path / "backups")
    finally:
        m.close()
    return config, ids


def seen(config: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """id -> (text, source) through the drop-in opened with this config."""
    m = Memory.from_config(config)
    try:
        return {r["id"]: (r["memory"], r["hygiene"]["source"]) for r in m.get_all(filters={"user_id": "u"})["results"]}
    finally:
        m.close()


def journal_mode(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def test_with_sqlite_every_old_path_links_to_the_moved_store(tmp_path: Path, deployment):
    config, ids = deployment
    old, new = tmp_path / "old", tmp_path / "new"
    os.chmod(old / "hygiene.db", 0o600)
    before = seen(config)
    history_mode = journal_mode(old / "history.db")
    assert {i: t for i, (t, _s) in before.items()} == ids

    result = relocate(config, new, include_sqlite=True)

    assert [m.role for m in result.moves] == [
        "vector_store",
        "history_db",
        "ledger",
        "backup_record",
        "copies_registry",
    ]
    for name in ("qdrant", "history.db", "hygiene.db", "hygiene.backups.json", "hygiene.copies.json"):
        assert (old / name).is_symlink() and os.path.realpath(old / name) == str(new / name), name
        assert not (new / name).is_symlink()
    assert all(m.linked and not m.source_removed for m in result.moves)
    assert sorted(p.name for p in old.iterdir()) == [
        "history.db",
        "hygiene.backups.json",
        "hygiene.copies.json",
        "hygiene.db",
        "qdrant",
    ]
    # the copies keep the file mode and WAL mode
    assert stat.S_IMODE(os.stat(new / "hygiene.db").st_mode) == 0o600
    assert journal_mode(new / "hygiene.db") == "wal" and journal_mode(new / "history.db") == history_mode
    # the old config and the new one reach the very same stores, ledger included
    new_config = {
        **config,
        "history_db_path": str(new / "history.db"),
        "vector_store": {
            **config["vector_store"],
            "config": {**config["vector_store"]["config"], "path": str(new / "qdrant")},
        },
        "hygiene": {"ledger_path": str(new / "hygiene.db")},
    }
    assert seen(config) == seen(new_config) == before
    # the backup record moved with the ledger: the audit's view of the backups is the same from either side
    status = backup_status_for_paths(str(new / "hygiene.db"), str(new / "history.db"))
    assert status.record_path == str(new / "hygiene.backups.json") and status.last is not None
    assert backup_status_for_paths(str(old / "hygiene.db"), None).last == status.last
    assert not (new / JOURNAL_NAME).exists()
    # a backup made through the old config updates the one record, and the old path stays a link
    m = Memory.from_config(config)
    try:
        m.backup(tmp_path / "backups")
    finally:
        m.close()
    assert (old / "hygiene.backups.json").is_symlink() and (old / "hygiene.copies.json").is_symlink()
    assert backup_status_for_paths(str(new / "hygiene.db"), None).recorded == status.recorded + 1
    assert len(list_copies(str(new / "hygiene.db"), None)) >= 2
    assert [c.path for c in list_copies(str(old / "hygiene.db"), None)] == [
        c.path for c in list_copies(str(new / "hygiene.db"), None)
    ]


def test_remove_source_says_where_the_stores_went(tmp_path: Path, deployment):
    config, _ids = deployment
    result = relocate(config, tmp_path / "new", include_sqlite=True, remove_source=True)
    assert result.source_removed
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == []
    lines = " ".join(str(piece[0]) for line in result._lines() for piece in line)
    assert f"removed {tmp_path / 'old' / 'qdrant'} (and its link)" in lines
    assert f"the store is at {tmp_path / 'new' / 'qdrant'}" in lines
    assert result.to_dict()["moves"][0]["source_removed"] is True


def test_a_second_run_is_a_no_op(tmp_path: Path, deployment):
    config, _ids = deployment
    relocate(config, tmp_path / "new", include_sqlite=True)
    again = relocate(config, tmp_path / "new", include_sqlite=True)
    assert all(m.resumed and "already moved" in m.note for m in again.moves)
    assert not (tmp_path / "new" / JOURNAL_NAME).exists()


def test_an_interrupted_switch_is_resumed_by_the_next_run(tmp_path: Path, deployment, monkeypatch):
    config, _ids = deployment
    before = seen(config)
    real_swap = relocate_mod.swap_file_for_link

    def fail_on_the_ledger(old: str, new: str, *args: Any, **kwargs: Any) -> None:
        if old.endswith("hygiene.db"):
            raise OSError(5, "Input/output error")
        real_swap(old, new, *args, **kwargs)

    monkeypatch.setattr(relocate_mod, "swap_file_for_link", fail_on_the_ledger)
    with pytest.raises(OSError):
        relocate(config, tmp_path / "new", include_sqlite=True)
    monkeypatch.undo()
    old = tmp_path / "old"
    assert (old / "qdrant").is_symlink() and (old / "history.db").is_symlink()
    assert not (old / "hygiene.db").is_symlink()  # not switched yet, and still the live ledger
    assert (tmp_path / "new" / JOURNAL_NAME).is_file()
    assert seen(config) == before  # half-moved, and the app sees everything

    result = relocate(config, tmp_path / "new", include_sqlite=True)  # DEST exists: resumed, not refused
    assert result.resumed and all(m.resumed for m in result.moves)
    assert (old / "hygiene.db").is_symlink() and (old / "hygiene.backups.json").is_symlink()
    assert not (tmp_path / "new" / JOURNAL_NAME).exists()
    assert seen(config) == before


def test_a_source_written_after_its_copy_is_copied_again_on_resume(tmp_path: Path, deployment, monkeypatch):
    config, _ids = deployment

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(relocate_mod, "swap_folder_for_link", interrupted)
    with pytest.raises(KeyboardInterrupt):
        relocate(config, tmp_path / "new")
    monkeypatch.undo()
    m = Memory.from_config(config)  # the app ran again in between, on the old (still real) store
    try:
        late = m.add("written after the copy", user_id="u", infer=False, source="chat late")["results"][0]["id"]
    finally:
        m.close()
    relocate(config, tmp_path / "new")
    assert seen(config)[late] == ("written after the copy", "chat late")
    new_config = {
        **config,
        "vector_store": {
            **config["vector_store"],
            "config": {**config["vector_store"]["config"], "path": str(tmp_path / "new" / "qdrant")},
        },
    }
    assert late in seen(new_config)


def test_a_journal_of_another_deployment_is_refused(tmp_path: Path, deployment):
    config, _ids = deployment
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / JOURNAL_NAME).write_text(
        json.dumps(
            {
                "format": "mem0-hygiene-relocation",
                "version": 1,
                "remove_source": False,
                "moves": [
                    {
                        "role": "vector_store",
                        "kind": "qdrant",
                        "source": "/elsewhere/qdrant",
                        "store": "/elsewhere/qdrant",
                        "destination": str(tmp_path / "new" / "qdrant"),
                        "signature": None,
                    }
                ],
            }
        )
    )
    with pytest.raises(RelocateError, match="left unfinished, of /elsewhere/qdrant"):
        relocate(config, tmp_path / "new")
    assert not (tmp_path / "old" / "qdrant").is_symlink()


def test_a_configured_path_that_is_a_link_is_followed_and_repointed(tmp_path: Path, deployment):
    config, _ids = deployment
    before = seen(config)
    old_store = tmp_path / "old" / "qdrant"
    link = tmp_path / "tmp-qdrant"  # like /tmp/qdrant after the drop-in moved it beside history.db
    os.symlink(old_store, link)
    linked_config = {
        **config,
        "vector_store": {**config["vector_store"], "config": {**config["vector_store"]["config"], "path": str(link)}},
    }
    result = relocate(linked_config, tmp_path / "new")
    dest = str(tmp_path / "new" / "qdrant")
    assert result.move("vector_store").source == str(link)  # type: ignore[union-attr]
    assert os.readlink(link) == dest and os.path.realpath(old_store) == dest
    assert seen(linked_config) == seen(config) == before


# ------------------------------------------------------------------------------------ --update-config


APP_YAML = """\
# written by hand: keep this comment
vector_store:
  provider: qdrant   # local Qdrant
  config:
    path: {old}/qdrant
    collection_name: mem0
    embedding_model_dims: 256
history_db_path: {old}/history.db  # mem0's changelog
embedder:
  provider: offline
  config:
    embedding_dims: 256
llm:
  provider: offline
"""


def test_update_config_rewrites_the_yaml_keeping_comments(tmp_path: Path, deployment):
    from mem0_hygiene.config_loader import load_config

    _config, _ids = deployment
    app = tmp_path / "app.yaml"
    app.write_text(APP_YAML.format(old=tmp_path / "old"))
    before = seen(load_config(str(app)))
    result = relocate(
        load_config(str(app)), tmp_path / "new", include_sqlite=True, remove_source=True, update_config=app
    )
    new = tmp_path / "new"
    assert result.config_file == str(app)
    assert result.config_changes == ("vector_store.config.path", "history_db_path", "hygiene.ledger_path")
    text = app.read_text()
    assert (
        text
        == APP_YAML.format(old=tmp_path / "old")
        .replace(f"{tmp_path / 'old'}/qdrant", f"{new}/qdrant")
        .replace(f"{tmp_path / 'old'}/history.db", f"{new}/history.db")
        + f"hygiene:\n  ledger_path: {new}/hygiene.db\n"
    )
    assert seen(load_config(str(app))) == before  # the app, restarted with its rewritten config


def test_update_config_json_and_dry_run(tmp_path: Path, deployment):
    config, _ids = deployment
    app = tmp_path / "app.json"
    app.write_text(json.dumps(config, indent=4))
    dry = relocate(config, tmp_path / "new", update_config=app, dry_run=True)
    assert dry.config_changes == ("vector_store.config.path",)
    assert json.loads(app.read_text()) == config and not (tmp_path / "new").exists()
    relocate(config, tmp_path / "new", update_config=app)
    data = json.loads(app.read_text())
    assert data["vector_store"]["config"]["path"] == str(tmp_path / "new" / "qdrant")
    assert {k: v for k, v in data.items() if k != "vector_store"} == {
        k: v for k, v in config.items() if k != "vector_store"
    }
    assert app.read_text().startswith('{\n    "')  # its indentation kept


def test_update_config_refuses_a_module_reference_and_another_deployment_before_moving(tmp_path: Path, deployment):
    config, _ids = deployment
    with pytest.raises(ConfigError, match="module:ATTRIBUTE"):
        relocate(config, tmp_path / "new", update_config="myapp.settings:MEM0_CONFIG")
    other = tmp_path / "other.json"
    other.write_text(json.dumps(offline_config(tmp_path / "elsewhere")))
    with pytest.raises(ConfigError, match="the store being moved is at"):
        relocate(config, tmp_path / "new", update_config=other)
    with pytest.raises(ConfigError, match="no such file"):
        relocate(config, tmp_path / "new", update_config=tmp_path / "missing.yaml")
    assert not (tmp_path / "new").exists() and not (tmp_path / "old" / "qdrant").is_symlink()
