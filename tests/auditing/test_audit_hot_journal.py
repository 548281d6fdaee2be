"""The audit of a deployment whose app died mid-commit: history.db (or the ledger) left with a hot journal is
audited from a rolled-back copy (the last committed state, never the half-written pages), the file is left as
it is, and a HOT_JOURNAL warning says so; before, every history check was skipped ("attempt to write a readonly
database")."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.report import Severity

U = {"user_id": "dana"}


def _crash_helpers() -> Any:
    path = Path(__file__).resolve().parent.parent / "actions" / "test_digest_after_crash.py"
    spec = importlib.util.spec_from_file_location("mem0_hygiene_test_hot_journal", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "which, table, column", [("history.db", "history", "new_memory"), ("hygiene.db", "memories", "source")]
)
def test_a_hot_journal_is_audited_from_a_rolled_back_copy_and_said(
    make_deployment: Any, tmp_path: Path, which: str, table: str, column: str
) -> None:
    def plant(m: Any) -> None:
        for i in range(6):
            m.add(f"Standing fact {i}", **U, infer=False, source=f"chat {i}")

    dep = make_deployment(tmp_path / "app", plant=plant)
    before = audit(dep.config)
    path = dep.folder / which
    _crash_helpers().die_mid_commit(path, table, column, "rollback-journal")
    files = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, Path(str(path) + "-journal"))}

    report = audit(dep.config)

    assert not [s for s in report.skipped if s.area in ("history", "ledger")], report.skipped
    hot = report.get("HOT_JOURNAL")
    assert hot is not None and hot.severity is Severity.WARNING
    assert f"{path} has a hot journal" in hot.examples[0] and "rolled-back copy" in hot.title
    # the last committed state: the same findings as before the crash (but the warning), no half-written text
    # (the crashing writer switched the ledger to a rollback journal, which LEDGER_PRAGMAS rightly reports)
    assert {f.code for f in report.findings} - {"HOT_JOURNAL", "LEDGER_PRAGMAS"} == {f.code for f in before.findings}
    assert report.get("HISTORY_ACTIVITY").count == before.get("HISTORY_ACTIVITY").count
    assert "HALF WRITTEN" not in str(report.to_dict())
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files} == files  # left for the app
    m = Memory.from_config(dep.config)  # the app recovers it when it next opens it
    try:
        assert len(m.get_all(filters=U)["results"]) == 6
    finally:
        m.close()
    assert audit(dep.config).get("HOT_JOURNAL") is None
