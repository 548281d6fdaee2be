"""A store path that holds something no store can be (a FIFO, a socket, a device, a folder where a file is
expected, a file where the Qdrant folder is) is refused with one line naming the path and what is there, before
anything opens it: the drop-in's start raises a ConfigError, the CLI exits 2. The FIFO cases run in a subprocess
with a timeout, so a regression (reading a FIFO's header blocks forever) fails instead of hanging the suite."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.errors import ConfigError, NotAStorePath
from mem0_hygiene.stores.paths import side_file

TIMEOUT = 120  # seconds: far more than a start takes; a blocked read of a FIFO never returns

START = """
import json, sys
from mem0_hygiene import Memory
from mem0_hygiene.errors import ConfigError
try:
    Memory.from_config(json.loads(sys.argv[1])).close()
    print("started")
except ConfigError as exc:
    print("refused:", exc)
"""


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEM0_TELEMETRY": "False"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=TIMEOUT, env=env)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "store"
    out.mkdir()
    return out


def test_a_fifo_at_the_ledger_path_is_refused_by_the_drop_in_start_without_hanging(folder: Path):
    os.mkfifo(folder / "hygiene.db")
    done = run(["-c", START, json.dumps(offline_config(folder))])
    assert done.stdout.strip() == (
        f"refused: {folder / 'hygiene.db'} is a FIFO (named pipe), not a file, so it "
        "cannot be the mem0-hygiene ledger; nothing was read or changed. Move it away, "
        "or check that hygiene.ledger_path / --ledger names the right path"
    ), done.stderr
    assert not (folder / "qdrant").exists()  # refused before anything was created


def test_a_fifo_at_history_db_makes_the_cli_exit_2_with_one_line_naming_it(folder: Path):
    os.mkfifo(folder / "history.db")
    done = run(
        [
            "-m",
            "mem0_hygiene",
            "audit",
            "--qdrant-path",
            str(folder / "qdrant"),
            "--history-db",
            str(folder / "history.db"),
        ]
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: {folder / 'history.db'} is a FIFO (named pipe), not a file, so it cannot be mem0's "
        "history database; nothing was read or changed. Move it away, or check that history_db_path / "
        "--history-db names the right path"
    ]


PLANTS: dict[str, tuple[Callable[[Path], str], str, Callable[[Path], None]]] = {
    "ledger-folder": (lambda f: str(f / "hygiene.db"), "a folder", lambda p: p.mkdir()),
    "history-folder": (lambda f: str(f / "history.db"), "a folder", lambda p: p.mkdir()),
    "qdrant-file": (lambda f: str(f / "qdrant"), "a file", lambda p: p.write_text("not a store")),
    "backup-record-folder": (
        lambda f: side_file("backup_record", str(f / "hygiene.db"), None) or "",
        "a folder",
        lambda p: p.mkdir(),
    ),
    "copies-registry-device": (
        lambda f: side_file("copies_registry", str(f / "hygiene.db"), None) or "",
        "a device",
        lambda p: p.symlink_to("/dev/null"),
    ),
    "restore-journal-fifo": (
        lambda f: side_file("restore_journal", str(f / "hygiene.db"), None) or "",
        "a FIFO (named pipe)",
        lambda p: os.mkfifo(p),
    ),
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_anything_but_a_file_or_the_qdrant_folder_at_a_store_path_is_refused_by_name(folder: Path, plant: str):
    path_of, found, make = PLANTS[plant]
    path = Path(path_of(folder))
    make(path)
    with pytest.raises(NotAStorePath) as caught:
        Memory.from_config(offline_config(folder))
    assert caught.value.path == str(path) and caught.value.found == found
    assert str(caught.value).startswith(f"{path} is {found}, not ")
    assert isinstance(caught.value, ConfigError)


def test_a_socket_at_the_ledger_path_is_refused_by_name(folder: Path):
    with contextlib.closing(socket.socket(socket.AF_UNIX)) as sock:
        sock.bind(str(folder / "hygiene.db"))
        with pytest.raises(NotAStorePath, match="is a socket, not a file, so it cannot be the mem0-hygiene ledger"):
            Memory.from_config(offline_config(folder))


def test_a_store_folder_with_regular_files_starts(folder: Path):
    Memory.from_config(offline_config(folder)).close()
    Memory.from_config(offline_config(folder)).close()  # the files the first start made are what they should be
