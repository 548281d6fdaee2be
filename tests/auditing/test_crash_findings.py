"""What the audit says about a store a crash left midway: an interrupted delete is an unfinished operation,
not a restore, and a memory deleted on purpose is not "lost" because mem0 died before writing its DELETE
row, not even after its tombstone is old enough to compact."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mem0 import Memory as Mem0Memory

from mem0_hygiene import Memory, audit, maintenance, offline_config
from mem0_hygiene.report import Severity

from ..crash_operations import BY_NAME
from ..faults_sqlite import crash_at, zygote


@pytest.fixture(scope="module")
def zyg():
    with zygote() as z:
        yield z


def codes(report, level=Severity.WARNING):
    return {f.code: f for f in report.findings if f.severity >= level}


def test_an_interrupted_delete_is_reported_as_unfinished_not_as_an_old_snapshot_restored(zyg, tmp_path):
    crash = crash_at(BY_NAME["delete"], tmp_path, zyg, "storage.sqlite", "DELETE FROM points")
    found = codes(audit(crash.config()))
    assert "TOMBSTONED_PRESENT" not in found
    unfinished = found["UNFINISHED_OPERATIONS"]
    assert unfinished.severity == Severity.WARNING and unfinished.count == 3  # the chain a -> b -> c
    assert "prune" in unfinished.fix

    m = Memory.from_config(crash.config())
    try:
        m.prune()
    finally:
        m.close()
    assert not {"UNFINISHED_OPERATIONS", "TOMBSTONED_PRESENT"} & set(codes(audit(crash.config())))


def test_a_memory_whose_delete_row_mem0_never_wrote_is_not_lost_before_or_after_compaction(zyg, tmp_path):
    # mem0 deleted a's point, then died before writing a's DELETE row to history.db
    crash = crash_at(BY_NAME["delete"], tmp_path, zyg, "history.db", "INSERT")
    found = codes(audit(crash.config()))
    assert "MEMORIES_LOST" not in found
    assert found["UNFINISHED_OPERATIONS"].count == 2  # b and c are still to go

    later = crash.now + timedelta(days=200)  # past retain_superseded: the tombstones are compactable
    config = offline_config(crash.folder, hygiene={**crash.hygiene, "clock": lambda: later})
    m = Memory.from_config(config)
    try:
        assert "DELETE" not in [h["event"] for h in m.db.get_history(crash.ids["a"])]
        # the rest of the delete (b and c) was finished when the drop-in started, through mem0's API
        assert all(Mem0Memory.get(m, crash.ids[k]) is None for k in ("b", "c"))
        assert all("DELETE" in [h["event"] for h in m.db.get_history(crash.ids[k])] for k in ("b", "c"))
        result = maintenance.prune(m)
        assert not {crash.ids["b"], crash.ids["c"]} & set(result.leftovers)
        assert m.ledger.get(crash.ids["a"]).deleted_at  # kept: the only record that a was deleted on purpose
    finally:
        m.close()
    assert not {"MEMORIES_LOST", "UNFINISHED_OPERATIONS", "TOMBSTONED_PRESENT"} & set(codes(audit(config)))
