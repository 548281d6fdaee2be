"""Where the drop-in adds nothing it behaves exactly as mem0: mem0's own ``expiration_date`` accepts a past
date (stored, hidden as expired), ``top_k`` is refused with mem0's own exception and message before any
over-fetch, and a plain mem0 reader of the same store sees exactly the metadata the app gave (the birth facts
never show), while a crash before the ledger flush still loses nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mem0 import Memory as Mem0Memory

from mem0_hygiene.errors import ConfigError

SCOPE = {"user_id": "alice"}
BAD_TOP_K = [-1, -5, "3", True, False, 2.0, None]


def outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", len(call()["results"])
    except Exception as exc:  # the comparison is of the exception itself
        return type(exc).__name__, str(exc)


def test_a_past_expiration_date_is_stored_and_hidden_as_mem0_does(mem, plain_mem0, close_plain, tmp_path):
    added = mem.add("Badge valid for the 2020 conference", **SCOPE, infer=False, expiration_date="2020-01-01")
    assert [i["hygiene"]["state"] for i in added["results"]] == ["expired"]
    assert mem.get_all(filters=SCOPE)["results"] == []
    assert [i["memory"] for i in mem.get_all(filters=SCOPE, show_expired=True)["results"]] == [
        "Badge valid for the 2020 conference"
    ]
    mem.close()
    plain = plain_mem0(tmp_path / "store")
    try:
        assert plain.get_all(filters=SCOPE)["results"] == []
        shown = plain.get_all(filters=SCOPE, show_expired=True)["results"]
        assert [(i["memory"], i["expiration_date"]) for i in shown] == [
            ("Badge valid for the 2020 conference", "2020-01-01")
        ]
    finally:
        close_plain(plain)


def test_our_own_expiry_arguments_still_refuse_a_past_time(mem, clock):
    with pytest.raises(ConfigError, match="already past"):
        mem.add("x", **SCOPE, infer=False, expires_at="2020-01-01T00:00:00+00:00")


def test_a_malformed_expiration_date_raises_mems0_own_error(mem):
    with pytest.raises(ValueError, match="expiration_date must be a valid date in YYYY-MM-DD format"):
        mem.add("x", **SCOPE, infer=False, expiration_date="next week")


def test_top_k_is_refused_exactly_as_mem0_refuses_it(mem, plain_mem0, close_plain, tmp_path):
    mem.add("Prefers pnpm", **SCOPE, infer=False)
    mem.add("Uses Python 3.12", **SCOPE, infer=False)
    ours = {
        repr(k): (
            outcome(lambda k=k: mem.search("pnpm", filters=SCOPE, top_k=k)),
            outcome(lambda k=k: mem.get_all(filters=SCOPE, top_k=k)),
        )
        for k in [*BAD_TOP_K, 1]
    }
    mem.close()
    plain = plain_mem0(tmp_path / "store")
    try:
        theirs = {
            repr(k): (
                outcome(lambda k=k: plain.search("pnpm", filters=SCOPE, top_k=k)),
                outcome(lambda k=k: plain.get_all(filters=SCOPE, top_k=k)),
            )
            for k in [*BAD_TOP_K, 1]
        }
    finally:
        close_plain(plain)
    assert ours == theirs
    assert ours["-5"][0] == ("ValueError", "Invalid top_k: -5. Must be a non-negative integer.")
    assert ours["'3'"][1] == ("ValueError", "top_k must be a valid integer")


def test_top_k_is_checked_before_anything_of_ours(mem, monkeypatch):
    called = []
    monkeypatch.setattr(type(mem), "paged_read", lambda *a, **k: called.append(a))
    for k in BAD_TOP_K:
        with pytest.raises((ValueError, TypeError)):
            mem.search("pnpm", filters=SCOPE, top_k=k)
        with pytest.raises((ValueError, TypeError)):
            mem.get_all(filters=SCOPE, top_k=k)
    assert called == []


def plain_view(plain: Mem0Memory, ids: list[str]) -> dict[str, Any]:
    """What a plain mem0 reader shows as each memory's metadata, through get, get_all and search (the test clock
    is in the past, so a ttl has expired for mem0)."""
    listed = {i["id"]: i.get("metadata") for i in plain.get_all(filters=SCOPE, top_k=50, show_expired=True)["results"]}
    found = {
        i["id"]: i.get("metadata")
        for i in plain.search("fact", filters=SCOPE, top_k=50, threshold=0.0, show_expired=True)["results"]
    }
    return {
        mid: (plain.get(mid)["metadata"] if "metadata" in plain.get(mid) else None, listed.get(mid), found.get(mid))
        for mid in ids
    }


def strip_hygiene(metadata: dict | None) -> dict | None:
    """A plain reader's metadata without the hygiene keys (None when nothing else is left)."""
    rest = {k: v for k, v in (metadata or {}).items() if not k.startswith("hygiene_")}
    return rest or None


def test_plain_mem0_readers_see_the_apps_metadata_beside_the_flat_hygiene_keys(mem, plain_mem0, close_plain, tmp_path):
    """mem0 shows every payload key it does not know as metadata: a plain reader sees the app's keys unchanged
    and the hygiene keys (flat, scalar) beside them; the drop-in shows the app's alone."""
    bare = mem.add("A bare fact", **SCOPE, infer=False)["results"][0]["id"]
    tagged = mem.add("A tagged fact", **SCOPE, infer=False, metadata={"topic": "profile", "n": 2})["results"][0]["id"]
    rich = mem.add(
        "A sourced expiring fact",
        **SCOPE,
        infer=False,
        source="tool:web https://example.org",
        ttl="7d",
        topic_key="k1",
        metadata={"topic": "web"},
    )["results"][0]["id"]
    new = mem.supersede(tagged, "A tagged fact, revised", metadata={"topic": "profile"})
    mine = {i["id"]: i.get("metadata") for i in mem.get_all(filters=SCOPE, top_k=50, include_stale=True)["results"]}
    mem.close()
    plain = plain_mem0(tmp_path / "store")
    try:
        view = plain_view(plain, [bare, tagged, rich, new])
    finally:
        close_plain(plain)
    apps = {mid: [strip_hygiene(seen) for seen in view[mid]] for mid in view}
    assert apps[bare] == [None, None, None]
    assert apps[tagged] == [{"topic": "profile", "n": 2}] * 3
    assert apps[rich] == [{"topic": "web"}] * 3
    assert apps[new] == [{"topic": "profile"}] * 3
    assert {key for seen in view[new] for key in seen or {}} == {
        "topic",
        "hygiene_birth",
        "hygiene_replaces",
        "hygiene_replaces_how",
    }
    assert all(not isinstance(v, (dict, list)) for seen in view.values() for m in seen for v in (m or {}).values())
    assert mine == {bare: None, tagged: {"topic": "profile", "n": 2}, rich: {"topic": "web"}, new: {"topic": "profile"}}


def test_a_row_never_flushed_is_rebuilt_from_the_payload(make_memory, tmp_path):
    """The crash guarantee: the birth facts are in the payload written by mem0's own add, so a process that
    never wrote the ledger row (here: its buffer dropped, as a SIGKILL drops it) loses nothing."""
    m = make_memory()
    mid = m.add(
        "Read it on a forum", **SCOPE, infer=False, source="https://forum.example/t/1", ttl="3d", topic_key="forum"
    )["results"][0]["id"]
    m._pending_new.clear()  # what a kill -9 before the flush loses
    m.stop_deferred_flushes()
    m.ledger.close()
    m.vector_store.client.close()
    again = make_memory()
    row = again.require_row(mid)
    assert (row.source, row.source_kind, row.quarantined, row.topic_key) == (
        "https://forum.example/t/1",
        "tool",
        True,
        "forum",
    )
    assert row.expires_at is not None


def test_birth_facts_are_flat_scalar_keys_and_earlier_shapes_are_still_read(make_memory):
    """The birth facts travel as one JSON text under hygiene_birth, a replacement's link as flat scalar keys
    (every provider takes them, and filters on them); the facts under "id" (JSON text or a mapping) and the
    oldest top-level keys are still read, and rewritten in the new shape by the next update."""
    m = make_memory()
    mid = m.add("Read it on a forum", **SCOPE, infer=False, source="https://forum.example/t/1", topic_key="forum")[
        "results"
    ][0]["id"]
    payload = m.vector_store.get(vector_id=mid).payload
    assert json.loads(payload["hygiene_birth"])["hygiene_source"] == "https://forum.example/t/1"
    assert "id" not in payload and all(not isinstance(v, (dict, list)) for v in payload.values())
    new = m.supersede(mid, "Read it on the forum's new site")
    new_payload = m.vector_store.get(vector_id=new).payload
    assert (new_payload["hygiene_replaces"], new_payload["hygiene_replaces_how"]) == (mid, "supersede")
    old = m.add("Written with the mapping form", **SCOPE, infer=False)["results"][0]["id"]
    text = m.add("Written with the text form", **SCOPE, infer=False)["results"][0]["id"]
    top = m.add("Written with top-level keys", **SCOPE, infer=False)["results"][0]["id"]
    for point, legacy in (
        (old, {"id": {"hygiene_source_kind": "tool", "hygiene_source": "web"}}),
        (text, {"id": '{"hygiene_source_kind":"user","hygiene_source":"chat"}'}),
        (top, {"hygiene_source_kind": "user", "hygiene_source": "mail"}),
    ):
        m.vector_store.client.delete_payload("mem0", keys=["hygiene_birth"], points=[point])
        m.vector_store.client.set_payload("mem0", payload=legacy, points=[point])
    m._pending_new.clear()  # what a kill -9 before the flush loses: the rows are rebuilt from their payloads
    m.stop_deferred_flushes()
    m.ledger.close()
    m.vector_store.client.close()
    again = make_memory()
    assert (again.require_row(mid).source, again.require_row(mid).topic_key) == ("https://forum.example/t/1", "forum")
    assert (again.require_row(old).source, again.require_row(old).source_kind) == ("web", "tool")
    assert again.require_row(text).source == "chat"
    assert again.require_row(top).source == "mail"
    assert again.get(top)["metadata"] is None  # the old top-level keys never shown by the drop-in
    again.update(old, text="Rewritten with the mapping form")
    payload = again.vector_store.get(vector_id=old).payload
    assert json.loads(payload["hygiene_birth"])["hygiene_source"] == "web" and payload["id"] == ""
    assert again.get(old)["metadata"] is None
