"""The full kill sweep of the drop-in on every provider: a supersede and a delete SIGKILLed right after each of
their steps in turn (every vector-store write, history row and ledger call; see ``tests/providers/kills.py``),
the drop-in restarted, the app's retry run; after each, nothing lost, never both facts served, the retry ending
where an uninterrupted run does. Prints each failed kill point and the totals per provider and operation.

    python benchmarks/dropin_kill_sweep.py [--provider faiss] [--op supersede] [--every 1]

The CI suite (``tests/providers/test_dropin_kills.py``) kills at a sample of these steps. Exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
logging.disable(logging.WARNING)

from benchmarks.pgvector_server import pgvector_server  # noqa: E402
from tests.providers.kills import SOURCES, check_and_retry, plant, run_killed, sample, wrongs  # noqa: E402
from tests.providers.stores import PROVIDERS, missing, store_config, unique_collection  # noqa: E402

NOW = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provider", action="append", choices=PROVIDERS, help="only this provider (repeatable)")
    parser.add_argument("--op", action="append", choices=sorted(SOURCES), help="only this operation (repeatable)")
    parser.add_argument("--every", type=int, default=1, help="kill after every N-th step (default: all)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="dropin-kill-sweep-"))
    failed = points = 0
    with ExitStack() as stack:
        for provider in args.provider or PROVIDERS:
            why = missing(provider)
            if why:
                print(f"{provider}: skipped ({why})")
                continue
            server = stack.enter_context(pgvector_server()) if provider == "pgvector" else None
            for op in args.op or sorted(SOURCES):
                started = time.perf_counter()

                def config(name: str, provider: str = provider, op: str = op, server: Any = server) -> dict:
                    folder = root / provider / op / name
                    folder.mkdir(parents=True, exist_ok=True)
                    hygiene = {"clock": lambda: NOW}
                    return store_config(
                        provider, folder, pgvector=server, collection=unique_collection(), hygiene=hygiene
                    )

                clean_config = config("clean")
                clean = run_killed(clean_config, SOURCES[op], plant(clean_config), NOW, root)
                if clean.error or not clean.steps:
                    print(f"{provider} {op}: the uninterrupted run failed: {clean.error}")
                    failed += 1
                    continue
                bad = 0
                kills = sample(len(clean.steps), args.every)
                for k in kills:
                    cfg = config(f"kill-{k}")
                    ids = plant(cfg)
                    run = run_killed(cfg, SOURCES[op], ids, NOW, root, kill_at=k)
                    problems = [] if run.killed else [f"not killed ({run.error[-300:]})"]
                    if run.killed:
                        try:
                            seen, after = check_and_retry(op, cfg, ids)
                            problems = wrongs(op, seen, after)
                        except AssertionError as exc:
                            problems = [str(exc)]
                    if problems:
                        bad += 1
                        print(f"  {provider} {op} killed after step {k} ({clean.steps[k - 1]}): {'; '.join(problems)}")
                points += len(kills)
                failed += bad
                took = time.perf_counter() - started
                print(
                    f"{provider} {op}: {len(kills)} kill points of {len(clean.steps)} steps, {bad} failed",
                    f"({took:.0f} s)",
                )
    print(f"total: {points} kill points, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
