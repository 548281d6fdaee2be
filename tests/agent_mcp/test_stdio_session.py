"""The memory tools through a real MCP client session: the SDK's stdio client spawns `python -m mem0_hygiene mcp`
over a real offline store (local Qdrant on disk, history.db, the ledger) and calls the tools as an agent would."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mem0_hygiene import Memory, offline_config

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'mem0-hygiene[mcp]'")

from .conftest import text_of  # noqa: E402

B62 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6"
TOOLS = {"remember", "recall", "correct", "invalidate", "confirm", "forget", "review"}


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


def test_the_server_lists_seven_tools_with_schemas_and_descriptions_and_two_resources(app, session):
    app()

    async def steps(c):
        return (await c.list_tools()).tools, (await c.list_resources()).resources

    tools, resources = session(steps)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS
    for tool in tools:
        assert tool.description and len(tool.description) > 60, tool.name
        assert tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
    schema = {
        name: (set(t.input_schema["properties"]), set(t.input_schema.get("required", [])))
        for name, t in by_name.items()
    }
    assert schema == {
        "remember": ({"text", "ttl", "topic_key", "source"}, {"text"}),
        "recall": ({"query", "limit"}, {"query"}),
        "correct": ({"memory_id", "new_text", "reason"}, {"memory_id", "new_text"}),
        "invalidate": ({"memory_id", "reason"}, {"memory_id", "reason"}),
        "confirm": ({"memory_id"}, {"memory_id"}),
        "forget": ({"memory_id"}, {"memory_id"}),
        "review": ({"limit"}, set()),
    }
    assert by_name["recall"].annotations.read_only_hint is True
    assert by_name["forget"].annotations.destructive_hint is True
    assert {str(r.uri) for r in resources} == {"memory://audit", "memory://review-queue"}


def test_remember_then_recall_shows_the_fact_with_its_id_its_date_and_its_mcp_source(app, session, cli):
    app(plant=lambda m: m.add("Dana lives in Haifa near the port", user_id="dana", infer=False, source="chat"))
    before = today()

    async def steps(c):
        added = await c.call_tool(
            "remember", {"text": "Dana deploys the shop with Docker Compose", "source": "chat about deploys"}
        )
        found = await c.call_tool("recall", {"query": "Dana deploys the shop with Docker"})
        old = await c.call_tool("recall", {"query": "Dana lives in Haifa"})
        return added, found, old

    added, found, old = session(steps)
    assert not added.is_error
    new_id = added.structured_content["id"]
    assert added.structured_content["outcome"] == "added"
    assert added.structured_content["source"] == "mcp:mcp chat about deploys"  # the SDK client's name is "mcp"
    assert new_id in text_of(added) and "Added" in text_of(added)
    assert not found.is_error
    line = next(ln for ln in text_of(found).splitlines() if "Docker Compose" in ln)
    assert line.startswith("- Dana deploys the shop with Docker Compose (confirmed ")
    assert any(f"(confirmed {day})" in line for day in {before, today()})
    assert f"[id {new_id}]" in line
    hit = next(m for m in found.structured_content["memories"] if m["id"] == new_id)
    assert hit["state"] == "live" and hit["confirmed_at"][:10] in {before, today()}
    # the planted memory was confirmed on the test clock's day: recall says so, so the model can say "as of"
    assert "- Dana lives in Haifa near the port (confirmed 2026-08-01)" in text_of(old)

    story = cli("digest", "--since", "36500d", "--json")
    assert story.returncode == 0, story.stderr
    assert "mcp:mcp chat about deploys" in story.stdout


def test_correct_leaves_only_the_new_fact_in_recall_and_history_shows_the_chain(app, session, cli):
    planted = app(
        plant=lambda m: m.add("Dana prefers npm for the shop", user_id="dana", infer=False, source="chat")["results"][
            0
        ]["id"]
    ).planted

    async def steps(c):
        fixed = await c.call_tool(
            "correct",
            {"memory_id": planted, "new_text": "Dana prefers pnpm for the shop", "reason": "switched in August"},
        )
        found = await c.call_tool("recall", {"query": "Dana prefers for the shop"})
        return fixed, found

    fixed, found = session(steps)
    assert not fixed.is_error, text_of(fixed)
    new_id = fixed.structured_content["new_id"]
    assert fixed.structured_content["old_id"] == planted and fixed.structured_content["outcome"] == "superseded"
    lines = [ln for ln in text_of(found).splitlines() if "prefers" in ln]
    assert lines == [next(ln for ln in lines if "pnpm" in ln)]
    assert f"[id {new_id}]" in lines[0] and planted not in text_of(found)

    history = cli("history", planted, "--json")
    assert history.returncode == 0, history.stderr
    chain = [(link["memory_id"], link["position"]) for link in json.loads(history.stdout)["chain"]]
    assert chain == [(planted, 0), (new_id, 1)]
    assert "correction: switched in August" in history.stdout


def test_invalidate_and_forget_hide_the_memory_and_forget_deletes_it_through_mem0(app, session, tmp_path):
    def plant(m):
        a = m.add("Dana works from the Tel Aviv office", user_id="dana", infer=False, source="chat")
        b = m.add("Dana drinks oat milk in coffee", user_id="dana", infer=False, source="chat")
        return a["results"][0]["id"], b["results"][0]["id"]

    office, milk = app(plant=plant).planted

    async def steps(c):
        gone = await c.call_tool("invalidate", {"memory_id": office, "reason": "she moved to remote work"})
        erased = await c.call_tool("forget", {"memory_id": milk})
        after = [
            await c.call_tool("recall", {"query": q}) for q in ("Dana works from the office", "Dana drinks oat milk")
        ]
        again = await c.call_tool("confirm", {"memory_id": milk})
        return gone, erased, after, again

    gone, erased, after, again = session(steps)
    assert not gone.is_error and gone.structured_content["outcome"] == "invalidated"
    assert not erased.is_error and erased.structured_content["outcome"] == "deleted"
    for result in after:
        assert "Tel Aviv" not in text_of(result) and "oat milk" not in text_of(result)
    assert again.is_error and "no memory with id" in text_of(again)

    m = Memory.from_config({**offline_config(tmp_path / "store")})
    try:
        assert m.get(office)["hygiene"]["state"] == "invalidated"
        assert m.get(office)["hygiene"]["invalid_reason"] == "she moved to remote work"
        assert m.get(milk) is None  # deleted from the vector store, not just hidden
        events = [r[0] for r in m.db.connection.execute("SELECT event FROM history WHERE memory_id = ?", (milk,))]
        assert "DELETE" in events  # history.db records it: mem0's own delete ran
    finally:
        m.close()


def test_a_credential_given_to_remember_is_redacted_before_it_is_stored(app, session):
    app()
    key = f"sk-proj-{B62[:48]}"

    async def steps(c):
        added = await c.call_tool("remember", {"text": f"The staging OpenAI key is {key}"})
        found = await c.call_tool("recall", {"query": "staging OpenAI key"})
        return added, found

    added, found = session(steps)
    assert not added.is_error
    assert added.structured_content["redacted"] == ["openai_api_key"]
    assert "Redacted before storing: openai_api_key" in text_of(added)
    assert "[redacted openai_api_key]" in text_of(found)
    for result in (added, found):
        assert key not in text_of(result) and key not in json.dumps(result.structured_content)


def test_another_scopes_memory_is_refused_as_unknown_and_left_untouched(app, session, tmp_path):
    eves = app(
        plant=lambda m: m.add("Eve keeps the launch date secret", user_id="eve", infer=False, source="chat")["results"][
            0
        ]["id"]
    ).planted

    async def steps(c):
        calls = {
            "correct": {"memory_id": eves, "new_text": "Eve told everyone the launch date"},
            "invalidate": {"memory_id": eves, "reason": "mine now"},
            "confirm": {"memory_id": eves},
            "forget": {"memory_id": eves},
        }
        refused = {name: await c.call_tool(name, args) for name, args in calls.items()}
        unknown = await c.call_tool("forget", {"memory_id": "00000000-0000-0000-0000-000000000000"})
        found = await c.call_tool("recall", {"query": "Eve keeps the launch date secret"})
        review = await c.call_tool("review", {})
        return refused, unknown, found, review

    refused, unknown, found, review = session(steps)
    for name, result in refused.items():
        assert result.is_error, name
        assert text_of(result) == text_of(unknown).replace("00000000-0000-0000-0000-000000000000", eves), name
    assert "launch" not in text_of(found) and eves not in text_of(review)

    m = Memory.from_config(offline_config(tmp_path / "store"))
    try:
        item = m.get(eves)
        assert item["hygiene"]["state"] == "live" and item["memory"] == "Eve keeps the launch date secret"
    finally:
        m.close()


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(app, session):
    app()

    async def steps(c):
        bad = [
            await c.call_tool("remember", {}),
            await c.call_tool("remember", {"text": "   "}),
            await c.call_tool("remember", {"text": "Dana is away", "ttl": "soon"}),
            await c.call_tool("recall", {"query": "x", "limit": "many"}),
            await c.call_tool("recall", {"query": "x", "limit": 0}),
            await c.call_tool("invalidate", {"memory_id": "nope", "reason": ""}),
            await c.call_tool("correct", {"memory_id": 42, "new_text": "x"}),
            await c.call_tool("remember", {"text": "Sales doubled", "source": "tool:web_fetch https://x.test/"}),
        ]
        good = await c.call_tool("remember", {"text": "Dana is away this week", "ttl": "7d", "source": "chat"})
        found = await c.call_tool("recall", {"query": "Dana is away this week"})
        return bad, good, found

    bad, good, found = session(steps)
    for result in bad:
        assert result.is_error, text_of(result)
        assert text_of(result)
    assert "ttl" in text_of(bad[2])
    assert "tool output" in text_of(bad[7]) and bad[7].structured_content["outcome"] == "refused"
    assert not good.is_error and good.structured_content["expires_at"]
    assert "Dana is away this week" in text_of(found) and ", until " in text_of(found)
    assert "Sales doubled" not in text_of(found)


def test_review_lists_old_confirmations_and_the_audit_and_queue_are_readable_resources(app, session):
    # confirmed on the test clock's day (2026-08-01), served on the real one: over 90 days ago
    laptop = app(
        plant=lambda m: m.add("Dana's laptop is a ThinkPad", user_id="dana", infer=False, source="chat")["results"][0][
            "id"
        ]
    ).planted

    async def steps(c):
        due = await c.call_tool("review", {"limit": 5})
        audit = await c.read_resource("memory://audit")
        queue = await c.read_resource("memory://review-queue")
        confirmed = await c.call_tool("confirm", {"memory_id": laptop})
        after = await c.call_tool("review", {})
        return due, json.loads(audit.contents[0].text), json.loads(queue.contents[0].text), confirmed, after

    due, audit, queue, confirmed, after = session(steps)
    assert "- Dana's laptop is a ThinkPad (confirmed 2026-08-01)" in text_of(due) and laptop in text_of(due)
    assert not confirmed.is_error and confirmed.structured_content["confirmed_at"][:10] == today()
    assert laptop not in text_of(after) and after.structured_content["count"] == 0
    assert set(audit["summary"]) == {"info", "warning", "error"}
    assert {f["code"] for f in audit["findings"]} >= {"LEDGER_BACKLOG"}
    assert all(set(f) == {"code", "severity", "title", "count"} for f in audit["findings"])
    assert queue["scope"] == {"user_id": "dana"}
    assert [m["id"] for m in queue["memories"]] == [laptop]


def test_the_docs_client_registration_starts_the_server_it_describes(app, session):
    part = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "mcp.md").read_text().split("\n## ", 1)[0]
    entry = json.loads(part.split("```json", 1)[1].split("```", 1)[0])["mcpServers"]["memory"]
    assert entry["command"].endswith("/.venv/bin/mem0-hygiene") and entry["args"][0] == "mcp"
    assert "$ mem0-hygiene mcp --config app/mem0.json --user-id dana" in part
    args = list(entry["args"][1:])
    at = args.index("--config")
    del args[at : at + 2]  # the session fixture gives --config: the test's own store
    app()

    async def steps(c):
        return {t.name for t in (await c.list_tools()).tools}

    assert args == ["--user-id", "dana"] and session(steps, *args) == TOOLS
