"""The drop-in's metrics through OpenTelemetry's API (``pip install 'mem0-hygiene[metrics]'``: ``opentelemetry-api``).

The app chooses where they go by setting a meter provider (OpenTelemetry's SDK and an exporter: OTLP to a
collector, Prometheus, ...); without ``opentelemetry-api`` every call here is a no-op, and with the API but no
provider set, OpenTelemetry's own no-op meter takes them. Instruments (meter ``mem0_hygiene``):

- ``mem0_hygiene.adds`` (counter, attribute ``decision``): memories written by ``add``, by the write decision
  (``ADD``, or the decision's label: duplicate, update, contradiction ...).
- ``mem0_hygiene.redactions`` (counter, ``kind``): credentials redacted out of a text before mem0 saw it.
- ``mem0_hygiene.flagged_orders`` (counter, ``kind``): texts stored flagged as a standing order to the agent.
- ``mem0_hygiene.hidden_at_read`` (counter, ``reason``: the ledger state): items a read fetched and did not serve
  (a search over local Qdrant leaves stale points out inside the vector query: those are never fetched).
- ``mem0_hygiene.prune_deletions`` (counter, ``reason``): memories prune deleted through mem0.
- ``mem0_hygiene.ledger_flush_seconds`` (histogram): how long each write of the buffered ledger rows took.
- ``mem0_hygiene.memory_share`` (gauge, ``collection``, ``state``: live or stale): the share of each open drop-in's
  stored memories (ledger rows not deleted) that reads serve, and the rest; asked of the ledger only when the
  app's reader collects (:func:`watch` registers a drop-in; it is forgotten when the drop-in goes away).

Nothing here reads a store or blocks: each function adds to an instrument and returns.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from ..stores.states import live_sql
from ..timeutil import to_iso

METER_NAME = "mem0_hygiene"


class _Nothing:
    """Stands for every instrument when ``opentelemetry-api`` is not installed."""

    def add(self, amount: float, attributes: Mapping[str, str] | None = None) -> None:
        return None

    def record(self, amount: float, attributes: Mapping[str, str] | None = None) -> None:
        return None


@lru_cache(maxsize=1)
def _instruments() -> dict[str, Any]:
    try:
        from opentelemetry import metrics
    except ImportError:
        nothing = _Nothing()
        return dict.fromkeys(("adds", "redactions", "flags", "hidden", "pruned", "flush", "shares"), nothing)
    meter = metrics.get_meter(METER_NAME)
    return {
        "adds": meter.create_counter("mem0_hygiene.adds", unit="{memory}", description="Memories added, by decision"),
        "redactions": meter.create_counter(
            "mem0_hygiene.redactions", unit="{credential}", description="Credentials redacted before mem0, by kind"
        ),
        "flags": meter.create_counter(
            "mem0_hygiene.flagged_orders", unit="{memory}", description="Standing orders stored flagged, by kind"
        ),
        "hidden": meter.create_counter(
            "mem0_hygiene.hidden_at_read", unit="{memory}", description="Items a read did not serve, by reason"
        ),
        "pruned": meter.create_counter(
            "mem0_hygiene.prune_deletions", unit="{memory}", description="Memories prune deleted, by reason"
        ),
        "flush": meter.create_histogram(
            "mem0_hygiene.ledger_flush_seconds", unit="s", description="Time to write the buffered ledger rows"
        ),
        "shares": meter.create_observable_gauge(
            "mem0_hygiene.memory_share",
            callbacks=[_observe_shares],
            unit="1",
            description="Share of the stored memories reads serve (live) and the rest (stale), per collection",
        ),
    }


_watched: weakref.WeakSet[Any] = weakref.WeakSet()


def watch(memory: Any) -> None:
    """Report this drop-in's live/stale shares in ``mem0_hygiene.memory_share`` while it exists."""
    _watched.add(memory)
    _instruments()


def _observe_shares(options: Any = None) -> Iterator[Any]:
    from opentelemetry.metrics import Observation

    for memory in list(_watched):
        try:
            now = to_iso(memory.now())
            total, live = memory.ledger.query(
                f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {live_sql()} THEN 1 ELSE 0 END), 0) FROM memories "
                "WHERE deleted_at IS NULL",
                [now],
            )[0]
        except Exception:  # noqa: BLE001 - a closed or unreachable ledger: nothing to report this time
            continue
        if not total:
            continue
        collection = str(getattr(memory, "collection_name", "") or "")
        share = float(live) / float(total)
        yield Observation(share, {"collection": collection, "state": "live"})
        yield Observation(1.0 - share, {"collection": collection, "state": "stale"})


def record_adds(results: Iterable[dict[str, Any]], rows: Iterable[Any]) -> None:
    """An add's result items (by their write decision) and its new ledger rows (their redactions and flags)."""
    inst = _instruments()
    for item in results:
        decision = ((item.get("hygiene") or {}).get("decision") or {}).get("label") or item.get("event") or "ADD"
        inst["adds"].add(1, {"decision": str(decision)})
    for row in rows:
        for kind in filter(None, (getattr(row, "redacted", None) or "").split(",")):
            inst["redactions"].add(1, {"kind": kind})
        if getattr(row, "flag", None):
            inst["flags"].add(1, {"kind": str(row.flag)})


def record_hidden(by_reason: Mapping[str, int]) -> None:
    """Items a read left out, by the reason (their state: superseded, expired, deleted, ...)."""
    counter = _instruments()["hidden"]
    for reason, n in by_reason.items():
        if n:
            counter.add(n, {"reason": reason})


def record_pruned(reasons: Iterable[str]) -> None:
    """One deletion by prune per reason given."""
    counter = _instruments()["pruned"]
    for reason in reasons:
        counter.add(1, {"reason": reason})


def record_flush(seconds: float) -> None:
    """How long one write of the buffered ledger rows took."""
    _instruments()["flush"].record(seconds)


__all__ = ["METER_NAME", "record_adds", "record_flush", "record_hidden", "record_pruned", "watch"]
