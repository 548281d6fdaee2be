"""restore --reapply-erasures: a backup set made before an erasure it was kept out of is restored and the erasure
applied again to what was restored before anything opens the stores; the receipt checks out after. Killed at any
of a sample of its file operations (the swap, the journal's state change, the re-applied erasure, the end), the
drop-in either refuses to open the stores or serves nothing of the erased person, and the rerun finishes it; with
the ledger in a SQLite file and on PostgreSQL (skipped, saying why, when PostgreSQL cannot be reached)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget_scope import forget_scope, verify_receipt
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.cli import cli
from mem0_hygiene.config import offline_config
from mem0_hygiene.errors import BackupError

from .. import pg_schema

pg_urls = pg_schema.pg_urls  # a fresh PostgreSQL schema per call, skipped with the reason without PostgreSQL

DANA = "Dana's passport number is X1234567"
TURN = "hi, my cat is called Pixel and I live at 12 Birch Lane"
BOB = "Bob works on the billing service"
DANA_TEXTS = [DANA, "Dana likes green tea", TURN]


def plant(m: Any) -> dict[str, str]:
    ids = {"secret": m.add(DANA, user_id="dana", infer=False, source="chat")["results"][0]["id"]}
    ids["tea"] = m.add("Dana likes green tea", user_id="dana", agent_id="support", infer=False)["results"][0]["id"]
    ids["bob"] = m.add(BOB, user_id="bob", infer=False)["results"][0]["id"]
    m.db.save_messages([{"role": "user", "content": TURN}], "user_id=dana")
    m._upsert_entity("Pixel", "PERSON", ids["secret"], {"user_id": "dana"})
    return ids


def files_holding(folder: Path, text: str) -> list[str]:
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


@pytest.fixture
def kept(make_deployment, persistent_dir, clock) -> tuple[Any, str, str]:
    """A deployment, a backup set of it, then dana erased with the set kept out (--keep-backups)."""
    d = make_deployment(persistent_dir / "app", plant=plant, config_file=persistent_dir / "mem0.json")
    clock.advance(hours=1)
    made = backup(d.config, persistent_dir / "backups").path
    clock.advance(hours=1)
    erased = forget_scope(d.config, user_id="dana", keep_backups=True)
    assert erased.receipt and files_holding(persistent_dir / "backups", DANA)
    clock.advance(hours=1)
    return d, made, erased.receipt


def test_the_refusal_names_the_receipt_and_the_option_and_the_option_restores_without_the_person(
    kept, persistent_dir, make_deployment
):
    d, made, receipt = kept
    with pytest.raises(BackupError, match="--reapply-erasures") as err:
        restore(d.config, made)
    assert receipt in str(err.value)

    plan = restore(d.config, made, dry_run=True, reapply_erasures=True)
    assert plan.dry_run and [r.receipt for r in plan.reapplied] == [receipt]
    assert "would erase user=dana again" in "".join(t for line in plan._lines() for t, _ in line)

    result = restore(d.config, made, reapply_erasures=True)

    [again] = result.reapplied
    assert again.receipt == receipt and again.memories == 2 and not again.came_back and again.new_receipt
    assert "its receipt checks out" in "".join(t for line in result._lines() for t, _ in line)
    assert result.to_dict()["reapplied"][0]["receipt"] == receipt
    for text in DANA_TEXTS:
        assert files_holding(persistent_dir / "app", text) == [], text
    assert files_holding(persistent_dir / "app", BOB)
    check = verify_receipt(d.config, receipt)
    assert not check.came_back and check.complete
    assert not list((persistent_dir / "app").glob("*restore-journal*"))
    m = make_deployment(persistent_dir / "app", keep_open=True).memory
    assert m.get_all(filters={"user_id": "dana"})["results"] == []
    assert [r["memory"] for r in m.get_all(filters={"user_id": "bob"})["results"]] == [BOB]


def test_a_set_no_erasure_predates_restores_as_before_with_the_option(make_deployment, persistent_dir, clock):
    d = make_deployment(persistent_dir / "app", plant=plant)
    clock.advance(hours=1)
    made = backup(d.config, persistent_dir / "backups").path
    result = restore(d.config, made, reapply_erasures=True)
    assert result.reapplied == () and files_holding(persistent_dir / "app", DANA)


def test_cli_restore_refuses_naming_the_option_then_restores_with_it(kept, persistent_dir):
    _d, made, receipt = kept
    config = str(persistent_dir / "mem0.json")
    refused = CliRunner().invoke(cli, ["restore", made, "--config", config, "--yes"])
    assert refused.exit_code != 0 and "--reapply-erasures" in refused.output and receipt in refused.output
    done = CliRunner().invoke(cli, ["restore", made, "--config", config, "--yes", "--reapply-erasures", "--json"])
    assert done.exit_code == 0, done.output
    [again] = json.loads(done.output)["reapplied"]
    assert again["receipt"] == receipt and again["came_back"] is False
    for text in DANA_TEXTS:
        assert files_holding(persistent_dir / "app", text) == [], text


RESTORE = """
import json

def operation(config_path, src):
    from mem0_hygiene.actions.restore import restore

    with open(config_path) as fh:
        result = restore(json.load(fh), src, reapply_erasures=True)
    return {"reapplied": [r.to_dict() for r in result.reapplied], "resumed": result.resumed}
"""

OPEN = """
import json

def operation(config_path):
    from mem0_hygiene import Memory
    from mem0_hygiene.errors import BackupError

    with open(config_path) as fh:
        config = json.load(fh)
    try:
        m = Memory.from_config(config)
    except BackupError as exc:
        return {"refused": str(exc)}
    try:
        found = m.get_all(filters={"user_id": "dana"}, include_stale=True)["results"]
        hits = m.search("passport number", filters={"user_id": "dana"}, top_k=5)["results"]
        return {"dana": [r["memory"] for r in found + hits]}
    finally:
        m.close()
"""

EVERY = 4
"""Every 4th kill point (and the last few: the journal's end) of the run's file operations; the full sweep is
MEM0_HYGIENE_FULL_SWEEP=1."""


def ledger_rows_holding(url: str, texts: list[str]) -> list[str]:
    """The tables of the ledger's schema with a row whose text holds one of ``texts``."""
    import psycopg

    with psycopg.connect(url) as conn:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                "AND table_type = 'BASE TABLE'"
            )
        ]
        return [
            n
            for n in names
            for t in texts
            if conn.execute(f'SELECT 1 FROM "{n}" r WHERE r::text LIKE %s', (f"%{t}%",)).fetchone()
        ]


def sampled(n: int) -> list[int]:
    import os

    if os.environ.get("MEM0_HYGIENE_FULL_SWEEP"):
        return list(range(1, n + 1))
    return sorted({*range(1, n + 1, EVERY), *range(max(1, n - 2), n + 1)})


def kept_deployment(make_deployment, root: Path, hygiene: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """(config file, the set, the receipt) of a deployment whose set predates an erasure it was kept out of."""
    from mem0_hygiene.actions.backup import backup as do_backup

    root.mkdir()
    make_deployment(root / "app", plant=plant, hygiene=hygiene or {})
    config = offline_config(root / "app", hygiene=hygiene or None)
    (root / "mem0.json").write_text(json.dumps(config))
    made = do_backup(config, root / "backups").path
    receipt = forget_scope(config, user_id="dana", keep_backups=True).receipt
    assert receipt
    return str(root / "mem0.json"), made, receipt


@pytest.mark.parametrize("ledger", ["sqlite", "postgresql"])
def test_killed_anywhere_between_the_restore_and_the_reapplied_erasure_nothing_serves_the_person_and_the_rerun_finishes(
    ledger, make_deployment, persistent_dir, crash_runner, request
):
    def hygiene() -> dict[str, Any]:
        return {"ledger_url": request.getfixturevalue("pg_urls")()} if ledger == "postgresql" else {}

    config, made, _receipt = kept_deployment(make_deployment, persistent_dir / "clean", hygiene())
    clean = crash_runner.run(RESTORE, config, made)
    assert clean["status"] == "ok" and len(clean["result"]["reapplied"]) == 1, clean
    calls = clean["calls"]
    assert len(calls) > 12  # the swap's and the erasure's file operations
    points = sampled(len(calls))
    refused = 0
    for k in points:
        root = persistent_dir / f"kill-{k}"
        settings = hygiene()
        config, made, receipt = kept_deployment(make_deployment, root, settings)
        killed = crash_runner.run(RESTORE, config, made, kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        opened = crash_runner.run(OPEN, config)
        assert opened["status"] == "ok", (k, opened)
        if "refused" in opened["result"]:
            refused += 1
            assert "restore" in opened["result"]["refused"] and made in opened["result"]["refused"], (k, opened)
        else:
            assert opened["result"]["dana"] == [], (k, calls[k - 1], opened)
        again = crash_runner.run(RESTORE, config, made)
        assert again["status"] == "ok", (k, calls[k - 1], again)
        for text in DANA_TEXTS:
            assert files_holding(root / "app", text) == [], (k, calls[k - 1], text)
        assert files_holding(root / "app", BOB), k
        assert not verify_receipt(json.loads(Path(config).read_text()), receipt).came_back, k
        assert crash_runner.run(OPEN, config)["result"] == {"dana": []}, k
        if settings:  # no row of the PostgreSQL ledger holds a text of the person
            assert ledger_rows_holding(settings["ledger_url"], DANA_TEXTS) == [], k
    assert refused >= len(points) // 2  # most of the run is under the journal: the stores are not opened


def test_killed_while_erasing_again_another_set_is_refused_until_the_same_command_finishes_it(
    make_deployment, persistent_dir, crash_runner
):
    from mem0_hygiene.auditing.runner import audit

    config_path, made, _receipt = kept_deployment(make_deployment, persistent_dir / "clean")
    calls = crash_runner.run(RESTORE, config_path, made)["calls"]  # how many file operations a whole run makes
    root = persistent_dir / "kill"
    config_path, made, receipt = kept_deployment(make_deployment, root)
    config = json.loads(Path(config_path).read_text())
    later = backup(config, root / "later").path  # made after the erasure: nothing to re-apply
    killed = crash_runner.run(RESTORE, config_path, made, kill_at=len(calls))  # the journal's removal
    assert killed["status"] == "killed"
    [journal] = list((root / "app").glob("*restore-journal*"))
    doc = json.loads(journal.read_text())
    assert doc["state"] == "erasing" and doc["reapply"] == [receipt] and "--reapply-erasures" in doc["command"]

    with pytest.raises(BackupError, match="restore another set") as err:
        restore(config, later)
    assert "--reapply-erasures" in str(err.value) and made in str(err.value)
    with pytest.raises(BackupError, match="erasures it predates"):
        audit(config)

    plan = restore(config, made, dry_run=True)  # the journal says what is left, without the option
    assert plan.resumed == "finished" and [r.receipt for r in plan.reapplied] == [receipt]
    done = restore(config, made)
    assert done.resumed == "finished" and [r.receipt for r in done.reapplied] == [receipt]
    assert not list((root / "app").glob("*restore-journal*"))
    assert not verify_receipt(config, receipt).came_back
    for text in DANA_TEXTS:
        assert files_holding(root / "app", text) == [], text
