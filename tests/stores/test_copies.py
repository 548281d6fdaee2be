"""The registry of copies on real files: where it lives, what it lists, atomic writes, and temporary leftovers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mem0_hygiene.errors import BackupError
from mem0_hygiene.stores.backup_record import update_record
from mem0_hygiene.stores.copies import (
    clean_leftovers,
    copies_path_for,
    find_leftovers,
    list_copies,
    register_copy,
    temporary_name,
    unregister_copy,
)

AT = "2026-08-01T09:00:00+00:00"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    folder.mkdir()
    return folder


def paths(app: Path) -> tuple[str, str]:
    return str(app / "hygiene.db"), str(app / "history.db")


def test_the_registry_lives_beside_the_ledger_named_after_it(tmp_path: Path):
    assert copies_path_for(str(tmp_path / "l" / "ledger.sqlite"), str(tmp_path / "h.db")) == str(
        tmp_path / "l" / "ledger.copies.json"
    )
    assert copies_path_for(":memory:", str(tmp_path / "history.db")) == str(tmp_path / "history.copies.json")
    assert copies_path_for(":memory:", ":memory:") is None
    assert "in memory" in register_copy(None, "backup_set", tmp_path, roles=["ledger"], created_at=AT)


def test_registered_copies_are_listed_with_their_size_now_and_taken_off_again(app: Path):
    registry = copies_path_for(*paths(app))
    aside = app / "history.db.replaced-20260801T090000Z"
    aside.write_bytes(b"x" * 100)
    (app / "history.db.replaced-20260801T090000Z-wal").write_bytes(b"y" * 20)
    folder = app / "qdrant.replaced-20260801T090000Z"
    (folder / "collection").mkdir(parents=True)
    (folder / "collection" / "storage.sqlite").write_bytes(b"z" * 300)
    assert register_copy(registry, "replaced_aside", aside, roles=["history_db"], created_at=AT, note="n") == ""
    assert register_copy(registry, "replaced_aside", folder, roles=["vector_store"], created_at=AT) == ""

    listed = {c.path: c for c in list_copies(*paths(app))}
    assert set(listed) == {str(aside), str(folder)}
    assert listed[str(aside)].size_bytes == 120 and listed[str(aside)].roles == ("history_db",)
    assert sorted(listed[str(aside)].files()) == [str(aside), str(aside) + "-wal"]
    assert listed[str(folder)].size_bytes == 300 and listed[str(folder)].note == ""
    assert os.listdir(app).count("hygiene.copies.json") == 1 and not [n for n in os.listdir(app) if n.startswith(".")]

    stored = {e["path"]: e for e in json.loads(Path(registry).read_text())["copies"]}
    assert stored[str(aside)]["size_bytes"] == 120 and stored[str(aside)]["note"] == "n"
    planned = app / "qdrant.replaced-later"
    register_copy(registry, "replaced_aside", planned, roles=["vector_store"], created_at=AT, size_bytes=7)
    assert {e["path"]: e["size_bytes"] for e in json.loads(Path(registry).read_text())["copies"]}[str(planned)] == 7

    assert unregister_copy(registry, [folder]) == ""
    assert [c.path for c in list_copies(*paths(app))] == [str(aside)]


def test_a_copy_removed_by_hand_is_not_listed_and_drops_off_at_the_next_change(app: Path):
    registry = copies_path_for(*paths(app))
    gone = app / "hygiene.db.replaced-1"
    gone.write_bytes(b"x")
    register_copy(registry, "replaced_aside", gone, roles=["ledger"], created_at=AT)
    gone.unlink()
    assert list_copies(*paths(app)) == ()
    assert [c.exists for c in list_copies(*paths(app), include_gone=True)] == [False]
    other = app / "history.db.replaced-2"
    other.write_bytes(b"x")
    register_copy(registry, "replaced_aside", other, roles=["history_db"], created_at=AT)
    stored = json.loads(Path(registry).read_text())["copies"]
    assert [e["path"] for e in stored] == [str(other)]


def test_backups_listed_only_in_the_backup_record_are_copies_too(app: Path, tmp_path: Path):
    old_set = tmp_path / "backups" / "mem0-backup-20260101T000000Z"
    old_set.mkdir(parents=True)
    (old_set / "history.db").write_bytes(b"h" * 10)
    ledger, history = paths(app)
    update_record(str(app / "hygiene.backups.json"), add={"path": str(old_set), "created_at": AT})
    (copy,) = list_copies(ledger, history)
    assert (copy.kind, copy.path, copy.source, copy.size_bytes) == ("backup_set", str(old_set), "backup record", 10)


def test_a_damaged_registry_is_reported_and_never_overwritten(app: Path):
    registry = Path(copies_path_for(*paths(app)))
    registry.write_text("{not json")
    with pytest.raises(BackupError, match="registry of copies .* cannot be read.*move it away"):
        list_copies(*paths(app))
    note = register_copy(str(registry), "replaced_aside", app, roles=["ledger"], created_at=AT)
    assert "cannot be read" in note and "not recorded" in note
    assert registry.read_text() == "{not json"


def test_unknown_kinds_and_roles_are_refused(app: Path):
    registry = copies_path_for(*paths(app))
    with pytest.raises(ValueError, match="unknown kind"):
        register_copy(registry, "snapshot", app, roles=["ledger"], created_at=AT)
    with pytest.raises(ValueError, match="roles"):
        register_copy(registry, "backup_set", app, roles=["qdrant"], created_at=AT)


def test_leftovers_of_an_operation_are_found_and_removed_and_nothing_else(tmp_path: Path):
    stale = tmp_path / (temporary_name("mem0-backup-20260801T090000Z", "backup") + "abc")
    (stale / "qdrant").mkdir(parents=True)
    (stale / "qdrant" / "x").write_text("data")
    restoring = tmp_path / (temporary_name("history.db", "restore") + "20260801T090000Z")
    restoring.write_text("staged")
    keep = [
        tmp_path / "mem0-backup-20260801T090000Z",
        tmp_path / ".hygiene.copies.json.tmp",
        tmp_path / (temporary_name("other.db", "restore") + "1"),
    ]
    for p in keep:
        p.write_text("keep")

    assert find_leftovers(str(tmp_path), "backup", stem_prefix="mem0-backup-") == [str(stale)]
    assert find_leftovers(str(tmp_path), "restore", stems=["history.db"]) == [str(restoring)]
    removed, problems = clean_leftovers(str(tmp_path), "backup", stem_prefix="mem0-backup-")
    assert removed == [str(stale)] and problems == [] and not stale.exists()
    assert clean_leftovers(str(tmp_path), "restore", stems=["history.db"])[0] == [str(restoring)]
    assert all(p.exists() for p in keep)


HOLD = """
import sys
from mem0_hygiene.stores.copies import holding
with holding(sys.argv[1]):
    print("ready", flush=True)
    sys.stdin.readline()
"""


def test_a_temporary_folder_a_running_operation_holds_is_left_alone(tmp_path: Path):
    busy = tmp_path / (temporary_name("mem0-backup-20260801T090000Z", "backup") + "run")
    busy.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(busy)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert clean_leftovers(str(tmp_path), "backup", stem_prefix="mem0-backup-") == ([], [])
        assert busy.exists()
    finally:
        proc.kill()
        proc.wait()
    # the holder died (as a crash would end it): now it is a leftover
    assert clean_leftovers(str(tmp_path), "backup", stem_prefix="mem0-backup-")[0] == [str(busy)]
