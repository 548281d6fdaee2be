"""Erasure covers every copy: after backup -> restore -> forget --scrub on a real store, the raw bytes of every
file under the deployment's folder and the backup folder are read, the scrubbed backup sets still pass
restore's checks, and putting one back does not bring the memory back."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mem0_hygiene import Memory
from mem0_hygiene.actions.backup import backup
from mem0_hygiene.actions.forget import forget
from mem0_hygiene.actions.restore import restore
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.cli import cli
from mem0_hygiene.stores.backup_set import check_set, read_manifest

U = {"user_id": "dana"}
SECRET = "Dana's passport number is X1234567"
CONSISTENCY = {
    "MEMORIES_LOST",
    "MEMORIES_RESURRECTED",
    "TOMBSTONED_PRESENT",
    "LEDGER_ORPHANS",
    "DELETED_TEXT_IN_HISTORY",
    "DELETED_TEXT_IN_MESSAGES",
}


def files_holding(folder: Path, text: str) -> list[str]:
    """Every file under the folder whose raw bytes contain the text (UTF-8)."""
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def copied(make_deployment, persistent_dir, clock):
    """A deployment holding the secret, two backup sets of it, and a restore that moved its stores aside."""

    def plant(m):
        secret = m.add(SECRET, **U, infer=False, source="chat")["results"][0]["id"]
        for i in range(4):
            m.add(f"Dana likes tea number {i}", **U, infer=False, source="chat")
        m.db.save_messages([{"role": "user", "content": f"by the way, {SECRET}"}], "user_id=dana")
        return secret

    d = make_deployment(persistent_dir / "app", plant=plant, config_file=persistent_dir / "mem0.json")
    dest = persistent_dir / "backups"
    sets = [backup(d.config, dest).path]
    clock.advance(hours=1)
    sets.append(backup(d.config, dest).path)
    clock.advance(hours=1)
    restored = restore(d.config, sets[0])
    asides = [s.replaced_to for s in restored.stores]
    held = files_holding(persistent_dir, SECRET)
    for where in (
        "app/history.db",
        "app/qdrant/collection/mem0/storage.sqlite",
        *(f"backups/{Path(s).name}/history.db" for s in sets),
    ):
        assert where in held  # the text really is in the live stores and in every copy
    assert any(".replaced-" in h for h in held)
    return d, dest, sets, asides


def test_scrub_erases_the_text_from_the_stores_and_every_copy_and_the_sets_still_restore(copied, persistent_dir, clock):
    d, dest, sets, asides = copied
    result = forget(d.config, [d.planted], scrub=True)

    assert files_holding(persistent_dir, SECRET) == []  # every file under the deployment and the backups
    assert result.verified
    assert {c.path: c.kind for c in result.copies} == {
        **dict.fromkeys(sets, "backup_set"),
        **dict.fromkeys(asides, "replaced_aside"),
    }
    assert all(c.scrubbed and not c.holds_text for c in result.copies)
    assert {c.path for c in result.copies if c.resealed} == set(sets)
    assert {f.copy for f in result.files if f.kind != "live"} == set(sets) | set(asides)
    assert SECRET not in json.dumps(result.to_dict())
    assert "verified" in str(result._lines())
    for path in sets:
        assert check_set(path) == []  # every checksum rewritten
        assert restore(d.config, path, dry_run=True).checked_files == len(read_manifest(path)["files"])
        assert read_manifest(path)["changes"][-1]["what"] == "erasure"

    clock.advance(hours=1)
    back = restore(d.config, sets[1])  # a scrubbed set put back: the memory stays forgotten
    assert back.store("vector_store").counts == {"mem0": 4}
    m = Memory.from_config(d.config)
    try:
        assert m.get(d.planted) is None
        assert len(m.get_all(filters=U)["results"]) == 4
        assert not {f.code for f in audit(m).findings} & CONSISTENCY
    finally:
        m.close()


def test_keep_backups_leaves_the_sets_alone_names_each_and_exits_1(copied, persistent_dir):
    d, dest, sets, asides = copied
    before = digests(dest)

    run = CliRunner().invoke(
        cli, ["forget", d.planted, "--scrub", "--keep-backups", "--config", str(d.config_path)], catch_exceptions=False
    )

    assert run.exit_code == 1
    for path in sets:
        assert f"{path} (backup_set, kept with --keep-backups)" in run.output
    assert digests(dest) == before  # the sets were not touched
    assert {h.split("/")[0] for h in files_holding(persistent_dir, SECRET)} == {"backups"}
    for path in asides:
        assert path not in run.output.split("still found in these copies")[1]  # scrubbed: not named
    as_json = CliRunner().invoke(
        cli,
        ["forget", d.planted, "--scrub", "--keep-backups", "--json", "--config", str(d.config_path)],
        catch_exceptions=False,
    )
    assert as_json.exit_code == 1
    doc = json.loads(as_json.stdout)
    assert doc["verified"] is False and doc["keep_backups"] is True
    assert {c["path"] for c in doc["copies"] if c["holds_text"]} == set(sets)
    assert all(c["kept"] for c in doc["copies"] if c["kind"] == "backup_set")


def test_a_dry_run_names_every_copy_holding_the_text_and_changes_nothing(copied, persistent_dir):
    d, dest, sets, asides = copied
    before = digests(persistent_dir)
    result = forget(d.config, [d.planted], scrub=True, dry_run=True)
    # the data files and every copy are unchanged (a read-only SQLite connection to the WAL ledger may leave
    # empty -wal/-shm files behind: that is the dry-run Memory's, not the erasure's)
    data = {k: v for k, v in digests(persistent_dir).items() if not k.endswith(("-wal", "-shm"))}
    assert data == {k: v for k, v in before.items() if not k.endswith(("-wal", "-shm"))}
    assert {c.path for c in result.copies_holding_text} == set(sets) | {
        a for a in asides if "qdrant" in a or "history" in a
    }
    assert not result.verified


def test_a_damaged_registry_means_the_erasure_is_not_verified(copied):
    d, _dest, _sets, _asides = copied
    Path(d.folder / "hygiene.copies.json").write_text("{not json")
    result = forget(d.config, [d.planted], scrub=True)
    assert "copies" in result.unverified and not result.verified
    assert any("cannot be listed" in n for n in result.notes)


KILLED_IN_RESEAL = """
import json, os, signal, sys
from mem0_hygiene.actions import copy_erasure
from mem0_hygiene.actions.forget import forget

config, memory_id = json.loads(sys.argv[1])
copy_erasure.reseal = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # the set's files are edited by now
forget(config, [memory_id], scrub=True)
"""


def test_a_scrub_killed_before_a_set_was_resealed_is_finished_by_the_next_one(copied, persistent_dir):
    d, dest, sets, asides = copied
    cfg = {k: v for k, v in d.config.items() if k != "hygiene"}
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_IN_RESEAL, json.dumps([cfg, d.planted])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    first = sets[0]
    assert check_set(first) != []  # edited, manifest not yet rewritten: restore would refuse it
    assert (dest / f".{Path(first).name}.erasing").exists()

    result = forget(d.config, [d.planted], scrub=True)

    assert result.verified and result.already_deleted == (d.planted,)
    assert files_holding(persistent_dir, SECRET) == []
    assert check_set(first) == [] and not (dest / f".{Path(first).name}.erasing").exists()
    assert restore(d.config, first, dry_run=True).checked_files == len(read_manifest(first)["files"])


def test_a_set_damaged_before_the_scrub_is_erased_but_not_resealed(copied, persistent_dir):
    d, dest, sets, asides = copied
    (Path(sets[1]) / "stray.txt").write_text("not from a backup")

    result = forget(d.config, [d.planted], scrub=True)

    assert files_holding(persistent_dir, SECRET) == [] and result.verified
    damaged = {c.path: c for c in result.copies}[sets[1]]
    assert damaged.scrubbed and not damaged.resealed
    assert "failed its checks before the erasure (extra: stray.txt)" in damaged.reason
    assert check_set(sets[1]) != [] and check_set(sets[0]) == []
