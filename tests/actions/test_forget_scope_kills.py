"""forget --user killed (SIGKILL, tests/faults.py) before a sample of its file operations, in the two variants the
plain sweep (test_forget_scope.py) does not cover: with --keep-backups (the backup set is left holding the person,
named, and everything else erased), and with the ledger on PostgreSQL (its rows erased in the database, the
receipt beside history.db). After each kill the rerun finishes: no byte of the person in any file of the
deployment (nor in any row of the PostgreSQL ledger), the other user untouched, no journal left, the receipt
checks out. Every kill point runs while there are at most 12 (6 today: the run's SQLite edits sit between the
journal's durable writes); past that every 3rd and the last two, and MEM0_HYGIENE_FULL_SWEEP=1 runs them all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget_scope import verify_receipt
from mem0_hygiene.config import offline_config

from .. import pg_schema

DANA = "Dana's passport number is X1234567"
TURN = "hi, my cat is called Pixel and I live at 12 Birch Lane"
BOB = "Bob works on the billing service"
DANA_TEXTS = [DANA, "Dana likes green tea", "Dana drinks oat milk", TURN]
EVERY = 3


def plant(m: Any) -> None:
    m.add(DANA, user_id="dana", infer=False, source="chat")
    m.add("Dana likes green tea", user_id="dana", agent_id="support", infer=False)
    gone = m.add("Dana drinks oat milk", user_id="dana", infer=False)["results"][0]["id"]
    m.delete(gone)  # mem0's DELETE row keeps the text in old_memory
    m.add(BOB, user_id="bob", infer=False)
    m.db.save_messages([{"role": "user", "content": TURN}], "user_id=dana")


def files_holding(folder: Path, text: str) -> list[str]:
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def sampled(n: int) -> list[int]:
    if os.environ.get("MEM0_HYGIENE_FULL_SWEEP") or n <= 12:
        return list(range(1, n + 1))
    return sorted({*range(1, n + 1, EVERY), *range(max(1, n - 1), n + 1)})


ERASE = """
import json

def operation(config_path, keep_backups):
    from mem0_hygiene.actions.forget_scope import forget_scope

    with open(config_path) as fh:
        result = forget_scope(json.load(fh), user_id="dana", keep_backups=keep_backups)
    return {
        "verified": result.verified,
        "resumed": result.resumed,
        "receipt": result.receipt,
        "kept": [c.path for c in (result.forget.copies if result.forget else ()) if c.kept and c.holds_text],
    }
"""


def deploy(make_deployment: Any, root: Path, hygiene: dict[str, Any]) -> Path:
    """A planted deployment under ``root`` (its config in root/mem0.json) and one backup set of it."""
    root.mkdir()
    make_deployment(root / "app", plant=plant, hygiene=hygiene)
    config = offline_config(root / "app", hygiene=hygiene or None)
    (root / "mem0.json").write_text(json.dumps(config))
    backup(config, root / "backups")
    return root / "mem0.json"


def test_forget_user_keep_backups_killed_anywhere_is_finished_by_the_rerun_and_leaves_only_the_kept_set(
    make_deployment, persistent_dir, crash_runner
):
    clean = crash_runner.run(ERASE, str(deploy(make_deployment, persistent_dir / "clean", {})), True)
    assert clean["status"] == "ok" and not clean["result"]["verified"] and len(clean["result"]["kept"]) == 1, clean
    calls = clean["calls"]
    assert len(calls) >= 5  # the journal's writes, the receipt, the journal's removal
    for k in sampled(len(calls)):
        root = persistent_dir / f"kill-{k}"
        config = deploy(make_deployment, root, {})
        killed = crash_runner.run(ERASE, str(config), True, kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        again = crash_runner.run(ERASE, str(config), True)
        assert again["status"] == "ok", (k, calls[k - 1], again)
        [kept] = again["result"]["kept"]  # named: the one set, left holding the person on purpose
        assert kept.startswith(str(root / "backups")) and files_holding(root / "backups", DANA), k
        for text in DANA_TEXTS:
            assert files_holding(root / "app", text) == [], (k, calls[k - 1], text)
        assert files_holding(root / "app", BOB), k
        assert not list(root.rglob(".pending-*")), k
        receipt = json.loads(Path(again["result"]["receipt"]).read_text())
        assert receipt["keep_backups"] is True and all(t not in json.dumps(receipt) for t in DANA_TEXTS)
        assert not verify_receipt(json.loads(config.read_text()), again["result"]["receipt"]).came_back, k


pg_urls = pg_schema.pg_urls  # a fresh PostgreSQL schema per call, skipped with the reason without PostgreSQL


def ledger_rows_holding(url: str, text: str) -> list[str]:
    """The tables of the ledger's schema with a row whose text holds ``text``."""
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
            n for n in names if conn.execute(f'SELECT 1 FROM "{n}" t WHERE t::text LIKE %s', (f"%{text}%",)).fetchone()
        ]


def ledger_scope_rows(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM memories WHERE user_id = 'dana'").fetchone()
        return int(row[0]) if row else 0


def test_forget_user_with_a_postgres_ledger_killed_anywhere_is_finished_by_the_rerun(
    make_deployment, persistent_dir, crash_runner, pg_urls
):
    url = pg_urls()
    clean = crash_runner.run(ERASE, str(deploy(make_deployment, persistent_dir / "clean", {"ledger_url": url})), False)
    assert clean["status"] == "ok" and clean["result"]["verified"], clean
    assert ledger_rows_holding(url, "Dana") == []
    calls = clean["calls"]
    assert len(calls) >= 5  # the journal's writes, the receipt, the journal's removal
    for k in sampled(len(calls)):
        root = persistent_dir / f"kill-{k}"
        url = pg_urls()
        config = deploy(make_deployment, root, {"ledger_url": url})
        assert ledger_scope_rows(url) >= 3  # the ledger is the PostgreSQL one: dana's rows are there before
        killed = crash_runner.run(ERASE, str(config), False, kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        again = crash_runner.run(ERASE, str(config), False)
        assert again["status"] == "ok" and again["result"]["verified"], (k, calls[k - 1], again)
        for text in DANA_TEXTS:
            assert files_holding(root, text) == [], (k, calls[k - 1], text)
            assert ledger_rows_holding(url, text) == [], (k, calls[k - 1], text)
        assert files_holding(root / "app", BOB), k
        assert not list(root.rglob(".pending-*")), k
        check = verify_receipt(json.loads(config.read_text()), again["result"]["receipt"])
        assert not check.came_back and check.complete, (k, [c for c in check.checks if c.left])
