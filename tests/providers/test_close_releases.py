"""Closing the drop-in lets go of the vector store's server connections at once (mem0's own close keeps its
pgvector pool open until the object is garbage-collected)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from mem0_hygiene import Memory

from .stores import store_config


def client_connections(url: str) -> int:
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_closing_the_drop_in_closes_its_pgvector_connections(pgvector_server: Any, tmp_path: Any) -> None:
    gc.collect()  # drop-ins other tests left unclosed let go of theirs now, not in the middle of the count
    before = client_connections(pgvector_server.url)
    kept = []  # referenced, so no garbage collection closes their pools behind the test's back
    for n in range(3):
        m = Memory.from_config(store_config("pgvector", tmp_path / f"app{n}", pgvector=pgvector_server))
        m.add("Dana deploys with Docker Compose", user_id="dana", infer=False, source="chat")
        assert m.search("how does Dana deploy", filters={"user_id": "dana"})["results"]
        assert client_connections(pgvector_server.url) > before  # the pool is open while the drop-in is
        m.close()
        kept.append(m)
        assert client_connections(pgvector_server.url) <= before  # fewer: the server noticed an old one gone
