"""The full SQLite fault sweep: every operation of ``tests/crash_operations.py`` killed before each of its
SQLite statements in turn, with every check of ``tests/faults_sqlite.py`` after each kill. Prints each kill
point (the statement that never ran, the checks that failed) and the totals: kill points, checks held.

    python benchmarks/fault_sweep.py [--op supersede] [--every 1] [--dir DIR] [--quiet]

The CI suite (``tests/test_crash_sqlite.py``) runs a sample of the same kill points; this runs them all.
Exits 1 when any check failed.
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

from tests.crash_operations import BY_NAME, OPERATIONS  # noqa: E402
from tests.faults_sqlite import KillPoint, kill_before_each, zygote  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--op", action="append", choices=sorted(BY_NAME), help="only this operation (repeatable)")
    parser.add_argument("--every", type=int, default=1, help="kill before every N-th statement (default: all)")
    parser.add_argument("--dir", help="work folder (default: a temporary one)")
    parser.add_argument("--quiet", action="store_true", help="print only failed kill points and the totals")
    args = parser.parse_args()
    ops = [BY_NAME[name] for name in args.op] if args.op else list(OPERATIONS)
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="fault-sweep-"))
    root.mkdir(parents=True, exist_ok=True)
    total_points = total_held = total_run = failed = 0
    started = time.perf_counter()

    def show(point: KillPoint) -> None:
        if point.failures:
            for name, why in point.failures.items():
                print(f"    k={point.k:<3} FAILED {name}: {why.strip().splitlines()[0]}")
        elif not args.quiet:
            print(f"    k={point.k:<3} ok ({point.held} checks)  before {point.statement}")

    with zygote() as zyg:
        for op in ops:
            print(f"{op.name}:")
            sweep = kill_before_each(op, root / op.name, every=args.every, zyg=zyg, progress=show)
            print(
                f"  {len(sweep.points)} kill points of {len(sweep.statements)} statements, "
                f"{sweep.checks_held}/{sweep.checks_run} checks held"
            )
            total_points += len(sweep.points)
            total_held += sweep.checks_held
            total_run += sweep.checks_run
            failed += len(sweep.failures)
    print(
        f"total: {total_points} kill points, {total_held}/{total_run} checks held, "
        f"{failed} kill point(s) with a failed check, {time.perf_counter() - started:.0f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
