"""``ledger migrate`` of a SQLite ledger older than schema version 4: the file is read through an upgraded copy
(left as it was), so rows sharing a topic key arrive chained to the newest and the output says how many; the
confirmations, the consolidation record and the judge's decisions are copied and verified too, and the
database numbers the judge's next decision after the copied ones."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from click.testing import CliRunner

from mem0_hygiene.cli import cli
from mem0_hygiene.memory.judge import Judgement, judged_decisions, record_judgement
from mem0_hygiene.stores.ledger import COLUMNS, LedgerRow, open_ledger

from ..stores.old_ledgers import as_version

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)


def test_migrating_an_older_file_chains_shared_topic_keys_and_copies_every_table(tmp_path: Path, pg_url: str) -> None:
    path = tmp_path / "hygiene.db"
    open_ledger(str(path)).close()
    as_version(str(path), 3)  # an older mem0-hygiene's file: it made write_decisions on first use
    conn = sqlite3.connect(str(path))
    conn.execute(
        "CREATE TABLE write_decisions (id INTEGER PRIMARY KEY, memory_id TEXT NOT NULL, compared_id TEXT, "
        "label TEXT NOT NULL, judge TEXT, event TEXT, reason TEXT, similarity REAL, decided_at TEXT NOT NULL)"
    )
    conn.execute(
        "INSERT INTO write_decisions VALUES (7, 'k1', 'k0', 'UPDATE', 'llm', 'UPDATE', 'moved on', "
        "0.8123456789, '2026-08-01T09:00:00.000000+00:00')"
    )
    rows = [
        LedgerRow(
            f"k{i}",
            user_id="dana",
            created_at=f"2026-07-0{i + 1}T00:00:00.000000+00:00",
            confirmed_at=f"2026-07-0{i + 2}T00:00:00.000000+00:00",
            topic_key="deploy",
        )
        for i in range(3)
    ]
    with conn:
        conn.executemany(
            f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
            [r.as_tuple() for r in rows],
        )
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out = CliRunner().invoke(cli, ["ledger", "migrate", "--ledger", str(path), "--to", pg_url, "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert {t["table"]: t["rows"] for t in result["tables"]} == {
        "memories": 3,
        "pending": 0,
        "confirmations": 3,
        "consolidation": 0,
        "write_decisions": 1,
        "reads": 0,
    }
    assert any("2 row(s) sharing a topic_key" in note for note in result["notes"])
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # the file is left as it was
    text = CliRunner().invoke(cli, ["ledger", "migrate", "--ledger", str(path), "--to", pg_url])
    assert text.exit_code == 3  # the database holds the rows now
    pg = open_ledger(pg_url)
    try:
        assert [r.memory_id for r in pg.iter_rows("superseded_by IS NULL")] == ["k2"]
        assert pg.successors("k0") == ["k1", "k2"]
        assert len(pg.confirmations(["k0", "k1", "k2"])) == 3
        record_judgement(pg, "k2", "k1", "UPDATE", Judgement("UPDATE", "UPDATE", "again"), None, T0)
        assert [d["reason"] for d in judged_decisions(pg)] == ["moved on", "again"]  # numbered after id 7
        assert pg.query("SELECT id FROM write_decisions ORDER BY id") == [(7,), (8,)]
    finally:
        pg.close()
