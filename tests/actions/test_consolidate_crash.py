"""consolidate killed with SIGKILL (a real child process) before a sample of its SQLite statements: every file
passes integrity_check, the reports read the crash, and running it again completes the plan with each change
applied exactly once (the record says so) and ends where an uninterrupted run does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ..faults_sqlite import SCOPE, START, Operation, kill_before_each, zygote

RERUN = """
from collections import Counter
from mem0_hygiene import maintenance
maintenance.consolidate(m)
rows = m.ledger.query("SELECT memory_id, into_id, outcome FROM consolidation")
applied = Counter(mid for mid, _into, outcome in rows if outcome == "applied")
assert not [r for r in rows if r[2] != "applied"], rows           # nothing left unfinished or skipped
assert sorted(applied) == sorted([ids["b"], ids["pg15"], ids["compose"]]), rows  # nothing lost
assert set(applied.values()) == {1}, rows                          # nothing applied twice
"""


def _plant(m: Any) -> dict[str, str]:
    """Three changes to make (a duplicate, an update, a contradiction) and a fact that stays; a day apart."""
    day = [START]

    def add(text: str, source: str | None) -> str:
        day[0] += timedelta(days=1)
        m.hygiene_settings.clock = lambda when=day[0]: when
        return m.add(text, **SCOPE, infer=False, source=source)["results"][0]["id"]

    return {
        "b": add("prefers pnpm for javascript packages", None),
        "a": add("Prefers pnpm for JavaScript packages.", "chat 1"),
        "pg15": add("Dana uses Postgres 15", "chat 2"),
        "pg16": add("Dana uses Postgres 16", "chat 3"),
        "compose": add("Deploys with Docker Compose", "chat 4"),
        "no_compose": add("No longer deploys with Docker Compose", "chat 5"),
        "haifa": add("Lives in Haifa", "chat 6"),
    }


CONSOLIDATE = Operation(
    "consolidate",
    _plant,
    "from mem0_hygiene import maintenance\nmaintenance.consolidate(m)",
    after=timedelta(days=30),
    rerun=RERUN,
)


@pytest.fixture(scope="module")
def zyg():
    with zygote() as z:
        yield z


def test_consolidate_killed_anywhere_is_finished_by_the_next_run_with_nothing_applied_twice_or_lost(zyg, tmp_path):
    sweep = kill_before_each(CONSOLIDATE, tmp_path, every=3, zyg=zyg)
    assert len(sweep.statements) >= 20 and len(sweep.points) >= len(sweep.statements) // 3
    # Consolidation is a sequence of changes, not one: a crash between two leaves the ones made so far (the
    # drop-in then serves neither the state before nor after, only something in between). Every other check
    # must hold, the rerun's (end state of an uninterrupted run, the record's assertions above) above all.
    bad = {p.k: {name: why for name, why in p.failures.items() if name != "dropin"} for p in sweep.points}
    assert not any(bad.values()), sweep.report()
    midway = [p for p in sweep.points if "dropin" in p.failures]
    assert midway, "no kill fell between two changes: the test does not prove the resume"
