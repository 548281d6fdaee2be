"""Time windows for reads: ``as_of`` (what the agent believed at a moment) and ``since``/``until`` (when a
memory was created). Pure ledger arithmetic; :class:`mem0_hygiene.Memory` applies it to the rows of the
memories mem0 returned.

A memory was believed at T when it was created at or before T and at T it was not yet superseded,
invalidated, expired or deleted. Superseded and invalidated memories stay in the vector store until
prune removes them (``hygiene.retain_superseded``, 180 days by default), so that far back the answer
is complete; a memory deleted through the wrapper never comes back, not even to a question about the
past. Quarantine has no start and end times in the ledger: a memory still quarantined is never
believed; a tool-sourced one that was released counts from its latest confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..stores.ledger import LedgerRow
from ..timeutil import parse_time, to_iso
from .provenance import QUARANTINED_KINDS


@dataclass(frozen=True)
class TimeWindow:
    """The time filters of one read, as ledger time strings (None = no bound).

    Fields:
        as_of: judge each memory's state at this moment instead of now.
        since: created at or after this moment.
        until: created before this moment.
    """

    as_of: str | None = None
    since: str | None = None
    until: str | None = None

    @classmethod
    def build(cls, as_of: Any = None, since: Any = None, until: Any = None) -> TimeWindow | None:
        """A window from datetimes, dates or ISO strings; None when no bound is given."""
        if as_of is None and since is None and until is None:
            return None
        bounds = {
            name: to_iso(parse_time(value, what=name)) if value is not None else None
            for name, value in (("as_of", as_of), ("since", since), ("until", until))
        }
        if bounds["since"] and bounds["until"] and bounds["since"] >= bounds["until"]:
            raise ConfigError(f"since ({bounds['since']}) must be before until ({bounds['until']})")
        return cls(**bounds)

    def admits(self, row: LedgerRow, state_now: str, include_stale: bool, show_expired: bool) -> bool:
        """Whether a read with this window returns the memory of ``row`` (whose state now is
        ``state_now``). Deleted memories never reach here."""
        created = row.created_at
        if self.since is not None and created < self.since:
            return False
        if self.until is not None and created >= self.until:
            return False
        if self.as_of is None:
            return include_stale or state_now == "live" or (show_expired and state_now == "expired")
        t = self.as_of
        if created > t:
            return False
        if include_stale:
            return True
        return self.believed_at(row, t, show_expired)

    @staticmethod
    def believed_at(row: LedgerRow, t: str, show_expired: bool = False) -> bool:
        """Whether ``row``'s memory was live at ledger time ``t`` (created at or before it assumed)."""
        if row.deleted_at and row.deleted_at <= t:
            return False
        if row.superseded_by and (row.superseded_at is None or row.superseded_at <= t):
            return False
        if row.invalid_at and row.invalid_at <= t:
            return False
        if row.quarantined:
            return False
        if row.source_kind in QUARANTINED_KINDS and row.confirmed_at and row.confirmed_at > t:
            return False  # released from quarantine only after t
        return not (row.expires_at and row.expires_at <= t and not show_expired)
