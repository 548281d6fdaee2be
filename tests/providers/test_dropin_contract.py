"""The drop-in's contract on every provider (Qdrant, pgvector, Chroma, FAISS): what plain mem0 returns for the
same operations (ids and the hygiene key aside), and expiry, supersede, invalidate, delete, prune, delete_all,
reset and topic-key upserts, read back through the drop-in and through plain mem0 over the same store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mem0 import Memory as PlainMemory

from mem0_hygiene import Memory
from mem0_hygiene.config import build_mem0_config, split_config

SCOPE = {"user_id": "dana"}
VOLATILE = ("id", "created_at", "updated_at", "hygiene")


@pytest.fixture
def dropin(provider_config: Callable[..., dict[str, Any]]) -> Any:
    """``dropin(**hygiene)``: a drop-in Memory on the test's provider (one store per test); closed after."""
    opened: list[Memory] = []
    config: dict[str, Any] = {}

    def build(**hygiene: Any) -> Memory:
        if not config:
            config.update(provider_config(**hygiene))
        m = Memory.from_config(config)
        opened.append(m)
        return m

    yield build
    for m in opened:
        try:
            m.close()
        except Exception:  # closed by the test already
            pass


def plain_get(m: Memory, memory_id: str) -> Any:
    """What plain mem0's ``get`` returns over the drop-in's own open stores (a second client could not open a
    local Qdrant folder the drop-in holds)."""
    return PlainMemory.get(m, memory_id)


def plain_get_all(m: Memory, **filters: Any) -> list[dict[str, Any]]:
    """What plain mem0's ``get_all`` returns over the drop-in's own open stores."""
    return list(PlainMemory.get_all(m, filters=filters)["results"])


def shown(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Result items without what differs between two runs of the same calls (ids, times, our own key)."""
    out = []
    for item in items:
        rest = {k: v for k, v in item.items() if k not in VOLATILE}
        if isinstance(rest.get("score"), float):
            rest["score"] = round(rest["score"], 3)
        out.append(rest)
    return out


def script(m: Any) -> dict[str, Any]:
    """The same calls on plain mem0 or the drop-in; what each returned."""
    add = m.add("Dana deploys with Docker Compose", **SCOPE, infer=False, metadata={"topic": "ops"})
    first = add["results"][0]["id"]
    m.add("Dana likes green tea", **SCOPE, infer=False)
    third = m.add("Dana lives in Haifa", **SCOPE, infer=False, metadata={"n": 2})["results"][0]["id"]
    got = m.get(first)
    m.update(third, "Dana lives in Tel Aviv")
    listed = m.get_all(filters=SCOPE)["results"]
    found = m.search("how does Dana deploy", filters=SCOPE, top_k=3)["results"]
    history = [(h["old_memory"], h["new_memory"], h["event"]) for h in m.history(third)]
    deleted = m.delete(first)
    after = m.get_all(filters=SCOPE)["results"]
    return {
        "add": shown(add["results"]),
        "get": shown([got]),
        "get_all": sorted(map(repr, shown(listed))),
        "search": shown(found),
        "history": history,
        "delete": deleted,
        "after_delete": sorted(map(repr, shown(after))),
    }


def test_the_drop_in_returns_what_plain_mem0_returns_for_the_same_calls(
    provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    plain_part, _, _ = split_config(provider_config(tmp_path / "plain", collection="plainmem"))
    plain = PlainMemory(build_mem0_config(plain_part))
    expected = script(plain)
    if provider == "qdrant":
        plain.vector_store.client.close()
    m = Memory.from_config(provider_config(tmp_path / "dropin", collection="dropinmem"))
    try:
        assert script(m) == expected
    finally:
        m.close()


def texts(m: Any, **kwargs: Any) -> list[str]:
    return sorted(r["memory"] for r in m.get_all(filters=SCOPE, **kwargs)["results"])


def test_an_expired_memory_is_hidden_from_every_read(dropin: Any, clock: Any) -> None:
    m = dropin()
    gone = m.add("Away this week", **SCOPE, infer=False, ttl="1d")["results"][0]["id"]
    m.add("Lives in Haifa", **SCOPE, infer=False)
    assert texts(m) == ["Away this week", "Lives in Haifa"]
    clock.advance(days=2)
    assert texts(m) == ["Lives in Haifa"]
    found = m.search("away", filters=SCOPE, top_k=5, threshold=0.0)["results"]
    assert [r["memory"] for r in found] == ["Lives in Haifa"]
    assert m.get(gone)["hygiene"]["state"] == "expired"  # by id: shown with its state, as mem0 shows it


def test_supersede_serves_the_new_fact_only_and_keeps_the_metadata(dropin: Any) -> None:
    m = dropin()
    old = m.add("Dana deploys with Docker Compose", **SCOPE, infer=False, metadata={"topic": "ops"})["results"][0]
    new = m.supersede(old["id"], "Dana deploys with Kubernetes now", metadata={"topic": "ops"})
    assert texts(m) == ["Dana deploys with Kubernetes now"]
    assert m.get(new)["metadata"] == {"topic": "ops"}
    assert m.get(old["id"])["hygiene"]["state"] == "superseded"
    found = m.search("how does Dana deploy", filters=SCOPE, top_k=5)["results"]
    assert [r["memory"] for r in found] == ["Dana deploys with Kubernetes now"]
    assert m.ledger.get(old["id"]).superseded_by == new


def test_invalidate_hides_the_memory_and_delete_removes_it_for_plain_mem0_too(dropin: Any) -> None:
    m = dropin()
    wrong = m.add("The office is closed on Mondays", **SCOPE, infer=False)["results"][0]["id"]
    gone = m.add("Likes green tea", **SCOPE, infer=False)["results"][0]["id"]
    m.add("Lives in Haifa", **SCOPE, infer=False)
    m.invalidate(wrong, reason="it is open")
    m.delete(gone)
    assert texts(m) == ["Lives in Haifa"]
    assert m.vector_store.get(vector_id=gone) is None
    assert plain_get(m, gone) is None
    assert m.ledger.get(gone).deleted_at is not None


def test_prune_deletes_superseded_and_expired_points_through_mem0(dropin: Any, clock: Any) -> None:
    m = dropin()
    old = m.add("Uses Python 3.9", **SCOPE, infer=False)["results"][0]["id"]
    new = m.supersede(old, "Uses Python 3.12")
    away = m.add("Away this week", **SCOPE, infer=False, ttl="7d")["results"][0]["id"]
    clock.advance(days=200)
    result = m.prune()
    assert {old, away} <= {entry.memory_id for entry in result.memories}
    assert m.vector_store.get(vector_id=old) is None and m.vector_store.get(vector_id=away) is None
    assert texts(m) == ["Uses Python 3.12"] and m.vector_store.get(vector_id=new) is not None
    assert "DELETE" in [h["event"] for h in m.history(old)]  # history.db says so, as after a mem0 delete


def test_delete_all_takes_one_scope_and_reset_takes_everything(dropin: Any) -> None:
    m = dropin()
    m.add("Dana lives in Haifa", **SCOPE, infer=False)
    m.add("Dana likes tea", **SCOPE, infer=False)
    kept = m.add("Omer lives in Acre", user_id="omer", infer=False)["results"][0]["id"]
    m.delete_all(user_id="dana")
    assert texts(m) == []
    assert [r["id"] for r in m.get_all(filters={"user_id": "omer"})["results"]] == [kept]
    assert plain_get_all(m, **SCOPE) == []
    m.reset()
    assert m.get_all(filters={"user_id": "omer"})["results"] == []
    again = m.add("Dana lives in Tel Aviv", **SCOPE, infer=False)["results"][0]["id"]
    assert [r["id"] for r in m.get_all(filters=SCOPE)["results"]] == [again]


def test_a_topic_key_upsert_keeps_one_live_memory_per_key(dropin: Any, clock: Any) -> None:
    m = dropin()
    ids = []
    for text in ("Standup is at 9:00", "Standup is at 10:30", "Standup is at 11:00"):
        ids.append(m.add(text, **SCOPE, infer=False, topic_key="standup")["results"][0]["id"])
        clock.advance(minutes=1)
    m.add("Lunch is at noon", **SCOPE, infer=False, topic_key="lunch")
    assert texts(m) == ["Lunch is at noon", "Standup is at 11:00"]
    m.flush()  # the ledger as written (reads above saw the buffered supersedes; the writer thread may lag)
    assert [m.ledger.get(i).superseded_by for i in ids[:2]] == ids[1:]
    clock.advance(days=1)
    m.close()
    assert texts(dropin()) == ["Lunch is at noon", "Standup is at 11:00"]  # a new process's view
