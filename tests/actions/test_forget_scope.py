"""Erasing a person everywhere (forget --user) on a real deployment: the raw bytes of every file under the
deployment's and the backups' folders prove it, the receipt holds digests and never a text, a later check of the
receipt sees what came back, and a restore of a set the erasure left alone is refused naming the receipt."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget_scope import forget_scope, verify_receipt
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.cli import cli
from mem0_hygiene.errors import BackupError, ConfigError
from mem0_hygiene.stores.backup_set import check_set
from mem0_hygiene.stores.erasures import text_digest

DANA = "Dana's passport number is X1234567"
TURN = "hi, my cat is called Pixel and I live at 12 Birch Lane"
BOB = "Bob works on the billing service"


def files_holding(folder: Path, text: str) -> list[str]:
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def plant(m) -> dict[str, str]:
    ids = {"secret": m.add(DANA, user_id="dana", infer=False, source="chat")["results"][0]["id"]}
    ids["tea"] = m.add("Dana likes green tea", user_id="dana", agent_id="support", infer=False)["results"][0]["id"]
    ids["old"] = m.add("Dana lives in Haifa", user_id="dana", infer=False)["results"][0]["id"]
    ids["new"] = m.supersede(ids["old"], "Dana lives in Tel Aviv", source="chat 2")
    ids["gone"] = m.add("Dana drinks oat milk", user_id="dana", infer=False)["results"][0]["id"]
    m.delete(ids["gone"])  # mem0's DELETE row keeps the text in old_memory
    ids["bob"] = m.add(BOB, user_id="bob", infer=False)["results"][0]["id"]
    m.db.save_messages([{"role": "user", "content": TURN}, {"role": "user", "content": "ok"}], "user_id=dana")
    m.db.save_messages([{"role": "user", "content": "thanks"}], "agent_id=support&user_id=dana")
    m.db.save_messages([{"role": "user", "content": "Bob says hello to everyone"}], "user_id=bob")
    # what mem0 2.x writes when spaCy is installed, through its own code path
    m._upsert_entity("Pixel", "PERSON", ids["secret"], {"user_id": "dana"})
    m._upsert_entity("Billing", "ORG", ids["bob"], {"user_id": "bob"})
    return ids


DANA_TEXTS = [
    DANA,
    "Dana likes green tea",
    "Dana lives in Haifa",
    "Dana lives in Tel Aviv",
    "Dana drinks oat milk",
    TURN,
]


@pytest.fixture
def deployment(make_deployment, persistent_dir, clock):
    d = make_deployment(persistent_dir / "app", plant=plant, config_file=persistent_dir / "mem0.json")
    clock.advance(hours=1)
    return d


def test_forget_user_leaves_no_byte_of_the_person_in_any_file_or_backup_and_bob_untouched(
    deployment, persistent_dir, clock
):
    dest = persistent_dir / "backups"
    made = backup(deployment.config, dest).path
    assert files_holding(dest, DANA)  # the backup set holds the person before
    clock.advance(hours=1)

    result = forget_scope(deployment.config, user_id="dana")

    assert result.verified, result.to_dict()
    for text in DANA_TEXTS:
        assert files_holding(persistent_dir, text) == [], text
    assert result.messages_removed == 6  # 3 live rows (two scopes of dana) and the same 3 in the backup set
    assert result.entities_removed == 1
    assert set(result.memory_ids) == {deployment.planted[k] for k in ("secret", "tea", "old", "new", "gone")}
    assert check_set(made) == []  # the scrubbed set still restores
    receipt = Path(result.receipt or "")
    doc = json.loads(receipt.read_text())
    raw = receipt.read_text()
    assert all(t not in raw for t in DANA_TEXTS)
    assert text_digest(DANA) in doc["text_sha256"] and text_digest(TURN) in doc["text_sha256"]
    assert doc["scope"] == {"user_id": "dana"} and doc["verified"] is True
    assert {c["path"] for c in doc["copies"]} == {made} and doc["files"] and all(f["clean"] for f in doc["files"])
    assert not list(receipt.parent.glob(".pending-*"))  # the journal is gone
    # bob keeps his memory, his turn and his entity
    assert files_holding(persistent_dir / "app", BOB)
    with sqlite3.connect(persistent_dir / "app" / "history.db") as conn:
        scopes = [r[0] for r in conn.execute("SELECT session_scope FROM messages")]
    assert scopes == ["user_id=bob"]
    assert not verify_receipt(deployment.config, receipt).came_back


def test_a_restore_of_a_backup_kept_out_of_the_erasure_is_refused_naming_the_receipt_and_the_check_sees_it_back(
    deployment, persistent_dir, clock
):
    made = backup(deployment.config, persistent_dir / "backups").path
    clock.advance(hours=1)
    result = forget_scope(deployment.config, user_id="dana", keep_backups=True)
    assert not result.verified  # the kept set still holds the person
    assert files_holding(persistent_dir / "backups", DANA)

    with pytest.raises(BackupError, match="erasure") as err:
        restore(deployment.config, made)
    assert str(result.receipt) in str(err.value) and "forget --user dana" in str(err.value)

    # the erasure re-applied to the set (no --keep-backups this time): the restore goes through, nothing is back
    clock.advance(hours=1)
    again = forget_scope(deployment.config, user_id="dana")
    assert again.verified
    restore(deployment.config, made)
    check = verify_receipt(deployment.config, again.receipt or "")
    assert not check.came_back and check.complete, [c for c in check.checks if c.left]


def test_verify_says_what_came_back_after_the_app_wrote_the_person_again(deployment, make_deployment, persistent_dir):
    result = forget_scope(deployment.config, user_id="dana")
    m = make_deployment(persistent_dir / "app", keep_open=True).memory
    m.add(DANA, user_id="dana", infer=False)
    m.close()

    check = verify_receipt(deployment.config, result.receipt or "")

    assert check.came_back
    back = {(c.store, c.what) for c in check.checks if c.left}
    assert ("vector_store", "point(s) of the scope") in back
    assert ("vector_store", "point(s) holding an erased text") in back


def test_forget_scope_without_a_scope_is_refused_before_anything_changes(deployment, persistent_dir):
    before = files_holding(persistent_dir, DANA)
    with pytest.raises(ConfigError, match="--user ID"):
        forget_scope(deployment.config)
    assert files_holding(persistent_dir, DANA) == before


def test_cli_forget_user_prints_the_receipt_and_verify_exits_1_when_the_person_is_back(
    deployment, make_deployment, persistent_dir
):
    config = str(persistent_dir / "mem0.json")
    out = CliRunner().invoke(cli, ["forget", "--config", config, "--user", "dana", "--json"])
    assert out.exit_code == 0, out.output
    receipt = json.loads(out.output)["receipt"]
    ok = CliRunner().invoke(cli, ["forget", "--config", config, "--verify", receipt])
    assert ok.exit_code == 0 and "still erased" in ok.output
    m = make_deployment(persistent_dir / "app", keep_open=True).memory
    m.add("Dana likes green tea", user_id="dana", infer=False)
    m.close()
    back = CliRunner().invoke(cli, ["forget", "--config", config, "--verify", receipt])
    assert back.exit_code == 1 and "came back" in back.output


ERASE = """
import json

def operation(config_path):
    from mem0_hygiene.actions.forget_scope import forget_scope

    with open(config_path) as fh:
        result = forget_scope(json.load(fh), user_id="dana")
    return {"verified": result.verified, "resumed": result.resumed, "receipt": result.receipt}
"""


def test_forget_user_killed_before_any_of_its_file_operations_is_finished_by_the_rerun(
    make_deployment, persistent_dir, crash_runner, clock
):
    def deploy(name: str) -> Path:
        root = persistent_dir / name
        root.mkdir()
        make_deployment(root / "app", plant=plant, config_file=root / "mem0.json", hygiene={})
        backup(json.loads((root / "mem0.json").read_text()), root / "backups")
        return root

    clean = crash_runner.run(ERASE, str(deploy("clean") / "mem0.json"))
    assert clean["status"] == "ok" and clean["result"]["verified"], clean
    calls = clean["calls"]
    points = list(range(1, len(calls) + 1))  # every durable write and removal of the run (12 today)
    held = []
    for k in points:
        root = deploy(f"kill-{k}")
        killed = crash_runner.run(ERASE, str(root / "mem0.json"), kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        again = crash_runner.run(ERASE, str(root / "mem0.json"))
        assert again["status"] == "ok" and again["result"]["verified"], (k, calls[k - 1], again)
        for text in DANA_TEXTS:
            assert files_holding(root, text) == [], (k, calls[k - 1], text)
        assert files_holding(root / "app", BOB), k
        assert not list((root / "app" / "hygiene.erasures").glob(".pending-*")), k
        held.append(k)
    assert held == points and len(points) >= 10


def test_a_dry_run_names_what_would_be_erased_and_changes_no_file(deployment, persistent_dir):
    before = {p: p.read_bytes() for p in (persistent_dir / "app").rglob("*") if p.is_file() and p.suffix != ".lock"}

    result = forget_scope(deployment.config, user_id="dana", dry_run=True)

    assert result.dry_run and result.receipt is None and not result.verified
    assert len(result.memory_ids) == 5 and result.messages_removed == 3
    assert result.forget is not None and any(not f.clean for f in result.forget.files)  # where the text is now
    after = {p: p.read_bytes() for p in before if p.exists()}
    changed = [str(p) for p in before if after.get(p) != before[p] and not p.name.endswith(("-shm", "-wal"))]
    assert changed == [] and not (persistent_dir / "app" / "hygiene.erasures").exists()
