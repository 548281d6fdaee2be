"""A real fleet: three drop-in replicas as separate OS processes over one pgvector table and one PostgreSQL ledger
(both on the session's pgvector server), racing topic-key upserts and adding, superseding, invalidating,
deleting and reading on the same users; one is SIGKILLed midway through an operation and restarted. Nothing
acknowledged is lost, one live memory per topic key and user, nothing superseded, invalidated or deleted is
served by any replica (nor a deleted point by plain mem0), and the audit's ledger checks find nothing wrong
(its history checks see one host's history.db, so points the other hosts added have no history there; the
vector-store checks on pgvector are not asserted here).
``benchmarks/fleet_processes.py`` runs longer fleets and prints ops/s."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mem0 import Memory as PlainMemory

from mem0_hygiene import Memory
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.report.findings import Severity

from ..providers.conftest import pgvector_server  # noqa: F401 (the session's pgvector server, as a fixture here)
from ..providers.stores import PgvectorServer, missing, store_config, unique_collection
from .process_fleet import KEY, acks, check_fleet, start

USERS = ["u0", "u1"]
OPS = 14


@pytest.fixture
def fleet_stores(pgvector_server: PgvectorServer) -> Iterator[tuple[str, str]]:  # noqa: F811
    """(the pgvector server's URL, a ledger URL whose search_path is a new schema on it; dropped after)."""
    why = missing("pgvector")
    if why:
        pytest.skip(why)
    import psycopg

    schema = "fleet_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pgvector_server.url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pgvector_server.url else "?"
    try:
        yield pgvector_server.url, f"{pgvector_server.url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(pgvector_server.url, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def replica_config(server: str, ledger: str, collection: str, folder: Path) -> dict[str, Any]:
    """One replica's config: its own history.db folder, the shared table and ledger, the ledger's clock."""
    folder.mkdir(parents=True, exist_ok=True)
    return store_config(
        "pgvector", folder, pgvector=PgvectorServer(server), collection=collection, hygiene={"ledger_url": ledger}
    )


def test_replicas_in_separate_processes_keep_the_promises_through_a_sigkill(
    fleet_stores: tuple[str, str], tmp_path: Path
) -> None:
    server, ledger = fleet_stores
    collection = unique_collection("fleet")
    configs = [replica_config(server, ledger, collection, tmp_path / f"host{i}") for i in range(3)]
    Memory.from_config(configs[0]).close()  # the table and the ledger made once, before the race

    def job(i: int, name: str, **extra: Any) -> dict[str, Any]:
        return {
            "config": configs[i],
            "users": USERS,
            "ops": OPS,
            "seed": f"{name}-seed",
            "name": name,
            "acks": str(tmp_path / f"{name}.acks"),
            "log": str(tmp_path / f"{name}.log"),
            **extra,
        }

    procs = [start(job(0, "r0")), start(job(1, "r1", kill_after_inserts=5)), start(job(2, "r2"))]
    codes = [p.wait(timeout=600) for p in procs]
    logs = {n: (tmp_path / f"{n}.log").read_text() for n in ("r0", "r1", "r2")}
    assert codes == [0, -9, 0], logs
    assert 0 < len(acks(tmp_path / "r1.acks")) < OPS  # killed midway
    again = start(job(1, "r1b"))
    assert again.wait(timeout=600) == 0, (tmp_path / "r1b.log").read_text()

    readers = [start({**job(i, f"read{i}"), "mode": "read", "out": str(tmp_path / f"read{i}.json")}) for i in range(3)]
    assert [p.wait(timeout=600) for p in readers] == [0, 0, 0]
    served = [json.loads((tmp_path / f"read{i}.json").read_text()) for i in range(3)]
    entries = [e for n in ("r0", "r1", "r1b", "r2") for e in acks(tmp_path / f"{n}.acks")]

    m = Memory.from_config(configs[0])
    try:
        live_keyed = {}
        for user in USERS:
            items = m.get_all(filters={"user_id": user}, top_k=1000)["results"]
            live_keyed[user] = [i["id"] for i in items if i["hygiene"]["topic_key"] == KEY]
        deleted = [e["id"] for e in entries if e["op"] == "delete"]
        still = [d for d in deleted if PlainMemory.get(m, d) is not None]
    finally:
        m.close()
    check = check_fleet(entries, served, live_keyed)
    assert not check.problems(), check.problems()
    assert not still, f"plain mem0 serves deleted memories: {still}"
    assert all(check.counts.get(op, 0) > 0 for op in ("upsert", "add", "superseded", "invalidate", "delete", "read"))

    report = audit(configs[2])
    assert not [s for s in report.skipped if s.area == "ledger"], report.skipped  # the ledger checks ran
    wrong = [f"{f.code}: {f.title}" for f in report.findings if f.area == "ledger" and f.severity >= Severity.WARNING]
    assert not wrong, wrong
