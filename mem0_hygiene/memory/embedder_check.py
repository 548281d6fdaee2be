"""Which embedder makes this store's vectors, checked when the drop-in opens the store.

A store the drop-in opens empty gets its embedder recorded in the ledger (provider, model, vector length:
:mod:`mem0_hygiene.stores.embedder_record`, as ``import`` and ``migrate`` record it), so that a later change of
embedder in the config (another model of the same length: mem0 keeps answering, with the wrong memories) is seen:
at the next start (a warning naming both and the fix) and by the audit (``EMBEDDER_MISMATCH``). A store that holds
memories and has nothing recorded is left as it is: which model made them is not known here.
"""

from __future__ import annotations

import logging
from typing import Any

from ..stores.embedder_record import configured_embedder, differences, record_embedder, recorded_embedder
from ..stores.ledger import Ledger
from ..timeutil import to_iso

logger = logging.getLogger("mem0_hygiene.memory.core")


def embedder_of(config: Any) -> dict[str, Any]:
    """The embedder a mem0 ``MemoryConfig`` names (as :func:`configured_embedder` reads a config dict)."""
    embedder = getattr(config, "embedder", None)
    inner = getattr(embedder, "config", None)
    vs_conf = getattr(getattr(config, "vector_store", None), "config", None)
    dims = getattr(vs_conf, "embedding_model_dims", None) if not isinstance(vs_conf, dict) else None
    return configured_embedder(
        {
            "embedder": {"provider": getattr(embedder, "provider", None), "config": dict(inner or {})},
            "vector_store": {"config": {"embedding_model_dims": dims} if dims else {}},
        }
    )


def is_empty(vector_store: Any) -> bool:
    """Whether mem0's open vector store holds no point (mem0's own ``list``; its shape differs per provider: a
    list of points, a list holding that list, or Qdrant's (points, next page))."""
    out = vector_store.list(None, 1)
    first = out[0] if isinstance(out, (list, tuple)) and out and isinstance(out[0], (list, tuple)) else out
    return not first


def check_embedder(ledger: Ledger, config: Any, vector_store: Any, now: Any) -> str | None:
    """Record the configured embedder for a store opened empty; for a store whose recorded embedder is another
    one than the config names, the warning to give (None: nothing to say)."""
    configured = embedder_of(config)
    recorded = recorded_embedder(ledger)
    if recorded is None:
        if is_empty(vector_store):
            record_embedder(ledger, configured, to_iso(now))
        return None
    changed = differences(recorded, configured)
    if not changed:
        return None
    return (
        f"this store's vectors were made by another embedder than the config names ({'; '.join(changed)}): "
        "searches compare vectors of two models and serve the wrong memories. Put the embedder back in the config, "
        "or re-embed every memory with the new one: mem0-hygiene migrate --to NEW_CONFIG --reembed"
    )
