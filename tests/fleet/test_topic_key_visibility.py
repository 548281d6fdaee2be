"""A supersede by topic key on one replica: hidden from that replica's very next read before any ledger write, and
from the other replica's next read once the writer thread has committed it, on a shared PostgreSQL ledger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mem0_hygiene import Memory
from mem0_hygiene.memory import buffer

SCOPE = {"user_id": "dana"}


def add(m: Memory, text: str) -> str:
    return str(m.add(text, **SCOPE, infer=False, topic_key="standup")["results"][0]["id"])


def served(m: Memory) -> list[str]:
    return sorted(r["memory"] for r in m.get_all(filters=SCOPE)["results"])


def test_an_update_by_topic_key_reaches_the_other_replica_when_the_writer_thread_commits_it(
    replicas: Any, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs: list[Callable[[], None]] = []
    monkeypatch.setattr(buffer, "_submit", jobs.append)  # the writer thread's writes, run by hand below
    a, b = replicas(2, flush_after=3600, use_flush_every=100_000)
    old = add(a, "Standup is at 9:00")
    a.flush()
    clock.advance(minutes=1)
    new = add(a, "Standup is at 10:30")
    assert served(a) == ["Standup is at 10:30"]  # this replica: at once, nothing written yet
    assert b.ledger.get(old).superseded_by is None  # type: ignore[union-attr]
    assert jobs, "the supersede was not handed to the writer thread"
    for job in list(jobs):
        job()
    assert b.ledger.get(old).superseded_by == new  # type: ignore[union-attr]
    assert served(b) == ["Standup is at 10:30"]
    assert [r["memory"] for r in b.search("standup time", filters=SCOPE)["results"]] == ["Standup is at 10:30"]
