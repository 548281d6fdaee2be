"""Store safety when the drop-in starts: no memories on a RAM disk by accident.

A vector-store path that mem0 defaulted (``/tmp/qdrant``) and that sits on tmpfs/ramfs or under a temp
folder is replaced by a persistent folder beside history.db, and its data moved there first (copied,
verified by point counts and a payload sample, then switched; the old copy is left in place). A path the
user set explicitly gets one loud warning, or per ``hygiene.on_volatile`` is relocated or refused.
history.db and the ledger get the same check (warn or refuse: SQLite files are moved with
``mem0-hygiene relocate --with-sqlite``).
"""

from __future__ import annotations

import logging
import os
from types import SimpleNamespace
from typing import Any

from mem0.configs.base import MemoryConfig

from ..config import ConfigFacts, HygieneSettings
from ..errors import VolatileStoreError
from .locations import StoreLocation, current_mem0_dir, resolve_locations
from .qdrant import relocate_qdrant_folder

logger = logging.getLogger("mem0_hygiene")
MOUNTINFO = "/proc/self/mountinfo"
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message)


def _why(loc: StoreLocation) -> str:
    fs = loc.filesystem.fstype if loc.filesystem else "unknown"
    if loc.volatile:
        return f"on {fs}, a RAM disk: everything in it is lost at reboot"
    return "under a temp folder that the OS may wipe at reboot or age out (systemd-tmpfiles)"


def persistent_home(history_db_path: str) -> str:
    """Where a moved vector store goes: beside history.db, or in mem0's own folder when that is at risk too."""
    folder = os.path.dirname(os.path.abspath(history_db_path)) if history_db_path != ":memory:" else ""
    if folder and not folder.startswith(("/tmp", "/var/tmp", "/dev/shm", "/run")):
        return os.path.join(folder, "qdrant")
    return os.path.join(current_mem0_dir(), "qdrant")


def guard_stores(
    config: MemoryConfig,
    settings: HygieneSettings,
    facts: ConfigFacts | None,
    ledger_path: str,
) -> list[str]:
    """Check every local store of ``config``; relocate, warn or refuse per the rules above.

    May change ``config.vector_store.config.path`` (a relocated default). Returns the messages it logged.
    """
    view: Any = SimpleNamespace(config=config, hygiene_settings=settings, config_facts=facts, ledger_path=ledger_path)
    messages: list[str] = []
    # Start-up only needs each filesystem's type: read /proc/self/mountinfo (0.1 ms) rather than spawning
    # findmnt per store (about 4 ms each); where there is no mountinfo, findmnt answers as usual.
    findmnt = None if os.path.exists(MOUNTINFO) else "findmnt"
    for loc in resolve_locations(view, findmnt=findmnt, mountinfo=MOUNTINFO):
        if loc.role == "mem0_dir" or not loc.is_local or loc.path is None:
            continue
        if not (loc.volatile or (loc.under_tmp and loc.defaulted and loc.role == "vector_store")):
            continue  # an explicit path under /tmp on a real disk: the audit reports it, no start-up noise
        policy = settings.on_volatile or ("relocate" if loc.defaulted and loc.role == "vector_store" else "warn")
        label = {"vector_store": "vector store", "history_db": "mem0's history.db", "ledger": "the ledger"}[loc.role]
        if policy == "error":
            raise VolatileStoreError(
                f"{label} at {loc.path} is {_why(loc)}; hygiene.on_volatile is 'error', so mem0-hygiene refuses "
                f"to start. Point it at a persistent folder, or run `mem0-hygiene relocate --to DIR`"
            )
        if policy == "relocate" and loc.role == "vector_store" and config.vector_store.provider == "qdrant":
            target = persistent_home(config.history_db_path)
            if loc.exists and os.listdir(loc.path):
                if os.path.exists(target) and os.listdir(target):
                    msg = (f"vector store {loc.path} is {_why(loc)}; {target} already holds a store, so it was "
                           f"used instead and {loc.path} left as it is (compare them with `mem0-hygiene audit`)")
                else:
                    counts = relocate_qdrant_folder(loc.path, target)
                    msg = (f"moved the vector store from {loc.path} ({_why(loc)}) to {target}, verified "
                           f"{sum(counts.values())} points; the old copy is still there. Pin the path in your config: "
                           f"'vector_store': {{'provider': 'qdrant', 'config': {{'path': '{target}'}}}}")
            else:
                msg = (f"vector store path {loc.path} is {_why(loc)}; using {target} instead. Pin it in your "
                       f"config: 'vector_store': {{'provider': 'qdrant', 'config': {{'path': '{target}'}}}}")
            config.vector_store.config.path = target
            _warn_once(f"{loc.path}->{target}", msg)
            messages.append(msg)
            continue
        msg = (f"{label} at {loc.path} is {_why(loc)}. Move it to a persistent folder "
               f"(`mem0-hygiene relocate --to DIR{' --with-sqlite' if loc.role != 'vector_store' else ''}`) "
               f"or set hygiene.on_volatile='relocate' or 'error'")
        _warn_once(f"warn:{loc.path}", msg)
        messages.append(msg)
    return messages
