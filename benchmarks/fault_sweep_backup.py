"""The full file-operation fault sweep of backup and restore: each killed with SIGKILL before every one of its
file operations in turn (rename, replace, unlink, copy, rmtree, ...: ``tests/faults.py``), with every check of
``tests/backup_sweep.py`` after each kill. Prints each kill point and the totals: kill points, checks held.

    python benchmarks/fault_sweep_backup.py [--op restore] [--every 1] [--dir DIR] [--quiet] [--ledger-url URL]

With ``--ledger-url postgresql://...`` (a database or schema the sweep may empty and fill: every table of it is
put back before each run) the deployment's ledger is on PostgreSQL, and the commit of the restore's transaction
on it is a kill point too.

The CI suite (``tests/actions/test_backup_restore_faults.py``) runs every 3rd kill point plus the first and the
last; this runs them all. Exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-hygiene-sweep-"))
logging.disable(logging.WARNING)

from tests import faults  # noqa: E402
from tests.backup_sweep import KillPoint, Scenario, kill_before_each, postgres_runner  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--op", action="append", choices=["backup", "restore"], help="only this one (repeatable)")
    parser.add_argument("--every", type=int, default=1, help="kill before every N-th file operation (default: all)")
    parser.add_argument("--dir", help="work folder (default: a temporary one)")
    parser.add_argument("--quiet", action="store_true", help="print only failed kill points and the totals")
    parser.add_argument("--ledger-url", help="the ledger on this PostgreSQL database (its tables are overwritten)")
    args = parser.parse_args()
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="fault-sweep-backup-"))
    total_points = total_held = total_run = failed = 0
    started = time.perf_counter()

    def show(point: KillPoint) -> None:
        if point.failures:
            for name, why in point.failures.items():
                print(f"    k={point.k:<3} FAILED {name}: {why.strip().splitlines()[-1]}")
        elif not args.quiet:
            print(f"    k={point.k:<3} ok ({point.held} checks)  before {point.call}")

    runner = postgres_runner(faults) if args.ledger_url else faults.CrashRunner()
    try:
        scenario = Scenario(root / "sweep", ledger_url=args.ledger_url)
        for op in args.op or ["backup", "restore"]:
            print(f"{op}:")
            sweep = kill_before_each(runner, scenario, op, every=args.every, progress=show)
            print(
                f"  {len(sweep.points)} kill points of {len(sweep.calls)} file operations, "
                f"{sweep.checks_held}/{sweep.checks_run} checks held"
            )
            total_points += len(sweep.points)
            total_held += sweep.checks_held
            total_run += sweep.checks_run
            failed += len(sweep.failures)
    finally:
        runner.close()
    print(
        f"total: {total_points} kill points, {total_held}/{total_run} checks held, "
        f"{failed} kill point(s) with a failed check, {time.perf_counter() - started:.0f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
