"""``audit()``: diagnose a mem0 deployment from its config (or a live Memory) and return a Report.

It only reads. SQLite files are attached read-only to a scratch database; the vector store is scrolled
in pages. A check whose source cannot be read (a local Qdrant folder locked by the running app, a
missing ledger) is reported as skipped with the reason, never as clean.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from ..errors import AuditError, HygieneError
from ..memory.embedder_check import embedder_of
from ..progress import counted, report
from ..report import AREAS, Finding, Report, Skipped
from ..stores.embedder_record import configured_embedder
from ..stores.vectors import PAGE_SIZE
from ..target import resolve
from ..timeutil import as_utc, system_clock, to_iso
from .checks import REGISTRY, Context, skipped
from .reading import load_vector_points
from .scratch import NO_LEDGER, ScratchDB
from .served import with_served


def configured_embedder_of(target: Any) -> dict[str, Any]:
    """The embedder the audited deployment's config names: its config's, or for a live Memory (which the target
    holds without a config dict) the one its own config names. Read from the empty dict such a target carries,
    it would be mem0's default (openai) and every store the drop-in recorded would be reported a mismatch."""
    if target.memory is not None and not target.mem0_config:
        return embedder_of(getattr(target.memory, "config", None))
    return configured_embedder(target.mem0_config)


def _order(f: Finding) -> tuple[int, int, str]:
    area = AREAS.index(f.area) if f.area in AREAS else len(AREAS)
    return (-int(f.severity), area, f.code)


def _noted(location: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The vector store's location with how it was read when that was read-only, without its lock (see
    :func:`~mem0_hygiene.auditing.reading.load_vector_points`)."""
    how = extra.get("read_only")
    if location.get("role") != "vector_store" or not how:
        return location
    return {**location, "note": f"{location['note']}; {how}" if location.get("note") else how}


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
    tgt = resolve(target, description=description)
    moment = as_utc(now) if now is not None else tgt.now()
    extra: dict[str, Any] = {"stats": {}, "embedder": configured_embedder_of(tgt)}
    with ScratchDB() as db:
        db.attach_histories(tgt.history_files)
        db.open_ledger(tgt.ledger_path, to_iso(moment))
        report("reading the vector store")
        load_vector_points(db, tgt, extra, page_size)
        try:  # the backup record beside the ledger (see mem0_hygiene.actions.backup); absent = no backup yet
            from ..actions.backup import backup_status_for_paths

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
        ctx = Context(
            db=db,
            now=moment,
            locations=list(tgt.every_location),
            examples=examples,
            review_older_than=tgt.settings.review_older_than,
            retain_superseded=tgt.settings.retain_superseded,
            target=tgt.description,
            config_hint=config_hint,
            extra=extra,
        )
        findings: list[Finding] = []
        skips: list[Skipped] = []
        for chk in counted("running the checks", REGISTRY):
            # a need "a|b" is met by either source
            unavailable = [n for n in chk.needs if not any(getattr(db.sources, a, False) for a in n.split("|"))]
            if unavailable:
                first = unavailable[0].split("|")[0]
                reason = db.sources.missing.get(first, f"{first} unavailable")
                if first == "ledger" and reason.startswith(NO_LEDGER):
                    reason += f"; {ctx.cmd('adopt')} gives its memories ledger rows, then this check runs"
                skips.append(skipped(chk, reason))
                continue
            try:
                findings.extend(chk.func(ctx))
            except Exception as exc:  # one broken check must not hide the others' results
                skips.append(skipped(chk, f"the check failed: {type(exc).__name__}: {exc}"))
        if tgt.settings.read_log and db.sources.ledger:  # how often each memory a finding names was served
            findings = with_served(findings, tgt.ledger_path)
        stats = {
            **extra["stats"],
            "memories_in_vector_store": db.sources.point_count if db.sources.points else None,
            "seconds": round(time.perf_counter() - started, 3),
        }
        if extra.get("unsupported"):  # the vector store was not read at all: the verdict is incomplete
            stats["vector_store_unsupported"] = extra["unsupported"]
    return Report(
        findings=tuple(sorted(findings, key=_order)),
        skipped=tuple(skips),
        locations=tuple(_noted(loc.to_dict(), extra) for loc in tgt.every_location),
        stats=stats,
        started_at=to_iso(moment),
        finished_at=to_iso(as_utc(system_clock()))
        if now is None and tgt.settings.clock is system_clock
        else to_iso(moment),
        target=tgt.description,
    )
