"""Fixtures for fleets: a fresh PostgreSQL schema per test (skipped, saying why, when PostgreSQL cannot be
reached), and replicas: drop-in Memory instances sharing one in-process Qdrant client, each with its own
ledger connection to that schema."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config

from .. import pg_schema

pg_url = pg_schema.pg_url  # the test database's fresh schema (one definition, shared with tests/stores)


@pytest.fixture
def replicas(tmp_path: Path, pg_url: str, clock: Any) -> Iterator[Callable[..., list[Memory]]]:
    """``replicas(n, **hygiene)``: n drop-in Memory instances over one Qdrant store (one client shared in
    process, as replicas share a Qdrant server) and one PostgreSQL ledger, each with its own connection and
    its own history.db (one per host)."""
    opened: list[Memory] = []

    def build(n: int = 2, **hygiene: Any) -> list[Memory]:
        hygiene.setdefault("clock", clock)
        hygiene["ledger_url"] = pg_url
        first = Memory.from_config(offline_config(tmp_path / "host0", hygiene=hygiene))
        out = [first]
        for i in range(1, n):
            (tmp_path / f"host{i}").mkdir(exist_ok=True)
            cfg = offline_config(tmp_path / f"host{i}", hygiene=hygiene)
            cfg["vector_store"]["config"] = {
                "client": first.vector_store.client,
                "collection_name": "mem0",
                "embedding_model_dims": 256,
            }
            out.append(Memory.from_config(cfg))
        opened.extend(out)
        return out

    yield build
    for m in reversed(opened):
        try:
            m.close()
        except Exception:
            pass
