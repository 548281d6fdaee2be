"""Every multi-step operation of the drop-in, killed with SIGKILL before a sample of its SQLite statements
(every third one, plus the first and the last): after each kill the store opens, every SQLite file passes
integrity_check, nothing is lost or back from the dead, the audit blames nothing on the tool, and a rerun
ends where an uninterrupted run does. ``benchmarks/fault_sweep.py`` runs every kill point."""

from __future__ import annotations

import pytest

from .crash_operations import OPERATIONS
from .faults_sqlite import kill_before_each, zygote

EVERY = 3


@pytest.fixture(scope="module")
def zyg():
    with zygote() as z:
        yield z


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_a_kill_before_any_sqlite_statement_loses_nothing_and_the_rerun_ends_where_an_uninterrupted_run_does(
    op, zyg, tmp_path
):
    sweep = kill_before_each(op, tmp_path, every=EVERY, zyg=zyg)
    assert len(sweep.statements) >= 10  # the operation really ran through the stores
    assert len(sweep.points) >= len(sweep.statements) // EVERY
    assert not sweep.failures, sweep.report()
