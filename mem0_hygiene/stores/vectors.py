"""Read-only paging over every point of a mem0 vector store, in pages, without loading it whole.

For Qdrant it scrolls with the client (large pages: local Qdrant's scroll cost grows with the offset).
For other stores it falls back to mem0's ``list`` with a large ``top_k``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

PAGE_SIZE = 5000


def _item(point: Any) -> dict[str, Any]:
    payload = dict(getattr(point, "payload", None) or {})
    return {
        "id": str(point.id),
        "memory": payload.get("data", ""),
        "created_at": payload.get("created_at"),
        "expiration_date": payload.get("expiration_date"),
        "user_id": payload.get("user_id"),
        "agent_id": payload.get("agent_id"),
        "run_id": payload.get("run_id"),
        "payload": payload,
    }


def iter_points(vector_store: Any, page_size: int = PAGE_SIZE) -> Iterator[list[dict[str, Any]]]:
    """Yield pages of ``{"id", "memory", "created_at", "expiration_date", scope..., "payload"}``."""
    client = getattr(vector_store, "client", None)
    collection = getattr(vector_store, "collection_name", None)
    if client is not None and collection is not None and hasattr(client, "scroll"):
        offset = None
        while True:
            points, offset = client.scroll(
                collection_name=collection, limit=page_size, offset=offset, with_payload=True, with_vectors=False
            )
            if points:
                yield [_item(p) for p in points]
            if offset is None:
                return
    listed = vector_store.list(top_k=10_000_000)
    rows = listed[0] if isinstance(listed, (list, tuple)) and listed and isinstance(listed[0], list) else listed
    rows = list(rows or [])
    for start in range(0, len(rows), page_size):
        yield [_item(p) for p in rows[start : start + page_size]]
