"""The embedder check: the store's vectors were made by the embedder the config names.

``import`` and ``migrate`` record in the ledger which embedder made the vectors they wrote, and the drop-in which one
makes them when it opens a store empty (:mod:`mem0_hygiene.stores.embedder_record`). When the config names another one
(provider, model or vector length), every search compares a query embedded one way with memories embedded another: mem0
answers, wrongly or with an error from the store. ``EMBEDDER_MISMATCH`` reports it. A ledger with nothing recorded says
nothing."""

from __future__ import annotations

from ...report import Severity
from ...stores.embedder_record import TABLE, differences
from .base import CheckResult, Context, check, finding


@check(
    "EMBEDDER_MISMATCH",
    "storage",
    needs=("ledger",),
    severity="warning",
    means=(
        "the embedder recorded as having made the store's vectors (by import, migrate or the drop-in on an empty "
        "store) is not the one the "
        "config names: searches compare vectors of two models"
    ),
    fix="`mem0-hygiene migrate --to NEW_CONFIG --reembed` embeds every text with the configured embedder",
)
def embedder(ctx: Context) -> CheckResult:
    configured = ctx.extra.get("embedder")
    led = ctx.db.ledger
    if not configured or led is None:
        return
    if led.dialect == "sqlite":
        table, there = f"l.{TABLE}", f"SELECT COUNT(*) FROM l.sqlite_master WHERE type = 'table' AND name = '{TABLE}'"
    else:  # asked without failing: a failed query would end the audit's one read-only snapshot
        table, there = TABLE, f"SELECT COUNT(*) FROM (SELECT to_regclass('{TABLE}') AS t) x WHERE t IS NOT NULL"
    if not led.one(there):
        return  # nothing recorded
    recorded = {str(k): str(v) for k, v in led.rows(f"SELECT key, value FROM {table}")}
    changed = differences(recorded, configured)
    if changed:
        yield finding(
            "EMBEDDER_MISMATCH",
            Severity.WARNING,
            "storage",
            f"the store's vectors were made by another embedder than the config names ({'; '.join(changed)})",
            count=1,
            examples=[
                f"recorded {recorded.get('recorded_at', '?')}: " + ", ".join(f"{k}={v}" for k, v in recorded.items())
            ],
            why=(
                "A query embedded by one model is compared with memories embedded by another: search returns "
                "the wrong memories, or the store refuses vectors of another length."
            ),
            fix=ctx.cmd("migrate --to NEW_CONFIG --reembed") + "  # NEW_CONFIG: a new collection with this embedder",
        )
