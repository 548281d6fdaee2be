"""backup and restore killed (SIGKILL) before their file operations (tests/faults.py): after each kill the
drop-in serves the memories as they were (or is refused, naming the command, while a restore is half done),
the rerun completes, it ends where an uninterrupted run ends, and nothing is lost (tests/backup_sweep.py).
CI runs every 3rd kill point plus the first and the last; ``benchmarks/fault_sweep_backup.py`` runs them all."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

EVERY = 3


def _sweep_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "mem0_hygiene_test_backup_sweep", Path(__file__).resolve().parent.parent / "backup_sweep.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("operation", ["backup", "restore"])
def test_killed_before_its_file_operations_the_rerun_completes_and_nothing_is_lost(
    operation: str, crash_runner: Any, tmp_path: Path
) -> None:
    sweep_mod = _sweep_module()
    scenario = sweep_mod.Scenario(tmp_path / "sweep")
    sweep = sweep_mod.kill_before_each(crash_runner, scenario, operation, every=EVERY)
    assert len(sweep.calls) > 8  # every file operation is a kill point, not a handful of steps
    failed = {p.k: (p.call, p.failures) for p in sweep.failures}
    assert not failed, failed
    assert sweep.checks_held == sweep.checks_run and sweep.points
