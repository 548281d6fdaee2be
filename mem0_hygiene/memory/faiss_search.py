"""A drop-in search over mem0's FAISS store, answered as mem0's FAISS ``search`` answers it, with less work.

mem0's FAISS ``search`` asks the index for the ``2 * top_k`` nearest vectors of the whole collection, copies the
payload of every one of them into a pydantic ``OutputData``, and only then keeps those that match the filters (the
scope), the first ``top_k`` of them. With several users in one store most of those copies are thrown away: at ten
users, nine in ten. While the drop-in's ``search`` runs (and only in its thread or task), the store's ``search``
is answered by :func:`search_like_mem0`, the same steps in an order that builds an ``OutputData`` for the matching
points alone: the same index query, the same points in the same order with the same scores and payloads. Every
other call (plain mem0 on the same store object, the drop-in's own lookups, another store) runs mem0's own code.

The hook is installed once per store object, and only when the store has the attributes this module reads (mem0's
FAISS store as of mem0 2.x); the contract suite checks the two answers equal on a store of several scopes.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

_ACTIVE: ContextVar[bool] = ContextVar("mem0_hygiene_faiss_search", default=False)
_READS = ("index", "index_to_id", "docstore", "distance_strategy", "_apply_filters", "_should_normalize")


def hook_faiss(vector_store: Any) -> bool:
    """Install the hook on ``vector_store`` (once) when it is mem0's FAISS store; whether it is hooked."""
    module = type(vector_store).__module__
    if module != "mem0.vector_stores.faiss" or not all(hasattr(vector_store, a) for a in _READS):
        return False
    if not hasattr(sys.modules[module], "OutputData"):
        return False
    search = vector_store.search
    if not getattr(search, "mem0_hygiene_hook", False):
        vector_store.search = _hooked(search, vector_store)
    return True


@contextlib.contextmanager
def fast_search() -> Iterator[None]:
    """Within the block (this thread or task), hooked FAISS stores answer ``search`` by :func:`search_like_mem0`."""
    token = _ACTIVE.set(True)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def _hooked(original: Callable[..., Any], store: Any) -> Callable[..., Any]:
    def search(query: Any = None, vectors: Any = None, top_k: int = 5, filters: dict[str, Any] | None = None) -> Any:
        if not _ACTIVE.get() or vectors is None:
            return original(query=query, vectors=vectors, top_k=top_k, filters=filters)
        return search_like_mem0(store, vectors, top_k, filters)

    search.mem0_hygiene_hook = True  # type: ignore[attr-defined]
    return search


def search_like_mem0(store: Any, vectors: Any, top_k: int, filters: dict[str, Any] | None) -> list[Any]:
    """What mem0's FAISS ``store.search(query, vectors, top_k, filters)`` returns (its index query, its ``-1`` and
    missing-id skips, its score for the distance, its filter and its cut at ``top_k``), the filter applied before a
    point's payload is copied."""
    if store.index is None:
        raise ValueError("Collection not initialized. Call create_col first.")
    import faiss
    import numpy as np

    output = sys.modules[type(store).__module__].OutputData
    query = np.array(vectors, dtype=np.float32)
    if len(query.shape) == 1:
        query = query.reshape(1, -1)
    if store._should_normalize():
        faiss.normalize_L2(query)
    fetch_k = top_k * 2 if filters else top_k
    scores, indices = store.index.search(query, fetch_k)
    euclidean = store.distance_strategy.lower() == "euclidean"
    index_to_id, docstore, admits = store.index_to_id, store.docstore, store._apply_filters
    results: list[Any] = []
    for position, raw in zip(indices[0][:fetch_k].tolist(), scores[0][:fetch_k].tolist()):
        if position == -1:
            continue
        vector_id = index_to_id.get(position)
        if vector_id is None:
            continue
        payload = docstore.get(vector_id)
        if payload is None or (filters and not admits(payload, filters)):
            continue
        score = 1.0 / (1.0 + raw) if euclidean else raw
        results.append(output(id=vector_id, score=score, payload=payload.copy()))
        if filters and len(results) >= top_k:
            break
    return results
