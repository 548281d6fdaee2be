"""What a search costs on local Qdrant when most of a scope is stale, with plain mem0 alone: the floor under any
wrapper that must return top_k live results through mem0's own ``search``.

Two ways to reach 10 live results when 90% of the scope is stale, both measured on plain ``mem0.Memory`` against
its own ``search(top_k=10)`` on the same store, in one run, alternating:

- ask mem0 for a longer page (what the drop-in does, sized from the ledger's live share): mem0 then scores a
  pool of 4 x top_k points, and local Qdrant copies every payload of it;
- exclude the stale points inside the query, with a payload marker and a filter on it (on a copy of the store):
  local Qdrant evaluates every filter condition in Python, point by point, for the whole scope.

    python benchmarks/stale_floor.py [--dir DIR] [--points 2000] [--stale 90] [--rounds 4]

DIR is the stale store ``bench_wrapper.py --stale-only --dir BASE`` builds as ``BASE-stale90`` (built here when
missing).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_wrapper as bw  # noqa: E402

PAGES = (10, 15, 30, 60, 129)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--points", type=int, default=2000)
    parser.add_argument("--stale", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    folder = args.dir or Path(tempfile.mkdtemp(prefix=f"mem0-hygiene-stale{args.stale}-"))
    if not (folder / "BUILT").exists():
        bw.build_stale(folder, args.points, args.stale)
    marked = Path(tempfile.mkdtemp(prefix="mem0-hygiene-marked-")) / "store"
    shutil.copytree(folder, marked)
    try:
        plain, ours = bw.open_pair(marked)
        now = ours.now()
        points = ours.vector_store.client.scroll("mem0", limit=10 * args.points)[0]
        rows = ours.ledger.get_many([str(p.id) for p in points])
        stale = [mid for mid, row in rows.items() if row.state(now) != "live"]
        ours.vector_store.client.set_payload("mem0", payload={"stale_mark": "y"}, points=stale)
        rng = random.Random(2000 + args.stale)
        queries = [" ".join(rng.choice(bw.WORDS) for _ in range(3)) for _ in range(30)]
        cases = [*(f"top_k={k}" for k in PAGES), "top_k=10 + stale filter"]
        times: dict[str, list[float]] = {case: [] for case in cases}
        for r in range(args.rounds):
            for q in queries:
                for case in cases if r % 2 else cases[::-1]:
                    filters: dict[str, object] = {"user_id": bw.STALE_USER}
                    if case.endswith("filter"):
                        filters["stale_mark"] = {"ne": "y"}
                    k = int(case.split("=")[1].split()[0])
                    t0 = time.perf_counter()
                    plain.search(q, filters=filters, top_k=k)
                    times[case].append(time.perf_counter() - t0)
        plain.close()
        ours.close()
    finally:
        shutil.rmtree(marked.parent, ignore_errors=True)
    base = statistics.median(times["top_k=10"])
    print(f"plain mem0 search on {args.points} memories, {args.stale}% stale ({len(stale)} marked), "
          f"against its own top_k=10 ({base * 1000:.1f} ms)")
    for case in cases:
        median = statistics.median(times[case])
        print(f"  {case:<26} {median * 1000:8.1f} ms  {median / base:6.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
