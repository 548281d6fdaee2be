"""The test PostgreSQL database: ``pg_url``, a ledger URL whose search_path is a new, empty schema (dropped after
the test), skipped, saying why, when psycopg is missing or PostgreSQL cannot be reached (.ci/run starts it). The
one definition the ledger's tests on PostgreSQL (tests/stores) and the fleets (tests/fleet) share."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

DEFAULT_URL = "postgresql://mem0_hygiene:mem0_hygiene@127.0.0.1:5432/mem0_hygiene_test"
URL_ENV = "MEM0_HYGIENE_TEST_PG_URL"


def base_url() -> str:
    return os.environ.get(URL_ENV, DEFAULT_URL)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A ledger URL whose search_path is a new, empty schema (dropped after the test)."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install -e '.[postgres]')")
    base = base_url()
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
def pg_urls() -> Iterator[Callable[[], str]]:
    """A factory of ledger URLs, each with a new, empty schema (all dropped after the test): for tests that need a
    fresh ledger per run (a kill sweep deploys once per kill point)."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install -e '.[postgres]')")
    base = base_url()
    try:
        admin = psycopg.connect(base, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        pytest.skip(
            f"PostgreSQL cannot be reached at {URL_ENV} (default {DEFAULT_URL.split('@')[-1]}): "
            f"{str(exc).splitlines()[0] if str(exc) else exc}; .ci/run starts it"
        )
    made: list[str] = []
    sep = "&" if "?" in base else "?"

    def make() -> str:
        schema = "t_" + uuid.uuid4().hex[:12]
        admin.execute(f"CREATE SCHEMA {schema}")
        made.append(schema)
        return f"{base}{sep}options=-csearch_path%3D{schema}"

    try:
        yield make
    finally:
        for schema in made:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
