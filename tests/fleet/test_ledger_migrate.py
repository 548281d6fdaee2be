"""``mem0-hygiene ledger migrate --to postgresql://...``: a SQLite ledger copied into PostgreSQL, verified by
counts and a checksum per table, the config change printed without the password, and the drop-in then
serving the same states from the copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.cli import cli


def test_migrate_copies_every_row_verifies_it_and_prints_the_config_change(
    tmp_path: Path, pg_url: str, clock: Any
) -> None:
    m = Memory.from_config(offline_config(tmp_path, hygiene={"clock": clock}))
    old = m.add("Uses Postgres 15", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    new = m.supersede(old, "Uses Postgres 16", source="chat")
    gone = m.add("Away today", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    m.delete(gone)
    m.close()
    out = CliRunner().invoke(
        cli, ["ledger", "migrate", "--ledger", str(tmp_path / "hygiene.db"), "--to", pg_url, "--json"]
    )
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert {t["table"]: t["rows"] for t in result["tables"]} == {
        "memories": 3,
        "pending": 0,
        "confirmations": 0,
        "consolidation": 0,
        "write_decisions": 0,
        "reads": 0,
        "embedder": 3,  # provider, dims, recorded_at: the drop-in recorded them on the store it opened empty
    }
    assert result["verified"] and result["config_change"]["hygiene"]["ledger_url"].startswith(
        "postgresql://mem0_hygiene:PASSWORD@127.0.0.1:5432/"
    )
    assert ":mem0_hygiene@" not in out.output  # the password is never printed
    again = CliRunner().invoke(cli, ["ledger", "migrate", "--ledger", str(tmp_path / "hygiene.db"), "--to", pg_url])
    assert again.exit_code == 3 and "already holds 3 ledger row(s)" in again.output  # could not run
    cfg = offline_config(tmp_path, hygiene={"clock": clock, "ledger_url": pg_url})
    on_pg = Memory.from_config(cfg)
    try:
        assert [r["memory"] for r in on_pg.get_all(filters={"user_id": "dana"})["results"]] == ["Uses Postgres 16"]
        assert on_pg.ledger.get(old).superseded_by == new  # type: ignore[union-attr]
        assert on_pg.ledger.get(gone).deleted_at  # type: ignore[union-attr]
    finally:
        on_pg.close()


def test_migrate_refuses_a_url_that_is_not_postgresql(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["ledger", "migrate", "--ledger", str(tmp_path / "x.db"), "--to", "mysql://h/db"])
    assert out.exit_code == 2 and "postgresql://" in out.output


def test_migrate_copies_every_table_of_the_file_not_a_fixed_list(tmp_path: Path, pg_url: str, clock: Any) -> None:
    import sqlite3

    import psycopg

    m = Memory.from_config(offline_config(tmp_path, hygiene={"clock": clock}))
    m.add("Uses Postgres 15", user_id="dana", infer=False, source="chat")
    m.close()
    conn = sqlite3.connect(tmp_path / "hygiene.db")  # a table a feature creates in the ledger file when first used
    conn.execute("CREATE TABLE side_notes (id INTEGER PRIMARY KEY, note TEXT NOT NULL, score REAL)")
    conn.executemany("INSERT INTO side_notes (id, note, score) VALUES (?, ?, ?)", [(4, "a", 0.25), (9, "b", None)])
    conn.commit()
    conn.close()
    out = CliRunner().invoke(
        cli, ["ledger", "migrate", "--ledger", str(tmp_path / "hygiene.db"), "--to", pg_url, "--json"]
    )
    assert out.exit_code == 0, out.output
    assert {t["table"]: t["rows"] for t in json.loads(out.output)["tables"]} == {
        "memories": 1,
        "pending": 0,
        "side_notes": 2,
        "confirmations": 0,
        "consolidation": 0,
        "write_decisions": 0,
        "reads": 0,
        "embedder": 3,  # provider, dims, recorded_at: the drop-in recorded them on the store it opened empty
    }
    with psycopg.connect(pg_url, autocommit=True) as pg:
        assert pg.execute("SELECT id, note, score FROM side_notes ORDER BY id").fetchall() == [
            (4, "a", 0.25),
            (9, "b", None),
        ]
        pg.execute("INSERT INTO side_notes (note) VALUES ('numbered by the database')")
        assert pg.execute("SELECT max(id) FROM side_notes").fetchone()[0] == 10  # numbering goes on past the rows
