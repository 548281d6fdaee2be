"""migrate refuses while a replica has the source's PostgreSQL ledger open: a fleet's app runs as separate processes
on one pgvector table and one PostgreSQL ledger, and what a running replica writes during the copy would be lost.
The replica is a real process; once it has closed its Memory the same migration runs and verifies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.errors import ConfigError
from mem0_hygiene.maintenance import migrate

from ..pg_schema import pg_url  # noqa: F401 - a fixture: a ledger URL on a new schema
from .stores import missing, store_config

REPLICA = """
import json, sys
from mem0_hygiene import Memory
m = Memory.from_config(json.loads(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
m.close()
"""


def test_migrate_refuses_while_a_replica_has_the_postgresql_ledger_open(
    tmp_path: Path,
    pg_url: str,  # noqa: F811 - the fixture
    pgvector_server: Any,
) -> None:
    if reason := missing("pgvector"):
        pytest.skip(reason)
    (tmp_path / "a").mkdir()
    source = store_config("pgvector", tmp_path / "a", pgvector=pgvector_server, hygiene={"ledger_url": pg_url})
    m = Memory.from_config(source)
    m.add("Dana deploys with Kubernetes", user_id="dana", infer=False)
    m.close()
    target = offline_config(tmp_path / "b")
    replica = subprocess.Popen(  # a running app's process on the same table and ledger
        [sys.executable, "-c", REPLICA, json.dumps(source)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert replica.stdout is not None and replica.stdout.readline().strip() == "ready"
        plan = migrate(source, target, dry_run=True)
        assert [p for p in plan.problems if p.startswith("a replica has the source's PostgreSQL ledger open")]
        with pytest.raises(ConfigError, match="Stop every replica"):
            migrate(source, target)
        assert not (tmp_path / "b" / "qdrant").exists()  # nothing was written
    finally:
        replica.communicate("\n", timeout=60)  # the app stops: it closes its Memory
    assert not migrate(source, target, dry_run=True).problems
    assert migrate(source, target).to_dict()["verified"]
