"""Reading a WAL-mode ledger from outside the app leaves nothing behind: no -wal/-shm files appear that were not
there (a read-only connection could never remove them again), and a writer's live WAL is still read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mem0_hygiene import audit, maintenance
from mem0_hygiene.stores.ledger import open_ledger, scratch_copy
from mem0_hygiene.stores.sqlite import is_wal_file


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_reads_and_dry_runs_of_a_closed_wal_ledger_create_no_sidecar_files(tmp_path: Path, make_deployment: Any):
    ids: list[str] = []

    def plant(m: Any) -> None:
        ids.append(m.add("Prefers pnpm", user_id="dana", infer=False, source="chat")["results"][0]["id"])

    dep = make_deployment(tmp_path / "store", plant=plant)
    ledger = tmp_path / "store" / "hygiene.db"
    assert is_wal_file(ledger) and not Path(f"{ledger}-wal").exists()
    before = files(tmp_path / "store")
    open_ledger(str(ledger), readonly=True).close()
    scratch_copy(str(ledger)).close()
    maintenance.digest(dep.config, since="30d")
    maintenance.memory_story(dep.config, ids[0])
    maintenance.prune(dep.config, dry_run=True)
    maintenance.review_queue(dep.config)
    audit(dep.config)
    assert files(tmp_path / "store") == before


def test_a_read_while_the_app_writes_sees_its_uncheckpointed_rows(tmp_path: Path, make_deployment: Any):
    dep = make_deployment(tmp_path / "store", keep_open=True)
    m = dep.memory
    mid = m.add("Prefers pnpm", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    m.flush()  # the row is in the app's WAL, not yet in the main file
    assert Path(f"{tmp_path / 'store' / 'hygiene.db'}-wal").exists()
    reader = open_ledger(str(tmp_path / "store" / "hygiene.db"), readonly=True)
    try:
        assert reader.get(mid) is not None
    finally:
        reader.close()
