"""The ledger file: pragmas on every connection, versioned schema, clear errors for files that are not one."""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest

from mem0_hygiene import LedgerError, Memory, offline_config
from mem0_hygiene.stores.ledger import APPLICATION_ID, SCHEMA_VERSION, connect, open_ledger


def test_connections_turn_on_foreign_keys_wal_and_busy_timeout(tmp_path):
    ledger = open_ledger(str(tmp_path / "hygiene.db"))
    fk_rows, fk_on, mode = ledger.pragma_check()
    assert (fk_rows, fk_on, mode) == ([], True, "wal")
    assert ledger.query("PRAGMA busy_timeout")[0][0] >= 1000
    assert ledger.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert ledger.query("PRAGMA application_id")[0][0] == APPLICATION_ID
    ledger.close()
    ro = connect(str(tmp_path / "hygiene.db"), readonly=True)
    assert ro.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    ro.close()


def test_a_sqlite_file_that_is_not_a_ledger_is_refused_untouched(tmp_path):
    path = tmp_path / "hygiene.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="not a mem0-hygiene ledger"):
        open_ledger(str(path))
    conn = sqlite3.connect(path)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "hygiene.db"
    path.write_bytes(b"this is a text file, not a database" * 100)
    with pytest.raises(LedgerError, match="not a SQLite database"):
        open_ledger(str(path))


def test_a_ledger_from_a_newer_version_is_refused(tmp_path):
    path = str(tmp_path / "hygiene.db")
    open_ledger(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="upgrade mem0-hygiene"):
        open_ledger(path)


@pytest.fixture
def read_only_dir(tmp_path):
    """A folder this process cannot write: a read-only tmpfs as root, a chmod 500 folder otherwise."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() == 0:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"root but cannot mount a read-only tmpfs: {done.stderr.decode().strip()}")
        yield folder
        subprocess.run(["umount", str(folder)], check=True)
    else:
        folder.chmod(0o500)
        yield folder
        folder.chmod(0o700)


def test_a_read_only_location_names_the_fix(read_only_dir):
    with pytest.raises(LedgerError, match="writable"):
        open_ledger(str(read_only_dir / "hygiene.db"))


def test_a_ledger_that_cannot_be_created_fails_before_mem0_opens(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    config = offline_config(tmp_path / "store", hygiene={"ledger_path": str(blocker / "sub" / "hygiene.db")})
    with pytest.raises(LedgerError, match="hygiene.ledger_path"):
        Memory.from_config(config)
    assert not (tmp_path / "store" / "qdrant").exists()


def test_in_memory_ledger_is_allowed(tmp_path):
    m = Memory.from_config(offline_config(tmp_path, hygiene={"ledger_path": ":memory:"}))
    try:
        assert m.add("Likes tea", user_id="u", infer=False)["results"]
        assert not (tmp_path / "hygiene.db").exists()
    finally:
        m.close()


def test_unknown_hygiene_setting_lists_the_known_ones(tmp_path):
    from mem0_hygiene import ConfigError

    with pytest.raises(ConfigError, match="unknown hygiene setting.*ttl_default.*known ones are"):
        Memory.from_config(offline_config(tmp_path, hygiene={"ttl_default": "7d"}))
