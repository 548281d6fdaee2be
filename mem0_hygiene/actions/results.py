"""Typed results of the maintenance operations: the review queue, review changes, the digest and a
memory's story. (The prune result is :class:`mem0_hygiene.memory.pruning.PruneResult`.)

Plain frozen dataclasses. Each has ``to_dict()`` (JSON-ready, what ``--json`` prints), ``__rich__``
(a rich Table: ``rich.print(result)`` and the CLI) and ``_repr_html_`` (the same rows in Jupyter), so
the command line, notebooks and JSON all show the same objects. Nothing here prints.

The fields hold the stores' text as it is; every output shows credentials in it redacted (``to_dict``
through :func:`~mem0_hygiene.render.text.redacted_data`, the tables through ``printable``) unless
rendered inside :func:`~mem0_hygiene.render.text.revealing_secrets`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..display.tables import TableView, short, state_cell
from ..display.text import heading_time, redacted_data


def _scope_text(scope: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in scope.items()) or "-"


def _age(days: float | None) -> str:
    return "-" if days is None else f"{days:g}d"


# --------------------------------------------------------------------------------------------- review queue


@dataclass(frozen=True)
class ReviewItem:
    """One memory due for review.

    Fields:
        memory_id: mem0's id.
        text: the memory's text.
        source: where it came from ("chat 2026-05-02", "tool:web_fetch https://...", "unknown").
        source_kind: user, assistant, tool, system, import or unknown.
        confirmed_at: its last confirmation (UTC ISO; its creation when never confirmed).
        age_days: days since that confirmation.
        scope: user_id / agent_id / run_id.
    """

    memory_id: str
    text: str | None
    source: str | None
    source_kind: str
    confirmed_at: str | None
    age_days: float | None
    scope: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConflictItem:
    """A possible conflict to settle: two live memories the write-time decision's guards would not let a likeness
    alone merge or hide (see :mod:`mem0_hygiene.memory.conflicts`). Settled by confirming one, or invalidating,
    superseding or deleting either.

    Fields:
        memory_id, text: the newer memory; compared_id, compared_text: the older one.
        reason: why they may conflict; found_at: when (UTC ISO); similarity: their cosine similarity, if measured.
    """

    memory_id: str
    text: str | None
    compared_id: str
    compared_text: str | None
    reason: str
    found_at: str
    similarity: float | None = None


@dataclass(frozen=True)
class ReviewQueue(TableView):
    """The memories due for review, oldest confirmation first, then the possible conflicts to settle.

    Fields:
        items: the queue (at most ``limit``).
        older_than: confirmations older than this are due ("90d").
        limit: the most shown at once (a week's review).
        at: when the queue was taken (UTC ISO).
        conflicts: open possible conflicts, newest first (at most ``limit``).
    """

    items: tuple[ReviewItem, ...]
    older_than: str
    limit: int
    at: str
    conflicts: tuple[ConflictItem, ...] = ()

    def __len__(self) -> int:
        return len(self.items)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, items as dicts (credentials redacted)."""
        return redacted_data(
            {
                "at": self.at,
                "older_than": self.older_than,
                "limit": self.limit,
                "items": [asdict(i) for i in self.items],
                "conflicts": [asdict(c) for c in self.conflicts],
            }
        )

    def _table_args(self) -> tuple[str, tuple[str, ...], list[tuple[Any, ...]], str]:
        rows: list[tuple[Any, ...]] = [
            (i.memory_id, short(i.text), short(i.source), i.source_kind, _age(i.age_days), _scope_text(i.scope))
            for i in self.items
        ]
        rows += [
            (
                c.memory_id,
                short(c.text),
                (f"may conflict with {c.compared_id} {short(c.compared_text)!r}: {c.reason}", "bold yellow"),
                "conflict",
                "-",
                "-",
            )
            for c in self.conflicts
        ]
        caption = (
            f"{len(self.items)} memor{'y' if len(self.items) == 1 else 'ies'} not confirmed for "
            f"{self.older_than}"
            + (" (the first ones)" if len(self.items) >= self.limit else "")
            + (
                f"; {len(self.conflicts)} possible conflict(s): confirm one, or invalidate or supersede the other"
                if self.conflicts
                else ""
            )
        )
        return (
            f"review queue at {heading_time(self.at)}",
            ("memory", "text", "source", "kind", "age", "scope"),
            rows,
            caption,
        )


# --------------------------------------------------------------------------------------------- changes


@dataclass(frozen=True)
class Change:
    """One review answer applied (or, with dry_run, checked).

    Fields:
        memory_id: the memory answered about.
        action: "confirm", "invalidate" or "supersede".
        text: its text.
        state_before: its state before ("live", "quarantined", ...).
        state_after: its state after ("live", "invalidated", "superseded").
        new_id: for supersede, the new memory's id (None with dry_run).
        new_text: for supersede, the new fact.
        reason: for invalidate, why.
        source: for supersede, the new fact's source.
    """

    memory_id: str
    action: str
    text: str | None
    state_before: str
    state_after: str
    new_id: str | None = None
    new_text: str | None = None
    reason: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class ChangeResult(TableView):
    """What confirm / invalidate / supersede did.

    Fields:
        changes: one per memory, in the order given.
        dry_run: True when nothing was written.
        at: when (UTC ISO).
    """

    changes: tuple[Change, ...]
    dry_run: bool
    at: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, changes as dicts (credentials redacted)."""
        return redacted_data({"at": self.at, "dry_run": self.dry_run, "changes": [asdict(c) for c in self.changes]})

    def _table_args(self) -> tuple[str, tuple[str, ...], list[tuple[Any, ...]], str]:
        rows = []
        for c in self.changes:
            detail = {
                "supersede": f"-> {c.new_id or '(new)'}: {short(c.new_text)}"
                + (f" [source {short(c.source)}]" if c.source else ""),
                "invalidate": f"reason: {short(c.reason)}",
            }.get(c.action, "")
            rows.append(
                (c.memory_id, c.action, short(c.text), state_cell(c.state_before), state_cell(c.state_after), detail)
            )
        verb = "would change" if self.dry_run else "changed"
        return (
            f"{'dry run ' if self.dry_run else ''}changes at {heading_time(self.at)}",
            ("memory", "action", "text", "before", "after", "detail"),
            rows,
            f"{verb} {len(self.changes)} memor{'y' if len(self.changes) == 1 else 'ies'}",
        )


# --------------------------------------------------------------------------------------------- digest


@dataclass(frozen=True)
class DigestItem:
    """One memory written in the digest's window.

    Fields:
        memory_id: mem0's id.
        text: its current (or, when deleted, its last) text, from history.db; None if unknown.
        source: its source from the ledger; None when the ledger has no row (written by plain mem0).
        source_kind: user, assistant, tool, system, import or unknown.
        state: live, quarantined, expired, superseded, invalidated, deleted, or "untracked" (no
            ledger row).
        created_at: when it was written (UTC ISO as recorded).
        scope: user_id / agent_id / run_id (from the ledger).
        tool_sourced: from tool output or web content (source kind "tool"): the ones to read first.
        instruction: the standing-order label the write guard gave its text (read these first too), or None.
        redacted: the kinds of credential the write guard replaced in its text.
    """

    memory_id: str
    text: str | None
    source: str | None
    source_kind: str
    state: str
    created_at: str
    scope: dict[str, str] = field(default_factory=dict)
    tool_sourced: bool = False
    instruction: str | None = None
    redacted: tuple[str, ...] = ()
    conflict: str | None = None
    """An open possible conflict with an older memory: "with ID 'its text': why" (see ``review``), or None."""


@dataclass(frozen=True)
class Digest(TableView):
    """The memories written in a window, tool/web-sourced first, then unknown sources, then the rest;
    oldest first within each group.

    Fields:
        items: the memories.
        since: the window's start (UTC ISO).
        until: its end, i.e. when the digest was taken (UTC ISO).
    """

    items: tuple[DigestItem, ...]
    since: str
    until: str

    def __len__(self) -> int:
        return len(self.items)

    @property
    def redacted(self) -> int:
        """How many credentials the write guard replaced in the memories of the window."""
        return sum(len(i.redacted) for i in self.items)

    def counts(self) -> dict[str, int]:
        """How many per source kind."""
        out: dict[str, int] = {}
        for item in self.items:
            out[item.source_kind] = out.get(item.source_kind, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above plus ``counts`` and ``redacted`` (credentials redacted)."""
        return redacted_data(
            {
                "since": self.since,
                "until": self.until,
                "counts": self.counts(),
                "redacted": self.redacted,
                "items": [asdict(i) for i in self.items],
            }
        )

    def _table_args(self) -> tuple[str, tuple[str, ...], list[tuple[Any, ...]], str]:
        rows = []
        for i in self.items:
            kind: Any = (i.source_kind, "bold yellow") if i.tool_sourced else i.source_kind
            text: Any = (
                short(i.text)
                if i.conflict is None
                else (f"{short(i.text)}  (may conflict {i.conflict})", "bold yellow")
            )
            rows.append(
                (
                    i.created_at[:19].replace("T", " "),
                    kind,
                    short(i.source),
                    text,
                    state_cell(i.state),
                    i.memory_id,
                    _scope_text(i.scope),
                )
            )
        tool = sum(1 for i in self.items if i.tool_sourced)
        conflicts = sum(1 for i in self.items if i.conflict)
        orders = sum(1 for i in self.items if i.instruction)
        caption = (
            f"{len(self.items)} memor{'y' if len(self.items) == 1 else 'ies'} written since "
            f"{heading_time(self.since)}"
            + (f"; {tool} from tool output or the web: check them first" if tool else "")
            + (f"; {orders} read{'s' if orders == 1 else ''} as an order to the agent" if orders else "")
            + (f"; {self.redacted} credential{'' if self.redacted == 1 else 's'} redacted" if self.redacted else "")
            + (f"; {conflicts} may conflict with an older memory (see review)" if conflicts else "")
        )
        return (
            f"new memories {heading_time(self.since)} .. {heading_time(self.until)}",
            ("written", "kind", "source", "text", "state", "memory", "scope"),
            rows,
            caption,
        )


# --------------------------------------------------------------------------------------------- story


@dataclass(frozen=True)
class ChainLink:
    """One memory of a supersede chain.

    Fields:
        memory_id: mem0's id.
        position: 0 for the memory asked about, -1, -2... for what it replaced, 1, 2... for what
            replaced it.
        text: its current or last known text.
        state: its state now.
        source: its source.
        superseded_by: the memory that replaced it.
    """

    memory_id: str
    position: int
    text: str | None
    state: str
    source: str | None
    superseded_by: str | None = None


@dataclass(frozen=True)
class StoryEvent:
    """One thing that happened to a memory of the chain.

    Fields:
        at: when (UTC ISO as recorded; history.db's own times are mem0's).
        memory_id: which memory.
        event: ``ADD``, ``UPDATE``, ``DELETE`` (from history.db), or from the ledger: ``recorded``,
            ``adopted``, ``confirmed``, ``superseded``, ``invalidated``, ``expired``, ``expires``
            (a future expiry), ``last used``, ``tombstoned``.
        text: the text after the event (before it, for DELETE).
        detail: what else is known (old text of an UPDATE, source, reason, replacement, use count).
        origin: "history.db" or "ledger".
    """

    at: str
    memory_id: str
    event: str
    text: str | None
    detail: str
    origin: str


@dataclass(frozen=True)
class Story(TableView):
    """A memory's full story: its supersede chain both ways and every recorded event, oldest first.

    Fields:
        memory_id: the memory asked about.
        chain: the chain, oldest (what it replaced, transitively) to newest (what replaced it).
        events: history.db and ledger events of every memory in the chain, oldest first.
        at: when the story was read (UTC ISO); future events (a coming expiry) sort after it.
    """

    memory_id: str
    chain: tuple[ChainLink, ...]
    events: tuple[StoryEvent, ...]
    at: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the fields above, chain links and events as dicts (credentials redacted)."""
        return redacted_data(
            {
                "memory_id": self.memory_id,
                "at": self.at,
                "chain": [asdict(c) for c in self.chain],
                "events": [asdict(e) for e in self.events],
            }
        )

    def _table_args(self) -> tuple[str, tuple[str, ...], list[tuple[Any, ...]], str]:
        positions = {c.memory_id: c.position for c in self.chain}
        rows = []
        for e in self.events:
            pos = positions.get(e.memory_id, 0)
            who = e.memory_id + ("" if pos == 0 else f" ({pos:+d})")
            rows.append((e.at[:19].replace("T", " "), who, e.event, short(e.text), short(e.detail), e.origin))
        chain = " -> ".join(f"{c.memory_id}{' *' if c.position == 0 else ''} [{c.state}]" for c in self.chain)
        return (
            f"story of {self.memory_id}",
            ("when", "memory", "event", "text", "detail", "from"),
            rows,
            f"chain, oldest first: {chain}",
        )
