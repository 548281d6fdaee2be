"""The upgrade of a SQLite ledger from schema version 3 to 4, killed with SIGKILL before each of its SQLite
statements (see tests/faults_sqlite.py): after every kill the file passes ``integrity_check`` and
``foreign_key_check``, is at version 3 or 4 (never between: the upgrade is one transaction), and the next
opening finishes the upgrade into exactly the state an uninterrupted one leaves."""

from __future__ import annotations

import shutil
import signal
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from mem0_hygiene.stores.ledger import COLUMNS, SCHEMA_VERSION, LedgerRow, open_ledger
from mem0_hygiene.stores.sqlite import integrity_check
from mem0_hygiene.timeutil import to_iso

from ..faults_sqlite import START, zygote
from .old_ledgers import as_version

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=timezone.utc)
NAME = "old-ledger.db"


def stamp(hours: float) -> str:
    return to_iso(T0 + timedelta(hours=hours))


def plant_version_3(path: Path) -> None:
    """A version-3 ledger with rows sharing a topic key (to chain), confirmed rows (to seed), a chain and a
    journal entry, as an older mem0-hygiene leaves it."""
    open_ledger(str(path)).close()
    as_version(str(path), 3)
    rows = [
        LedgerRow(f"k{i}", user_id="dana", created_at=stamp(i), confirmed_at=stamp(i + 10), topic_key="deploy")
        for i in range(3)
    ]
    rows += [
        LedgerRow(
            "old",
            user_id="dana",
            created_at=stamp(0),
            confirmed_at=stamp(0),
            superseded_by="new",
            superseded_at=stamp(2),
        ),
        LedgerRow("new", user_id="dana", created_at=stamp(2), confirmed_at=stamp(5)),
        LedgerRow("gone", user_id="dana", created_at=stamp(1), confirmed_at=stamp(3), deleted_at=stamp(4)),
    ]
    conn = sqlite3.connect(str(path))
    with conn:
        conn.executemany(
            f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
            [r.as_tuple() for r in rows],
        )
        conn.execute("INSERT INTO pending VALUES ('gone', 'delete', ?)", (stamp(4),))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()


def end_state(path: Path) -> dict[str, Any]:
    """What the upgraded ledger holds, times of the upgrade itself left out."""
    led = open_ledger(str(path))
    try:
        return {
            "version": led.query("PRAGMA user_version")[0][0],
            "rows": sorted((r.memory_id, r.superseded_by, r.deleted_at) for r in led.iter_rows()),
            "confirmations": led.query("SELECT memory_id, confirmed_at, via FROM confirmations ORDER BY 1, 2"),
            "pending": led.pending(),
            "index": led.query("SELECT name FROM sqlite_master WHERE name = 'memories_topic_live'"),
            "tables": led.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
            "fk": led.query("PRAGMA foreign_key_check"),
        }
    finally:
        led.close()


def test_the_upgrade_to_version_4_killed_before_each_statement_leaves_a_sound_file_that_upgrades_on_open(
    tmp_path: Path,
) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    plant_version_3(planted / NAME)
    app = tmp_path / "app"  # the zygote opens a drop-in here first; the ledger under test is elsewhere

    def fresh(name: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(planted / NAME, folder / NAME)
        return folder / NAME

    with zygote() as zyg:
        whole = fresh("whole")
        source = f"from mem0_hygiene.stores.ledger import open_ledger\nopen_ledger({str(whole)!r}).close()\n"
        sig, statements, error = zyg.run(app, source, {}, START, {})
        assert sig == 0 and not error, error
        expected = end_state(whole)
        assert expected["version"] == SCHEMA_VERSION and expected["index"] and expected["fk"] == []
        assert [r for r in expected["rows"] if r[0].startswith("k")] == [
            ("k0", "k1", None),
            ("k1", "k2", None),
            ("k2", None, None),
        ]
        points = [k for k, (db, _sql) in enumerate(statements, 1) if db == NAME]
        assert len(points) >= 15, statements  # the connection's set-up, the transaction and its every statement
        failures = []
        for k in points:
            path = fresh(f"k{k}")
            run = f"from mem0_hygiene.stores.ledger import open_ledger\nopen_ledger({str(path)!r}).close()\n"
            sig, ran, error = zyg.run(app, run, {}, START, {}, kill_at=k)
            where = f"k={k} (before {statements[k - 1][1][:60]!r})"
            if sig != signal.SIGKILL:
                failures.append(f"{where}: not killed (signal {sig}, {error})")
                continue
            if integrity_check(str(path)) != "ok":
                failures.append(f"{where}: integrity_check {integrity_check(str(path))}")
            raw = sqlite3.connect(str(path))
            try:
                version = raw.execute("PRAGMA user_version").fetchone()[0]
                has_log = bool(raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'confirmations'").fetchall())
                fk = raw.execute("PRAGMA foreign_key_check").fetchall()
            finally:
                raw.close()
            if (version, has_log) not in ((3, False), (4, True)) or fk:
                failures.append(f"{where}: left version {version}, confirmations table {has_log}, fk {fk}")
            got = end_state(path)
            if got != expected:
                failures.append(f"{where}: upgraded on open to {got}, not {expected}")
            if integrity_check(str(path)) != "ok":
                failures.append(f"{where}: integrity_check after the upgrade {integrity_check(str(path))}")
        assert not failures, "\n".join(failures)
