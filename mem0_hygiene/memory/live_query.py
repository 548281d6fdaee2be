"""Stale points left out inside mem0's own vector query, for a drop-in over mem0's Qdrant store.

When most of a scope is stale (a fact updated weekly keeps ~26 superseded versions for time travel), asking
mem0 for a longer page costs a payload copy and a scoring pass for every stale point it brings back. Instead,
while the drop-in's ``search`` runs (and only in its thread or task), the Qdrant client's ``query_points``
for the memory collection is answered in two steps: the nearest points by id and score only (no payload), as
many as the live share of the scope says are needed; the ledger names those of them that reads must not serve
(one statement); the payloads of the first ``limit`` others are then read by id. mem0 so scores and formats
a pool of live points only, exactly as it would on a store that held only those, and returns its page.

The hook is installed once per client (several drop-ins may share one) and passes every other call through
untouched: other collections (mem0's entity store), keyword (``using=``) and batch queries, calls with
arguments mem0's ``search`` does not pass, and every call made outside a drop-in search. The ledger stays the
authority: the drop-in still filters what mem0 returns by ledger state, and ids the ledger has no row for
(written by plain mem0, or not yet flushed) pass the hook and are decided there.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

MARGIN = 1.25
"""Over-fetch beyond the live share's estimate: the stale versions of a fact are its near neighbours."""

SLACK = 2.5
"""The hook asks Qdrant for this many times the live share's estimate: ids and scores cost little (no
payload is copied), while a second query costs another scan of the scope (measured on local Qdrant: at 1.0,
one search in five needed a second query at 90% stale)."""

_PASSED = frozenset({"collection_name", "query", "query_filter", "limit"})
"""The arguments mem0's ``Qdrant.search`` gives ``query_points``: any other call is passed through."""


def fetch_for(top_k: int, share: float) -> int:
    """How many items to ask for so that ``top_k`` of them are live when a ``share`` of the scope is."""
    return math.ceil(top_k * MARGIN / max(share, 0.001)) + 4


@dataclass(frozen=True)
class LiveOnly:
    """What one drop-in search asks of the hook: its collection, the live share that sizes the first query,
    and the ledger's answer to "which of these ids must not be served"."""

    collection: str
    share: float
    not_live: Callable[[Sequence[str]], set[str]]
    pool: int | None = None
    """How many live points mem0 needs to score, when fewer than it asks for (see :func:`hook_for`)."""


_ACTIVE: ContextVar[LiveOnly | None] = ContextVar("mem0_hygiene_live_only", default=None)


@dataclass(frozen=True)
class Hooked:
    """A hooked store: its memory collection, and whether mem0 ranks its search results by the vector
    score alone."""

    collection: str
    semantic_only: bool
    """No keyword (BM25) scoring (no sparse slot in the collection, or no fastembed) and no spaCy for entity
    boosts: mem0's rank is then the vector score's order, so the ``top_k`` nearest live points are all the pool
    it needs (otherwise it gets the whole pool it asks for, ``max(4 * top_k, 60)``, as on a store that held only
    live points)."""


def hook_for(vector_store: Any) -> Hooked | None:
    """Install the hook on ``vector_store``'s Qdrant client (once per client), or None when the store is
    not mem0's Qdrant store (the drop-in then over-fetches through mem0 instead)."""
    if type(vector_store).__module__ != "mem0.vector_stores.qdrant":
        return None
    client: Any = getattr(vector_store, "client", None)
    collection = getattr(vector_store, "collection_name", None)
    query = getattr(client, "query_points", None)
    if not isinstance(collection, str) or not callable(query) or not callable(getattr(client, "retrieve", None)):
        return None
    if not getattr(query, "mem0_hygiene_hook", False):
        client.query_points = _hooked(query, client)
    return Hooked(collection, not _keyword_scoring(vector_store) and not _installed("spacy"))


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _keyword_scoring(vector_store: Any) -> bool:
    """Whether mem0 may add BM25 keyword scores: the collection has its sparse slot (an attribute this mem0
    may not have: then assume it has) and fastembed, which encodes the query, is installed."""
    return getattr(vector_store, "_has_bm25_slot", True) is not False and _installed("fastembed")


@contextlib.contextmanager
def live_only(spec: LiveOnly) -> Iterator[None]:
    """Within the block (this thread or task, and the threads ``asyncio.to_thread`` starts from it), the
    hooked clients leave out of ``spec.collection``'s vector queries what the ledger says is not live."""
    token = _ACTIVE.set(spec)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def _hooked(original: Callable[..., Any], client: Any) -> Callable[..., Any]:
    def query_points(*args: Any, **kwargs: Any) -> Any:
        spec = _ACTIVE.get()
        if (
            spec is None
            or args
            or not _PASSED.issuperset(kwargs)
            or kwargs.get("collection_name") != spec.collection
            or not _dense(kwargs.get("query"))
            or not isinstance(kwargs.get("limit"), int)
        ):
            return original(*args, **kwargs)
        return _live_points(original, client, spec, **kwargs)

    query_points.mem0_hygiene_hook = True  # type: ignore[attr-defined]
    return query_points


def _dense(query: Any) -> bool:
    """A dense vector (what mem0's ``search`` passes), not a sparse, named or multi-vector query."""
    if isinstance(query, list):
        return bool(query) and isinstance(query[0], (int, float))
    return getattr(query, "ndim", None) == 1


def _live_points(original: Callable[..., Any], client: Any, spec: LiveOnly, *, limit: int, **kwargs: Any) -> Any:
    limit = min(limit, spec.pool) if spec.pool is not None else limit
    fetch = math.ceil(fetch_for(limit, spec.share) * SLACK) if limit else 0
    while True:
        res = original(**kwargs, limit=fetch, with_payload=False)
        points = list(res.points)
        drop = spec.not_live([str(p.id) for p in points]) if points else set()
        kept = [p for p in points if str(p.id) not in drop]
        if len(kept) >= limit or len(points) < fetch:
            break
        share = max(len(kept), 1) / max(len(points), 1)
        fetch = max(fetch * 2, len(points) + fetch_for(limit - len(kept), share))
    kept = kept[:limit]
    full = (
        {
            str(p.id): p
            for p in client.retrieve(
                collection_name=kwargs["collection_name"], ids=[p.id for p in kept], with_payload=True
            )
        }
        if kept
        else {}
    )
    res.points = [p.model_copy(update={"payload": full[str(p.id)].payload}) for p in kept if str(p.id) in full]
    return res
