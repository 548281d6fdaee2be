"""Letting go of what mem0's vector-store objects hold open when the drop-in closes.

mem0's own ``Memory.close`` closes history.db only: a local Qdrant client keeps its folder's lock, and a pgvector
store keeps its connection pool (its server connections) until the object is garbage-collected. An app or a
test that opens and closes the drop-in repeatedly (a CLI run per command, an MCP session, a fleet's replica
restarted in-process) so piles up connections on the server until ``max_connections`` refuses new ones.
"""

from __future__ import annotations

from typing import Any


def release(store: Any, *, own_pool: bool = True) -> None:
    """Close ``store``'s client (when it has a ``close``) and, when ``own_pool`` (the pool was made by mem0 from
    the config, not handed in by the app), its connection pool. Safe to call twice, and on ``None``."""
    if store is None:
        return
    client = getattr(store, "client", None)
    if client is not None and callable(getattr(client, "close", None)):
        client.close()
    pool = getattr(store, "connection_pool", None)
    if own_pool and pool is not None:
        close = getattr(pool, "close", None) or getattr(pool, "closeall", None)  # psycopg 3's pool or psycopg2's
        if callable(close):
            close()
