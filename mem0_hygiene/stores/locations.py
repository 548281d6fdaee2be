"""Where a mem0 configuration keeps its data: vector store, history.db, the ledger and mem0's own folder.

:func:`resolve_locations` takes a config dict (as given to ``Memory.from_config``, hygiene section
included), a ``MemoryConfig``, a ``mem0.Memory`` (or the drop-in subclass), or None for mem0's
defaults, and applies mem0's own defaults to find every place it writes to. Each local path is
checked: filesystem (``findmnt`` / mountinfo), RAM-backed or not, under /tmp or not, size, writable.
Remote stores are named by URL or host:port, without credentials.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from ..config import ConfigFacts, HygieneSettings, default_ledger_path, split_config
from .database_url import is_database_url
from .mounts import MountInfo, filesystem_of, nearest_existing
from .qdrant import folder_size

Role = Literal["vector_store", "history_db", "ledger", "mem0_dir"]
TMP_DIRS = ("/tmp", "/var/tmp")
QDRANT_DEFAULT_PATH = "/tmp/qdrant"
QDRANT_DEFAULT_COLLECTION = "mem0"


@dataclass(frozen=True)
class StoreLocation:
    """One place a mem0 configuration writes to.

    Fields:
        role: "vector_store", "history_db" (mem0's changelog), "ledger" (mem0-hygiene's sidecar) or
            "mem0_dir" (mem0's own folder: config.json, telemetry stores).
        provider: what keeps the data: the vector-store provider ("qdrant", "chroma", ...),
            "sqlite" for history.db and the ledger, "mem0" for mem0's folder.
        path: the local file or folder, absolute; None for a server. ":memory:" for an in-memory
            SQLite database.
        remote: for a server, its URL (credentials removed) or "host:port"; never an API key.
        collection: the vector-store collection, when the provider has one.
        defaulted: True when mem0 (or mem0-hygiene) chose the location because the config named none.
        exists: the path exists now (False for servers: not checked).
        size_bytes: bytes in the file, or in every file under the folder (summed); for SQLite the
            ``-wal`` and ``-journal`` files count too; None when the path does not exist.
        writable: this process could write there (for a missing path: could create it); None when
            not checked (servers, in-memory).
        filesystem: the mount holding the path (or the nearest existing ancestor); None for servers.
        volatile: the filesystem is RAM-backed (tmpfs, ramfs): the data is lost at reboot.
        under_tmp: the path is under /tmp or /var/tmp, symlinks resolved: volatile or aged out by
            systemd-tmpfiles.
        note: anything else worth saying, e.g. that a client object was passed in.
    """

    role: Role
    provider: str
    path: str | None
    remote: str | None
    collection: str | None
    defaulted: bool
    exists: bool
    size_bytes: int | None
    writable: bool | None
    filesystem: MountInfo | None
    volatile: bool
    under_tmp: bool
    note: str = ""

    @property
    def is_local(self) -> bool:
        return self.path is not None and self.path != ":memory:"

    @property
    def at_risk(self) -> bool:
        """A local store that may disappear: RAM-backed or under a temp folder."""
        return self.is_local and (self.volatile or self.under_tmp)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the filesystem as a nested dict or None)."""
        return {
            "role": self.role,
            "provider": self.provider,
            "path": self.path,
            "remote": self.remote,
            "collection": self.collection,
            "defaulted": self.defaulted,
            "exists": self.exists,
            "size_bytes": self.size_bytes,
            "writable": self.writable,
            "filesystem": self.filesystem.to_dict() if self.filesystem else None,
            "volatile": self.volatile,
            "under_tmp": self.under_tmp,
            "note": self.note,
        }


def current_mem0_dir() -> str:
    """mem0's folder as mem0 computes it (``MEM0_DIR`` or ``~/.mem0``), read from the environment now.

    mem0 itself reads the variable once, at import; this reads it at call time, which is the same
    unless the environment changed since.
    """
    return os.environ.get("MEM0_DIR") or os.path.join(os.path.expanduser("~"), ".mem0")


def default_history_db_path() -> str:
    """mem0's default ``history_db_path``: ``history.db`` in mem0's folder (``MEM0_DIR`` honoured)."""
    return os.path.join(current_mem0_dir(), "history.db")


def is_under_tmp(path: str) -> bool:
    """True when ``path`` is /tmp, /var/tmp or inside them, judged on both the path and its resolved form."""
    absolute = os.path.abspath(os.path.expanduser(path))
    candidates = {absolute, _resolve(absolute)}
    for tmp in TMP_DIRS:
        roots = {tmp, os.path.realpath(tmp)}
        for cand in candidates:
            for root in roots:
                if cand == root or cand.startswith(root.rstrip("/") + "/"):
                    return True
    return False


def _resolve(path: str) -> str:
    """realpath of the existing part of ``path`` joined with the part that does not exist yet."""
    existing = nearest_existing(path)
    rest = os.path.relpath(path, existing) if path != existing else ""
    real = os.path.realpath(existing)
    return os.path.normpath(os.path.join(real, rest)) if rest else real


def redact_url(url: str) -> str:
    """The URL without user name, password or query string (tokens travel in both)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    if not parts.scheme and not parts.netloc:
        return url.split("@")[-1]
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _local(
    role: Role,
    provider: str,
    path: str,
    *,
    collection: str | None = None,
    defaulted: bool,
    sqlite: bool = False,
    note: str = "",
    mount_options: dict[str, Any],
) -> StoreLocation:
    if path == ":memory:":
        return StoreLocation(
            role=role,
            provider=provider,
            path=path,
            remote=None,
            collection=collection,
            defaulted=defaulted,
            exists=False,
            size_bytes=None,
            writable=None,
            filesystem=None,
            volatile=False,
            under_tmp=False,
            note=note or "in memory: gone when the process exits",
        )
    path = os.path.abspath(os.path.expanduser(path))
    exists = os.path.exists(path)
    size: int | None = None
    if exists:
        size = folder_size(path)
        if sqlite:
            for suffix in ("-wal", "-journal"):
                if os.path.isfile(path + suffix):
                    size += os.path.getsize(path + suffix)
    if exists:
        mode = os.W_OK | (os.X_OK if os.path.isdir(path) else 0)
        writable = os.access(path, mode)
    else:
        writable = os.access(nearest_existing(path), os.W_OK | os.X_OK)
    fs = filesystem_of(path, **mount_options)
    return StoreLocation(
        role=role,
        provider=provider,
        path=path,
        remote=None,
        collection=collection,
        defaulted=defaulted,
        exists=exists,
        size_bytes=size,
        writable=writable,
        filesystem=fs,
        volatile=fs.volatile,
        under_tmp=is_under_tmp(path),
        note=note,
    )


def _remote(role: Role, provider: str, remote: str | None, *, collection: str | None, note: str = "") -> StoreLocation:
    return StoreLocation(
        role=role,
        provider=provider,
        path=None,
        remote=remote,
        collection=collection,
        defaulted=False,
        exists=False,
        size_bytes=None,
        writable=None,
        filesystem=None,
        volatile=False,
        under_tmp=False,
        note=note,
    )


def _conf_dict(conf: Any) -> dict[str, Any]:
    """A provider config (dict or pydantic model) as a shallow dict, objects kept."""
    if conf is None:
        return {}
    if isinstance(conf, dict):
        return dict(conf)
    fields = getattr(type(conf), "model_fields", None)
    if fields:
        return {name: getattr(conf, name, None) for name in fields}
    return dict(vars(conf))


def _provider_has_path(provider: str) -> bool:
    """Whether mem0 gives this provider's config a ``path`` (and so defaults it to /tmp/PROVIDER)."""
    if provider in ("qdrant", "chroma", "faiss"):
        return True
    try:
        from mem0.vector_stores.configs import VectorStoreConfig

        names = VectorStoreConfig.__private_attributes__["_provider_configs"].default
        class_name = names.get(provider)
        if not class_name:
            return False
        module = __import__(f"mem0.configs.vector_stores.{provider}", fromlist=[class_name])
        return "path" in getattr(module, class_name).__annotations__
    except Exception:
        return False


def _server_of(conf: dict[str, Any]) -> str | None:
    if conf.get("url"):
        return redact_url(str(conf["url"]))
    if conf.get("host"):
        host = str(conf["host"])
        return f"{host}:{conf['port']}" if conf.get("port") else host
    for key in ("connection_string", "uri", "endpoint", "cluster_url"):
        if conf.get(key):
            return redact_url(str(conf[key]))
    return None


def _vector_store(
    provider: str,
    conf: dict[str, Any],
    *,
    path_given: bool | None,
    mount_options: dict[str, Any],
) -> StoreLocation:
    """The vector-store location by mem0's rules. ``path_given`` None: unknown (a built config)."""
    collection = conf.get("collection_name")
    if provider == "qdrant":
        collection = collection or QDRANT_DEFAULT_COLLECTION
        if conf.get("client") is not None:
            return _remote(
                "vector_store",
                provider,
                None,
                collection=collection,
                note="an existing QdrantClient object was passed in; its location is not inspected",
            )
        # mem0's Qdrant: api_key, url, or host+port make it a server; otherwise the local path.
        if conf.get("url") or conf.get("api_key") or (conf.get("host") and conf.get("port")):
            return _remote("vector_store", provider, _server_of(conf), collection=collection)
        path = conf.get("path") or QDRANT_DEFAULT_PATH
        defaulted = (not path_given) if path_given is not None else path == QDRANT_DEFAULT_PATH
        return _local(
            "vector_store", provider, path, collection=collection, defaulted=defaulted, mount_options=mount_options
        )
    server = _server_of(conf)
    if server is None:
        default = f"/tmp/{provider}"
        path = conf.get("path") or (default if _provider_has_path(provider) else None)
        if path:
            defaulted = (not path_given) if path_given is not None else path == default
            return _local(
                "vector_store",
                provider,
                str(path),
                collection=collection,
                defaulted=defaulted,
                mount_options=mount_options,
            )
    note = "" if server else f"provider {provider!r}: location not inspected"
    return _remote("vector_store", provider, server, collection=collection, note=note)


def _sqlite_locations(
    history_db_path: str,
    history_defaulted: bool,
    ledger_path: str,
    ledger_defaulted: bool,
    *,
    mount_options: dict[str, Any],
) -> list[StoreLocation]:
    history = _local(
        "history_db", "sqlite", history_db_path, defaulted=history_defaulted, sqlite=True, mount_options=mount_options
    )
    if is_database_url(ledger_path):  # hygiene.ledger_url: a database server
        return [history, _remote("ledger", "postgresql", redact_url(ledger_path), collection=None)]
    return [
        history,
        _local("ledger", "sqlite", ledger_path, defaulted=ledger_defaulted, sqlite=True, mount_options=mount_options),
    ]


def history_location(path: str, *, note: str = "") -> StoreLocation:
    """Another host's history.db (``hygiene.history_dbs``), located like the deployment's own."""
    return _local(
        "history_db",
        "sqlite",
        path,
        defaulted=False,
        sqlite=True,
        note=note,
        mount_options={"findmnt": "findmnt", "mountinfo": "/proc/self/mountinfo"},
    )


def _mem0_dir(mount_options: dict[str, Any]) -> StoreLocation:
    return _local(
        "mem0_dir", "mem0", current_mem0_dir(), defaulted=not os.environ.get("MEM0_DIR"), mount_options=mount_options
    )


def _from_dict(config: dict[str, Any], mount_options: dict[str, Any]) -> list[StoreLocation]:
    mem0_part, settings, _facts = split_config(config)
    vs = mem0_part.get("vector_store") or {}
    provider = vs.get("provider") or "qdrant"
    conf = _conf_dict(vs.get("config"))
    locs = [_vector_store(provider, conf, path_given=bool(conf.get("path")), mount_options=mount_options)]
    history = mem0_part.get("history_db_path")
    history_path = history or default_history_db_path()
    ledger = settings.ledger_location
    locs += _sqlite_locations(
        history_path,
        not history,
        ledger or default_ledger_path(history_path),
        ledger is None,
        mount_options=mount_options,
    )
    locs.append(_mem0_dir(mount_options))
    return locs


def _from_memory_config(
    mem_config: Any,
    *,
    settings: HygieneSettings | None,
    facts: ConfigFacts | None,
    ledger_path: str | None,
    mount_options: dict[str, Any],
) -> list[StoreLocation]:
    vs = mem_config.vector_store
    provider = getattr(vs, "provider", None) or "qdrant"
    conf = _conf_dict(getattr(vs, "config", None))
    path_given = None if facts is None else not facts.vector_path_defaulted
    locs = [_vector_store(provider, conf, path_given=path_given, mount_options=mount_options)]
    history = getattr(mem_config, "history_db_path", None) or default_history_db_path()
    if facts is not None:
        history_defaulted = not facts.raw.get("history_db_path")
    else:
        history_defaulted = os.path.abspath(history) == os.path.abspath(default_history_db_path())
    default_ledger = default_ledger_path(history)
    if settings is not None:
        ledger_defaulted = settings.ledger_location is None
        ledger = ledger_path or settings.ledger_location or default_ledger
    else:
        ledger = ledger_path or default_ledger
        ledger_defaulted = ledger == default_ledger
    locs += _sqlite_locations(history, history_defaulted, ledger, ledger_defaulted, mount_options=mount_options)
    locs.append(_mem0_dir(mount_options))
    return locs


def resolve_locations(
    config: Any = None,
    *,
    findmnt: str | None = "findmnt",
    mountinfo: str = "/proc/self/mountinfo",
) -> list[StoreLocation]:
    """Every location the configuration writes to, in the order vector_store, history_db, ledger, mem0_dir.

    ``config`` is one of:

    - None or a dict as passed to ``Memory.from_config`` (a ``"hygiene"`` section allowed): mem0's
      defaults fill the gaps, exactly as mem0 would (Qdrant at ``/tmp/qdrant``, collection "mem0",
      history in ``MEM0_DIR``/``~/.mem0``, the ledger beside history.db unless ``hygiene.ledger_path``);
    - a ``mem0.configs.base.MemoryConfig``;
    - a ``mem0.Memory`` or a subclass: its ``config`` is read, plus (when present) the drop-in's
      ``hygiene_settings``, ``config_facts`` and ``ledger_path`` attributes. Without ``config_facts`` a
      vector-store path equal to mem0's default counts as defaulted.

    ``findmnt`` and ``mountinfo`` are passed to :func:`~mem0_hygiene.stores.mounts.filesystem_of`.
    Nothing is created or opened; the vector store is not locked or read.
    """
    mount_options: dict[str, Any] = {"findmnt": findmnt, "mountinfo": mountinfo}
    if config is None or isinstance(config, dict):
        return _from_dict(config or {}, mount_options)
    from mem0.configs.base import MemoryConfig

    if isinstance(config, MemoryConfig):
        return _from_memory_config(config, settings=None, facts=None, ledger_path=None, mount_options=mount_options)
    mem_config = getattr(config, "config", None)
    if isinstance(mem_config, MemoryConfig) or (
        hasattr(mem_config, "vector_store") and hasattr(mem_config, "history_db_path")
    ):
        settings = getattr(config, "hygiene_settings", None)
        facts = getattr(config, "config_facts", None)
        ledger_path = getattr(config, "ledger_path", None)
        return _from_memory_config(
            mem_config,
            settings=settings if isinstance(settings, HygieneSettings) else None,
            facts=facts if isinstance(facts, ConfigFacts) else None,
            ledger_path=ledger_path if isinstance(ledger_path, str) else None,
            mount_options=mount_options,
        )
    from ..errors import ConfigError

    raise ConfigError(
        f"resolve_locations takes a mem0 config dict, a MemoryConfig or a Memory, not {type(config).__name__}"
    )


def location_of(locations: list[StoreLocation], role: Role) -> StoreLocation:
    """The location with that role (every role appears exactly once in a resolve_locations result)."""
    for loc in locations:
        if loc.role == role:
            return loc
    raise KeyError(role)
