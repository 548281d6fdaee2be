"""Decay in ranking (``hygiene.rank``): relevance combined with recency and importance, as in Generative
Agents (Park et al., 2023).

Each term is in 0..1:

* relevance: mem0's own search score (0..1), with its semantic part read as cosine similarity on every
  provider (:func:`cosine_relevance`: FAISS and Chroma score by a distance; see
  :mod:`mem0_hygiene.stores.scores`);
* recency: ``decay ** hours`` since the memory was last used (returned by a read) or confirmed
  (created, re-confirmed, updated), whichever is later; 0.995 per hour by default;
* importance: ``metadata["importance"]`` as 0..1, or 1..10 as in the paper (divided by 10), else a
  default.

The combined score is their weighted mean. Ranking only reorders the page a search returns: it never
hides a memory (the same memories come back, in another order) and never decides between contradicting
facts; that is what supersession and invalidation at write time are for.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..config import RankSettings
from ..stores.ledger import LedgerRow
from ..timeutil import parse_time


def recency(row: LedgerRow | None, now: datetime, decay: float, last_use: datetime | None = None) -> float:
    """``decay ** hours`` since the later of the last use and the last confirmation (1.0 when unknown
    or in the future)."""
    stamps = [s for s in ((row.last_used_at, row.confirmed_at, row.created_at) if row else ()) if s]
    latest = max((parse_time(s) for s in stamps), default=None)
    if last_use is not None and (latest is None or last_use > latest):
        latest = last_use
    if latest is None:
        return 1.0
    hours = max(0.0, (now - latest).total_seconds() / 3600.0)
    return float(decay**hours)


def importance(metadata: Any, settings: RankSettings) -> float:
    """Importance from metadata: 0..1 as given, 1..10 divided by 10, anything else the default."""
    value = metadata.get(settings.importance_key) if isinstance(metadata, dict) else None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return settings.default_importance
    number = float(value)
    if number > 1.0:
        number /= 10.0
    return min(1.0, max(0.0, number))


def cosine_relevance(item: dict[str, Any], to_cosine: Callable[[float], float]) -> float | None:
    """mem0's combined score of a search item (from its ``score_details``, asked with ``explain=True``) with
    the semantic score read through ``to_cosine``: ``(semantic + bm25 + entity boost) / max possible``, as
    mem0 combines them. None when the item has no score details."""
    details = item.get("score_details")
    if not isinstance(details, dict) or details.get("semantic_score") is None:
        return None
    semantic = to_cosine(float(details["semantic_score"]))
    extra = float(details.get("bm25_score") or 0.0) + float(details.get("entity_boost") or 0.0)
    most = float(details.get("max_possible_score") or 1.0)
    return min(1.0, max(0.0, (semantic + extra) / most))


def rank(
    items: list[dict[str, Any]],
    rows: dict[str, LedgerRow],
    now: datetime,
    settings: RankSettings,
    last_uses: dict[str, datetime] | None = None,
    to_cosine: Callable[[float], float] | None = None,
) -> list[dict[str, Any]]:
    """The items reordered by the combined score (stable for equal scores). Each item's ``"hygiene"``
    gets ``"rank": {"score", "relevance", "recency", "importance"}``; mem0's ``"score"`` is untouched.
    ``to_cosine``: the store's scores as cosine similarity (see :func:`cosine_relevance`), None when they are."""
    total = settings.relevance + settings.recency + settings.importance
    scored = []
    for pos, item in enumerate(items):
        mid = str(item.get("id"))
        rel = cosine_relevance(item, to_cosine) if to_cosine is not None else None
        if rel is None:
            rel = min(1.0, max(0.0, float(item.get("score") or 0.0)))
        rec = recency(rows.get(mid), now, settings.decay, (last_uses or {}).get(mid))
        imp = importance(item.get("metadata"), settings)
        score = (settings.relevance * rel + settings.recency * rec + settings.importance * imp) / total
        facts = item.setdefault("hygiene", {})
        facts["rank"] = {
            "score": round(score, 6),
            "relevance": round(rel, 6),
            "recency": round(rec, 6),
            "importance": round(imp, 6),
        }
        scored.append((-score, pos, item))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [item for _, _, item in scored]
