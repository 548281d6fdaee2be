"""A truncated or garbage-overwritten ledger gives a LedgerError naming the file, what is wrong with it and how
to put it back from a backup (the newest verified set in the backup record, through `mem0-hygiene restore`), in
the drop-in, in digest and history (library and CLI); the audit lists it as a skipped check, never a traceback."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mem0_hygiene import LedgerError, Memory, audit, maintenance
from mem0_hygiene.cli import cli

PAGE = 4096


def truncate(path: Path) -> None:
    """Keep the first page (header and schema) only: the tables' pages are gone."""
    with open(path, "r+b") as fh:
        fh.truncate(PAGE)


def garbage_after_header(path: Path) -> None:
    """Random bytes over everything but the 100-byte header."""
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(100)
        fh.write(os.urandom(size - 100))


def garbage_everywhere(path: Path) -> None:
    size = path.stat().st_size
    path.write_bytes(os.urandom(size))


DAMAGE = {"truncated": truncate, "garbage-after-header": garbage_after_header, "garbage": garbage_everywhere}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request, make_deployment, persistent_dir, clock):
    """A deployment with a verified backup, whose ledger is then damaged."""
    ids: list[str] = []

    def plant(m):
        for i in range(40):
            ids.append(
                m.add(f"Fact number {i} about billing", user_id="dana", infer=False, source="chat")["results"][0]["id"]
            )
        m.backup(str(persistent_dir / "backups"))

    d = make_deployment(persistent_dir / "store", plant=plant, config_file=persistent_dir / "mem0.json")
    ledger = persistent_dir / "store" / "hygiene.db"
    assert not Path(str(ledger) + "-wal").exists() or Path(str(ledger) + "-wal").stat().st_size == 0
    DAMAGE[request.param](ledger)
    sets = sorted((persistent_dir / "backups").iterdir())
    return {
        "config": d.config,
        "path": str(d.config_path),
        "ledger": str(ledger),
        "ids": ids,
        "backup": str(sets[-1]),
        "kind": request.param,
    }


def assert_explains(message: str, damaged: dict) -> None:
    assert damaged["ledger"] in message, message
    assert re.search(r"damaged|not a SQLite database|malformed", message), message
    assert "mem0-hygiene restore" in message and damaged["backup"] in message, message


def test_the_drop_in_names_the_file_and_the_backup_to_restore(damaged):
    with pytest.raises(LedgerError) as info:
        m = Memory.from_config(damaged["config"])
        try:  # damage the header does not show is found at the first read
            m.get_all(filters={"user_id": "dana"})
            m.get(damaged["ids"][0])
        finally:
            m.close()
    assert_explains(str(info.value), damaged)


def test_digest_and_history_name_the_file_and_the_backup_to_restore(damaged):
    with pytest.raises(LedgerError) as info:
        maintenance.digest(damaged["config"], since="30d")
    assert_explains(str(info.value), damaged)
    with pytest.raises(LedgerError) as info:
        maintenance.memory_story(damaged["config"], damaged["ids"][0])
    assert_explains(str(info.value), damaged)


def test_the_cli_digest_and_history_print_one_clean_error(damaged):
    for args in (["digest", "--since", "30d"], ["history", damaged["ids"][0]]):
        result = CliRunner().invoke(cli, [*args, "--config", damaged["path"]])
        assert result.exit_code == 3, result.output  # could not run: the ledger is damaged
        assert isinstance(result.exception, SystemExit), repr(result.exception)
        assert "Traceback" not in result.output
        assert_explains(result.output, damaged)


def test_the_audit_lists_the_damaged_ledger_instead_of_failing(damaged):
    report = audit(damaged["config"])
    reasons = " ".join(s.reason for s in report.skipped) + " ".join(
        f.title for f in report.findings if f.code == "LEDGER_MISSING"
    )
    assert re.search(r"malformed|not a database|could not be read|not a mem0-hygiene ledger", reasons), reasons
    result = CliRunner().invoke(cli, ["audit", "--config", damaged["path"]])
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output


def test_following_the_advice_brings_the_ledger_back(make_deployment, persistent_dir, clock):
    ids: list[str] = []

    def plant(m):
        ids.append(m.add("Prefers pnpm", user_id="dana", infer=False, source="chat 2026-08-01")["results"][0]["id"])
        m.backup(str(persistent_dir / "backups"))

    d = make_deployment(persistent_dir / "store", plant=plant, config_file=persistent_dir / "mem0.json")
    truncate(persistent_dir / "store" / "hygiene.db")
    with pytest.raises(LedgerError) as info:
        Memory.from_config(d.config).close()
    command = re.search(r"mem0-hygiene restore (\S+)", str(info.value))
    assert command is not None
    result = CliRunner().invoke(cli, ["restore", command.group(1), "--config", str(d.config_path), "--yes"])
    assert result.exit_code == 0, result.output
    m = Memory.from_config(d.config)
    try:
        assert m.ledger.get(ids[0]).source == "chat 2026-08-01"
    finally:
        m.close()
