"""The MCP server on every vector store: `mem0-hygiene mcp --config FILE` over stdio, with the SDK's real client
session, on a config file naming local Qdrant, pgvector, Chroma or FAISS. An agent's session (remember with a
source, recall, correct, invalidate, forget, confirm, review, the two resources) gets the same answers on each: a
corrected fact is not recalled and its correction is, each recalled memory shows its date and where it came from, an
invalidated or forgotten memory is gone, a query about nothing remembered recalls nothing (Chroma and FAISS score
by a distance, on which mem0's threshold let every memory through), another user's memory is refused as unknown."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'mem0-hygiene[mcp]'")

TOOLS = {"remember", "recall", "correct", "invalidate", "confirm", "forget", "review"}


def text_of(result: Any) -> str:
    """The text a model reads from a tool result."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def serve(config_file: Path, folder: Path, steps: Callable[[Any], Awaitable[Any]]) -> Any:
    """Spawn `python -m mem0_hygiene mcp --config FILE --user-id dana` over stdio, run `await steps(client)` in a
    real client session and return what it returned (the server exits when the session closes)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    args = ["-m", "mem0_hygiene", "mcp", "--config", str(config_file), "--user-id", "dana"]
    env = {"MEM0_TELEMETRY": "False", "MEM0_DIR": str(folder / "mem0-dir")}
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=120) as client:
            return await steps(client)

    return asyncio.run(main())


def plant(m: Memory) -> dict[str, str]:
    facts = {
        "npm": ("Dana prefers npm for the shop", "dana"),
        "office": ("Dana works from the Tel Aviv office", "dana"),
        "milk": ("Dana drinks oat milk in coffee", "dana"),
        "eve": ("Eve keeps the launch date secret", "eve"),
    }
    return {
        name: m.add(text, user_id=user, infer=False, source="chat")["results"][0]["id"]
        for name, (text, user) in facts.items()
    }


def test_an_agent_session_over_mcp_gets_the_same_answers_on_every_store(
    provider: str, provider_config: Any, tmp_path: Path
) -> None:
    config = provider_config()
    m = Memory.from_config(config)
    try:
        ids = plant(m)
    finally:
        m.close()
    config_file = tmp_path / "app.json"  # the app's config as a user writes it: no clock, the server runs on today's
    config_file.write_text(json.dumps({k: v for k, v in config.items() if k != "hygiene"}))

    async def steps(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await c.list_tools()).tools}}
        out["added"] = await c.call_tool(
            "remember", {"text": "Dana deploys the shop with Docker Compose", "source": "chat about deploys"}
        )
        out["deploys"] = await c.call_tool("recall", {"query": "Dana deploys the shop with Docker"})
        out["fixed"] = await c.call_tool(
            "correct", {"memory_id": ids["npm"], "new_text": "Dana prefers pnpm for the shop", "reason": "switched"}
        )
        out["prefers"] = await c.call_tool("recall", {"query": "Dana prefers npm for the shop"})
        out["invalidated"] = await c.call_tool("invalidate", {"memory_id": ids["office"], "reason": "remote now"})
        out["forgotten"] = await c.call_tool("forget", {"memory_id": ids["milk"]})
        out["office"] = await c.call_tool("recall", {"query": "Dana works from the Tel Aviv office"})
        out["milk"] = await c.call_tool("recall", {"query": "Dana drinks oat milk in coffee"})
        out["confirm_forgotten"] = await c.call_tool("confirm", {"memory_id": ids["milk"]})
        out["nothing"] = await c.call_tool("recall", {"query": "Eve launch"})
        out["eve"] = await c.call_tool("forget", {"memory_id": ids["eve"]})
        out["review"] = await c.call_tool("review", {})
        out["audit"] = json.loads((await c.read_resource("memory://audit")).contents[0].text)
        out["queue"] = json.loads((await c.read_resource("memory://review-queue")).contents[0].text)
        return out

    out = serve(config_file, tmp_path, steps)
    assert out["tools"] == TOOLS

    added = out["added"]
    assert not added.is_error, text_of(added)
    new_id = added.structured_content["id"]
    assert added.structured_content["outcome"] == "added"
    deploys = out["deploys"]
    line = next(ln for ln in text_of(deploys).splitlines() if "Docker Compose" in ln)
    assert line.startswith("- Dana deploys the shop with Docker Compose (confirmed ")
    assert line.endswith(f"[id {new_id}]")
    hit = next(h for h in deploys.structured_content["memories"] if h["id"] == new_id)
    assert hit["source"] == "mcp:mcp chat about deploys" and hit["state"] == "live"  # provenance: who and where
    assert deploys.structured_content["memories"][0]["id"] == new_id  # the nearest, on every store's scale
    assert 0.4 < hit["score"] <= 1.0  # (pgvector's is mem0's hybrid score: semantic and keyword, halved)

    fixed = out["fixed"]
    assert not fixed.is_error, text_of(fixed)
    assert fixed.structured_content["outcome"] == "superseded" and fixed.structured_content["old_id"] == ids["npm"]
    prefers = out["prefers"]
    assert "Dana prefers pnpm for the shop" in text_of(prefers)
    assert "npm for the shop" not in text_of(prefers).replace("pnpm for the shop", "")
    assert ids["npm"] not in json.dumps(prefers.structured_content)
    new_fact = fixed.structured_content["new_id"]
    correction = next(h for h in prefers.structured_content["memories"] if h["id"] == new_fact)
    assert correction["source"] == "mcp:mcp correction: switched"

    assert out["invalidated"].structured_content["outcome"] == "invalidated"
    assert out["forgotten"].structured_content["outcome"] == "deleted"
    assert "Tel Aviv" not in text_of(out["office"]) and ids["office"] not in text_of(out["office"])
    assert "oat milk" not in text_of(out["milk"]) and ids["milk"] not in text_of(out["milk"])
    assert out["confirm_forgotten"].is_error and "no memory with id" in text_of(out["confirm_forgotten"])

    assert text_of(out["nothing"]) == "No live memory matches."  # nothing unrelated is recalled, on any store
    assert out["eve"].is_error and text_of(out["eve"]).startswith(f"no memory with id '{ids['eve']}'")

    gone = {ids["npm"], ids["office"], ids["milk"], ids["eve"]}
    assert not out["review"].is_error and not gone & {h["id"] for h in out["review"].structured_content["memories"]}
    assert out["queue"]["scope"] == {"user_id": "dana"} and not gone & {h["id"] for h in out["queue"]["memories"]}
    assert "EMBEDDER_MISMATCH" not in {f["code"] for f in out["audit"]["findings"]}
    assert out["audit"]["summary"]["error"] == 0 and out["audit"]["skipped"] == []

    m = Memory.from_config(config)  # what the agent did is in the store itself
    try:
        assert m.get(ids["npm"])["hygiene"]["state"] == "superseded"
        assert m.get(ids["office"])["hygiene"]["state"] == "invalidated"
        assert m.get(ids["milk"]) is None
        assert m.get(ids["eve"])["hygiene"]["state"] == "live"
    finally:
        m.close()
