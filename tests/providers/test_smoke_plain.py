"""Plain mem0 runs on each provider the suites use (the fixtures build a working store): add, get, search."""

from __future__ import annotations

from typing import Any

from mem0 import Memory as PlainMemory

from mem0_hygiene.config import build_mem0_config, split_config


def test_plain_mem0_stores_and_finds_a_memory_on_each_provider(provider_config: Any) -> None:
    mem0_part, _, _ = split_config(provider_config())
    plain = PlainMemory(build_mem0_config(mem0_part))
    added = plain.add("Dana deploys with Docker Compose", user_id="dana", infer=False)
    memory_id = added["results"][0]["id"]
    assert plain.get(memory_id)["memory"] == "Dana deploys with Docker Compose"
    found = plain.search("how does Dana deploy", filters={"user_id": "dana"}, top_k=3)
    assert [r["id"] for r in found["results"]] == [memory_id]
