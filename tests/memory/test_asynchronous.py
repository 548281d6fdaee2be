"""AsyncMemory: code written for mem0.AsyncMemory runs unchanged and gets the same answers; many coroutines (and
threads, and event loops) share one instance without losing anything; the hygiene verbs work awaited."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mem0
import pytest

import mem0_hygiene
from mem0_hygiene import AsyncMemory, Memory, StateError, offline_config
from mem0_hygiene.config import build_mem0_config, split_config

VOLATILE = {"id", "memory_id", "created_at", "updated_at", "hygiene"}


async def script(m: Any) -> list[Any]:
    """A small app written against mem0's AsyncMemory API only."""
    out: list[Any] = []
    a = await m.add("I prefer pnpm for JavaScript", user_id="alice", infer=False)
    out.append(a)
    out.append(
        await m.add(
            [
                {"role": "user", "content": "My timezone is Asia/Jerusalem"},
                {"role": "assistant", "content": "Noted your timezone"},
            ],
            user_id="alice",
            infer=False,
            metadata={"topic": "profile"},
        )
    )
    out.append(await m.add("Staging is down", user_id="alice", infer=False, expiration_date="2099-01-01"))
    out.append(await m.add("Bob drinks tea", user_id="bob", agent_id="helper", infer=False))
    out.append(await m.search("JavaScript package manager pnpm", filters={"user_id": "alice"}, top_k=2))
    out.append(await m.get_all(filters={"user_id": "alice"}, top_k=10))
    mid = a["results"][0]["id"]
    out.append(await m.update(mid, text="I prefer bun for JavaScript"))
    out.append(await m.update(mid, metadata={"checked": True}))
    out.append(await m.get(mid))
    out.append(await m.history(mid))
    out.append(await m.delete(mid))
    out.append(await m.get(mid))
    out.append(await m.get_all(filters={"user_id": "alice"}))
    for call in (m.search("x"), m.get_all(), m.delete("no-such-id"), m.delete_all()):
        try:
            await call
            out.append("no error")
        except Exception as exc:  # the same exception type and message as mem0
            out.append((type(exc).__name__, str(exc).replace(str(mid), "ID")))
    out.append(await m.delete_all(user_id="alice"))
    out.append(await m.get_all(filters={"user_id": "alice"}))
    out.append(await m.get_all(filters={"user_id": "bob"}))
    out.append(await m.reset())
    out.append(await m.get_all(filters={"user_id": "bob"}))
    return out


def scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        items = [scrub(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if isinstance(value, float):
        return round(value, 6)
    return value


def plain_async(folder: Path) -> Any:
    return mem0.AsyncMemory(build_mem0_config(split_config(offline_config(folder))[0]))


class ScriptedLLM:
    """An LLM that extracts each user message as one fact, after ``gate(text)`` lets it answer."""

    def __init__(self, gate: Any = None) -> None:
        self.gate = gate

    def generate_response(self, messages: list[dict[str, Any]], **_kwargs: Any) -> str:
        fact = re.findall(r"fact: ([a-z ]+)", messages[-1]["content"])[-1]
        if self.gate is not None:
            self.gate(fact)
        return json.dumps({"memory": [{"text": fact}]})


def run_store_calls_in_one_thread(coro: Any) -> Any:
    """Run ``coro`` with a one-thread default executor: mem0's own ``AsyncMemory`` sends each store call to
    ``asyncio.to_thread`` and ``delete_all`` gathers them, so on local Qdrant (not thread-safe) a delete can fail
    with sqlite's "cannot start a transaction within a transaction" and leave a memory behind (mem0 logs
    "Failed to delete 1 out of 3 memories"). The reference run must not depend on that race."""

    async def main() -> Any:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        return await coro

    return asyncio.run(main())


def test_same_script_same_results_as_mem0_async_memory_apart_from_ids_timestamps_and_hygiene(tmp_path):
    plain = plain_async(tmp_path / "plain")
    try:
        expected = scrub(run_store_calls_in_one_thread(script(plain)))
    finally:
        plain.close()
        plain.vector_store.client.close()
    ours = AsyncMemory(build_mem0_config(split_config(offline_config(tmp_path / "ours"))[0]))
    try:
        got = asyncio.run(script(ours))
        assert all("hygiene" in r for r in got[5]["results"])
        assert scrub(got) == expected
        assert got[4]["results"][0]["memory"] == "I prefer pnpm for JavaScript" and got[-1] == {"results": []}
        assert [e[0] for e in got[13:17]] == ["ValueError"] * 4  # mem0's own refusals, word for word
    finally:
        ours.close()


def test_is_a_mem0_async_memory_built_like_one(tmp_path):
    m = AsyncMemory.from_config(offline_config(tmp_path, hygiene={"require_source": True}))
    try:
        assert isinstance(m, mem0.AsyncMemory) and not isinstance(m, mem0.Memory)
        assert mem0_hygiene.AsyncMemory is AsyncMemory and "AsyncMemory" in mem0_hygiene.__all__
        assert m.ledger_path == str(tmp_path / "hygiene.db")
        assert m.hygiene_settings.require_source is True
        assert m.config.vector_store.config.path == str(tmp_path / "qdrant")
        with pytest.raises(mem0_hygiene.MissingSource):
            asyncio.run(m.add("no source given", user_id="u", infer=False))
    finally:
        m.close()


def test_every_method_takes_the_sync_drop_ins_arguments():
    names = [
        "add",
        "search",
        "get_all",
        "get",
        "update",
        "delete",
        "delete_all",
        "reset",
        "history",
        "confirm",
        "supersede",
        "invalidate",
        "review_queue",
        "prune",
        "backup",
        "forget",
        "adopt",
        "flush",
    ]
    for name in names:
        ours = getattr(AsyncMemory, name)
        assert inspect.iscoroutinefunction(ours), name
        sync_params = dict(inspect.signature(getattr(Memory, name)).parameters)
        async_params = dict(inspect.signature(ours).parameters)
        async_params.pop("llm", None)  # mem0's AsyncMemory.add takes a LangChain model; its Memory.add does not
        assert [(p.name, p.kind, p.default) for p in async_params.values()] == [
            (p.name, p.kind, p.default) for p in sync_params.values()
        ] or name == "update", name
    # update's "not given" default for expiration_date is a sentinel on both sides
    assert list(inspect.signature(AsyncMemory.update).parameters) == list(inspect.signature(Memory.update).parameters)
    mem0_add = inspect.signature(mem0.AsyncMemory.add).parameters
    assert list(mem0_add) == list(inspect.signature(AsyncMemory.add).parameters)[: len(mem0_add)]


def test_fifty_coroutines_adding_searching_and_deleting_on_one_instance_lose_nothing(tmp_path, clock):
    m = AsyncMemory.from_config(offline_config(tmp_path, hygiene={"clock": clock, "flush_after": 0.01}))

    async def worker(i: int) -> tuple[str, bool]:
        user = f"user{i % 5}"
        added = await m.add(f"fact number {i} about topic {i % 7}", user_id=user, infer=False, source=f"chat {i}")
        mid = added["results"][0]["id"]
        found = await m.search(f"fact number {i} about topic {i % 7}", filters={"user_id": user}, top_k=50)
        assert mid in {r["id"] for r in found["results"]}
        if i % 3 == 0:
            await m.delete(mid)
            return mid, False
        return mid, True

    async def run() -> tuple[list[tuple[str, bool]], set[str]]:
        done = await asyncio.gather(*(worker(i) for i in range(50)))
        seen = set()
        for u in range(5):
            seen |= {r["id"] for r in (await m.get_all(filters={"user_id": f"user{u}"}, top_k=100))["results"]}
        await m.flush()
        return done, seen

    try:
        done, seen = asyncio.run(run())
        kept = {mid for mid, alive in done if alive}
        gone = {mid for mid, alive in done if not alive}
        assert len(kept) + len(gone) == 50 and seen == kept
        rows = m.ledger.get_many([mid for mid, _ in done])
        assert len(rows) == 50
        assert all(rows[mid].deleted_at for mid in gone) and not any(rows[mid].deleted_at for mid in kept)
        assert {rows[mid].source for mid in kept} == {f"chat {i}" for i in range(50) if i % 3}
    finally:
        m.close()


def test_threads_with_their_own_event_loops_share_one_instance(tmp_path):
    m = AsyncMemory.from_config(offline_config(tmp_path))
    failures: list[BaseException] = []

    def app_thread(t: int) -> None:
        async def many() -> None:
            await asyncio.gather(*(m.add(f"thread {t} fact {i}", user_id=f"t{t}", infer=False) for i in range(15)))

        try:
            asyncio.run(many())
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=app_thread, args=(t,)) for t in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    try:
        assert failures == []
        counts = [len(asyncio.run(m.get_all(filters={"user_id": f"t{t}"}, top_k=100))["results"]) for t in range(3)]
        assert counts == [15, 15, 15]
    finally:
        m.close()


def test_a_call_waiting_for_its_llm_lets_other_calls_run(tmp_path):
    """While one add waits for the model, two more adds reach the model too and a search completes: model calls
    overlap as in mem0's AsyncMemory, and reads are not stuck behind them."""
    m = AsyncMemory.from_config(offline_config(tmp_path))
    all_in = threading.Barrier(3, timeout=30)  # breaks (and the adds fail) unless three are in the LLM at once
    m.llm = ScriptedLLM(gate=lambda _fact: all_in.wait())

    async def run() -> tuple[list[Any], Any]:
        adds = [asyncio.ensure_future(m.add(f"fact: user likes colour {c}", user_id="u")) for c in ("red", "blue")]
        found = await asyncio.wait_for(m.search("colour", filters={"user_id": "u"}), timeout=30)
        third = m.add("fact: user likes colour green", user_id="u")
        return [*await asyncio.gather(*adds, third)], found

    try:
        added, found = asyncio.run(run())
        assert found == {"results": []}
        assert sorted(r["results"][0]["memory"] for r in added) == [
            "user likes colour blue",
            "user likes colour green",
            "user likes colour red",
        ]
        assert isinstance(m.llm, ScriptedLLM)  # the app sees its own LLM object
    finally:
        m.close()


def test_hygiene_verbs_work_awaited(tmp_path, clock, plain_mem0, close_plain):
    plain = plain_mem0(tmp_path / "store")  # a memory written before the drop-in: adopted
    plain.add("Written by plain mem0", user_id="dana", infer=False)
    close_plain(plain)

    async def run() -> None:
        async with AsyncMemory.from_config(offline_config(tmp_path / "store", hygiene={"clock": clock})) as m:
            assert await m.adopt() == 1
            old = (await m.add("Prefers npm", user_id="dana", infer=False, source="chat 2026-05-02"))["results"][0]
            assert old["hygiene"]["source"] == "chat 2026-05-02"
            new_id = await m.supersede(old["id"], "Prefers pnpm", source="chat 2026-08-01")
            live = await m.get_all(filters={"user_id": "dana"})
            assert sorted(r["memory"] for r in live["results"]) == ["Prefers pnpm", "Written by plain mem0"]
            assert (await m.get(old["id"]))["hygiene"]["state"] == "superseded"
            web = (await m.add("Dana is on leave", user_id="dana", infer=False, source="https://example.com/page"))[
                "results"
            ][0]
            assert web["hygiene"]["state"] == "quarantined"
            assert (await m.confirm(web["id"]))["hygiene"]["state"] == "live"
            await m.invalidate(web["id"], reason="she is back")
            assert (await m.get(web["id"]))["hygiene"]["state"] == "invalidated"
            temp = (await m.add("Away this week", user_id="dana", infer=False, ttl="7d"))["results"][0]
            clock.advance(days=100)
            queue = [r["memory"] for r in await m.review_queue(older_than="90d")]
            assert "Prefers pnpm" in queue and "Prefers npm" not in queue and "Dana is on leave" not in queue
            dry = await m.prune(dry_run=True)
            assert dry.dry_run and {p.memory_id for p in dry.memories} == {temp["id"]}
            clock.advance(days=200)
            pruned = await m.prune()
            assert {p.memory_id for p in pruned.memories} == {temp["id"], old["id"], web["id"]}
            backup = await m.backup(tmp_path / "backups")
            assert Path(backup.path).is_dir() and backup.counts["ledger"]
            forgotten = await m.forget([new_id])
            assert new_id in forgotten.deleted
            await m.flush()
            assert m.ledger.get(new_id).deleted_at is not None
        with pytest.raises(StateError, match="closed"):
            await m.get(new_id)

    asyncio.run(run())


def test_close_waits_for_calls_already_made_and_works_awaited_or_not(tmp_path):
    m = AsyncMemory.from_config(offline_config(tmp_path))
    release = threading.Event()
    in_llm = threading.Event()

    def hold(_fact: str) -> None:
        in_llm.set()
        assert release.wait(30)

    m.llm = ScriptedLLM(gate=hold)

    async def run() -> None:
        adding = asyncio.ensure_future(m.add("fact: the add that was made before close", user_id="u"))
        assert await asyncio.to_thread(in_llm.wait, 30)
        closing = asyncio.ensure_future(asyncio.to_thread(m.close))
        while True:  # until close() has begun: it refuses new calls at once, then waits for the add
            try:
                await m.get("any-id")
            except StateError:
                break
        assert not closing.done() and not adding.done()
        release.set()
        added = await adding
        await (await closing)  # close() returned an awaitable: awaiting it is allowed
        assert added["results"][0]["memory"] == "the add that was made before close"
        with pytest.raises(StateError, match="closed"):
            await m.search("x", filters={"user_id": "u"})

    asyncio.run(run())
    assert m.close() is not None  # a second close is a no-op, not awaited here
    AsyncMemory.__new__(AsyncMemory).close()  # one whose __init__ never finished closes quietly, as in mem0
    reopened = Memory.from_config(offline_config(tmp_path))
    try:
        assert [r["memory"] for r in reopened.get_all(filters={"user_id": "u"})["results"]] == [
            "the add that was made before close"
        ]
    finally:
        reopened.close()


def test_attributes_are_the_wrapped_memorys_through_reset(tmp_path):
    m = AsyncMemory.from_config(offline_config(tmp_path))
    try:
        first = m.db  # mem0's reset replaces its history-db manager
        asyncio.run(m.add("something", user_id="u", infer=False))
        asyncio.run(m.reset())
        assert m.db is not first and m.db is vars(m)["_sync"].db
        assert m.vector_store is vars(m)["_sync"].vector_store
        assert asyncio.run(m.get_all(filters={"user_id": "u"})) == {"results": []}
        m.custom_instructions = "extract only preferences"
        assert m.custom_instructions == "extract only preferences" == vars(m)["_sync"].custom_instructions
        assert "custom_instructions" not in vars(m)
        assert m.config.vector_store.config.path == str(tmp_path / "qdrant")
        with pytest.raises(AttributeError):
            _ = m.no_such_attribute
    finally:
        m.close()


def test_procedural_memory_with_a_langchain_model_as_in_mem0(tmp_path, monkeypatch):
    """``add(..., llm=)`` hands mem0's procedural prompt to a LangChain chat model, as mem0's AsyncMemory does."""
    utils = types.ModuleType("langchain_core.messages.utils")
    utils.convert_to_messages = lambda messages: [("converted", m["role"]) for m in messages]  # type: ignore[attr-defined]
    for name, module in (
        ("langchain_core", types.ModuleType("langchain_core")),
        ("langchain_core.messages", types.ModuleType("langchain_core.messages")),
        ("langchain_core.messages.utils", utils),
    ):
        monkeypatch.setitem(sys.modules, name, module)

    class ChatModel:
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def invoke(self, input: Any) -> Any:  # LangChain's keyword
            self.seen.append(input)
            return types.SimpleNamespace(content="```\n1. open the repo 2. run the tests\n```")

    async def both(m: Any, model: ChatModel) -> Any:
        return await m.add(
            [{"role": "user", "content": "how do I ship?"}], agent_id="bot", memory_type="procedural_memory", llm=model
        )

    plain, plain_model = plain_async(tmp_path / "plain"), ChatModel()
    try:
        expected = asyncio.run(both(plain, plain_model))
    finally:
        plain.close()
        plain.vector_store.client.close()
    ours, our_model = AsyncMemory.from_config(offline_config(tmp_path / "ours")), ChatModel()
    try:
        got = asyncio.run(both(ours, our_model))
        assert scrub(got) == scrub(expected) and got["results"][0]["memory"] == "1. open the repo 2. run the tests"
        assert our_model.seen == plain_model.seen
        assert not isinstance(ours.llm, ChatModel)  # lent for that call only
    finally:
        ours.close()


POISONED = "Alice keeps a poisoned note"


def failing_deletes(store: Any) -> None:
    """Make the vector store refuse to delete the point holding POISONED (a full disk, a flaky server)."""
    original = store.delete

    def delete(vector_id: Any) -> Any:
        point = store.get(vector_id=vector_id)
        if point is not None and (point.payload or {}).get("data") == POISONED:
            raise RuntimeError("disk full")
        return original(vector_id=vector_id)

    store.delete = delete


async def failing_script(m: Any, untracked_id: str | None) -> list[Any]:
    out: list[Any] = []
    for text in ("Alice likes tea", POISONED, "Alice lives in Haifa"):
        out.append(await m.add(text, user_id="alice", infer=False, metadata={"n": 1}))
    if untracked_id is not None:  # a memory plain mem0 wrote, updated before anything else read it
        out.append(await m.update(untracked_id, text="Alice moved to Cairo"))
        out.append(await m.get(untracked_id))
    failing_deletes(m.vector_store)
    out.append(await m.delete_all(user_id="alice"))
    out.append(await m.get_all(filters={"user_id": "alice"}))
    return out


def seeded(folder: Any, plain_mem0: Any, close_plain: Any) -> str:
    seed = plain_mem0(folder)
    try:
        return str(seed.add("Alice lived in Berlin", user_id="alice", infer=False)["results"][0]["id"])
    finally:
        close_plain(seed)


def plain_reference(tmp_path: Any, plain_mem0: Any, close_plain: Any) -> list[Any]:
    """What mem0's own AsyncMemory gives for :func:`failing_script` when only the injected delete fails (its store
    calls in one thread: :func:`run_store_calls_in_one_thread`, so its own race loses no other delete)."""
    folder = tmp_path / "plain"
    untracked = seeded(folder, plain_mem0, close_plain)
    plain = plain_async(folder)
    try:
        out = run_store_calls_in_one_thread(failing_script(plain, untracked))
    finally:
        plain.close()
        plain.vector_store.client.close()
    assert [i["memory"] for i in out[-1]["results"]] == [POISONED]
    return out


def test_delete_all_goes_on_past_a_failure_as_mem0_async_memory_does(tmp_path, plain_mem0, close_plain):
    expected = scrub(plain_reference(tmp_path, plain_mem0, close_plain))
    folders = {"ours": seeded(tmp_path / "ours", plain_mem0, close_plain)}
    ours = AsyncMemory(build_mem0_config(split_config(offline_config(tmp_path / "ours"))[0]))
    try:
        got = asyncio.run(failing_script(ours, folders["ours"]))
        assert scrub(got) == expected
        assert [i["memory"] for i in got[-1]["results"]] == [POISONED]
        rows = {r.memory_id: r for r in ours.ledger.iter_rows()}
        left = got[-1]["results"][0]["id"]
        assert rows[left].deleted_at is None  # the failed one is not marked deleted
        assert all(r.deleted_at for mid, r in rows.items() if mid != left)  # every other one is
        assert rows[folders["ours"]].adopted and rows[folders["ours"]].source == "unknown"
        assert ours.ledger.pending("delete") == []
    finally:
        ours.close()


def test_delete_all_of_many_memories_deletes_every_one_where_mem0_2_0_async_memory_leaves_some(tmp_path):
    """mem0 2.0's own AsyncMemory gathers the deletes in threads over local Qdrant and leaves some behind (40
    memories: 1-3 left in most runs); the drop-in's calls go to the store one at a time."""

    async def run(m: Any) -> tuple[int, int]:
        for i in range(40):
            await m.add(f"Alice fact number {i} about tea", user_id="alice", infer=False)
        await m.delete_all(user_id="alice")
        left = len((await m.get_all(filters={"user_id": "alice"}, top_k=100))["results"])
        return left, len(m.vector_store.list(filters={"user_id": "alice"}, top_k=100)[0])

    for attempt in range(3):
        ours = AsyncMemory(build_mem0_config(split_config(offline_config(tmp_path / f"ours-{attempt}"))[0]))
        try:
            assert asyncio.run(run(ours)) == (0, 0)
            assert sum(1 for r in ours.ledger.iter_rows() if r.deleted_at) == 40
            assert ours.ledger.pending("delete") == []
        finally:
            ours.close()
