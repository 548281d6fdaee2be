"""migrate and a PostgreSQL ledger: a SQLite ledger goes into the destination's ``hygiene.ledger_url`` through
``ledger migrate`` (every table, verified), the plan says the replicas must be stopped or switched; a deployment
whose ledger is already on PostgreSQL keeps it there (the rows come with the import into the new schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.maintenance import migrate
from mem0_hygiene.stores.ledger import open_ledger

from .. import pg_schema

second_pg_url = pg_schema.pg_url


def fill(config: dict[str, Any]) -> dict[str, str]:
    m = Memory.from_config(config)
    try:
        old = m.add("Dana deploys with Docker Compose", user_id="dana", infer=False)["results"][0]["id"]
        new = m.supersede(old, "Dana deploys with Kubernetes now", source="chat")
        gone = m.add("The printer code is 4411", user_id="dana", infer=False)["results"][0]["id"]
        m.delete(gone)
        return {"old": old, "new": new, "gone": gone}
    finally:
        m.close()


def ledger_states(url: str) -> dict[str, tuple[Any, ...]]:
    ledger = open_ledger(url, readonly=True)
    try:
        return {r.memory_id: (r.superseded_by, bool(r.deleted_at)) for r in ledger.iter_rows()}
    finally:
        ledger.close()


def test_a_sqlite_ledger_moves_into_postgresql_with_the_store(tmp_path: Path, pg_url: str, clock: Any) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock})
    ids = fill(source)
    target = offline_config(tmp_path / "b", hygiene={"clock": clock, "ledger_url": pg_url})

    plan = migrate(source, target, dry_run=True)
    assert plan.ledger_route == "ledger migrate"
    assert any("stop every replica (or switch them all to the new config at once)" in n for n in plan.notes)

    result = migrate(source, target)
    assert result.to_dict()["verified"]
    assert "PASSWORD" in str(result.config["hygiene"]["ledger_url"]) or "@" not in pg_url
    assert ledger_states(pg_url) == {
        ids["old"]: (ids["new"], False),
        ids["new"]: (None, False),
        ids["gone"]: (None, True),
    }


def test_a_postgresql_ledger_stays_on_postgresql(tmp_path: Path, pg_url: str, second_pg_url: str, clock: Any) -> None:
    source = offline_config(tmp_path / "a", hygiene={"clock": clock, "ledger_url": pg_url})
    ids = fill(source)
    target = offline_config(tmp_path / "b", hygiene={"clock": clock, "ledger_url": second_pg_url})
    plan = migrate(source, target, dry_run=True)
    assert plan.ledger_route == "import"
    migrate(source, target)
    assert ledger_states(second_pg_url) == ledger_states(pg_url)
    assert ledger_states(second_pg_url)[ids["old"]] == (ids["new"], False)
