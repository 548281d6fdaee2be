"""Rows and times for the ledger's contract tests (the fixtures opening a ledger on either database are in
tests/stores/conftest.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from mem0_hygiene.stores.ledger import LedgerRow
from mem0_hygiene.timeutil import to_iso

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)


def at(hours: float) -> str:
    return to_iso(T0 + timedelta(hours=hours))


def row(mid: str, **kw: Any) -> LedgerRow:
    kw.setdefault("user_id", "dana")
    kw.setdefault("created_at", "2026-07-01T00:00:00.000000+00:00")
    return LedgerRow(mid, **kw)
