"""backup and restore of a deployment whose ledger is on PostgreSQL, killed (SIGKILL) before each of their file
operations and before the restore's transaction on the ledger commits (tests/backup_sweep.py with a ledger URL):
after each kill the drop-in serves the memories as they were, or is refused naming the command that finishes
the restore (with --config, never the URL); the rerun completes; the end matches an uninterrupted run; the
ledger rows the restore replaced are kept in a registered dump. CI runs every 4th kill point plus the first and
the last; ``benchmarks/fault_sweep_backup.py --ledger-url URL`` runs them all."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EVERY = 4


def _load(name: str, file: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _around_commit(calls: list[str]) -> set[int]:
    """Right before the ledger's transaction commits, and the file operation right after it."""
    return {i + 1 + d for i, c in enumerate(calls) if c == "commit_point" for d in (0, 1) if i + 1 + d <= len(calls)}


@pytest.fixture
def pg_crash_runner() -> Iterator[Any]:
    sweep = _load("mem0_hygiene_test_backup_sweep", "backup_sweep.py")
    runner = sweep.postgres_runner(_load("mem0_hygiene_test_faults_pg", "faults.py"))
    yield runner
    runner.close()


@pytest.mark.parametrize("operation", ["backup", "restore"])
def test_killed_before_each_step_with_a_postgres_ledger_the_rerun_completes_and_nothing_is_lost(
    operation: str, pg_url: str, pg_crash_runner: Any, tmp_path: Path
) -> None:
    sweep_mod = sys.modules["mem0_hygiene_test_backup_sweep"]
    scenario = sweep_mod.Scenario(tmp_path / "sweep", ledger_url=pg_url)
    sweep = sweep_mod.kill_before_each(pg_crash_runner, scenario, operation, every=EVERY, also=_around_commit)
    if operation == "restore":  # the PostgreSQL step is a kill point of its own, and the step after it too
        commit = sweep.calls.index("commit_point") + 1
        assert {commit, commit + 1} <= {p.k for p in sweep.points}
    failed = {p.k: (p.call, p.failures) for p in sweep.failures}
    assert not failed, failed
    assert sweep.checks_held == sweep.checks_run and sweep.points
