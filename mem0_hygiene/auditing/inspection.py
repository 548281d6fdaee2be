"""``inspect()``: a mem0 deployment as data, for a notebook.

``inspect(config_or_memory)`` reads the same stores the audit reads, the same way (the audit's scratch
database: history.db and the ledger attached read-only, the vector store streamed in pages), and
returns an :class:`Inspection`: pandas DataFrames of the memories joined with their ledger facts, of
history.db's events and of the supersede chains, plus plots where a picture beats a table.

Credentials in the text columns (memory texts, sources, reasons; history.db's old and new texts) are
redacted as in every other output, unless :func:`inspect` runs inside
:func:`~mem0_hygiene.render.text.revealing_secrets`.

It never writes to any store. When the vector store cannot be read (a local Qdrant folder that the
running app holds locked), it returns what the ledger and history.db hold, with texts taken from
history.db, and says what is missing in :attr:`Inspection.note`.

pandas and matplotlib come with the ``notebook`` extra (``pip install "mem0-hygiene[notebook]"``);
without them :func:`inspect` raises :class:`~mem0_hygiene.errors.MissingExtra`. The module is named
``inspection`` (not ``inspect``) so that ``mem0_hygiene.inspect`` is the function, with no module of
the same name behind it, and nothing run from inside the package folder can shadow the stdlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..display.text import redacted
from ..errors import InspectionError, require
from ..stores.ledger import COLUMNS, LedgerRow
from ..stores.states import STATE_ORDER, UNTRACKED
from ..stores.vectors import PAGE_SIZE
from ..target import resolve
from ..timeutil import as_utc
from .reading import load_vector_points
from .scratch import ScratchDB

MEMORY_COLUMNS = (
    "id",
    "text",
    "user_id",
    "agent_id",
    "run_id",
    "source",
    "source_kind",
    "created_at",
    "confirmed_at",
    "expires_at",
    "last_used_at",
    "use_count",
    "state",
    "age_days",
    "superseded_by",
    "superseded_at",
    "invalid_at",
    "invalid_reason",
    "quarantined",
    "deleted_at",
    "topic_key",
    "adopted",
    "in_ledger",
    "in_vector_store",
    "text_from",
)
"""Columns of :attr:`Inspection.memories`, in order."""

CHAIN_COLUMNS = ("old_id", "new_id", "at", "old_text", "new_text", "user_id", "old_state", "new_state", "broken")
"""Columns of :attr:`Inspection.chains`, in order."""

TEXT_COLUMNS = ("text", "source", "invalid_reason", "topic_key")
"""Columns of :attr:`Inspection.memories` that hold free text (credentials in them are redacted)."""
HISTORY_TEXT_COLUMNS = ("old_memory", "new_memory")
"""Columns of :attr:`Inspection.history` that hold memory texts (credentials in them are redacted)."""

_TIME_COLUMNS = (
    "created_at",
    "confirmed_at",
    "expires_at",
    "last_used_at",
    "superseded_at",
    "invalid_at",
    "deleted_at",
)
_SOURCE_NAMES = {"points": "vector store", "history": "history.db", "ledger": "ledger"}
_CONSEQUENCE = {
    "points": "texts come from history.db (see text_from) and in_vector_store is unknown",
    "history": "the history frame is empty and plot_events_per_day() has nothing to show",
    "ledger": "provenance, confirmation, expiry, use and supersede chains are missing; every memory shows as untracked",
}


@dataclass(frozen=True, eq=False)
class Inspection:
    """A mem0 deployment as DataFrames, read at one moment. Built by :func:`inspect`.

    Fields:
        memories: one row per memory any store knows about (vector store, ledger or history.db), with
            the columns of :data:`MEMORY_COLUMNS`. ``state`` is the ledger state (live, expired,
            superseded, invalidated, quarantined, deleted), or ``untracked`` when the ledger has no row;
            ``age_days`` is days since the last confirmation (creation when never confirmed);
            ``text_from`` says whether the text came from the vector store or from history.db.
            Times are UTC pandas timestamps.
        history: history.db's events, one row per change (its own columns, times parsed), plus ``at``,
            the time of the event (``updated_at``, else ``created_at``).
        chains: the supersede edge list (:data:`CHAIN_COLUMNS`): ``old_id`` was replaced by ``new_id``
            at ``at``; ``broken`` is true when the replacement has no ledger row.
        now: the moment states and ages are computed for (UTC).
        target: what was read ("config", "mem0 defaults", "in-process Memory").
        review_older_than: the review line (``hygiene.review_older_than``, 90 days by default).
        missing: store ("vector store", "history.db", "ledger") -> why it could not be read.
        read_only: how the vector store was read when this process may only read it (its local Qdrant file read
            directly, the lock not taken); "" otherwise.
    """

    memories: Any
    history: Any
    chains: Any
    now: datetime
    target: str = ""
    review_older_than: timedelta = timedelta(days=90)
    missing: dict[str, str] = field(default_factory=dict)
    read_only: str = ""

    @property
    def note(self) -> str:
        """What could not be read and what that leaves out, and how a store this process may only read was read;
        empty when every store was read the usual way."""
        return " ".join(
            [f"{name} not read: {reason.rstrip('.')}." for name, reason in self.missing.items()]
            + ([f"vector store {self.read_only}."] if self.read_only else [])
        )

    # -- summaries --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Memories per state, in :data:`STATE_ORDER` (then ``untracked``); states with none left out."""
        found = self.memories["state"].value_counts().to_dict() if len(self.memories) else {}
        return {s: int(found[s]) for s in (*STATE_ORDER, UNTRACKED) if found.get(s)}

    def events(self) -> dict[str, int]:
        """history.db rows per event (ADD, UPDATE, DELETE, ...), most frequent first."""
        if not len(self.history) or "event" not in self.history:
            return {}
        return {str(k): int(v) for k, v in self.history["event"].fillna("?").value_counts().items()}

    def review_due(self) -> Any:
        """Live, non-expiring memories confirmed longer ago than the review line, oldest first."""
        m = self.memories
        line = self.review_older_than.total_seconds() / 86400.0
        due = m[(m["state"] == "live") & m["expires_at"].isna() & (m["age_days"] > line)]
        return due.sort_values("age_days", ascending=False)

    def states_over_time(self, freq: str = "D") -> Any:
        """Memories per state over time, rebuilt from the ledger's timestamps.

        One row per ``freq`` step (pandas offset alias) from the first ledger row to ``now`` (the last
        row), one column per state of :data:`STATE_ORDER` except ``deleted`` (deleted memories are
        gone, not stale). A memory counts from its ``created_at``; it becomes expired at
        ``expires_at``, invalidated at ``invalid_at``, superseded at ``superseded_at`` and leaves at
        ``deleted_at``. The ledger records no quarantine times, so a memory quarantined now counts as
        quarantined since it was created, and one released from quarantine as live since then.
        """
        pd = require("pandas", "states_over_time()")
        np = require("numpy", "states_over_time()")
        rows = self.memories[self.memories["in_ledger"]]
        shown = [s for s in STATE_ORDER if s != "deleted"]
        if rows.empty or rows["created_at"].isna().all():
            return pd.DataFrame(columns=shown, index=pd.DatetimeIndex([], tz="UTC", name="at"), dtype="int64")
        created = rows["created_at"]
        starts = {
            "live": created,
            "expired": rows["expires_at"],
            "quarantined": created.where(rows["quarantined"]),
            "invalidated": rows["invalid_at"],
            "superseded": rows["superseded_at"],
            "deleted": rows["deleted_at"],
        }
        now = pd.Timestamp(self.now)
        try:
            start = created.min().floor(freq)
        except ValueError:  # a calendar frequency ("W", "MS"): start on the first day instead
            start = created.min().normalize()
        grid = pd.date_range(start, now, freq=freq, name="at")
        if not len(grid) or grid[-1] < now:
            grid = grid.append(pd.DatetimeIndex([now], name="at"))
        ticks = _ns(grid)
        at_least = []  # memories whose state is this one or a later one, at each tick
        for k in range(len(STATE_ORDER)):
            first = pd.concat([starts[s] for s in STATE_ORDER[k:]], axis=1).min(axis=1)
            stamps = np.sort(_ns(first.dropna()))
            at_least.append(np.searchsorted(stamps, ticks, side="right"))
        data = {s: at_least[k] - at_least[k + 1] for k, s in enumerate(STATE_ORDER[:-1])}
        return pd.DataFrame(data, index=grid)[shown].astype("int64")

    # -- plots ------------------------------------------------------------------------------
    def plot_confirmation_age(self, ax: Any = None) -> Any:
        """Histogram of live memories by days since their last confirmation, with the review line."""
        from ..render.plots import confirmation_age

        return confirmation_age(self, ax)

    def plot_expiries(self, limit: int = 25, ax: Any = None) -> Any:
        """Memories with an expiry on a time line: upcoming, and expired but not pruned yet."""
        from ..render.plots import expiries

        return expiries(self, limit, ax)

    def plot_events_per_day(self, ax: Any = None) -> Any:
        """history.db's ADD/UPDATE/DELETE events per day, stacked."""
        from ..render.plots import events_per_day

        return events_per_day(self, ax)

    def plot_live_vs_stale(self, freq: str = "D", ax: Any = None) -> Any:
        """Live and stale memories over time (:meth:`states_over_time`), stacked by state."""
        from ..render.plots import live_vs_stale

        return live_vs_stale(self, freq, ax)

    def plot_by_source_kind(self, include_deleted: bool = False, ax: Any = None) -> Any:
        """Memories per source kind (user, assistant, tool, ...), stacked by state."""
        from ..render.plots import by_source_kind

        return by_source_kind(self, include_deleted, ax)

    # -- display ----------------------------------------------------------------------------
    def __repr__(self) -> str:
        from ..render.inspection import inspection_text

        return inspection_text(self)

    def __rich__(self) -> Any:
        from ..render.inspection import inspection_renderable

        return inspection_renderable(self)

    def _repr_html_(self) -> str:
        from ..render.inspection import inspection_html

        return inspection_html(self)


def _ns(values: Any) -> Any:
    """UTC timestamps (a Series or DatetimeIndex, tz-aware) as int64 nanoseconds for searchsorted."""
    pd = require("pandas")
    index = pd.DatetimeIndex(values)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    return index.as_unit("ns").asi8


def inspect(target: Any = None, *, now: datetime | None = None, page_size: int = PAGE_SIZE) -> Inspection:
    """Read a mem0 deployment into DataFrames and return an :class:`Inspection`.

    ``target`` is what :func:`~mem0_hygiene.auditing.runner.audit` takes: a mem0 config dict (a ``"hygiene"``
    section is honoured), None for mem0's defaults, or a live ``Memory`` whose open vector store is
    read in-process (the route for a local Qdrant folder the running app holds locked; unflushed
    use counts of that Memory are not in its ledger yet and do not show). ``now`` defaults to the
    config's ``hygiene.clock``. Never writes to a store.

    Raises :class:`~mem0_hygiene.errors.MissingExtra` without pandas and :class:`InspectionError`
    when no store at all can be read.
    """
    pd = require("pandas")
    tgt = resolve(target)
    moment = as_utc(now) if now is not None else tgt.now()
    with ScratchDB() as db:
        db.attach_history(tgt.history_path)
        db.open_ledger(tgt.ledger_path, None)  # a PostgreSQL ledger is read on the server, never copied here
        extra: dict[str, Any] = {}
        load_vector_points(db, tgt, extra, page_size)
        src = db.sources
        if not (src.points or src.history or src.ledger):
            raise InspectionError(
                "found no mem0 store to inspect: "
                + "; ".join(src.missing[k] for k in ("points", "history", "ledger") if k in src.missing)
                + ". Pass the app's config dict (as given to Memory.from_config) or the app's Memory"
            )
        memories = _memories_frame(pd, db, moment)
        history = _history_frame(pd, db)
    missing = {
        _SOURCE_NAMES[k]: f"{src.missing[k].rstrip('.')}; {_CONSEQUENCE[k]}"
        for k in ("points", "history", "ledger")
        if k in src.missing
    }
    return Inspection(
        memories=memories,
        history=history,
        chains=_chains_frame(pd, memories),
        now=moment,
        target=tgt.description,
        review_older_than=tgt.settings.review_older_than,
        missing=missing,
        read_only=str(extra.get("read_only") or ""),
    )


# -- frames -------------------------------------------------------------------------------------
def _memories_frame(pd: Any, db: ScratchDB, now: datetime) -> Any:
    src = db.sources
    rows: dict[str, dict[str, Any]] = {}

    def entry(mid: str) -> dict[str, Any]:
        if mid not in rows:
            rows[mid] = {c: None for c in MEMORY_COLUMNS} | {"id": mid, "in_ledger": False, "use_count": 0}
        return rows[mid]

    if src.ledger and db.ledger is not None:
        for values in db.ledger.rows("SELECT " + ", ".join(COLUMNS) + " FROM " + db.ledger.memories):
            facts = dict(zip(COLUMNS, values))
            facts["quarantined"], facts["adopted"] = bool(facts["quarantined"]), bool(facts["adopted"])
            row = LedgerRow(**facts)
            e = entry(row.memory_id)
            e.update({k: v for k, v in facts.items() if k != "memory_id"})
            e["in_ledger"], e["state"] = True, row.state(now)
    if src.points:
        for pid, text, user_id, agent_id, run_id, created in db.rows(
            "SELECT id, text, user_id, agent_id, run_id, created_at FROM points"
        ):
            e = entry(pid)
            e["text"], e["text_from"], e["in_vector_store"] = text, "vector_store", True
            for key, value in (
                ("user_id", user_id),
                ("agent_id", agent_id),
                ("run_id", run_id),
                ("created_at", created),
            ):
                if e[key] is None:
                    e[key] = value
    if src.history:
        known = src.points  # with the vector store read, a history-only memory is not in it
        for mid, last_event, text, first in db.rows(
            "SELECT hist.memory_id, hist.last_event, COALESCE(hh.new_memory, hh.old_memory), "
            "(SELECT MIN(created_at) FROM h.history f WHERE f.memory_id = hist.memory_id) "
            "FROM hist JOIN h.history hh ON hh.rowid = hist.last_rowid"
        ):
            e = entry(mid)
            if e["text"] is None and text is not None:
                e["text"], e["text_from"] = text, "history"
            if e["created_at"] is None:
                e["created_at"] = first
            if e["state"] is None and last_event == "DELETE" and not e["in_vector_store"]:
                e["state"] = "deleted"
            if known and e["in_vector_store"] is None:
                e["in_vector_store"] = False
    for e in rows.values():
        if e["state"] is None:
            e["state"] = UNTRACKED
        if src.points and e["in_vector_store"] is None:
            e["in_vector_store"] = False

    frame = pd.DataFrame.from_records(list(rows.values()), columns=list(MEMORY_COLUMNS))
    _redact_columns(frame, TEXT_COLUMNS)
    for col in _TIME_COLUMNS:
        frame[col] = _times(pd, frame[col])
    confirmed = frame["confirmed_at"].fillna(frame["created_at"])
    frame["age_days"] = ((pd.Timestamp(now) - confirmed).dt.total_seconds() / 86400.0).round(1)
    frame["use_count"] = frame["use_count"].fillna(0).astype("int64")
    for col in ("quarantined", "adopted", "in_ledger"):
        frame[col] = frame[col].map(bool).astype(bool)  # no ledger row: not quarantined, not adopted
    frame["in_vector_store"] = frame["in_vector_store"].astype("boolean")  # <NA>: the store was not read
    return frame.sort_values(["created_at", "id"], na_position="last", kind="stable").reset_index(drop=True)


def _history_frame(pd: Any, db: ScratchDB) -> Any:
    if not db.sources.history:
        return pd.DataFrame({"id": [], "memory_id": [], "event": [], "at": pd.Series([], dtype="datetime64[ns, UTC]")})
    cursor = db.conn.execute("SELECT * FROM h.history ORDER BY rowid")
    names = [d[0] for d in cursor.description]
    frame = pd.DataFrame.from_records(cursor.fetchall(), columns=names)
    _redact_columns(frame, HISTORY_TEXT_COLUMNS)
    for col in ("created_at", "updated_at"):
        if col in frame:
            frame[col] = _times(pd, frame[col])
    if "updated_at" in frame and "created_at" in frame:
        frame["at"] = frame["updated_at"].fillna(frame["created_at"])
    elif "created_at" in frame:
        frame["at"] = frame["created_at"]
    else:
        frame["at"] = pd.Series(pd.NaT, index=frame.index, dtype="datetime64[ns, UTC]")
    return frame


def _chains_frame(pd: Any, memories: Any) -> Any:
    linked = memories[memories["superseded_by"].notna()]
    known = memories.set_index("id")
    new_ids = linked["superseded_by"]
    in_ledger = new_ids.isin(known.index[known["in_ledger"]])
    frame = pd.DataFrame(
        {
            "old_id": linked["id"],
            "new_id": new_ids,
            "at": linked["superseded_at"],
            "old_text": linked["text"],
            "new_text": new_ids.map(known["text"]),
            "user_id": linked["user_id"],
            "old_state": linked["state"],
            "new_state": new_ids.map(known["state"].where(known["in_ledger"])),
            "broken": ~in_ledger,
        },
        columns=list(CHAIN_COLUMNS),
    )
    return frame.sort_values("at", kind="stable").reset_index(drop=True)


def _redact_columns(frame: Any, columns: tuple[str, ...]) -> None:
    """Credentials in the string cells of ``columns`` redacted, in place (other cells kept)."""
    for col in columns:
        if col in frame:
            frame[col] = frame[col].map(lambda v: redacted(v) if isinstance(v, str) else v)


def _times(pd: Any, values: Any) -> Any:
    """ISO strings (any offset, or naive = UTC) to tz-aware UTC timestamps; unreadable ones become NaT."""
    return pd.to_datetime(values, utc=True, format="ISO8601", errors="coerce").dt.as_unit("ns")
