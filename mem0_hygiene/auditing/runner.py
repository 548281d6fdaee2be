"""``audit()``: diagnose a mem0 deployment from its config (or a live Memory) and return a Report.

It only reads. SQLite files are attached read-only to a scratch database; the vector store is scrolled
in pages. A check whose source cannot be read (a local Qdrant folder locked by the running app, a
missing ledger) is reported as skipped with the reason, never as clean.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..config import HygieneSettings, default_ledger_path, split_config
from ..errors import HygieneError
from ..report import AREAS, Finding, Report, Skipped
from ..stores.locations import StoreLocation, default_history_db_path, resolve_locations
from ..stores.qdrant import is_locked, locked_message
from ..stores.vectors import PAGE_SIZE, qdrant_pages
from ..timeutil import as_utc, system_clock, to_iso
from .checks import backups, content, history, ledger, storage  # noqa: F401  (registers the checks)
from .checks.base import REGISTRY, Context, skipped
from .scratch import ScratchDB

DEFAULT_COLLECTION = "mem0"
DEFAULT_QDRANT_PATH = "/tmp/qdrant"


class AuditError(HygieneError):
    """The audit could not run at all (nothing readable at the configured locations)."""


@dataclass
class _Target:
    """What to read, resolved from a config dict or a live Memory."""

    description: str
    locations: list[StoreLocation]
    settings: HygieneSettings
    history_path: str
    ledger_path: str
    provider: str
    vector_conf: dict[str, Any]
    client: Any = None  # an open Qdrant client (in-process audit of a live Memory)
    collection: str = DEFAULT_COLLECTION


def _from_memory(memory: Any) -> _Target:
    flush = getattr(memory, "flush", None)
    if callable(flush):
        flush()  # the drop-in buffers ledger writes: what the app already did must be on disk to be read
    config = memory.config
    settings = getattr(memory, "hygiene_settings", None) or HygieneSettings()
    history_path = config.history_db_path
    vs = memory.vector_store
    return _Target(
        description="in-process Memory",
        locations=resolve_locations(memory),
        settings=settings,
        history_path=history_path,
        ledger_path=getattr(memory, "ledger_path", None) or settings.ledger_path or default_ledger_path(history_path),
        provider=config.vector_store.provider,
        vector_conf={},
        client=getattr(vs, "client", None),
        collection=getattr(vs, "collection_name", DEFAULT_COLLECTION),
    )


def _from_dict(config: dict[str, Any] | None, description: str) -> _Target:
    mem0_part, settings, _ = split_config(config or {})
    vs = mem0_part.get("vector_store") or {}
    conf = dict(vs.get("config") or {})
    history_path = mem0_part.get("history_db_path") or default_history_db_path()
    return _Target(
        description=description or ("mem0 defaults" if not config else "config"),
        locations=resolve_locations(config or {}),
        settings=settings,
        history_path=history_path,
        ledger_path=settings.ledger_path or default_ledger_path(history_path),
        provider=vs.get("provider", "qdrant"),
        vector_conf=conf,
        collection=conf.get("collection_name", DEFAULT_COLLECTION),
    )


def _load_vector_points(db: ScratchDB, target: _Target, extra: dict[str, Any], page_size: int) -> None:
    if target.client is not None:
        _scroll_into(db, target.client, target.collection, page_size)
        return
    if target.provider != "qdrant":
        db.sources.missing["points"] = (
            f"vector-store checks read Qdrant (local folder or server); provider {target.provider!r} is not "
            f"supported yet, so checks that compare the store with history.db and the ledger did not run"
        )
        return
    conf = target.vector_conf
    if conf.get("client") is not None:
        _scroll_into(db, conf["client"], target.collection, page_size)
        return
    from qdrant_client import QdrantClient

    if conf.get("url") or (conf.get("host") and conf.get("port")):
        try:
            client = QdrantClient(url=conf.get("url"), host=conf.get("host"), port=conf.get("port"),
                                  api_key=conf.get("api_key"), https=conf.get("https"))
            _scroll_into(db, client, target.collection, page_size)
            client.close()
        except Exception as exc:  # a server that is down or refuses us: the other checks still run
            db.sources.missing["points"] = f"the Qdrant server could not be read ({type(exc).__name__}: {exc})"
        return
    path = os.path.expanduser(conf.get("path") or DEFAULT_QDRANT_PATH)
    if not os.path.isfile(os.path.join(path, "meta.json")):
        db.sources.missing["points"] = f"no local Qdrant store at {path}"
        return
    if is_locked(path):
        extra["locked_path"] = path
        db.sources.missing["points"] = (locked_message(path, "audit")
                                        + " For the audit: `from mem0_hygiene import audit; audit(m)` in the app.")
        return
    client = _open_local(path)
    try:
        _scroll_into(db, client, target.collection, page_size)
    finally:
        client.close()


def _open_local(path: str) -> Any:
    """Open a local Qdrant folder. It loads every point into memory at once; Python's cyclic garbage
    collector would scan that growing heap again and again (about 2 s at 100k points), so it is paused
    for the load only: the objects loaded are long-lived anyway."""
    from qdrant_client import QdrantClient

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return QdrantClient(path=path)
    finally:
        if was_enabled:
            gc.enable()


def _scroll_into(db: ScratchDB, client: Any, collection: str, page_size: int) -> None:
    names = {c.name for c in client.get_collections().collections}
    db.load_points(qdrant_pages(client, collection, page_size) if collection in names else iter(()))


def _order(f: Finding) -> tuple[int, int, str]:
    area = AREAS.index(f.area) if f.area in AREAS else len(AREAS)
    return (-int(f.severity), area, f.code)


def audit(
    target: Any = None,
    *,
    now: datetime | None = None,
    examples: int = 5,
    description: str = "",
    config_hint: str = "",
    page_size: int = PAGE_SIZE,
) -> Report:
    """Audit a mem0 deployment and return a :class:`~mem0_hygiene.report.Report`.

    ``target`` is a mem0 config dict (as passed to ``Memory.from_config``; a ``"hygiene"`` section is
    honoured), None for mem0's defaults, or a live ``Memory`` (mem0's or the drop-in) whose open vector
    store is read in-process: the route for a local Qdrant folder that the running app holds locked.
    ``now`` defaults to the config's ``hygiene.clock``. Raises :class:`AuditError` when no store at all
    can be read.
    """
    started = time.perf_counter()
    is_memory = hasattr(target, "vector_store") and hasattr(target, "config")
    tgt = _from_memory(target) if is_memory else _from_dict(target, description)
    moment = as_utc(now or tgt.settings.clock())
    extra: dict[str, Any] = {"stats": {}}
    with ScratchDB() as db:
        db.attach_history(tgt.history_path)
        db.attach_ledger(tgt.ledger_path)
        _load_vector_points(db, tgt, extra, page_size)
        try:  # the backup record beside the ledger (see mem0_hygiene.stores.backup_record); absent = no backup yet
            from ..stores.backup_record import backup_status_for_paths

            db.sources.backup_status = backup_status_for_paths(tgt.ledger_path, tgt.history_path)
            db.sources.backups = True
        except HygieneError as exc:
            db.sources.missing["backups"] = str(exc)
        if not (db.sources.points or db.sources.history or db.sources.ledger):
            raise AuditError(
                "found no mem0 store to audit: "
                + "; ".join(db.sources.missing[k] for k in ("points", "history", "ledger") if k in db.sources.missing)
                + ". Pass the app's config with --config FILE (or --qdrant-path/--history-db)"
            )
        ctx = Context(db=db, now=moment, locations=tgt.locations, examples=examples,
                      review_older_than=tgt.settings.review_older_than,
                      retain_superseded=tgt.settings.retain_superseded,
                      target=tgt.description, config_hint=config_hint, extra=extra)
        findings: list[Finding] = []
        skips: list[Skipped] = []
        for chk in REGISTRY:
            unavailable = [n for n in chk.needs if not getattr(db.sources, n, False)]
            if unavailable:
                skips.append(skipped(chk, db.sources.missing.get(unavailable[0], f"{unavailable[0]} unavailable")))
                continue
            try:
                findings.extend(chk.func(ctx))
            except Exception as exc:  # one broken check must not hide the others' results
                skips.append(skipped(chk, f"the check failed: {type(exc).__name__}: {exc}"))
        stats = {**extra["stats"], "memories_in_vector_store": db.sources.point_count if db.sources.points else None,
                 "seconds": round(time.perf_counter() - started, 3)}
    return Report(
        findings=tuple(sorted(findings, key=_order)),
        skipped=tuple(skips),
        locations=tuple(loc.to_dict() for loc in tgt.locations),
        stats=stats,
        started_at=to_iso(moment),
        finished_at=to_iso(as_utc(system_clock())) if now is None and tgt.settings.clock is system_clock
        else to_iso(moment),
        target=tgt.description,
    )
