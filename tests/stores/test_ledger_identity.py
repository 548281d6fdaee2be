"""A `ledger_path` naming somebody else's file is identified before anything is written to it (its bytes stay
exactly as they were, and no sidecar appears), and the read-only readers (digest, history) refuse a ledger with
a newer schema the way the drop-in does."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mem0_hygiene import LedgerError, Memory, maintenance, offline_config
from mem0_hygiene.stores.ledger import APPLICATION_ID, SCHEMA_VERSION, open_ledger


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file in the folder and the sha256 of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def foreign_database(path: Path, *, wal: bool = False) -> None:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.executemany("INSERT INTO invoices (total) VALUES (?)", [(i * 1.5,) for i in range(200)])
    conn.commit()
    conn.close()


@pytest.mark.parametrize("wal", [False, True], ids=["rollback-journal", "wal"])
def test_someone_elses_sqlite_file_is_refused_with_its_bytes_unchanged(tmp_path, wal):
    folder = tmp_path / "app"
    folder.mkdir()
    path = folder / "app.db"
    foreign_database(path, wal=wal)
    before = fingerprint(folder)
    with pytest.raises(LedgerError, match=r"app.db is a SQLite database but not a mem0-hygiene ledger"):
        open_ledger(str(path))
    assert fingerprint(folder) == before
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == ("wal" if wal else "delete")
    conn.close()


def test_the_drop_in_refuses_someone_elses_file_before_writing_anything(tmp_path):
    folder = tmp_path / "app"
    folder.mkdir()
    path = folder / "app.db"
    foreign_database(path)
    before = fingerprint(folder)
    config = offline_config(tmp_path / "store", hygiene={"ledger_path": str(path)})
    with pytest.raises(LedgerError, match="not a mem0-hygiene ledger"):
        Memory.from_config(config)
    assert fingerprint(folder) == before


def test_a_file_that_is_not_sqlite_is_refused_unchanged(tmp_path):
    folder = tmp_path / "app"
    folder.mkdir()
    path = folder / "notes.txt"
    path.write_bytes(b"meeting notes, not a database\n" * 200)
    before = fingerprint(folder)
    with pytest.raises(LedgerError, match="not a SQLite database"):
        open_ledger(str(path))
    assert fingerprint(folder) == before


def test_an_empty_sqlite_file_and_our_own_ledger_still_open(tmp_path):
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    open_ledger(str(empty)).close()
    ours = tmp_path / "hygiene.db"
    ledger = open_ledger(str(ours))
    ledger.close()
    again = open_ledger(str(ours))
    assert again.query("PRAGMA application_id")[0][0] == APPLICATION_ID
    again.close()


def test_a_fresh_ledger_whose_schema_is_still_in_the_wal_is_recognised(tmp_path):
    """A ledger created by a process that died before the first checkpoint: its header still reads as an
    empty database, its schema and application id are in the -wal file."""
    path = tmp_path / "hygiene.db"
    script = (
        "import os\n"
        "from mem0_hygiene.stores.ledger import open_ledger\n"
        f"ledger = open_ledger({str(path)!r})\n"
        "ledger.query('SELECT 1')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert os.path.getsize(str(path) + "-wal") > 0
    assert path.read_bytes()[68:72] == b"\x00\x00\x00\x00"  # the header does not carry our id yet
    ledger = open_ledger(str(path))
    assert ledger.query("PRAGMA application_id")[0][0] == APPLICATION_ID
    ledger.close()


def newer_ledger(path: Path) -> None:
    open_ledger(str(path)).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()


def test_open_readonly_refuses_a_newer_schema(tmp_path):
    path = tmp_path / "hygiene.db"
    newer_ledger(path)
    with pytest.raises(LedgerError, match=rf"schema version {SCHEMA_VERSION + 1}.*upgrade mem0-hygiene"):
        open_ledger(str(path), readonly=True)


def test_digest_and_history_refuse_a_newer_schema_ledger(make_deployment, tmp_path):
    ids: list[str] = []

    def plant(m):
        ids.append(m.add("Prefers pnpm", user_id="dana", infer=False, source="chat")["results"][0]["id"])

    d = make_deployment(tmp_path / "store", plant=plant)
    newer_ledger(tmp_path / "store" / "hygiene.db")
    with pytest.raises(LedgerError, match="upgrade mem0-hygiene"):
        maintenance.digest(d.config, since="30d")
    with pytest.raises(LedgerError, match="upgrade mem0-hygiene"):
        maintenance.memory_story(d.config, ids[0])


def test_a_folder_named_as_the_ledger_is_a_clean_error(tmp_path):
    (tmp_path / "hygiene.db").mkdir()
    with pytest.raises(LedgerError, match="is a folder, not a ledger file"):
        open_ledger(str(tmp_path / "hygiene.db"))
