"""Restoring into a deployment whose stores were relocated (their old paths are links) restores where the links
point: the links stay, and no second live store appears at the old paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mem0_hygiene import Memory
from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.relocate import relocate
from mem0_hygiene.actions.restore import restore


def test_restore_through_relocated_links_keeps_one_store(tmp_path: Path, make_deployment: Any):
    kept: list[str] = []

    def plant(m: Any) -> None:
        kept.append(m.add("Prefers pnpm", user_id="dana", infer=False, source="chat")["results"][0]["id"])

    dep = make_deployment(tmp_path / "store", plant=plant)
    relocate(dep.config, tmp_path / "moved", include_sqlite=True)
    old_qdrant, old_history = tmp_path / "store" / "qdrant", tmp_path / "store" / "history.db"
    assert old_qdrant.is_symlink() and old_history.is_symlink()
    made = backup(dep.config, tmp_path / "backups")  # through the old paths (the app's config is unchanged)

    m = Memory.from_config(dep.config)
    m.add("Uses Rust for the billing service", user_id="dana", infer=False, source="chat")
    m.close()
    restore(dep.config, made.path)

    assert old_qdrant.is_symlink() and old_history.is_symlink()
    assert os.path.realpath(old_qdrant) == str(tmp_path / "moved" / "qdrant")
    m = Memory.from_config(dep.config)
    try:
        assert [r["id"] for r in m.get_all(filters={"user_id": "dana"})["results"]] == kept
    finally:
        m.close()
