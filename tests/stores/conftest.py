"""Fixtures for the ledger's tests on both databases: ``location``, the two databases a ledger lives in (a SQLite
file in the test's folder, or a fresh PostgreSQL schema through ``pg_url``, skipped with the reason when PostgreSQL
cannot be reached), and ``ledger``, the ledger opened there (closed after)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mem0_hygiene.stores.ledger import Ledger, open_ledger

from .. import pg_schema

pg_url = pg_schema.pg_url  # the test database's fresh schema (one definition, shared with tests/fleet)


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "hygiene.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def ledger(location: str) -> Iterator[Ledger]:
    led = open_ledger(location)
    try:
        yield led
    finally:
        led.close()
