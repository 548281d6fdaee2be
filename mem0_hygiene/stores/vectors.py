"""Read-only paging over every point of a vector store, in pages, without loading it whole.

:func:`qdrant_pages` is the one pager over a Qdrant collection (every reader here uses it: the audit,
the drop-in's adoption, the verified copy of a local folder). It scrolls with the client in pages of
:data:`PAGE_SIZE`; for a local (embedded) Qdrant client it reads the client's in-memory collection
directly instead (same points, no copies; see :func:`qdrant_pages`). :func:`iter_points` pages through
a mem0 vector store: with the pager for Qdrant, through mem0's ``list`` with a large ``top_k`` for
other stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Local Qdrant's scroll cost grows with the offset: big pages, few round trips. 10k-point pages
# measured fastest for a local folder (and are cheap for a server too).
PAGE_SIZE = 10_000


def qdrant_pages(
    client: Any, collection: str, page_size: int = PAGE_SIZE, *, with_payload: bool = True
) -> Iterator[list[dict[str, Any]]]:
    """Every point of a Qdrant collection, without vectors, in pages of ``{"id", "payload"}`` dicts
    (``payload`` is None without ``with_payload``).

    A local (embedded) Qdrant client already holds the whole collection in memory, and its ``scroll``
    re-sorts every id and deep-copies every payload on each page (100k points in 10k pages: about 8 s of
    the audit). For it the pages are read straight from the client's in-memory collection instead, without
    copies (the payloads are the client's own: read them, do not change them), when its layout is the one
    checked for below and its live count matches ``client.count``; anything else (a Qdrant server, another
    client version) scrolls.
    """
    local = _local_collection(client, collection)
    if local is not None:
        yield from _local_pages(local, page_size, with_payload)
        return
    offset = None
    while True:
        points, offset = client.scroll(
            collection_name=collection, limit=page_size, offset=offset, with_payload=with_payload, with_vectors=False
        )
        if points:
            yield [{"id": p.id, "payload": p.payload} for p in points]
        if offset is None:
            return


def _local_collection(client: Any, collection: str) -> Any:
    """The in-memory collection behind a local ``QdrantClient(path=...)`` (or ``":memory:"``), or None.

    Relies on qdrant-client's local mode internals (``QdrantLocal.collections[name]`` with the parallel
    ``ids_inv`` list, ``payload`` list and ``deleted`` flags), so it checks their shape and that the
    points it would yield are exactly as many as ``client.count`` reports; on any doubt it returns None
    and the caller scrolls with the public API.
    """
    inner: Any = getattr(client, "_client", None)
    if not type(inner).__module__.startswith("qdrant_client.local."):
        return None
    try:
        local = inner.collections[collection]
        ids, payloads, deleted = local.ids_inv, local.payload, local.deleted
        if not (isinstance(ids, list) and isinstance(payloads, list) and len(ids) == len(payloads) == len(deleted)):
            return None
        live = len(ids) - int(deleted.sum())
        if client.count(collection_name=collection, exact=True).count != live:
            return None
    except Exception:  # another layout: use the public scroll
        return None
    return local


def _local_pages(local: Any, page_size: int, with_payload: bool) -> Iterator[list[dict[str, Any]]]:
    ids, payloads, deleted = local.ids_inv, local.payload, local.deleted
    total = min(len(ids), len(payloads), len(deleted))  # a concurrent insert appends; read what was there
    for start in range(0, total, page_size):
        end = min(total, start + page_size)
        gone = deleted[start:end].tolist()
        page = [
            {"id": ids[i], "payload": payloads[i] if with_payload else None}
            for i in range(start, end)
            if not gone[i - start]
        ]
        if page:
            yield page


def _item(point_id: Any, payload: dict[str, Any] | None) -> dict[str, Any]:
    payload = dict(payload or {})
    return {
        "id": str(point_id),
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
        for page in qdrant_pages(client, collection, page_size):
            yield [_item(p["id"], p["payload"]) for p in page]
        return
    listed = vector_store.list(top_k=10_000_000)
    rows = listed[0] if isinstance(listed, (list, tuple)) and listed and isinstance(listed[0], list) else listed
    rows = list(rows or [])
    for start in range(0, len(rows), page_size):
        yield [_item(p.id, getattr(p, "payload", None)) for p in rows[start : start + page_size]]
