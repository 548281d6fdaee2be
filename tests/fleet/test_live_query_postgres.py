"""With the ledger on PostgreSQL, a search over a mostly stale scope asks the server once: the vector query's
ledger lookup reads whole rows, and the page is decided from them; what another replica just invalidated is left
out at once."""

from __future__ import annotations

from typing import Any

import pytest

SCOPE = {"user_id": "dana"}
QUERY = "which database does the billing service use"


def test_a_mostly_stale_search_is_one_ledger_round_trip_and_sees_the_other_replicas_change(replicas, monkeypatch):
    from mem0_hygiene.stores.ledger import postgres as ledger_postgres

    a, b = replicas(2)
    live = [
        a.add(f"billing service uses postgres {i} for its database", **SCOPE, infer=False)["results"][0]["id"]
        for i in range(4)
    ]
    for i in range(36):
        old = a.add(f"billing service database is mysql {i}", **SCOPE, infer=False)["results"][0]["id"]
        a.supersede(old, new_id=live[i % 4])
    a.flush()
    b.search(QUERY, filters=SCOPE, top_k=10)  # the scope's live share is known (and cached) on b now
    statements: list[str] = []
    real = ledger_postgres.PgConnection.execute

    def counted(self: Any, sql: str, params: Any = ()) -> Any:
        statements.append(" ".join(sql.split())[:60])
        return real(self, sql, params)

    monkeypatch.setattr(ledger_postgres.PgConnection, "execute", counted)
    got = [r["id"] for r in b.search(QUERY, filters=SCOPE, top_k=10, threshold=0.0)["results"]]
    assert sorted(got) == sorted(live)
    assert len([s for s in statements if s.startswith("SELECT")]) == 1, statements
    a.invalidate(live[0], reason="moved")
    got = [r["id"] for r in b.search(QUERY, filters=SCOPE, top_k=10, threshold=0.0)["results"]]
    assert sorted(got) == sorted(live[1:])


@pytest.fixture(autouse=True)
def _psycopg() -> None:
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install -e '.[postgres]')")
