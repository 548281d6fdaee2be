"""The provider seam: one :class:`~.base.VectorStore` per provider mem0-hygiene reads, picked by
:func:`open_vector_store` from a resolved target's vector-store location and config (or a mem0 vector-store
config): a local Qdrant folder (:mod:`.qdrant_local`), a Qdrant server (:mod:`.qdrant_server`), pgvector
(:mod:`.pgvector`), Chroma (:mod:`.chroma`) and FAISS (:mod:`.faiss`). Any other provider gets
:class:`UnsupportedVectorStore`, whose message names the provider and what to do.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from typing import Any

from ...errors import HygieneError
from ..locations import QDRANT_DEFAULT_PATH, redact_url
from .base import MANIFEST, Point, Snapshot, VectorStore, payload_checksum

SUPPORTED = ("qdrant", "pgvector", "chroma", "faiss")
"""The providers the seam reads (Qdrant as a local folder or a server)."""


class UnsupportedVectorStore(HygieneError):
    """The deployment's vector-store provider has no module in the seam (or is configured in a way it cannot
    read from outside the app); the message names it and what to do."""


def unsupported_reason(provider: str, detail: str = "") -> str:
    """The one line saying ``provider`` cannot be read here, and what to do."""
    return (
        f"mem0-hygiene cannot read a {provider!r} vector store{detail} (it reads {', '.join(SUPPORTED)}): "
        "the checks and actions on the store's points did not run. Run the store's own export or backup tools, "
        "or open an issue asking for the provider"
    )


def open_vector_store(provider: str, conf: dict[str, Any], collection: str, *, action: str = "read") -> VectorStore:
    """The store for mem0's vector-store ``provider`` and its ``conf`` (``vector_store.config``), on
    ``collection``; :class:`UnsupportedVectorStore` for a provider without a module (or a live client object of
    another provider passed in the config)."""
    if provider == "qdrant":
        from .qdrant_local import QdrantLocalStore
        from .qdrant_server import QdrantClientStore

        if conf.get("client") is not None:
            return QdrantClientStore(conf["client"], collection, "a client passed in the config")
        if conf.get("url") or conf.get("api_key") or (conf.get("host") and conf.get("port")):
            from qdrant_client import QdrantClient

            where = redact_url(str(conf["url"])) if conf.get("url") else f"{conf.get('host')}:{conf.get('port')}"
            client = QdrantClient(
                url=conf.get("url"),
                host=conf.get("host"),
                port=conf.get("port"),
                api_key=conf.get("api_key"),
                https=conf.get("https"),
            )
            return QdrantClientStore(client, collection, where, owned=True)
        path = os.path.expanduser(str(conf.get("path") or QDRANT_DEFAULT_PATH))
        return QdrantLocalStore(path, collection, action=action)
    if provider == "pgvector":
        from .pgvector import PgvectorStore, connection_string

        return PgvectorStore(connection_string(conf), collection)
    if provider == "chroma":
        if conf.get("client") is not None or conf.get("host") or conf.get("api_key"):
            raise UnsupportedVectorStore(unsupported_reason(provider, " on a server or through a passed-in client"))
        from .chroma import ChromaStore

        return ChromaStore(os.path.expanduser(str(conf.get("path") or "db")), collection)
    if provider == "faiss":
        from .faiss import FaissStore

        return FaissStore(
            os.path.expanduser(str(conf.get("path") or f"/tmp/faiss/{collection}")),
            collection,
            distance_strategy=str(conf.get("distance_strategy") or "euclidean"),
            normalize_L2=bool(conf.get("normalize_L2")),
        )
    raise UnsupportedVectorStore(unsupported_reason(provider))


DATA_FOLDERS = {"chroma": "chroma", "faiss": "faiss"}
"""The folder inside a snapshot that is a copy of the store's own folder, for the providers kept as files."""


def forget_cached(provider: str, path: str) -> None:
    """Drop what this process caches of the store at ``path`` (Chroma keeps one system per folder), so the next
    reader sees the files as they are now, after a restore swapped them."""
    if provider == "chroma":
        from .chroma import forget_cached_clients

        forget_cached_clients(path)


_HELD: contextvars.ContextVar[tuple[tuple[str, str, str], VectorStore] | None] = contextvars.ContextVar(
    "mem0_hygiene_held_store", default=None
)


def _held_key(target: Any) -> tuple[str, str, str] | None:
    """What identifies a target's local folder store (None: a server store, or a live client passed in)."""
    if target.provider not in ("qdrant", "chroma", "faiss") or not target.vector_path or target.client is not None:
        return None
    return target.provider, os.path.abspath(target.vector_path), target.collection


@contextlib.contextmanager
def held(target: Any, *, action: str = "read") -> Iterator[VectorStore | None]:
    """Within the block (this thread or task), :func:`for_target` gives every step of an operation the one open
    store of ``target``'s local folder, closed at the end: a local Qdrant folder is loaded whole each time it is
    opened (about 1.5 s at 10k points), and an operation such as a migration reads its source several times (the
    plan, the copy, the verification). For a server store nothing is held (None)."""
    key = _held_key(target)
    already = held_store(target) if key is not None else None
    if key is None or already is not None:  # a server store; or held already, by an enclosing block
        yield already
        return
    store = for_target(target, action=action)
    store.held = True
    token = _HELD.set((key, store))
    try:
        yield store
    finally:
        _HELD.reset(token)
        store.held = False
        store.close()


def held_store(target: Any) -> VectorStore | None:
    """The store :func:`held` keeps open for ``target`` in this block, or None."""
    holding = _HELD.get()
    return holding[1] if holding is not None and holding[0] == _held_key(target) else None


def for_target(target: Any, *, action: str = "read") -> VectorStore:
    """The store of a resolved :class:`~mem0_hygiene.target.Target` (its path as resolved, for a local one); the
    one :func:`held` keeps open, when it holds this target's store."""
    holding = held_store(target)
    if holding is not None:
        return holding
    conf = dict(target.vector_conf)
    if target.memory is not None:  # in-process: the live Memory's own vector-store config
        own = getattr(getattr(getattr(target.memory, "config", None), "vector_store", None), "config", None)
        if own is not None:
            conf = dict(own.model_dump() if hasattr(own, "model_dump") else own)
    if target.vector_path and target.provider in ("qdrant", "chroma", "faiss") and not conf.get("client"):
        conf["path"] = target.vector_path
    if target.client is not None and target.provider == "qdrant":
        conf["client"] = target.client
    return open_vector_store(target.provider, conf, target.collection, action=action)


def from_mem0(vector_store: Any) -> VectorStore:
    """The store behind mem0's open vector-store object (``Memory.vector_store``), read with what it already holds
    open where it can (a Qdrant client, a Chroma collection); :class:`UnsupportedVectorStore` for another class."""
    kind = type(vector_store).__name__
    collection = str(getattr(vector_store, "collection_name", "") or "")
    if kind == "Qdrant" or (hasattr(getattr(vector_store, "client", None), "scroll") and collection):
        from .qdrant_server import QdrantClientStore

        return QdrantClientStore(vector_store.client, collection, "the app's Qdrant client")
    if kind == "PGVector":
        from .pgvector import PgvectorStore

        conninfo = getattr(getattr(vector_store, "connection_pool", None), "conninfo", None)
        if not conninfo:
            raise UnsupportedVectorStore(unsupported_reason("pgvector", " through a psycopg2 pool"))
        return PgvectorStore(str(conninfo), collection)
    if kind == "ChromaDB":
        from .chroma import ChromaStore

        path = getattr(getattr(vector_store, "settings", None), "persist_directory", None)
        store = ChromaStore(str(path or ""), collection)
        store.use_collection(vector_store.collection)
        return store
    if kind == "FAISS":
        from .faiss import FaissStore

        return FaissStore(
            str(vector_store.path),
            collection,
            distance_strategy=str(getattr(vector_store, "distance_strategy", "euclidean")),
            normalize_L2=bool(getattr(vector_store, "normalize_L2", False)),
        )
    raise UnsupportedVectorStore(unsupported_reason(str(getattr(vector_store, "provider", None) or kind)))


__all__ = [
    "DATA_FOLDERS",
    "MANIFEST",
    "SUPPORTED",
    "Point",
    "Snapshot",
    "UnsupportedVectorStore",
    "VectorStore",
    "for_target",
    "forget_cached",
    "from_mem0",
    "held",
    "held_store",
    "open_vector_store",
    "payload_checksum",
    "unsupported_reason",
]
