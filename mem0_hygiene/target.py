"""Which deployment a command or call works on, resolved once: :func:`resolve` -> :class:`Target`.

Every entry point (audit, inspect, the maintenance actions, backup/restore, forget, relocate, where and the
CLI commands over them) takes the same thing: the app's mem0 config dict (as passed to ``Memory.from_config``,
``"hygiene"`` section included; None or ``{}`` for mem0's defaults), a live ``Memory`` (mem0's own or the
drop-in: the in-process route, which uses the app's open stores), or a :class:`Target` already resolved. It is
turned into a :class:`Target` here, once: the config dict is split once, every store path comes from
:func:`~mem0_hygiene.stores.locations.resolve_locations` (mem0's own defaults applied), and the clock is the
deployment's (``hygiene.clock``, or the drop-in's own). Actions that must write through mem0's API open the
drop-in with :meth:`Target.memory_for`; readers use the paths and :meth:`Target.vector_client`.

Nothing here opens a store until asked, and nothing prints.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .config import ConfigFacts, HygieneSettings, default_ledger_path, split_config
from .errors import (
    ConfigError,
    EmbedderUnavailable,
    HygieneError,
    ReadOnlyStore,
    StoreLocked,
    StoreMissing,
)
from .stores.history import HistoryFile, history_files
from .stores.locations import StoreLocation, history_location, location_of, resolve_locations
from .timeutil import Clock, as_utc

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .memory.core import Memory

DEFAULT_COLLECTION = "mem0"

IN_PROCESS_HINTS: dict[str, str] = {
    "prune": "In the app: `from mem0_hygiene.maintenance import prune; prune(m)`, or set hygiene.auto_prune='24h' "
    "so the app prunes itself a little at a time.",
    "review": "In the app: `from mem0_hygiene.maintenance import review_queue; review_queue(m)`, then "
    "m.confirm(id), m.invalidate(id, reason=...) or m.supersede(id, 'new fact', source=...).",
    "confirm": "In the app: m.confirm(id).",
    "invalidate": "In the app: m.invalidate(id, reason=...).",
    "supersede": "In the app: m.supersede(id, 'new fact', source=...).",
    "forget memories in": "In the app: m.forget([memory_id, ...], scrub=True).",
    "consolidate": "In the app: `from mem0_hygiene.maintenance import consolidate; consolidate(m, dry_run=True)`, "
    "then consolidate(m) to apply.",
}
"""The in-process equivalent named after the locked-store message, per operation."""

KEY_HINTS = {
    "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "gemini": "GOOGLE_API_KEY",
    "together": "TOGETHER_API_KEY",
}
"""The environment variable holding each hosted embedder's API key, for the message when it is missing."""


def is_memory(value: Any) -> bool:
    """A live mem0 ``Memory`` (mem0's own or the drop-in)."""
    from mem0 import Memory as Mem0Memory

    return isinstance(value, Mem0Memory)


def is_dropin(value: Any) -> bool:
    """The drop-in :class:`mem0_hygiene.Memory` (which keeps a ledger), not plain mem0."""
    from .memory.core import Memory

    return isinstance(value, Memory)


@dataclass(frozen=True)
class Target:
    """One mem0 deployment, resolved once. Build it with :func:`resolve`.

    Fields:
        description: what was given, for reports: "config", "mem0 defaults" or "in-process Memory"
            (or the caller's own description, e.g. the config file's name).
        config: the app's config dict as given (hygiene section included; ``{}`` = mem0's defaults, and for
            a live Memory). :meth:`memory_for` opens the drop-in from it.
        mem0_config: the same without the hygiene section.
        settings: the hygiene settings (the drop-in's own for a live Memory; the defaults for plain mem0).
        facts: what the config said before mem0 filled in defaults.
        locations: every place the deployment writes to (see :func:`resolve_locations`).
        memory: the app's live Memory for the in-process route; None when resolved from a config.
    """

    description: str
    config: dict[str, Any]
    mem0_config: dict[str, Any]
    settings: HygieneSettings
    facts: ConfigFacts
    locations: tuple[StoreLocation, ...]
    memory: Any = field(default=None, compare=False)

    # -- what and where ---------------------------------------------------------------------------
    @property
    def in_process(self) -> bool:
        """Resolved from the app's live Memory: its open stores are used, nothing is opened."""
        return self.memory is not None

    @property
    def clock(self) -> Clock:
        return self.settings.clock

    def now(self) -> datetime:
        """The current time by the deployment's clock (UTC)."""
        return as_utc(self.settings.clock())

    def location(self, role: str) -> StoreLocation:
        return location_of(list(self.locations), role)  # type: ignore[arg-type]

    @property
    def vector_location(self) -> StoreLocation:
        return self.location("vector_store")

    @property
    def provider(self) -> str:
        if self.memory is not None:
            return str(self.memory.config.vector_store.provider)
        return self.vector_location.provider

    @property
    def collection(self) -> str:
        store = getattr(self.memory, "vector_store", None)
        name = getattr(store, "collection_name", None)
        return str(name or self.vector_location.collection or DEFAULT_COLLECTION)

    @property
    def vector_path(self) -> str | None:
        """The local vector-store folder (None for a server, an in-memory store or a passed-in client)."""
        loc = self.vector_location
        return loc.path if loc.is_local else None

    @property
    def history_path(self) -> str:
        return self.location("history_db").path or ""

    @property
    def history_files(self) -> list[HistoryFile]:
        """Every host's history.db the audit reads: this deployment's own first, then ``hygiene.history_dbs``
        (each labelled; see :func:`~mem0_hygiene.stores.history.history_files`)."""
        return history_files(self.history_path, self.settings.history_dbs)

    @property
    def every_location(self) -> tuple[StoreLocation, ...]:
        """:attr:`locations`, with each other host's history.db after this deployment's own (all of them named
        by their label in ``note`` when there are several)."""
        files = self.history_files
        if len(files) < 2:
            return self.locations
        out: list[StoreLocation] = []
        for loc in self.locations:
            if loc.role != "history_db":
                out.append(loc)
                continue
            out.append(dataclasses.replace(loc, note=f"host {files[0].label}" + (f"; {loc.note}" if loc.note else "")))
            out += [history_location(f.path, note=f"host {f.label}") for f in files[1:]]
        return tuple(out)

    @property
    def ledger_path(self) -> str:
        if self.memory is not None and isinstance(getattr(self.memory, "ledger_path", None), str):
            return str(self.memory.ledger_path)
        if self.settings.ledger_url:
            return self.settings.ledger_url  # PostgreSQL: opened by URL, shown redacted (Ledger.shown)
        return self.location("ledger").path or default_ledger_path(self.history_path)

    def side_file(self, role: str) -> str | None:
        """Where this deployment's file ``role`` lives: "backup_record", "copies_registry" or "restore_journal",
        beside the ledger and named after it (:func:`~mem0_hygiene.stores.paths.side_file`); None when there is
        no place for it (every store in memory or on a server)."""
        from .stores.paths import side_file

        return side_file(
            role, self.ledger_path, self.history_path, self.vector_path if role == "restore_journal" else None
        )

    @property
    def vector_conf(self) -> dict[str, Any]:
        """The config's ``vector_store.config`` section ({} for a live Memory)."""
        return dict(((self.mem0_config.get("vector_store") or {}).get("config")) or {})

    @property
    def client(self) -> Any:
        """An open vector-store client to use as it is (the app's, or one passed in the config); None
        when one of ours must be opened."""
        if self.memory is not None:
            return getattr(getattr(self.memory, "vector_store", None), "client", None)
        return self.vector_conf.get("client")

    @property
    def server_conf(self) -> dict[str, Any]:
        """How to reach a Qdrant server (url/host/port/api_key/https) and its redacted name (``remote``)."""
        conf = self.vector_conf
        out = {k: conf.get(k) for k in ("url", "host", "port", "api_key", "https")}
        out["remote"] = self.vector_location.remote
        return out

    @property
    def vector_paths(self) -> list[str]:
        """The local Qdrant folder this deployment opens (its configured or defaulted path, nothing else: the
        CLI never moves a store or looks for it elsewhere); [] for a server or another provider."""
        vs = self.vector_location
        if vs.provider != "qdrant" or not vs.is_local or vs.path is None:
            return []
        return [os.path.expanduser(vs.path)]

    def lock_holder(self) -> str | None:
        """The local Qdrant folder of this deployment that another client holds locked right now, or None."""
        from .stores.qdrant import is_locked

        for path in self.vector_paths:
            if is_locked(path):
                return path
        return None

    def read_only_reason(self) -> str | None:
        """Why this process may only read the deployment's local Qdrant folder (its lock cannot be opened for
        writing: a read-only mount, another user's store), or None. Readers then read the collection's own file
        (:mod:`~mem0_hygiene.stores.qdrant_file`); nothing may write to it."""
        from .stores.qdrant_file import lock_refusal

        for path in self.vector_paths:
            why = lock_refusal(path)
            if why:
                return why
        return None

    # -- opening ----------------------------------------------------------------------------------
    def open_memory(
        self, *, for_writing_text: bool = False, action: str = "open", must_exist: bool = True, readonly: bool = False
    ) -> Memory:
        """The drop-in Memory over this deployment's stores, for maintenance from outside the app.

        Refuses with :class:`~mem0_hygiene.errors.StoreLocked` (naming the remedies, and the in-process
        equivalent of ``action``) when another process holds the local Qdrant folder: checked before
        anything is opened or created. ``for_writing_text=False`` swaps the embedder and LLM for the offline
        ones (no API key; fine for reading and deleting). ``for_writing_text=True`` keeps the app's real
        embedder, which new text must be embedded with, and raises :class:`EmbedderUnavailable` when it
        cannot start (its API key is missing); only the LLM is swapped (nothing here infers). Automatic
        pruning (``hygiene.auto_prune``) is turned off in the returned instance: a maintenance command does
        only what it is asked. With ``must_exist`` (the default) a local Qdrant store that is not there is
        an error rather than created empty (a wrong path, or a store on /tmp wiped at reboot). The caller
        closes it (``m.close()``), which releases the folder.

        The store is never moved: a store on a RAM disk or under /tmp is used where it is, with a warning naming
        ``mem0-hygiene relocate`` (``hygiene.on_volatile`` is "warn" here; relocation is an explicit act).
        ``readonly=True`` (dry runs and reads) writes nothing anywhere: the ledger is a scratch copy in memory
        (``stores.ledger.scratch_copy``; no file is created), a missing history.db is an in-memory one, and a local
        Qdrant store must already hold the collection (nothing is created in it). A local folder this process may
        only read (:meth:`read_only_reason`) is then read from its files into an in-memory copy
        (:func:`~mem0_hygiene.stores.qdrant_file.readonly_client`), even while the app holds it; without
        ``readonly`` such a folder is refused (:class:`~mem0_hygiene.errors.ReadOnlyStore`).
        """
        from .config_loader import for_maintenance
        from .memory.core import Memory
        from .offline import OFFLINE_PROVIDER
        from .stores.qdrant import is_qdrant_folder
        from .stores.vector import SUPPORTED, UnsupportedVectorStore, unsupported_reason

        if self.provider not in SUPPORTED:  # one clear line, not mem0's error from deep inside
            raise UnsupportedVectorStore(f"cannot {action}: {unsupported_reason(self.provider)}")
        read_only = self.read_only_reason()
        if read_only and not readonly:
            raise ReadOnlyStore(
                f"cannot {action} the local Qdrant store at {self.vector_path}: this account may only read it "
                f"({read_only}). Run it as the store's owner (the app's user), on a writable copy, or inside the app; "
                "the commands that only read work here (audit, where, digest, history, review --list, "
                "prune --dry-run, consolidate --dry-run)"
            )
        holder = None if read_only else self.lock_holder()  # read-only: the file is read beside the app
        if holder:
            raise locked_error(holder, action)
        paths = self.vector_paths
        if must_exist and paths and not any(is_qdrant_folder(p) for p in paths):
            raise StoreMissing(
                f"no local Qdrant store at {paths[0]}, so there is nothing to {action}. Pass the app's config "
                "with --config FILE (or --qdrant-path/--history-db); if the store should be there, run "
                "`mem0-hygiene audit` with the same options (a store under /tmp may have been wiped at reboot)"
            )
        cfg: dict[str, Any] = dict(self.config)
        if for_writing_text:
            cfg["llm"] = {"provider": OFFLINE_PROVIDER}
            check_embedder(cfg)
        else:
            cfg = for_maintenance(cfg)
        cfg["hygiene"] = {**dict(cfg.get("hygiene") or {}), "auto_prune": None, "on_volatile": "warn"}
        try:
            if readonly:
                return self._open_readonly(cfg, action)
            return Memory.from_config(cfg)
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise locked_error(paths[-1] if paths else "?", action) from exc
            raise

    def _open_readonly(self, cfg: dict[str, Any], action: str) -> Memory:
        from .config import build_mem0_config
        from .memory.core import Memory
        from .stores.ledger import scratch_copy
        from .stores.qdrant import collection_names

        path = self.vector_paths[0] if self.vector_paths else None  # a local Qdrant folder
        if path and self.collection not in collection_names(path):
            raise StoreMissing(
                f"the local Qdrant store at {path} has no collection {self.collection!r}, so there is "
                f"nothing to {action}; check vector_store.config.collection_name (--collection)"
            )
        if not path and self.provider != "qdrant":
            self._check_collection_exists(action)
        client = self._readonly_client() if path else None
        if client is not None:  # the folder's own files, read into memory: mem0 reads through this client
            cfg = {
                **cfg,
                "vector_store": {
                    **cfg.get("vector_store", {}),
                    "config": {**((cfg.get("vector_store") or {}).get("config") or {}), "client": client},
                },
            }
        try:
            mem0_part, settings, facts = split_config(cfg)
            built = build_mem0_config(mem0_part)
            if not os.path.isfile(self.history_path):
                built.history_db_path = ":memory:"  # sqlite3 would create the file
            settings.ledger_path = self.ledger_path
            settings.flush_after = 0.0  # no timer thread: buffered rows go straight into the scratch copy
            return Memory(built, hygiene=settings, config_facts=facts, ledger=scratch_copy(self.ledger_path))
        except BaseException:
            if client is not None:
                client.close()
            raise

    def _check_collection_exists(self, action: str) -> None:
        """Refuse a read of another provider's store whose collection is not there (mem0 would create it empty:
        a read must write nothing), naming the store; a provider the seam cannot read is left to mem0."""
        from .stores.vector import UnsupportedVectorStore, for_target

        try:
            store = for_target(self, action=action)
        except UnsupportedVectorStore:
            return
        with store:
            if not store.exists():
                raise StoreMissing(
                    f"the {store.describe()} does not exist, so there is nothing to {action}; check "
                    "vector_store.config (collection_name, path) against the app's"
                )

    def _readonly_client(self) -> Any:
        """An in-memory copy of the collection when this process may only read the local folder (None when it
        may open it): read from the collection's own file, and said so in a log warning (the CLI shows it)."""
        why = self.read_only_reason()
        if not why:
            return None
        from .stores.qdrant_file import readonly_client

        client = readonly_client(self.vector_path or "", self.collection, why)
        logger.warning("%s", client.folder_note)
        return client

    @contextlib.contextmanager
    def memory_for(self, action: str, *, for_writing_text: bool = False, readonly: bool = False) -> Iterator[Memory]:
        """The drop-in Memory to act through: the app's own (in-process, left open) or one opened from the
        config for the block and closed after (``readonly``: over a scratch copy of the ledger, for dry runs and
        reads; see :meth:`open_memory`). Plain mem0's ``Memory`` is refused: it has no ledger."""
        if self.memory is not None:
            if not is_dropin(self.memory):
                raise ConfigError(
                    "pass the drop-in mem0_hygiene.Memory (or a config dict), not plain mem0.Memory: "
                    "plain mem0 has no ledger to keep the maintenance facts in"
                )
            self.memory.flush()  # buffered ledger rows first: the action reads the ledger
            yield self.memory
            return
        m = self.open_memory(for_writing_text=for_writing_text, action=action, readonly=readonly)
        try:
            yield m
        finally:
            m.close()

    @contextlib.contextmanager
    def vector_client(self, action: str, error: type[HygieneError] = HygieneError) -> Iterator[Any]:
        """A Qdrant client to read this deployment's vector store with: the app's (in-process) or the
        config's own, used as they are, or one of ours, closed after. Ours on a local folder takes the
        folder's lock for as long as it is open, so nobody else writes it; on a folder this process may only read
        it is a read-only in-memory copy of the collection (:meth:`read_only_reason`), whose writes raise.
        ``error`` is the exception raised when there is no store to read or the server cannot be reached."""
        if self.client is not None:
            yield self.client
            return
        from .stores import qdrant

        if self.vector_location.is_local:
            path = self.vector_path or ""
            if not qdrant.is_qdrant_folder(path):
                raise error(f"there is no local Qdrant store at {path}: nothing to {action}")
            own = self._readonly_client()
            if own is not None:  # read access only: an in-memory copy read from the folder's files
                try:
                    yield own
                finally:
                    own.close()
                return
            with qdrant.opened(path, action) as client:
                yield client
            return
        from qdrant_client import QdrantClient

        conf = self.server_conf
        try:
            client = QdrantClient(
                url=conf.get("url"),
                host=conf.get("host"),
                port=conf.get("port"),
                api_key=conf.get("api_key"),
                https=conf.get("https"),
            )
        except Exception as exc:
            raise error(f"cannot reach the Qdrant server {conf.get('remote')}: {exc}") from exc
        try:
            yield client
        finally:
            client.close()


def locked_error(path: str, action: str) -> StoreLocked:
    """The error for a local Qdrant folder another process holds, with the in-process route for ``action``."""
    from .stores.qdrant import locked_message

    hint = IN_PROCESS_HINTS.get(action, "")
    return StoreLocked(locked_message(path, action) + (" " + hint if hint else ""))


def check_embedder(config: dict[str, Any]) -> None:
    """Start the config's embedder once, so a missing API key is reported before any store is opened."""
    from mem0.utils.factory import EmbedderFactory

    from .config import build_mem0_config
    from .offline import OFFLINE_PROVIDER

    mem0_part, _settings, _facts = split_config(config)
    built = build_mem0_config(mem0_part)
    provider = built.embedder.provider
    if provider == OFFLINE_PROVIDER:
        return
    try:
        EmbedderFactory.create(provider, built.embedder.config, built.vector_store.config)
    except Exception as exc:
        conf = built.embedder.config or {}
        model = conf.get("model") if isinstance(conf, dict) else None
        env = KEY_HINTS.get(provider)
        key_hint = (
            f"set {env} (or embedder.config.api_key in the config) in this shell"
            if env
            else "give it what it needs (API key, endpoint) in this shell"
        )
        raise EmbedderUnavailable(
            f"writing a new fact needs the app's embedder ({provider}{' ' + model if model else ''}) to embed it, "
            f"and it could not start here: {type(exc).__name__}: {exc}. It probably needs an API key: {key_hint} "
            "and retry. Commands that only read or delete (prune, review --list, confirm, invalidate, digest, "
            "history) need no key."
        ) from exc


def validate_config(mem0_part: dict[str, Any]) -> None:
    """Refuse a config mem0's own ``MemoryConfig`` rejects (``vector_store.config.pth``), with mem0's message
    (input values left out: they may hold keys), and a top-level key that is a typo of one mem0 reads;
    otherwise every command would quietly work on mem0's default store instead of the app's."""
    from .config import build_mem0_config, check_top_level_keys
    from .config_loader import for_maintenance

    check_top_level_keys(mem0_part)
    build_mem0_config(for_maintenance(mem0_part))


def check_collection(target: Target) -> None:
    """Refuse a local Qdrant folder that holds collections but not the configured one
    (:class:`~mem0_hygiene.errors.CollectionNotFound`, naming those it holds), read from its ``meta.json``
    without opening or locking it: a wrong name must never read as lost memories. Servers are checked where
    they are first read (:func:`~mem0_hygiene.stores.qdrant.check_collection_named`)."""
    from .stores.qdrant import check_collection_named, collection_names

    for path in target.vector_paths:
        check_collection_named(path, target.collection, collection_names(path))


def check_store_files(target: Target) -> None:
    """Refuse (:class:`~mem0_hygiene.errors.NotAStorePath`) a store path or side file that holds a FIFO, a
    socket, a device, or a folder where a file is expected (a file where the Qdrant folder is), before anything
    opens it; then (:class:`~mem0_hygiene.errors.NotADatabase`) a history.db that is not a SQLite database
    (:func:`~mem0_hygiene.stores.paths.check_sqlite_file`). A damaged ledger has its own error, naming the
    backup to restore (:class:`~mem0_hygiene.errors.LedgerError`)."""
    from .stores.paths import check_sqlite_file, check_store_paths, deployment_paths

    vector = target.vector_paths[0] if target.vector_paths else None
    check_store_paths(deployment_paths(target.history_path or None, target.ledger_path, vector))
    for h in target.history_files:
        check_store_paths([("history_db", h.path)])
        check_sqlite_file("history_db", h.path)


def resolve(target: Any = None, *, description: str = "", flush: bool = True) -> Target:
    """The :class:`Target` for ``target``: a config dict (None/``{}``: mem0's defaults), a live ``Memory``
    (mem0's or the drop-in), or a Target (returned as it is).

    For the drop-in, its buffered ledger rows are flushed first (``flush``): what the app already did must be
    on disk for anything that reads the ledger. Raises :class:`~mem0_hygiene.errors.ConfigError` for anything
    else, or for a config whose hygiene section is invalid.
    """
    if isinstance(target, Target):
        return target
    if target is None or isinstance(target, dict):
        config = dict(target or {})
        mem0_part, settings, facts = split_config(config)
        validate_config(mem0_part)
        resolved = Target(
            description=description or ("config" if config else "mem0 defaults"),
            config=config,
            mem0_config=mem0_part,
            settings=settings,
            facts=facts,
            locations=tuple(resolve_locations(config)),
        )
        check_collection(resolved)
        check_store_files(resolved)
        return resolved
    if is_memory(target):
        if flush and callable(getattr(target, "flush", None)):
            target.flush()
        own_settings = getattr(target, "hygiene_settings", None)
        own_facts = getattr(target, "config_facts", None)
        return Target(
            description=description or "in-process Memory",
            config={},
            mem0_config={},
            settings=own_settings if isinstance(own_settings, HygieneSettings) else HygieneSettings(),
            facts=own_facts if isinstance(own_facts, ConfigFacts) else ConfigFacts(),
            locations=tuple(resolve_locations(target)),
            memory=target,
        )
    raise ConfigError(f"expected a mem0 config dict or a Memory, not {type(target).__name__}")


__all__ = [
    "EmbedderUnavailable",
    "IN_PROCESS_HINTS",
    "StoreMissing",
    "Target",
    "check_collection",
    "check_embedder",
    "check_store_files",
    "is_dropin",
    "is_memory",
    "locked_error",
    "resolve",
    "validate_config",
]
