"""Backups and restores on real stores: local Qdrant on disk, real SQLite files, a real lock holder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.actions import backup as backup_mod
from mem0_hygiene.actions.backup import backup, last_verified_backup
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.errors import BackupError, StoreLocked
from mem0_hygiene.report import Severity
from mem0_hygiene.stores.qdrant import collection_counts, is_locked
from mem0_hygiene.stores.sqlite import table_counts

U = {"user_id": "dana"}
CONSISTENCY = {"MEMORIES_LOST", "MEMORIES_RESURRECTED", "TOMBSTONED_PRESENT", "LEDGER_ORPHANS"}


@pytest.fixture
def deployment(make_deployment, persistent_dir):
    """A closed deployment with a supersede chain and a deleted memory; returns (config, ids)."""

    def plant(m):
        ids = {}
        ids["billing"] = m.add("Dana works on the billing service", **U, infer=False, source="chat")["results"][0]["id"]
        ids["npm"] = m.add("Dana prefers npm", **U, infer=False, source="chat")["results"][0]["id"]
        ids["pnpm"] = m.supersede(ids["npm"], "Dana prefers pnpm", source="chat")
        ids["gone"] = m.add("Dana is on call", **U, infer=False, source="chat")["results"][0]["id"]
        m.delete(ids["gone"])
        return ids

    d = make_deployment(persistent_dir / "app", plant=plant)
    return d.config, d.planted


def live_counts(cfg):
    return {
        "points": collection_counts(cfg["vector_store"]["config"]["path"]),
        "history": table_counts(cfg["history_db_path"]),
        "ledger": table_counts(str(Path(cfg["history_db_path"]).parent / "hygiene.db")),
    }


def snapshot_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_round_trip_counts_equal_and_the_audit_is_clean(deployment, persistent_dir, clock):
    cfg, ids = deployment
    made = backup(cfg, persistent_dir / "backups")
    assert made.counts == live_counts(cfg)
    assert made.points == 3 and made.ledger_rows == 4 and made.history_rows == 5
    assert set(made.integrity.values()) == {"ok"}
    assert {"history.db", "hygiene.db", "qdrant/collection/mem0/storage.sqlite"} <= set(made.integrity)
    manifest = json.loads((Path(made.path) / "manifest.json").read_text())
    assert manifest["mem0_hygiene_version"] and manifest["source"]["history_db_path"] == cfg["history_db_path"]
    assert all(len(f["sha256"]) == 64 for f in manifest["files"].values())

    clock.advance(hours=1)  # the app carries on: new memories, a deletion
    m = Memory.from_config(cfg)
    m.add("Dana moved to the search team", **U, infer=False, source="chat")
    m.delete(ids["billing"])
    m.close()
    changed = live_counts(cfg)
    assert changed != made.counts

    done = restore(cfg, made.path)
    assert live_counts(cfg) == made.counts
    assert {s.role: s.counts for s in done.stores} == {
        "vector_store": made.counts["points"],
        "history_db": made.counts["history"],
        "ledger": made.counts["ledger"],
    }
    report = audit(cfg)
    assert not CONSISTENCY & {f.code for f in report.findings}
    assert report.get("BACKUP_LAST_VERIFIED").severity is Severity.INFO
    # what was replaced is kept aside, whole, and still opens
    aside = done.store("vector_store").replaced_to
    assert aside and collection_counts(aside) == changed["points"]
    assert table_counts(done.store("history_db").replaced_to) == changed["history"]
    m = Memory.from_config(cfg)
    try:
        texts = {r["memory"] for r in m.get_all(filters=U)["results"]}
    finally:
        m.close()
    assert texts == {"Dana works on the billing service", "Dana prefers pnpm"}


def test_backup_in_process_while_the_app_holds_the_store(persistent_dir, clock):
    cfg = offline_config(persistent_dir / "app", hygiene={"clock": clock})
    m = Memory.from_config(cfg)
    try:
        m.add("Dana works on billing", **U, infer=False, source="chat")
        qdrant = cfg["vector_store"]["config"]["path"]
        assert is_locked(qdrant)
        with pytest.raises(StoreLocked, match=r"m\.backup\("):
            backup(cfg, persistent_dir / "backups")  # the CLI route cannot open the app's store
        made = m.backup(persistent_dir / "backups")
        assert made.points == 1 and not made.dry_run
        assert last_verified_backup(persistent_dir / "backups", verify=True).path == made.path
        m.add("Dana prefers pnpm", **U, infer=False, source="chat")  # the app carries on
        assert len(m.get_all(filters=U)["results"]) == 2
    finally:
        m.close()
    assert json.loads((Path(made.path) / "manifest.json").read_text())["in_process"] is True


def _damage(path: str) -> None:
    """Overwrite the cell pointers of page 2: a real damaged SQLite file."""
    with open(path, "r+b") as fh:
        fh.seek(4096 + 8)
        fh.write(b"\xff" * 64)


def test_a_copy_failing_integrity_check_keeps_the_previous_backup(deployment, persistent_dir, clock, monkeypatch):
    cfg, _ = deployment
    dest = persistent_dir / "backups"
    first = backup(cfg, dest)
    before = snapshot_files(dest)
    real_check = backup_mod.integrity_check
    checked = []

    def damaged_then_checked(path):
        if path.endswith("history.db"):
            _damage(path)
        result = real_check(path)
        checked.append((os.path.basename(path), result))
        return result

    monkeypatch.setattr(backup_mod, "integrity_check", damaged_then_checked)
    clock.advance(days=1)
    failed = r"history_db \(history\.db\) failed PRAGMA integrity_check: .*(Offset|malformed)"
    with pytest.raises(BackupError, match=failed):
        backup(cfg, dest, keep=1)
    assert checked and checked[0][0] == "history.db" and checked[0][1] != "ok"
    assert snapshot_files(dest) == before  # nothing new, no partial folder, the first set untouched
    assert os.listdir(dest) == [Path(first.path).name]
    assert last_verified_backup(dest, verify=True).path == first.path
    assert last_verified_backup(cfg).path == first.path


def test_keep_rotates_the_oldest_and_never_the_new_one(deployment, persistent_dir, clock):
    cfg, _ = deployment
    dest = persistent_dir / "backups"
    made = []
    for _ in range(3):
        made.append(backup(cfg, dest, keep=2))
        clock.advance(days=1)
    assert made[2].rotated == (made[0].path,)
    assert sorted(os.listdir(dest)) == sorted(Path(r.path).name for r in made[1:])
    one = backup(cfg, dest, keep=1)
    assert set(one.rotated) == {made[1].path, made[2].path} and os.listdir(dest) == [Path(one.path).name]
    record = json.loads(Path(one.record_path).read_text())
    assert [e["path"] for e in record["backups"]] == [one.path]
    with pytest.raises(BackupError, match="at least 1"):
        backup(cfg, dest, keep=0)


def test_dry_runs_change_nothing(deployment, persistent_dir):
    cfg, _ = deployment
    app = Path(cfg["history_db_path"]).parent
    plan = backup(cfg, persistent_dir / "backups", dry_run=True)
    assert plan.dry_run and plan.counts["points"] == {"mem0": 3}
    assert not (persistent_dir / "backups").exists()
    assert not Path(plan.record_path).exists()
    made = backup(cfg, persistent_dir / "backups")
    before = snapshot_files(app)
    plan = restore(cfg, made.path, dry_run=True)
    assert plan.dry_run and plan.store("history_db").replaced_to.startswith(cfg["history_db_path"] + ".replaced-")
    assert snapshot_files(app) == before


def _copy_set(made, persistent_dir) -> Path:
    copy = persistent_dir / "copy" / Path(made.path).name
    shutil.copytree(made.path, copy)
    return copy


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda s: (s / "qdrant" / "meta.json").unlink(), "missing: qdrant/meta.json"),
        (lambda s: (s / "hygiene.db").unlink(), "missing: hygiene.db"),
        (lambda s: (s / "stray.txt").write_text("x"), "extra: stray.txt"),
        (lambda s: (s / "manifest.json").unlink(), "has no manifest.json"),
    ],
)
def test_restore_refuses_a_partial_set(deployment, persistent_dir, damage, message):
    cfg, _ = deployment
    copy = _copy_set(backup(cfg, persistent_dir / "backups"), persistent_dir)
    damage(copy)
    app = Path(cfg["history_db_path"]).parent
    before = snapshot_files(app)
    with pytest.raises(BackupError, match=message):
        restore(cfg, copy)
    assert snapshot_files(app) == before


def test_restore_refuses_a_checksum_mismatch(deployment, persistent_dir):
    cfg, _ = deployment
    copy = _copy_set(backup(cfg, persistent_dir / "backups"), persistent_dir)
    data = bytearray((copy / "history.db").read_bytes())
    data[-1] ^= 0xFF  # same size, one byte different
    (copy / "history.db").write_bytes(bytes(data))
    app = Path(cfg["history_db_path"]).parent
    before = snapshot_files(app)
    with pytest.raises(BackupError, match=r"refusing to restore .*checksum mismatch: history\.db.*Nothing was changed"):
        restore(cfg, copy)
    assert snapshot_files(app) == before


def test_restore_refuses_while_another_process_holds_the_qdrant_lock(deployment, persistent_dir, hold_qdrant_lock):
    cfg, _ = deployment
    made = backup(cfg, persistent_dir / "backups")
    path = cfg["vector_store"]["config"]["path"]
    app = Path(cfg["history_db_path"]).parent
    holder = hold_qdrant_lock(path)
    before = snapshot_files(app)
    with pytest.raises(StoreLocked, match="stop the app") as err:
        restore(cfg, made.path)
    assert "another Qdrant client holds its lock" in str(err.value)
    assert snapshot_files(app) == before
    holder.release()
    assert restore(cfg, made.path).store("vector_store").counts == {"mem0": 3}  # fine once it let go


def test_a_restore_failing_its_last_check_puts_everything_back(deployment, persistent_dir):
    cfg, _ = deployment
    copy = _copy_set(backup(cfg, persistent_dir / "backups"), persistent_dir)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["stores"]["ledger"]["counts"] = {"memories": 99}  # the restored ledger will not match it
    (copy / "manifest.json").write_text(json.dumps(manifest))
    app = Path(cfg["history_db_path"]).parent
    before = {k: v for k, v in snapshot_files(app).items() if not k.startswith("qdrant/.lock")}
    with pytest.raises(BackupError, match=r"restored ledger holds \{.*'memories': 4[,}].*99"):
        restore(cfg, copy)
    after = {k: v for k, v in snapshot_files(app).items() if not k.startswith("qdrant/.lock")}
    assert after == before
    assert not [p for p in os.listdir(app) if ".replaced-" in p or ".restoring-" in p]


def test_the_audit_reports_the_backup_age(deployment, persistent_dir, clock):
    cfg, _ = deployment
    first = audit(cfg).get("BACKUP_LAST_VERIFIED")
    assert first.severity is Severity.WARNING and first.title == "No verified backup"
    assert "mem0-hygiene backup" in first.fix
    made = backup(cfg, persistent_dir / "backups")
    clock.advance(days=2)
    info = audit(cfg).get("BACKUP_LAST_VERIFIED")
    assert info.severity is Severity.INFO and "2.0 days ago" in info.title
    assert info.details["path"] == made.path
    clock.advance(days=6)
    old = audit(cfg).get("BACKUP_LAST_VERIFIED")
    assert old.severity is Severity.WARNING and "8.0 days old" in old.title
    (Path(made.path) / "history.db").unlink()
    gone = audit(cfg).get("BACKUP_LAST_VERIFIED")
    assert gone.severity is Severity.WARNING and "gone or incomplete" in gone.title
    assert "missing: history.db" in gone.examples[0]


def test_an_unreadable_record_skips_the_check_with_the_reason(deployment):
    cfg, _ = deployment
    Path(cfg["history_db_path"]).with_name("hygiene.backups.json").write_text("{not json")
    report = audit(cfg)
    reason = {s.code: s.reason for s in report.skipped}["BACKUP_LAST_VERIFIED"]
    assert "cannot be read" in reason and "hygiene.backups.json" in reason
