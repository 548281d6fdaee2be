"""No half-written state: when the ledger refuses a new memory, mem0's copy is taken back out through its API."""

from __future__ import annotations

import pytest

from mem0_hygiene import LedgerError
from mem0_hygiene.ledger import Ledger

SCOPE = {"user_id": "dana"}


def test_a_ledger_failure_after_mem0_stored_takes_the_memory_back_out(mem, monkeypatch):
    def refuse(self, rows, **kwargs):
        raise LedgerError("database is locked")

    monkeypatch.setattr(Ledger, "insert", refuse)  # fault injection: the ledger write fails
    with pytest.raises(LedgerError, match="nothing was stored"):
        mem.add("Quarantine me", **SCOPE, infer=False, source="tool:web_fetch https://example.com")
    monkeypatch.undo()
    assert mem.get_all(filters=SCOPE, include_stale=True)["results"] == []
    events = [row[0] for row in mem.db.connection.execute("SELECT event FROM history ORDER BY rowid")]
    assert events == ["ADD", "DELETE"]  # both through mem0's API, so both stores agree
