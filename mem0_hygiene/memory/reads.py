"""Reads of the drop-in ``Memory`` that hide what is no longer true: the ``"hygiene"`` facts each result
item carries, the filter by ledger state (or time window), and the paging that keeps ``top_k=k``
returning min(k, live matches).

The ledger is the authority: a read drops stale rows by their ledger state, and re-queries wider when a page
came up short. A search over mem0's Qdrant store leaves the stale points out inside the vector query itself
(:mod:`.live_query`), so mem0 scores a pool of live points only; other reads (``get_all``, other stores)
over-fetch from mem0, sized from what the ledger knows, the live share of the scope's rows
(:meth:`LiveReadsMixin.live_share`, cached a few seconds), so one query is almost always enough even when
most rows are stale (a fact updated weekly keeps ~26 superseded versions for time travel).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..stores.ledger import LedgerRow
from ..stores.states import live_sql, state_of
from ..timeutil import age_days, parse_time, to_iso
from .faiss_search import fast_search
from .live_query import Hooked, LiveOnly, fetch_for, live_only
from .metrics import record_hidden
from .ranking import rank as rank_items
from .timetravel import TimeWindow

if TYPE_CHECKING:
    from ..config import RankSettings
    from ..stores.ledger import Ledger


SHARE_TTL = 5.0
"""Seconds a scope's live share is reused before the ledger is asked again (it only sizes the query)."""
_SCOPES = ("user_id", "agent_id", "run_id")


@functools.lru_cache(maxsize=8192)
def _parsed(stamp: str) -> datetime:
    """:func:`parse_time` of a ledger time string, remembered: a read parses each item's confirmation time, and the
    same memories come back read after read."""
    return parse_time(stamp)


class LiveReadsMixin:
    """Mixin: filtering and paging of mem0's ``search``/``get_all`` results by ledger state.

    Expects from the class it is mixed into: ``ledger``, and the buffer's ``row_for``, ``note_uses``
    and ``last_uses`` (:class:`~mem0_hygiene.memory.buffer.LedgerBufferMixin`).
    """

    ledger: Ledger
    live_query: Hooked | None = None
    """The Qdrant collection whose vector queries a search may answer with live points only (see
    :mod:`.live_query`); None when the store is not mem0's Qdrant store."""
    faiss_search: bool = False
    """The store is mem0's FAISS store, hooked so that a search builds results for the scope's points only (see
    :mod:`.faiss_search`)."""
    _shares: dict[tuple[tuple[str, str], ...], tuple[float, float]]
    _shares_lock: threading.Lock

    if TYPE_CHECKING:

        def row_for(self, item: dict[str, Any], rows: dict[str, LedgerRow]) -> LedgerRow: ...
        def note_uses(self, items: Iterable[dict[str, Any]], now: datetime) -> None: ...
        def last_uses(self) -> dict[str, datetime]: ...

    @staticmethod
    def hygiene_facts(
        row: LedgerRow, now: datetime, now_iso: str | None = None, state: str | None = None
    ) -> dict[str, Any]:
        """The ``"hygiene"`` dict a result item carries (``now_iso``: ``to_iso(now)``, ``state``: the row's state
        at ``now``, when the caller has them)."""
        confirmed = row.confirmed_at or row.created_at
        if confirmed == now_iso:
            age: float | None = 0.0  # just written or confirmed: no need to parse the time back
        else:
            age = age_days(_parsed(confirmed), now) if confirmed else None
        return {
            "state": state or (state_of(row, now_iso) if now_iso is not None else row.state(now)),
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

    def live_share(self, filters: dict[str, Any] | None, now: datetime) -> float:
        """The share of the scope's stored memories (ledger rows not deleted) that reads serve, from the
        ledger (1.0 for a scope it has no rows of, or a filter that is not a plain scope); cached
        :data:`SHARE_TTL` seconds per scope."""
        scope = tuple(sorted((k, v) for k, v in (filters or {}).items() if k in _SCOPES and isinstance(v, str)))
        if not scope:
            return 1.0
        if not hasattr(self, "_shares"):
            self._shares, self._shares_lock = {}, threading.Lock()
        clock = time.monotonic()
        cached = self._shares.get(scope)
        if cached is not None and clock - cached[1] < SHARE_TTL:
            return cached[0]
        where = " AND ".join(f"{k} = ?" for k, _ in scope)
        total, live = self.ledger.query(
            f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {live_sql()} THEN 1 ELSE 0 END), 0) FROM memories "
            f"WHERE {where} AND deleted_at IS NULL",
            [to_iso(now), *(v for _, v in scope)],
        )[0]
        share = float(live) / float(total) if total else 1.0
        with self._shares_lock:
            self._shares[scope] = (share, clock)
        return share

    def paged_read(
        self,
        run: Callable[[int], dict[str, Any]],
        top_k: int,
        now: datetime,
        include_stale: bool,
        show_expired: bool,
        window: TimeWindow | None = None,
        rank: RankSettings | None = None,
        filters: dict[str, Any] | None = None,
        vector_query: bool = False,
        to_cosine: Callable[[float], float] | None = None,
    ) -> dict[str, Any]:
        """Call ``run(fetch)`` (a mem0 read asking for ``fetch`` items, expired ones included) until the
        kept items fill ``top_k`` or mem0 has no more; then rank them (``rank``) and count the uses
        (not for a question about the past, ``window.as_of``). For live results only: when ``run`` is a
        vector query (a search) over a hooked Qdrant store and the scope has stale rows, the stale points
        are left out inside the query (:mod:`.live_query`) and ``fetch`` is ``top_k``; otherwise the first
        ``fetch`` comes from the live share of the scope in ``filters`` (:meth:`live_share`). The next ones
        come from the share the last page kept. ``to_cosine``: how the ranking reads the store's scores as
        cosine similarity (None: as they are)."""
        spec: LiveOnly | None = None
        lean = False  # mem0 ranks by the vector score alone: the nearest `fetch` live points will do
        known: dict[str, LedgerRow] = {}  # rows the query's ledger lookup already read
        if include_stale and window is None:
            fetch = top_k
        elif window is not None or show_expired:
            fetch = top_k + top_k // 2 + 4  # other states than live kept: the live share says little
        else:
            share = self.live_share(filters, now)
            fetch = top_k if share >= 1.0 else fetch_for(top_k, share)
            if vector_query and self.live_query is not None and share < 1.0:
                spec = LiveOnly(self.live_query.collection, share, self._not_live(now, known))
                lean = self.live_query.semantic_only
                fetch = top_k
        seen: dict[str, LedgerRow] | None = {} if rank is not None else None
        while True:
            if spec is not None and lean:
                spec = replace(spec, pool=fetch)
            with (
                live_only(spec) if spec is not None else contextlib.nullcontext(),
                fast_search() if vector_query and self.faiss_search else contextlib.nullcontext(),
            ):
                res = run(fetch)
            raw = res.get("results", [])
            kept = self._keep(raw, now, include_stale, show_expired, window, seen, known, top_k)
            if len(kept) >= top_k or len(raw) < fetch or top_k == 0:
                break
            fetch = max(fetch * 2, len(raw) + fetch_for(top_k - len(kept), max(len(kept), 1) / max(len(raw), 1)))
        res["results"] = kept[:top_k]
        if rank is not None and seen is not None:
            at = parse_time(window.as_of) if window is not None and window.as_of else now
            res["results"] = rank_items(res["results"], seen, at, rank, self.last_uses(), to_cosine)
        if window is None or window.as_of is None:
            self.note_uses(res["results"], now)  # a question about the past is not a use
        return res

    def _not_live(self, now: datetime, known: dict[str, LedgerRow]) -> Callable[[Sequence[str]], set[str]]:
        """The ledger's answer to "which of these ids must a read not serve" for :mod:`.live_query`: the ids alone
        from SQLite; from a server (each statement a round trip), whole rows (kept in ``known``), so the page's
        own lookup needs no second round trip."""
        ledger = self.ledger
        if not ledger.is_server:
            return lambda ids: ledger.not_live_among(ids, now)

        def not_live(ids: Sequence[str]) -> set[str]:
            rows = ledger.get_many(ids)
            known.update(rows)
            return {mid for mid, row in rows.items() if row.state(now) != "live"}

        return not_live

    def _keep(
        self,
        items: list[dict[str, Any]],
        now: datetime,
        include_stale: bool,
        show_expired: bool,
        window: TimeWindow | None = None,
        seen: dict[str, LedgerRow] | None = None,
        known: dict[str, LedgerRow] | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """The items a read serves, in order, each with its ``"hygiene"`` facts; only the first ``limit`` get them
        (and go into ``seen``): the caller cuts the page there. Every item is still judged (its row adopted when
        the ledger has none, the states that hid items counted)."""
        ids = [str(i["id"]) for i in items]
        missing = [mid for mid in ids if mid not in known] if known else ids
        rows = self.ledger.get_many(missing) if missing else {}
        if known:
            rows.update((mid, known[mid]) for mid in ids if mid in known)
        kept: list[dict[str, Any]] = []
        hidden: dict[str, int] = {}
        now_iso = to_iso(now)  # once per page, not per item
        for item in items:
            row = self.row_for(item, rows)
            state = state_of(row, now_iso)
            if state == "deleted":
                hidden[state] = hidden.get(state, 0) + 1
                continue  # a tombstone hides a point that came back (an old snapshot restored)
            if window is not None:
                if not window.admits(row, state, include_stale, show_expired):
                    continue
            elif not include_stale and state != "live" and not (show_expired and state == "expired"):
                hidden[state] = hidden.get(state, 0) + 1
                continue
            if limit is None or len(kept) < limit:
                item["hygiene"] = self.hygiene_facts(row, now, now_iso, state)
                if seen is not None:
                    seen[row.memory_id] = row
            kept.append(item)
        if hidden:
            record_hidden(hidden)
        return kept
