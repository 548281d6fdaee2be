"""With a PostgreSQL ledger, consolidate's record lives in PostgreSQL (the run applies, another replica's
history explains it) and so does the LLM judge's write_decisions table."""

from __future__ import annotations

from typing import Any

from mem0_hygiene import maintenance
from mem0_hygiene.memory.judge import judged_decisions


def test_consolidate_records_its_run_in_the_postgres_ledger_and_history_explains_it(replicas: Any, clock: Any) -> None:
    a, b = replicas(2)
    old = a.add("Uses npm", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    clock.advance(days=1)
    same = a.add("uses npm.", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    a.flush()
    plan = maintenance.consolidate(a)
    assert [(s.memory_id, s.into_id, s.outcome) for s in plan.steps] == [(old, same, "applied")]
    assert b.ledger.query("SELECT action, memory_id, outcome FROM consolidation") == [("merge", old, "applied")]
    story = maintenance.memory_story(b, old)
    assert any(e.event == "superseded" and "consolidate: duplicate of" in e.detail for e in story.events)


def test_the_judges_decisions_are_kept_in_the_postgres_ledger(replicas: Any, mocker: Any) -> None:
    (a,) = replicas(1, write_decision={"judge": "llm"})
    mocker.patch.object(a.llm, "generate_response", return_value='{"event": "UPDATE", "reason": "the version changed"}')
    a.add("Dana uses Postgres 15", user_id="dana", infer=False, source="chat")
    a.add("Dana uses Postgres 16 now", user_id="dana", infer=False, source="chat")
    decided = judged_decisions(a.ledger)
    assert decided and decided[-1]["reason"] == "the version changed"
    assert a.ledger.query("SELECT count(*) FROM write_decisions")[0][0] == len(decided)
