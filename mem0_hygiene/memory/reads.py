"""Reads of the drop-in ``Memory`` that hide what is no longer true: the ``"hygiene"`` facts each result
item carries, the filter by ledger state (or time window), and the paging that keeps ``top_k=k``
returning min(k, live matches).

The ledger is the authority: a read over-fetches a little from mem0, drops stale rows by their ledger
state, and re-queries wider when a page came up short. (A payload filter inside the query was measured
slower on local Qdrant, which evaluates filters in Python point by point.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..stores.ledger import LedgerRow
from ..timeutil import age_days, parse_time
from .ranking import rank as rank_items
from .timetravel import TimeWindow

if TYPE_CHECKING:
    from ..config import RankSettings
    from ..stores.ledger import Ledger


class LiveReadsMixin:
    """Mixin: filtering and paging of mem0's ``search``/``get_all`` results by ledger state.

    Expects from the class it is mixed into: ``ledger``, and the buffer's ``row_for``, ``note_uses``
    and ``last_uses`` (:class:`~mem0_hygiene.memory.buffer.LedgerBufferMixin`).
    """

    ledger: Ledger

    if TYPE_CHECKING:
        def row_for(self, item: dict[str, Any], rows: dict[str, LedgerRow]) -> LedgerRow: ...
        def note_uses(self, items: Iterable[dict[str, Any]], now: datetime) -> None: ...
        def last_uses(self) -> dict[str, datetime]: ...

    @staticmethod
    def hygiene_facts(row: LedgerRow, now: datetime, now_iso: str | None = None) -> dict[str, Any]:
        """The ``"hygiene"`` dict a result item carries (``now_iso``: ``to_iso(now)`` when the caller has it)."""
        confirmed = row.confirmed_at or row.created_at
        if confirmed == now_iso:
            age: float | None = 0.0  # just written or confirmed: no need to parse the time back
        else:
            age = age_days(parse_time(confirmed), now) if confirmed else None
        return {
            "state": row.state(now),
            "source": row.source,
            "source_kind": row.source_kind,
            "created_at": row.created_at,
            "confirmed_at": row.confirmed_at,
            "expires_at": row.expires_at,
            "age_days": age,
            "superseded_by": row.superseded_by,
            "invalid_reason": row.invalid_reason,
            "topic_key": row.topic_key,
        }

    def paged_read(self, run: Callable[[int], dict[str, Any]], top_k: int, now: datetime, include_stale: bool,
                   show_expired: bool, window: TimeWindow | None = None,
                   rank: RankSettings | None = None) -> dict[str, Any]:
        """Call ``run(fetch)`` (a mem0 read asking for ``fetch`` items, expired ones included) until the
        kept items fill ``top_k`` or mem0 has no more; then rank them (``rank``) and count the uses
        (not for a question about the past, ``window.as_of``)."""
        fetch = top_k if include_stale and window is None else top_k + top_k // 2 + 4  # room for a few stale rows
        seen: dict[str, LedgerRow] | None = {} if rank is not None else None
        while True:
            res = run(fetch)
            raw = res.get("results", [])
            kept = self._keep(raw, now, include_stale, show_expired, window, seen)
            if len(kept) >= top_k or len(raw) < fetch or top_k == 0:
                break
            fetch = fetch * 2 + (top_k - len(kept))
        res["results"] = kept[:top_k]
        if rank is not None and seen is not None:
            at = parse_time(window.as_of) if window is not None and window.as_of else now
            res["results"] = rank_items(res["results"], seen, at, rank, self.last_uses())
        if window is None or window.as_of is None:
            self.note_uses(res["results"], now)  # a question about the past is not a use
        return res

    def _keep(self, items: list[dict[str, Any]], now: datetime, include_stale: bool,
              show_expired: bool, window: TimeWindow | None = None,
              seen: dict[str, LedgerRow] | None = None) -> list[dict[str, Any]]:
        rows = self.ledger.get_many([str(i["id"]) for i in items]) if items else {}
        kept = []
        for item in items:
            row = self.row_for(item, rows)
            state = row.state(now)
            if state == "deleted":
                continue  # a tombstone hides a point that came back (an old snapshot restored)
            if window is not None:
                if not window.admits(row, state, include_stale, show_expired):
                    continue
            elif not include_stale and state != "live" and not (show_expired and state == "expired"):
                continue
            item["hygiene"] = self.hygiene_facts(row, now)
            if seen is not None:
                seen[row.memory_id] = row
            kept.append(item)
        return kept
