"""Fixtures for the ledger's contract tests: ``location``, the two databases a ledger lives in (a SQLite file in
the test's folder, or a fresh PostgreSQL schema through ``pg_url``, skipped with the reason when PostgreSQL cannot
be reached), and ``ledger``, the ledger opened there (closed after)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mem0_hygiene.stores.ledger import Ledger, open_ledger

from .test_ledger_postgres import pg_url  # noqa: F401 - the fixture the PostgreSQL half needs


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
