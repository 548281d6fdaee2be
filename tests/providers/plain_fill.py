"""A store filled by plain mem0 (never the drop-in) on any provider, for the every-store suites: what an app that
never used mem0-hygiene leaves behind, with the memories the audit has findings for."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from mem0 import Memory as PlainMemory

from mem0_hygiene.config import build_mem0_config, split_config

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
"""AWS's documented example access key id: a secret the scanners flag, harmless anywhere."""

MEMORIES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("Dana deploys with Docker Compose", {}),
    ("Dana prefers green tea in the morning", {}),
    ("Dana is travelling to Oslo this week", {"expiration_date": "2020-01-02"}),
    ("The deploy tool reported build 4411 passed", {"metadata": {"source": "tool:ci"}}),
    (f"Dana's AWS key is {AWS_KEY}", {}),
)
"""Two plain facts, one whose mem0 expiry has passed, one a tool wrote, one holding an AWS key."""


@dataclass
class PlainStore:
    config: dict[str, Any]
    ids: dict[str, str]
    """Memory text -> its id."""


def close_plain(memory: Any) -> None:
    """Let go of what plain mem0 holds open (history.db; a local Qdrant folder's lock; a pgvector pool)."""
    memory.close()
    store = memory.vector_store
    client = getattr(store, "client", None)
    if client is not None and hasattr(client, "close") and type(client).__module__.startswith("qdrant_client"):
        client.close()
    pool = getattr(store, "connection_pool", None)
    if pool is not None and hasattr(pool, "close"):
        with contextlib.suppress(Exception):
            pool.close()


def fill_plain(config: dict[str, Any], memories: tuple[tuple[str, dict[str, Any]], ...] = MEMORIES) -> PlainStore:
    """Add ``memories`` (text, extra ``add`` arguments) for user dana with plain mem0, infer off."""
    plain = PlainMemory(build_mem0_config(split_config(config)[0]))
    ids: dict[str, str] = {}
    try:
        for text, extra in memories:
            added = plain.add(text, user_id="dana", infer=False, **extra)
            ids[text] = added["results"][0]["id"]
    finally:
        close_plain(plain)
    return PlainStore(config, ids)
