"""Store safety when the drop-in starts: no memories on a RAM disk by accident, and never two live copies.

A vector-store path that mem0 defaulted (``/tmp/qdrant``) and that sits on tmpfs/ramfs or under a temp
folder is replaced by a persistent folder beside history.db (:func:`persistent_home`; mem0's folder when
history.db's is at risk too, and when both are, nothing moves and a warning says so), its data moved there
first: copied, verified by point counts and a payload sample, and then the old path becomes a link to the
new folder (:mod:`mem0_hygiene.stores.moves`), so a plain mem0 app (or any reader) still opening
``/tmp/qdrant`` sees the very same store. When the OS cleaned /tmp and took the link with it, the next start
re-creates the link; when both paths hold real, different stores, the start is refused
(:class:`~mem0_hygiene.errors.VolatileStoreError`) rather than one picked silently. A path the user set
explicitly gets one loud warning, or per ``hygiene.on_volatile`` is relocated the same way or refused.
Before a relocation changes anything on disk, ``before_change`` runs (the drop-in builds mem0's embedder and LLM
there), so a start that is going to fail anyway (no API key) fails first and leaves ``/tmp/qdrant`` as it was.
history.db and the ledger get the same check (warn or refuse: SQLite files are moved with
``mem0-hygiene relocate --with-sqlite``).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from mem0.configs.base import MemoryConfig

from ..config import ConfigFacts, HygieneSettings
from ..errors import RelocateError, StoreLocked, VolatileStoreError
from .locations import StoreLocation, current_mem0_dir, is_under_tmp, resolve_locations
from .mounts import filesystem_of
from .moves import compare_stores, finish_swap, links_to, swap_folder_for_link
from .qdrant import check_not_nested, copy_store_verified, is_qdrant_folder

logger = logging.getLogger("mem0_hygiene")
MOUNTINFO = "/proc/self/mountinfo"
_warned: set[str] = set()


def _warn_once(key: str, message: str, level: int = logging.WARNING) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.log(level, message)


def _why(loc: StoreLocation) -> str:
    fs = loc.filesystem.fstype if loc.filesystem else "unknown"
    if loc.volatile:
        return f"on {fs}, a RAM disk: everything in it is lost at reboot"
    return "under a temp folder that the OS may wipe at reboot or age out (systemd-tmpfiles)"


def _at_risk(folder: str) -> bool:
    if is_under_tmp(folder) or folder.startswith(("/dev/shm", "/run")):
        return True
    findmnt = None if os.path.exists(MOUNTINFO) else "findmnt"
    return filesystem_of(folder, findmnt=findmnt, mountinfo=MOUNTINFO).volatile


def persistent_home(history_db_path: str) -> str | None:
    """Where a moved vector store goes: beside history.db, or in mem0's own folder when history.db's is at risk
    too; None when both are (HOME under /tmp, say): moving it there would gain nothing."""
    folder = os.path.dirname(os.path.abspath(history_db_path)) if history_db_path != ":memory:" else ""
    for candidate in (folder, current_mem0_dir()):
        if candidate and not _at_risk(candidate):
            return os.path.join(candidate, "qdrant")
    return None


def guard_stores(
    config: MemoryConfig,
    settings: HygieneSettings,
    facts: ConfigFacts | None,
    ledger_path: str,
    *,
    before_change: Callable[[], object] | None = None,
) -> list[str]:
    """Check every local store of ``config``; relocate, warn or refuse per the rules above.

    May change ``config.vector_store.config.path`` (a relocated default). Returns the messages it logged.
    ``before_change`` is called once before a relocation would change anything on disk; what it raises
    propagates, with nothing moved.
    """
    view: Any = SimpleNamespace(config=config, hygiene_settings=settings, config_facts=facts, ledger_path=ledger_path)
    messages: list[str] = []
    # Start-up only needs each filesystem's type: read /proc/self/mountinfo (0.1 ms) rather than spawning
    # findmnt per store (about 4 ms each); where there is no mountinfo, findmnt answers as usual.
    findmnt = None if os.path.exists(MOUNTINFO) else "findmnt"
    for loc in resolve_locations(view, findmnt=findmnt, mountinfo=MOUNTINFO):
        if loc.role == "mem0_dir" or not loc.is_local or loc.path is None:
            continue
        policy = settings.on_volatile or ("relocate" if loc.defaulted and loc.role == "vector_store" else "warn")
        if (
            policy == "relocate"
            and loc.role == "vector_store"
            and loc.provider == "qdrant"
            and os.path.islink(loc.path)
        ):
            # moved before (the path links to the store): finish what a crash may have left of that move
            done = finish_swap(loc.path, os.path.realpath(loc.path), folder=True)
            if done:
                _warn_once(f"finish:{loc.path}", f"vector store {loc.path}: {done}")
                messages.append(f"vector store {loc.path}: {done}")
        if not (loc.volatile or (loc.under_tmp and loc.defaulted and loc.role == "vector_store")):
            continue  # an explicit path under /tmp on a real disk: the audit reports it, no start-up noise
        label = {"vector_store": "vector store", "history_db": "mem0's history.db", "ledger": "the ledger"}[loc.role]
        if policy == "error":
            raise VolatileStoreError(
                f"{label} at {loc.path} is {_why(loc)}; hygiene.on_volatile is 'error', so mem0-hygiene refuses "
                f"to start. Point it at a persistent folder, or run `mem0-hygiene relocate --to DIR`"
            )
        if policy == "relocate" and loc.role == "vector_store" and config.vector_store.provider == "qdrant":
            target = persistent_home(config.history_db_path)
            if target is None:
                msg = (
                    f"vector store at {loc.path} is {_why(loc)}, and there is no persistent folder to move it to: "
                    f"the folders of history.db and of mem0 ({current_mem0_dir()}) are at risk too. Point "
                    f"vector_store.config.path at a persistent folder, or run `mem0-hygiene relocate --to DIR`"
                )
                _warn_once(f"nowhere:{loc.path}", msg)
                messages.append(msg)
                continue
            if before_change is not None and not settled(loc.path, target):
                before_change()
            msg, path, level = settle_vector_store(loc.path, target, _why(loc))
            config.vector_store.config.path = path
            if msg:
                _warn_once(f"{loc.path}->{path}:{msg[:40]}", msg, level)
                messages.append(msg)
            continue
        msg = (
            f"{label} at {loc.path} is {_why(loc)}. Move it to a persistent folder "
            f"(`mem0-hygiene relocate --to DIR{' --with-sqlite' if loc.role != 'vector_store' else ''}`) "
            f"or set hygiene.on_volatile='relocate' or 'error'"
        )
        _warn_once(f"warn:{loc.path}", msg)
        messages.append(msg)
    return messages


def _pin(path: str) -> str:
    return (
        f"Pin the path in your config: 'vector_store': {{'provider': 'qdrant', 'config': {{'path': '{path}'}}}} "
        "(or run `mem0-hygiene relocate --to DIR --update-config FILE` to move it elsewhere)"
    )


def _points(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} points in {name!r}" for name, n in counts.items()) or "no collections"


def settled(old: str, target: str) -> bool:
    """Whether :func:`settle_vector_store` has nothing to move at ``old``: it already links to ``target``
    (a folder), or it is the user's own link to a store elsewhere."""
    if os.path.islink(old) and not links_to(old, target):
        return True
    return links_to(old, target) and os.path.isdir(target)


def settle_vector_store(old: str, target: str, why: str) -> tuple[str, str, int]:
    """Move the local Qdrant store at ``old`` (at risk: ``why``) to ``target`` and leave a link at ``old``.

    Returns (the message to log, the path to open, its log level). In order: an interrupted switch is
    finished first; ``old`` already a link to ``target``: nothing to do; ``old`` missing (the OS cleaned it) or
    empty: ``target`` is used and ``old`` links to it again; ``old`` a store and ``target`` free: verified
    copy, then the switch; both stores: the same points -> the switch, different ->
    :class:`~mem0_hygiene.errors.VolatileStoreError` naming both. A link at ``old`` that leads elsewhere is
    the user's own and is left alone.
    """
    done = finish_swap(old, target, folder=True)
    done = f" ({done})" if done else ""
    if os.path.islink(old) and not links_to(old, target):
        return "", old, logging.INFO  # the user's own link to a store elsewhere
    if links_to(old, target) and os.path.isdir(target):
        return (
            f"the vector store lives at {target}; {old} ({why}) links to it{done}. {_pin(target)}",
            target,
            logging.WARNING if done else logging.INFO,
        )
    if not os.path.lexists(old) or os.path.islink(old) or (os.path.isdir(old) and not os.listdir(old)):
        had_store = is_qdrant_folder(target)
        os.makedirs(target, exist_ok=True)
        try:
            if os.path.islink(old):
                os.unlink(old)  # a link whose folder is gone
            elif os.path.isdir(old):
                os.rmdir(old)
            os.makedirs(os.path.dirname(old), exist_ok=True)
            os.symlink(target, old, target_is_directory=True)
            linked = f"{old} links to it"
        except OSError as exc:
            linked = f"{old} could not be made a link to it ({exc}), so a plain mem0 app on {old} would not see it"
        if had_store:
            return (
                f"vector store path {old} is {why} and its link was gone (the OS cleaned it); the store is at "
                f"{target}, and {linked}{done}. {_pin(target)}",
                target,
                logging.WARNING,
            )
        return (
            f"vector store path {old} is {why}; using {target} instead, and {linked}. {_pin(target)}",
            target,
            logging.WARNING,
        )
    check_not_nested(old, target)
    if not os.path.lexists(target) or (os.path.isdir(target) and not os.listdir(target)):
        copy = copy_store_verified(old, target)
        try:
            swap_folder_for_link(old, target, copy.signature)
        except (StoreLocked, RelocateError):
            shutil.rmtree(target, ignore_errors=True)  # our fresh copy: the store stays where it is
            raise
        except OSError as exc:
            shutil.rmtree(target, ignore_errors=True)
            return (
                f"vector store {old} is {why}, but it could not be replaced by a link ({exc}), so it was not "
                f"moved and stays at {old}. Move it yourself with `mem0-hygiene relocate --to DIR`, or "
                "point vector_store.config.path at a persistent folder",
                old,
                logging.WARNING,
            )
        total = sum(copy.counts_after.values())
        return (
            f"moved the vector store from {old} ({why}) to {target}, verified {total} points; {old} is now a "
            f"link to {target}, so every reader of the old path (a plain mem0 app too) sees this same store"
            f"{done}. {_pin(target)}",
            target,
            logging.WARNING,
        )
    compared = compare_stores(old, target)
    if not compared.same:
        raise VolatileStoreError(
            f"two different vector stores: {old} ({why}; {_points(compared.counts_a)}) and {target}, the "
            f"persistent folder the drop-in moves it to ({_points(compared.counts_b)}). mem0-hygiene will not "
            f"pick one silently. Keep the current one and move the other away, then start again: "
            f"`mv {old} {old}.old` keeps {target} ({old} then becomes a link to it); `mv {target} {target}.old` "
            f"moves {old} to {target}. Or set vector_store.config.path to the one you want"
        )
    swap_folder_for_link(old, target, compared.signature_a)
    return (
        f"{old} ({why}) held the same {sum(compared.counts_a.values())} points as {target}, where the store "
        f"was moved before; {old} is now a link to {target}{done}. {_pin(target)}",
        target,
        logging.WARNING,
    )
