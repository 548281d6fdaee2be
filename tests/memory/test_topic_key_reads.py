"""A supersede by topic key is seen by the very next read, before the ledger write that records it: the newest
buffered row of a key hides the older rows of that key in this process (sync and async drop-ins), the writer thread
is asked for that write at once, and a second Memory on the same ledger sees the supersede once it is committed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import AsyncMemory, Memory, offline_config
from mem0_hygiene.memory import buffer

SCOPE = {"user_id": "dana"}
HELD = {"flush_after": 3600, "use_flush_every": 100_000}  # no timer, no full buffer: only the writer thread writes


@pytest.fixture
def writer_jobs(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[], None]]:
    """The writes handed to the process's writer thread, kept here instead of run (run them to commit)."""
    jobs: list[Callable[[], None]] = []
    monkeypatch.setattr(buffer, "_submit", jobs.append)
    return jobs


def add(m: Memory, text: str, key: str = "standup") -> str:
    return str(m.add(text, **SCOPE, infer=False, topic_key=key)["results"][0]["id"])


def served(m: Memory) -> list[str]:
    return sorted(r["memory"] for r in m.get_all(filters=SCOPE)["results"])


def found(m: Memory, query: str = "standup time") -> list[str]:
    return sorted(r["memory"] for r in m.search(query, filters=SCOPE)["results"])


def test_an_update_by_topic_key_hides_the_old_memory_from_the_next_read_before_any_flush(
    make_memory: Any, writer_jobs: list[Any], clock: Any
) -> None:
    m = make_memory(**HELD)
    old = add(m, "Standup is at 9:00")
    clock.advance(minutes=1)
    new = add(m, "Standup is at 10:30")
    assert m.ledger.get(old) is None and m.ledger.get(new) is None  # nothing written yet
    assert served(m) == ["Standup is at 10:30"]
    assert found(m) == ["Standup is at 10:30"]
    facts = m.get(old)["hygiene"]  # type: ignore[index]
    assert (facts["state"], facts["superseded_by"]) == ("superseded", new)
    every = {r["id"]: r["hygiene"]["state"] for r in m.get_all(filters=SCOPE, include_stale=True)["results"]}
    assert every == {old: "superseded", new: "live"}
    before = m.get_all(filters=SCOPE, as_of=clock.current - timedelta(seconds=30))["results"]
    assert [r["memory"] for r in before] == ["Standup is at 9:00"]  # what was believed before the update


def test_the_same_holds_when_the_old_memory_is_already_in_the_ledger(
    make_memory: Any, writer_jobs: list[Any], clock: Any
) -> None:
    m = make_memory(**HELD)
    old = add(m, "Standup is at 9:00")
    m.flush()
    clock.advance(minutes=1)
    add(m, "Standup is at 10:30")
    assert m.ledger.get(old).superseded_by is None  # type: ignore[union-attr]
    assert served(m) == found(m) == ["Standup is at 10:30"]


def test_other_keys_and_other_scopes_stay_live(make_memory: Any, writer_jobs: list[Any], clock: Any) -> None:
    m = make_memory(**HELD)
    add(m, "Standup is at 9:00")
    m.add("Standup is at 9:00", user_id="omar", infer=False, topic_key="standup")
    add(m, "Retro is on Fridays", key="retro")
    clock.advance(minutes=1)
    add(m, "Standup is at 10:30")
    assert served(m) == ["Retro is on Fridays", "Standup is at 10:30"]
    assert [r["memory"] for r in m.get_all(filters={"user_id": "omar"})["results"]] == ["Standup is at 9:00"]


def test_the_writer_thread_is_asked_for_the_write_at_once_and_it_records_the_supersede(
    make_memory: Any, writer_jobs: list[Any], clock: Any
) -> None:
    m = make_memory(**HELD)
    old = add(m, "Standup is at 9:00")
    clock.advance(minutes=1)
    new = add(m, "Standup is at 10:30")
    assert writer_jobs, "no write was handed to the writer thread"
    for job in list(writer_jobs):
        job()
    assert m.ledger.get(old).superseded_by == new  # type: ignore[union-attr]
    assert served(m) == ["Standup is at 10:30"]


def test_adds_without_a_topic_key_keep_their_batch(make_memory: Any, writer_jobs: list[Any]) -> None:
    m = make_memory(**HELD)
    mid = m.add("Standup is at 9:00", **SCOPE, infer=False)["results"][0]["id"]
    assert not writer_jobs and m.ledger.get(mid) is None


def test_deleting_the_buffered_update_deletes_what_it_superseded_as_after_a_flush(
    make_memory: Any, writer_jobs: list[Any], clock: Any
) -> None:
    m = make_memory(**HELD)
    old = add(m, "Standup is at 9:00")
    clock.advance(minutes=1)
    new = add(m, "Standup is at 10:30")
    m.delete(new)
    assert served(m) == []
    assert m.ledger.get(old).deleted_at is not None  # type: ignore[union-attr]
    assert m.vector_store.get(vector_id=old) is None


def test_async_drop_in_hides_the_old_memory_from_the_next_read(
    tmp_path: Path, writer_jobs: list[Any], clock: Any
) -> None:
    async def run() -> tuple[list[str], list[str]]:
        async with AsyncMemory.from_config(offline_config(tmp_path, hygiene={"clock": clock, **HELD})) as m:
            await m.add("Standup is at 9:00", **SCOPE, infer=False, topic_key="standup")
            clock.advance(minutes=1)
            await m.add("Standup is at 10:30", **SCOPE, infer=False, topic_key="standup")
            listed = sorted(r["memory"] for r in (await m.get_all(filters=SCOPE))["results"])
            searched = sorted(r["memory"] for r in (await m.search("standup time", filters=SCOPE))["results"])
            return listed, searched

    assert asyncio.run(run()) == (["Standup is at 10:30"], ["Standup is at 10:30"])


def test_a_second_memory_on_the_same_ledger_sees_the_update_once_it_is_committed(
    tmp_path: Path, writer_jobs: list[Any], clock: Any
) -> None:
    hygiene = {"clock": clock, **HELD}
    a = Memory.from_config(offline_config(tmp_path / "a", hygiene=hygiene))
    (tmp_path / "b").mkdir()
    cfg = offline_config(tmp_path / "b", hygiene={**hygiene, "ledger_path": a.ledger_path})
    cfg["vector_store"]["config"] = {
        "client": a.vector_store.client,
        "collection_name": "mem0",
        "embedding_model_dims": 256,
    }
    b = Memory.from_config(cfg)
    try:
        add(a, "Standup is at 9:00")
        a.flush()
        clock.advance(minutes=1)
        add(a, "Standup is at 10:30")
        assert served(a) == ["Standup is at 10:30"]
        for job in list(writer_jobs):  # the writer thread's commit
            job()
        assert served(b) == found(b) == ["Standup is at 10:30"]
    finally:
        b.close()
        a.close()
