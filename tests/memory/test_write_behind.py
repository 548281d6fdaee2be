"""A full ledger buffer is written by the process's writer thread, so the add that filled it does not wait; while
that write is under way the buffered rows stay readable, a delete of one of them stays a delete, and reads made
meanwhile are counted once."""

from __future__ import annotations

import threading
from typing import Any

import pytest

SCOPE = {"user_id": "dana"}


class Held:
    """The first ledger write of new rows made off the calling thread waits inside it until ``release()``;
    ``threads`` are the names of the threads that wrote new rows."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.go = threading.Event()
        self.threads: list[str] = []

    def release(self) -> None:
        self.go.set()


@pytest.fixture
def held_writer() -> Held:
    return Held()


def hold(mem: Any, held: Held, monkeypatch: pytest.MonkeyPatch) -> None:
    real = mem.ledger.insert
    caller = threading.current_thread()

    def insert(rows: Any, **kwargs: Any) -> Any:
        if kwargs.get("keep_state") and rows:
            held.threads.append(threading.current_thread().name)
            if threading.current_thread() is not caller and not held.started.is_set():
                held.started.set()
                assert held.go.wait(10), "the test never released the writer"
        return real(rows, **kwargs)

    monkeypatch.setattr(mem.ledger, "insert", insert)


def test_the_add_that_fills_the_buffer_does_not_wait_for_the_ledger_write(make_memory, held_writer: Held, monkeypatch):
    mem = make_memory(use_flush_every=4, flush_after=3600)
    hold(mem, held_writer, monkeypatch)
    ids = [mem.add(f"fact number {i} about tea", **SCOPE, infer=False)["results"][0]["id"] for i in range(4)]
    assert held_writer.started.wait(10)  # the writer thread took the batch and is held inside its write
    more = mem.add("one more fact about tea", **SCOPE, infer=False)["results"][0]["id"]  # returns: not blocked
    assert {r["id"] for r in mem.get_all(filters=SCOPE)["results"]} == {*ids, more}  # still readable, buffered
    assert mem.ledger.get(ids[0]) is None
    held_writer.release()
    mem.flush()
    assert all(mem.ledger.get(mid) is not None for mid in (*ids, more))
    assert held_writer.threads[0].startswith("mem0-hygiene-ledger")


def test_a_memory_deleted_while_the_writer_writes_its_row_stays_deleted(make_memory, held_writer: Held, monkeypatch):
    mem = make_memory(use_flush_every=4, flush_after=3600)
    hold(mem, held_writer, monkeypatch)
    ids = [mem.add(f"fact number {i} about tea", **SCOPE, infer=False)["results"][0]["id"] for i in range(4)]
    assert held_writer.started.wait(10)
    mem.delete(ids[0])  # its row is in the writer's batch, not yet in the ledger
    held_writer.release()
    mem.flush()
    assert mem.ledger.get(ids[0]).deleted_at is not None  # the birth row written after did not undo it
    assert ids[0] not in {r["id"] for r in mem.get_all(filters=SCOPE)["results"]}
    assert mem.vector_store.get(vector_id=ids[0]) is None


def test_reads_made_while_the_writer_writes_are_counted_once(make_memory, held_writer: Held, monkeypatch):
    mem = make_memory(use_flush_every=4, flush_after=3600)
    a = mem.add("Likes green tea", **SCOPE, infer=False)["results"][0]["id"]
    mem.flush()
    hold(mem, held_writer, monkeypatch)
    for i in range(3):
        mem.add(f"other fact {i}", **SCOPE, infer=False)
    mem.search("green tea", filters=SCOPE, top_k=1)  # the fourth buffered write: the writer takes the batch
    assert held_writer.started.wait(10)
    mem.search("green tea", filters=SCOPE, top_k=1)  # counted while that batch is being written
    held_writer.release()
    mem.flush()
    assert mem.ledger.get(a).use_count == 2
