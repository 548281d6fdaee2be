"""Fixtures for fleets: a fresh PostgreSQL schema per test (skipped, saying why, when PostgreSQL cannot be
reached), and replicas: drop-in Memory instances sharing one in-process Qdrant client, each with its own
ledger connection to that schema."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config

DEFAULT_URL = "postgresql://mem0_hygiene:mem0_hygiene@127.0.0.1:5432/mem0_hygiene_test"
URL_ENV = "MEM0_HYGIENE_TEST_PG_URL"


def _base_url() -> str:
    return os.environ.get(URL_ENV, DEFAULT_URL)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A ledger URL whose search_path is a new, empty schema (dropped after the test)."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install -e '.[postgres]')")
    base = _base_url()
    try:
        admin = psycopg.connect(base, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        pytest.skip(
            f"PostgreSQL cannot be reached at {URL_ENV} (default {DEFAULT_URL.split('@')[-1]}): "
            f"{str(exc).splitlines()[0] if str(exc) else exc}; .ci/run starts it"
        )
    schema = "t_" + uuid.uuid4().hex[:12]
    admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


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
