"""restore refuses a backup set that reaches outside itself, before anything is read through it: a symbolic link
(file or folder), a file hard-linked to a file outside the set, a FIFO, and manifest paths that are absolute,
hold `..` or name a store outside the set; each with a one-line error naming the entry and the fix. Checksums
never follow a link."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.errors import BackupError
from mem0_hygiene.stores.backup_set import check_set, sha256_of

U = {"user_id": "dana"}
STORAGE = "qdrant/collection/mem0/storage.sqlite"


@pytest.fixture
def backup_set(make_deployment: Any, persistent_dir: Path) -> tuple[dict[str, Any], Path, Path]:
    def plant(m: Any) -> None:
        m.add("Dana works on billing", **U, infer=False, source="chat")

    dep = make_deployment(persistent_dir / "app", plant=plant)
    made = backup(dep.config, persistent_dir / "backups")
    outside = persistent_dir / "outside"
    outside.mkdir()
    return dep.config, Path(made.path), outside


def _manifest(s: Path, change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads((s / "manifest.json").read_text())
    change(doc)
    (s / "manifest.json").write_text(json.dumps(doc))


def symlinked_storage(s: Path, outside: Path) -> str:
    target = outside / "storage.sqlite"
    shutil.copyfile(s / STORAGE, target)  # same bytes: only the link gives it away
    (s / STORAGE).unlink()
    (s / STORAGE).symlink_to(target)
    return f"{STORAGE} is a symbolic link (to {target})"


def symlinked_folder(s: Path, outside: Path) -> str:
    shutil.copytree(s / "qdrant/collection", outside / "collection")
    shutil.rmtree(s / "qdrant/collection")
    (s / "qdrant/collection").symlink_to(outside / "collection")
    return "qdrant/collection is a symbolic link"


def hard_linked(s: Path, outside: Path) -> str:
    os.link(s / "history.db", outside / "history.db")
    return "history.db is hard-linked to a file outside the set"


def fifo(s: Path, outside: Path) -> str:
    os.mkfifo(s / "qdrant" / "pipe")
    return "qdrant/pipe is a device, FIFO or socket"


def absolute_path(s: Path, outside: Path) -> str:
    _manifest(s, lambda d: d["files"].update({"/etc/passwd": {"sha256": "0" * 64, "size": 1}}))
    return "the manifest lists '/etc/passwd', a path outside the set"


def dotdot_entry(s: Path, outside: Path) -> str:
    _manifest(s, lambda d: d["files"].update({"../outside/x": {"sha256": "0" * 64, "size": 1}}))
    return "the manifest lists '../outside/x', a path outside the set"


def store_outside(s: Path, outside: Path) -> str:
    shutil.copyfile(s / "hygiene.db", outside / "hygiene.db")
    _manifest(s, lambda d: d["stores"]["ledger"].update({"file": "../../outside/hygiene.db"}))
    return "the manifest names ledger at '../../outside/hygiene.db', a path outside the set"


@pytest.mark.parametrize(
    "tamper", [symlinked_storage, symlinked_folder, hard_linked, fifo, absolute_path, dotdot_entry, store_outside]
)
def test_a_set_reaching_outside_itself_is_refused_naming_the_entry(backup_set: Any, tamper: Any) -> None:
    cfg, s, outside = backup_set
    app = Path(cfg["history_db_path"]).parent
    before = sorted(p.name for p in app.iterdir())
    entry = tamper(s, outside)
    with pytest.raises(BackupError) as err:
        restore(cfg, s)
    message = str(err.value)
    assert "\n" not in message and entry in message, message
    assert "Nothing was changed; pick another backup (or make a new one with `mem0-hygiene backup`)" in message
    assert sorted(p.name for p in app.iterdir()) == before
    with pytest.raises(BackupError, match=entry.split(" ")[0]):
        restore(cfg, s, dry_run=True)
    assert check_set(s)  # the audit and the backup record do not count it as a verified backup either


def test_checksums_never_follow_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"data")
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(BackupError, match="is a symbolic link"):
        sha256_of(str(tmp_path / "link"))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(BackupError, match="not a regular file"):
        sha256_of(str(tmp_path / "fifo"))  # refused unread: a FIFO would block the reader
    assert len(sha256_of(str(real))) == 64


def test_a_set_reached_through_a_link_is_restored(backup_set: Any) -> None:
    cfg, s, outside = backup_set
    latest = outside / "latest"
    latest.symlink_to(s)  # backup tools keep a "latest" link: the set itself is what is checked
    assert restore(cfg, latest).src == str(s)
