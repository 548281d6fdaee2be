"""Which embedder made a store's vectors, recorded in its ledger: the ``embedder`` table (``key``, ``value``: the
``provider``, ``model``, ``dims`` and ``recorded_at``), created when first written, in SQLite or PostgreSQL.

``import`` and ``migrate`` write it when they fill a store (the embedder whose vectors they wrote, or that embedded the
texts), and the drop-in when it opens a store empty (:mod:`mem0_hygiene.memory.embedder_check`); the audit's
``EMBEDDER_MISMATCH`` compares it with the embedder the config names (:func:`configured_embedder`). A ledger without the
table says nothing about its vectors. Nothing here imports mem0."""

from __future__ import annotations

from typing import Any

from .ledger import Ledger
from .ledger.dialect import upsert

TABLE = "embedder"
DDL = f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
FIELDS = ("provider", "model", "dims")


def configured_embedder(config: dict[str, Any]) -> dict[str, Any]:
    """The embedder a mem0 config names: provider (mem0's default ``openai``), model (None: the provider's
    default) and the vector length (``vector_store.config.embedding_model_dims``, else the embedder's
    ``embedding_dims``; None when the config does not say)."""
    embedder = dict(config.get("embedder") or {})
    inner = dict(embedder.get("config") or {})
    vs_conf = (config.get("vector_store") or {}).get("config") or {}
    dims = (vs_conf.get("embedding_model_dims") if isinstance(vs_conf, dict) else None) or inner.get("embedding_dims")
    return {"provider": embedder.get("provider") or "openai", "model": inner.get("model"), "dims": dims}


def record_embedder(ledger: Ledger, facts: dict[str, Any], when: str) -> None:
    """Record in ``ledger`` that its store's vectors come from the embedder ``facts`` (provider, model, dims)."""
    rows = [(k, str(facts[k])) for k in FIELDS if facts.get(k) is not None] + [("recorded_at", when)]
    with ledger.transaction() as conn:
        conn.execute(DDL)
        conn.execute(f"DELETE FROM {TABLE}")
        conn.executemany(upsert(TABLE, ("key", "value"), ("key",)), rows)


def recorded_embedder(ledger: Ledger) -> dict[str, str] | None:
    """What :func:`record_embedder` wrote (None: nothing recorded)."""
    if not ledger.has_table(TABLE):
        return None
    return {str(k): str(v) for k, v in ledger.query(f"SELECT key, value FROM {TABLE}")}


def differences(recorded: dict[str, Any], configured: dict[str, Any]) -> list[str]:
    """The fields on which the recorded embedder and the configured one differ (a field either leaves unsaid is
    not compared), as "dims 256 -> 64"."""
    out = []
    for key in FIELDS:
        was, now = recorded.get(key), configured.get(key)
        if was is not None and now is not None and str(was) != str(now):
            out.append(f"{key} {was} -> {now}")
    return out
