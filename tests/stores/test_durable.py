"""Every journal, record, registry, manifest, config and unit file is written through the one durable writer
(stores/durable.py): the new contents are fsynced in a temporary file of the same folder, renamed over the file,
and the folder is fsynced, so a power loss leaves the old contents or the new ones, never an empty file. The
checked reader names a corrupt file in its error. os.fsync and os.replace are recorded with real files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene.actions import relocate_journal
from mem0_hygiene.actions.config_file import plan_config_rewrite, write_config_file
from mem0_hygiene.actions.schedule import build_schedule, install_units
from mem0_hygiene.errors import BackupError, RelocateError
from mem0_hygiene.stores import backup_record, backup_set, copies, restore_journal
from mem0_hygiene.stores.paths import side_file


class Disk:
    """Records what was fsynced (by path) and renamed, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[tuple[str, str, str]] = []
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd: int) -> None:
            self.events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), ""))
            real_fsync(fd)

        def replace(src: Any, dst: Any, **kwargs: Any) -> None:
            self.events.append(("replace", os.fspath(src), os.fspath(dst)))
            real_replace(src, dst, **kwargs)

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)

    def assert_durable(self, path: Path) -> None:
        """``path`` was renamed into place from a temporary file of its folder fsynced before, and the folder
        was fsynced after."""
        path = path.resolve()
        renames = [i for i, (kind, _src, dst) in enumerate(self.events) if kind == "replace" and dst == str(path)]
        assert renames, f"{path} was not renamed into place: {self.events}"
        at = renames[-1]
        tmp = self.events[at][1]
        assert os.path.dirname(tmp) == str(path.parent)
        assert ("fsync", tmp, "") in self.events[:at], f"{tmp} was not fsynced before the rename"
        assert ("fsync", str(path.parent), "") in self.events[at:], f"{path.parent} was not fsynced after it"


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    return Disk(monkeypatch)


def _restore_journal(folder: Path) -> Path:
    path = folder / "hygiene.restore-journal.json"
    restore_journal.write_journal(str(path), {"state": "swapping", "src": "/backups/one", "steps": []})
    return path


def _relocate_journal(folder: Path) -> Path:
    relocate_journal.write_journal(str(folder), [], remove_source=False)
    return folder / relocate_journal.JOURNAL_NAME


def _backup_record(folder: Path) -> Path:
    path = folder / "hygiene.backups.json"
    assert backup_record.update_record(str(path), add={"path": str(folder / "set"), "created_at": "now"}) == ""
    return path


def _copies_registry(folder: Path) -> Path:
    path = folder / "hygiene.copies.json"
    (folder / "copy.db").write_bytes(b"")
    assert (
        copies.register_copy(str(path), "replaced_aside", folder / "copy.db", roles=("ledger",), created_at="now") == ""
    )
    return path


def _manifest(folder: Path) -> Path:
    backup_set.write_manifest(str(folder), {"format": backup_set.FORMAT, "version": 1, "files": {}, "stores": {}})
    return folder / backup_set.MANIFEST


def _config_file(folder: Path) -> Path:
    path = folder / "app.json"
    path.write_text(json.dumps({"history_db_path": str(folder / "history.db")}))
    write_config_file(plan_config_rewrite(path, {("history_db_path",): str(folder / "new" / "history.db")}))
    return path


def _unit_files(folder: Path) -> Path:
    schedule = build_schedule("systemd", ["--config", str(folder / "app.json")], unit_dir=str(folder))
    return Path(install_units(schedule, str(folder))[0])


WRITERS: dict[str, Callable[[Path], Path]] = {
    "restore journal": _restore_journal,
    "relocation journal": _relocate_journal,
    "backup record": _backup_record,
    "registry of copies": _copies_registry,
    "backup manifest": _manifest,
    "config file rewrite": _config_file,
    "systemd unit file": _unit_files,
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_each_journal_record_and_registry_is_fsynced_renamed_and_its_folder_fsynced(
    tmp_path: Path, disk: Disk, writer: str
):
    path = WRITERS[writer](tmp_path)
    disk.assert_durable(path)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(f".{path.name}")] == []  # no temporary left


def test_a_backup_writes_its_manifest_record_and_registry_durably(tmp_path: Path, make_memory: Any, disk: Disk):
    m = make_memory()
    m.add("Prefers tea", user_id="u", infer=False, source="chat")
    result = m.backup(tmp_path / "backups")
    built = [dst for kind, _src, dst in disk.events if kind == "replace" and dst.endswith("/" + backup_set.MANIFEST)]
    disk.assert_durable(Path(built[-1]))  # written in the set's folder while it is built, then the folder renamed
    disk.assert_durable(Path(result.record_path))
    disk.assert_durable(Path(side_file("copies_registry", m.ledger_path, None) or ""))


READERS: dict[str, tuple[str, Callable[[Path], Any], type[Exception]]] = {
    "restore journal": ("hygiene.restore-journal.json", lambda p: restore_journal.read_journal(str(p)), BackupError),
    "relocation journal": (
        relocate_journal.JOURNAL_NAME,
        lambda p: relocate_journal.read_journal(str(p.parent)),
        RelocateError,
    ),
    "backup record": ("hygiene.backups.json", lambda p: backup_record.recorded_backups(str(p)), BackupError),
    "registry of copies": ("hygiene.copies.json", lambda p: copies.read_registry(str(p)), BackupError),
    "backup manifest": (backup_set.MANIFEST, lambda p: backup_set.read_manifest(str(p.parent)), BackupError),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_corrupt_journal_record_or_registry_is_named_in_the_error(tmp_path: Path, reader: str):
    name, read, error = READERS[reader]
    path = tmp_path / name
    path.write_text('{"format": "mem0-hygiene-')  # cut short, as a disk without the writer's fsync leaves it
    with pytest.raises(error, match=f"{path}.*cannot be read|cannot read the manifest {path}"):
        read(path)
