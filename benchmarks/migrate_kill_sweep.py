"""The full kill sweep of ``migrate``: a migration from local Qdrant into each provider SIGKILLed right after each
of its steps in turn (every progress report and journal write; see ``tests/migrate_kills.py``), then rerun in this
process; after each kill the source is as it was and the destination is empty of our writes, resumable (its
journal there) or finished, and after the rerun the destination holds exactly the source's memories and history
(no duplicates) and the journal is gone. Prints each failed kill point and the totals per provider.

    python benchmarks/migrate_kill_sweep.py [--provider faiss] [--every 1]

The CI suite (``tests/actions/test_migrate_kills.py``) kills at a sample of these steps. Exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
logging.disable(logging.WARNING)

from benchmarks.pgvector_server import pgvector_server  # noqa: E402
from mem0_hygiene import offline_config  # noqa: E402
from mem0_hygiene.maintenance import migrate  # noqa: E402
from tests.migrate_kills import check_after_kill, check_finished, fill, fingerprint, run_migration  # noqa: E402
from tests.providers.stores import PROVIDERS, missing, store_config  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provider", action="append", choices=PROVIDERS, help="only this destination (repeatable)")
    parser.add_argument("--every", type=int, default=1, help="kill after every N-th step (default: all)")
    args = parser.parse_args()
    failures = 0
    with ExitStack() as stack:
        server = None
        for provider in args.provider or PROVIDERS:
            why = missing(provider)
            if why:
                print(f"{provider}: skipped ({why})")
                continue
            if provider == "pgvector" and server is None:
                server = stack.enter_context(pgvector_server())
            root = Path(tempfile.mkdtemp(prefix=f"migrate-sweep-{provider}-"))

            def configs(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
                return offline_config(root / name / "a"), store_config(provider, root / name / "b", pgvector=server)  # noqa: B023

            source, target = configs("clean")
            fill(source)
            clean = run_migration(source, target, 0, root)
            if clean.error:
                print(f"{provider}: the clean run failed:\n{clean.error}")
                failures += 1
                continue
            started, held = time.monotonic(), 0
            points = list(range(1, len(clean.steps) + 1, args.every))
            for k in points:
                source, target = configs(f"k{k}")
                fill(source)
                folder = root / f"k{k}"
                want = fingerprint(source, folder, "before")
                run = run_migration(source, target, k, folder)
                problems = [] if run.killed else [f"not killed ({run.error[-300:]})"]
                problems += [p for p in [check_after_kill(target, want, folder)] if p]
                if fingerprint(source, folder, "after-kill") != want:
                    problems.append("the source changed")
                migrate(source, target)
                problems += [p for p in [check_finished(target, want, folder, "moved")] if p]
                if problems:
                    failures += 1
                    print(f"{provider}: killed after step {k} ({clean.steps[k - 1]}): {'; '.join(problems)}")
                else:
                    held += 1
            print(
                f"{provider}: {held} of {len(points)} kill points held "
                f"({len(clean.steps)} steps, {time.monotonic() - started:.0f} s)"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
