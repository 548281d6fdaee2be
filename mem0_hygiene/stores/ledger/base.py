"""The ledger's queries both databases share: :class:`Ledger`, the abstract base of
:class:`~mem0_hygiene.stores.ledger.sqlite.SqliteLedger` and
:class:`~mem0_hygiene.stores.ledger.postgres.PostgresLedger`. Its statements run over a
:class:`~mem0_hygiene.stores.ledger.connection.LedgerConnection` and take what differs between the databases
from the connection's :class:`~mem0_hygiene.stores.ledger.dialect.Dialect`; what only one of them can do (its
schema bookkeeping, locks across replicas, its clock, purging for good) each subclass says.

Besides ``memories``, the ``pending`` journal holds the drop-in's operations that span the ledger and mem0's
stores while they are under way (see :mod:`.schema`); a process that dies midway leaves its entries behind, and
the next one finishes or undoes exactly those (see :mod:`mem0_hygiene.memory.recovery`). Times are UTC ISO
strings in one format (:func:`mem0_hygiene.timeutil.to_iso`), so they compare correctly as text.
"""

from __future__ import annotations

import abc
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ...errors import LedgerError, SupersedeError
from ...timeutil import shift_time, system_clock, to_iso
from ..states import live_sql
from ..topic_keys import RETRIES, TopicConflict, make_room
from .connection import LedgerConnection
from .dialect import Dialect, insert, insert_ignore, upsert
from .rows import COLUMNS, DELETED_AT, ROW_VALUES, LedgerRow, row_from
from .schema import CONFIRMATIONS, PENDING

if TYPE_CHECKING:
    from .sqlite import SqliteLedger

_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM memories"
# Conflicts on the id only: a row is never replaced by deleting it (that would cascade to the rows it superseded
# and its confirmations), and a topic key's conflict is an error, never a row silently dropped.
_INSERT_SQL = {
    "new": insert("memories", COLUMNS),
    "ignore": insert_ignore("memories", COLUMNS, ("memory_id",)),
    "replace": upsert("memories", COLUMNS, ("memory_id",)),
}
"""The row inserts (``ON CONFLICT`` on the id: the same in both databases)."""

_BIRTH_COLUMNS = (
    "user_id",
    "agent_id",
    "run_id",
    "source",
    "source_kind",
    "created_at",
    "expires_at",
    "topic_key",
    "redacted",
    "flag",
    "adopted",
)
_UPSERT_BIRTH = (
    upsert("memories", COLUMNS, ("memory_id",), _BIRTH_COLUMNS)
    + ", quarantined = CASE WHEN memories.quarantined = 0 THEN 0 ELSE excluded.quarantined END"
)
_PENDING_DELETE = "INSERT INTO pending VALUES (?, 'delete', ?) ON CONFLICT (memory_id, action) DO NOTHING"
_BEGIN = upsert("pending", PENDING.column_names, ("memory_id", "action"), ("since",))


class Ledger(abc.ABC):
    """The ledger's rows and queries over one connection guarded by a lock (thread-safe). Open one with
    :func:`~mem0_hygiene.stores.ledger.open_ledger`, which picks the database from the location."""

    path: str
    dialect: Dialect
    _conn: LedgerConnection
    _lock: threading.RLock
    migration_notes: list[str]
    """What opening it changed besides the schema (said in the log too)."""
    chained_on_upgrade: int
    """Rows the upgrade to version 4 chained to a newer row of their topic key."""

    errors: tuple[type[BaseException], ...] = ()
    """The driver's exceptions :meth:`failure` turns into :class:`LedgerError` (none: the connection does)."""

    def _setup(self, path: str, dialect: Dialect) -> None:
        self.path = path
        self.dialect = dialect
        self._lock = threading.RLock()
        self.migration_notes = []
        self.chained_on_upgrade = 0

    def failure(self, exc: BaseException) -> LedgerError:
        """The ledger's error for a driver's one (naming the ledger and, for a damaged file, the way back)."""
        return LedgerError(str(exc))

    def conflict_or_failure(self, exc: BaseException) -> LedgerError:
        """As :meth:`failure`, a :class:`TopicConflict` when the write met the unique topic-key index."""
        return self.failure(exc)

    # -- what each database does its own way ------------------------------------------------
    @abc.abstractmethod
    def schema_version(self) -> int:
        """The ledger's schema version."""

    @abc.abstractmethod
    def has_table(self, name: str) -> bool:
        """Whether the ledger holds table ``name`` (a read-only opening of an older ledger may lack one)."""

    @abc.abstractmethod
    def purge_rows(self, memory_ids: Sequence[str]) -> int:
        """Remove tombstoned rows for good (and, by the foreign key's cascade, the rows they superseded), so the
        removed bytes are gone from the database's files too. Rows without a tombstone are never touched.
        Returns how many rows went (cascaded ones included)."""

    @abc.abstractmethod
    def to_scratch(self) -> SqliteLedger:
        """An in-memory SQLite ledger holding this one's rows, journal and other tables at the current schema
        (dry runs write to it; this ledger is only read)."""

    @abc.abstractmethod
    def pragma_check(self) -> tuple[list[tuple[Any, ...]], bool, str]:
        """(rows whose foreign key points nowhere, foreign keys enforced?, journal mode or database)."""

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @property
    def shown(self) -> str:
        """The ledger's location as messages show it (a database URL without its credentials)."""
        return self.path

    @property
    def is_server(self) -> bool:
        """A ledger on a database server (shared by replicas), not a SQLite file."""
        return False

    def now(self) -> datetime:
        """The ledger's clock: this host's for SQLite; the database server's for PostgreSQL."""
        return system_clock()

    @contextlib.contextmanager
    def exclusive(self, purpose: str, *, wait: bool = True) -> Iterator[bool]:
        """``with ledger.exclusive("prune") as held:`` one holder at a time across every process sharing the
        ledger (PostgreSQL: an advisory lock). A SQLite ledger has one app process: always held."""
        yield True

    @abc.abstractmethod
    def link_guard(self, conn: Any) -> None:
        """Inside a transaction, before a supersede link or a write that may chain rows of one topic key:
        serialise them across replicas (SQLite's ``BEGIN IMMEDIATE`` already does)."""

    @abc.abstractmethod
    def defer_links(self, conn: Any) -> None:
        """Inside a transaction: check foreign keys at its commit, so a row may point at one written later in
        it (a topic key's holder chained to the row that is about to be written)."""

    # -- low level --------------------------------------------------------------------------
    def _write(self, sql: str, params: Sequence[Any] | Iterable[Sequence[Any]], many: bool = False) -> int:
        """One write. A single statement commits on its own (autocommit); several rows go in one
        transaction."""
        with self._lock:
            try:
                if many:
                    rows = list(params)
                    if len(rows) == 1:
                        return int(self._conn.execute(sql, rows[0]).rowcount)
                    with self._conn.transaction():
                        return int(self._conn.executemany(sql, rows).rowcount)
                return int(self._conn.execute(sql, params).rowcount)  # type: ignore[arg-type]
            except self.errors as exc:
                raise self.failure(exc) from None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """``with ledger.locked():`` this ledger's connection waits meanwhile (e.g. while another
        connection to the same file rewrites it)."""
        with self._lock:
            yield

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """``with ledger.transaction() as conn:`` runs several writes atomically."""
        with self._lock:
            try:
                with self._conn.transaction() as conn:
                    yield conn
            except self.errors as exc:
                raise self.conflict_or_failure(exc) from None

    def claiming(self, body: Callable[[Any], Any]) -> Any:
        """Run ``body(conn)`` in a transaction that may chain rows of one topic key (links serialised across
        replicas, foreign keys checked at commit), again when it met the unique topic-key index because
        another writer raced past its check (:class:`~mem0_hygiene.stores.topic_keys.TopicConflict`)."""
        for attempt in range(RETRIES + 1):
            try:
                with self.transaction() as conn:
                    self.link_guard(conn)
                    self.defer_links(conn)
                    return body(conn)
            except TopicConflict:
                if attempt == RETRIES:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read; a damaged file raises :class:`LedgerError` saying so and how to restore it."""
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except self.errors as exc:
                raise self.failure(exc) from None

    # -- reads ------------------------------------------------------------------------------
    def get(self, memory_id: str) -> LedgerRow | None:
        rows = self.query(_SELECT + " WHERE memory_id = ?", (memory_id,))
        return row_from(rows[0]) if rows else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, LedgerRow]:
        out: dict[str, LedgerRow] = {}
        ids = list(memory_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.query(_SELECT + f" WHERE memory_id IN ({marks})", chunk):
                row = row_from(r)
                out[row.memory_id] = row
        return out

    def not_live_among(self, memory_ids: Sequence[str], now: datetime) -> set[str]:
        """Those of these ids whose row says reads must not serve them at ``now`` (any state but live, a
        tombstone included); ids with no row are not in it (the caller decides those)."""
        out: set[str] = set()
        ids = list(memory_ids)
        at = to_iso(now)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0]
                for r in self.query(
                    f"SELECT memory_id FROM memories WHERE memory_id IN ({marks}) AND NOT ({live_sql()})", [*chunk, at]
                )
            )
        return out

    def iter_rows(self, where: str = "", params: Sequence[Any] = (), order: str = "") -> Iterator[LedgerRow]:
        sql = _SELECT + (f" WHERE {where}" if where else "") + (f" ORDER BY {order}" if order else "")
        for r in self.query(sql, params):
            yield row_from(r)

    def predecessors(self, memory_id: str) -> list[str]:
        """Every memory that `memory_id` superseded, directly or through a chain (newest first)."""
        rows = self.query(
            """WITH RECURSIVE chain(id, depth) AS (
                   SELECT memory_id, 1 FROM memories WHERE superseded_by = ?
                   UNION
                   SELECT m.memory_id, c.depth + 1 FROM memories m JOIN chain c ON m.superseded_by = c.id
                   WHERE c.depth < 10000)
               SELECT id FROM chain ORDER BY depth""",
            (memory_id,),
        )
        return [r[0] for r in rows]

    def successors(self, memory_id: str) -> list[str]:
        """The chain of replacements after `memory_id`, oldest first (stops at a cycle)."""
        out: list[str] = []
        seen = {memory_id}
        current = self.get(memory_id)
        while current is not None and current.superseded_by:
            nxt = current.superseded_by
            if nxt in seen:
                break
            out.append(nxt)
            seen.add(nxt)
            current = self.get(nxt)
        return out

    def scope_ids(self, scope: dict[str, str]) -> list[str]:
        where = " AND ".join(f"{k} = ?" for k in scope)
        return [
            r[0]
            for r in self.query(
                f"SELECT memory_id FROM memories WHERE {where} AND deleted_at IS NULL", list(scope.values())
            )
        ]

    # -- writes -----------------------------------------------------------------------------
    def insert(
        self, rows: Sequence[LedgerRow], *, ignore_existing: bool = False, new: bool = False, keep_state: bool = False
    ) -> int:
        """Write rows: replacing rows with the same id, keeping them (``ignore_existing``), or, for ids that
        cannot exist yet (``new``: fresh ids from mem0's add), a plain INSERT. ``keep_state``: a row that
        exists already (adopted meanwhile, maybe by another replica, and then confirmed, superseded,
        invalidated, deleted or used) gets only the birth facts; its state and uses are kept."""
        if not rows:
            return 0
        mode = "birth" if keep_state else ("new" if new else ("ignore" if ignore_existing else "replace"))
        sql = _UPSERT_BIRTH if keep_state else _INSERT_SQL[mode]
        keyed = [r for r in rows if r.topic_key is not None]
        if not keyed:  # the common case: no key to make room for, one batched statement
            return self.write_rows(sql, [r.as_tuple() for r in rows])
        plain = [r.as_tuple() for r in rows if r.topic_key is None]

        def write(conn: Any) -> int:
            count = conn.executemany(sql, plain).rowcount if plain else 0
            for row in keyed:  # one at a time, in order: two rows of one key in the batch chain too
                count += _write_keyed(conn, sql, row, mode)
            return int(count)

        return int(self.claiming(write))

    def write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Write ``rows`` (tuples of :data:`COLUMNS`) with ``sql``, an ``INSERT INTO memories`` of one ``VALUES``
        group, in one transaction; returns the rows written."""
        return self._write(sql, rows, many=True)

    def confirm(self, memory_id: str, when: datetime, via: str = "confirm") -> None:
        """Record a confirmation at ``when`` (``via``: "confirm", or "update" for a new text): the row's
        ``confirmed_at`` and a line of the confirmations log, in one transaction; releases it from quarantine
        (when it then holds its topic key, the other row holding it is chained to this one). An unknown id
        changes nothing."""
        stamp = to_iso(when)

        def write(conn: Any) -> None:
            found = conn.execute(_SELECT + " WHERE memory_id = ?", (memory_id,)).fetchone()
            if found is not None:
                self.confirm_in(conn, row_from(found), stamp, via)

        self.claiming(write)

    def confirm_in(self, conn: Any, row: LedgerRow, stamp: str, via: str = "confirm", *, where: str = "") -> int:
        """Inside a transaction: confirm ``row`` at ``stamp`` (only while ``where``, a SQL condition, also holds):
        when this releases it from quarantine and so makes it hold its topic key, the row holding that key is
        chained to it first; then ``confirmed_at``, ``quarantined = 0`` and a line of the confirmations log.
        Returns how many rows changed (0 or 1)."""
        if row.quarantined:
            self.link_guard(conn)
            make_room(conn, replace(row, quarantined=False), stamp, wins=True)
        changed = int(
            conn.execute(
                "UPDATE memories SET confirmed_at = ?, quarantined = 0 WHERE memory_id = ?"
                + (f" AND {where}" if where else ""),
                (stamp, row.memory_id),
            ).rowcount
        )
        if changed:
            conn.execute(
                self.dialect.insert_ignore("confirmations", CONFIRMATIONS.column_names), (row.memory_id, stamp, via)
            )
        return changed

    def confirmations(self, memory_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """memory id -> (confirmed_at, via) of every confirmation of it, oldest first (ids never confirmed are
        left out); {} for a ledger older than the log (opened read-only)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids or not self.has_table("confirmations"):
            return {}
        out: dict[str, list[tuple[str, str]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            sql = (
                f"SELECT memory_id, confirmed_at, via FROM confirmations WHERE memory_id IN "
                f"({','.join('?' * len(chunk))}) ORDER BY memory_id, confirmed_at"
            )
            for mid, at, via in self.query(sql, chunk):
                out.setdefault(str(mid), []).append((str(at), str(via)))
        return out

    def mark_guarded(
        self, memory_id: str, redacted: Sequence[str], flag: str | None, *, quarantine: bool = False
    ) -> None:
        """Record what the write guard found in a memory's new text (kinds of credential replaced, a
        standing-order label; ``quarantine``: not served until confirmed). Nothing found: nothing written."""
        if not redacted and not flag:
            return
        self._write(
            "UPDATE memories SET redacted = ?, flag = ?, "
            "quarantined = CASE WHEN ? = 1 THEN 1 ELSE quarantined END WHERE memory_id = ?",
            (",".join(redacted) or None, flag, int(quarantine), memory_id),
        )

    def set_expiry(self, memory_id: str, expires_at: datetime | None) -> None:
        self._write(
            "UPDATE memories SET expires_at = ? WHERE memory_id = ?",
            (to_iso(expires_at) if expires_at else None, memory_id),
        )

    def link_supersede(self, old_id: str, new_id: str, when: datetime, *, follow: bool = False) -> None:
        """Point old -> new, refusing self links and cycles (checked inside the transaction). A memory that is
        already superseded by another is refused (:class:`SupersedeError`), or with ``follow`` the live end of
        its chain is superseded instead (a topic-key upsert that lost a race to another writer)."""
        with self.transaction() as conn:
            self.link_guard(conn)
            _link(conn, _head(conn, old_id, new_id) if follow else old_id, new_id, to_iso(when))

    def add_linked(
        self,
        row: LedgerRow,
        old_id: str,
        when: datetime,
        action: str = "supersede",
        reason: str = "",
        *,
        follow: bool = False,
    ) -> None:
        """In one transaction: write the row of a memory just stored (replacing a row a reader may have
        adopted meanwhile), mark ``old_id`` superseded by it (``action`` "supersede", cycles refused) or
        invalidated (``action`` "invalidate", with ``reason``), and close the operation's ``pending``
        entry. Readers see the old memory live and the new one unknown, or the old one replaced and the
        new one recorded: never both live. ``follow``: as in :meth:`link_supersede`."""
        stamp = to_iso(when)

        def write(conn: Any) -> None:
            # the old memory first: it usually holds the topic key the new row takes over
            if action == "supersede":
                _link(conn, _head(conn, old_id, row.memory_id) if follow else old_id, row.memory_id, stamp)
            else:
                conn.execute(
                    "UPDATE memories SET invalid_at = ?, invalid_reason = ? WHERE memory_id = ?",
                    (stamp, reason, old_id),
                )
            conn.execute(_INSERT_SQL["replace"], make_room(conn, row, stamp).as_tuple())
            conn.execute("DELETE FROM pending WHERE memory_id = ? AND action = ?", (old_id, action))

        self.claiming(write)

    def invalidate(self, memory_id: str, reason: str, when: datetime) -> None:
        self._write(
            "UPDATE memories SET invalid_at = ?, invalid_reason = ? WHERE memory_id = ?",
            (to_iso(when), reason, memory_id),
        )

    def tombstone(self, memory_ids: Sequence[str], when: datetime) -> None:
        """Tombstone these memories; the same statement journals each as a pending delete (their points are
        deleted through mem0 next, and :meth:`settle` closes the entries once they are gone)."""
        stamp = to_iso(when)
        self._write(
            "UPDATE memories SET deleted_at = COALESCE(deleted_at, ?) WHERE memory_id = ?",
            [(stamp, mid) for mid in memory_ids],
            many=True,
        )

    def deletion_chain(self, memory_id: str) -> list[str]:
        """What deleting ``memory_id`` takes: everything it superseded, directly or through a chain (the oldest
        first), then the memory itself; each id once."""
        return list(dict.fromkeys([*reversed(self.predecessors(memory_id)), memory_id]))

    def tombstone_live_chain(self, memory_id: str, when: datetime) -> list[str] | None:
        """A delete's first step: when ``memory_id`` has a row that is not deleted yet, tombstone its
        :meth:`deletion_chain` in one write (each journaled as a pending delete by the trigger) and return
        the chain. None, writing nothing, when the ledger has no such row (unknown, or deleted already).

        On SQLite the chain is read first and written by its ids (one recursive ``UPDATE`` costs several
        times the two statements)."""
        chain = self.deletion_chain(memory_id)
        marks = ",".join("?" * len(chain))
        written = self._write(
            f"UPDATE memories SET deleted_at = COALESCE(deleted_at, ?) WHERE memory_id IN ({marks}) "
            "AND EXISTS (SELECT 1 FROM memories WHERE memory_id = ? AND deleted_at IS NULL)",
            (to_iso(when), *chain, memory_id),
        )
        return chain if written else None

    def insert_tombstoned(self, rows: Sequence[LedgerRow], when: datetime) -> None:
        """Write rows of memories about to be deleted through mem0, tombstoned and journaled as pending
        deletes, in one transaction."""
        stamp = to_iso(when)
        at = DELETED_AT  # each row's values with the tombstone's time in place (no copy of the row itself)
        values = [(*v[:at], v[at] or stamp, *v[at + 1 :]) for v in map(ROW_VALUES, rows)]
        with self.transaction() as conn:
            conn.executemany(_INSERT_SQL["replace"], values)
            conn.executemany(_PENDING_DELETE, [(v[0], v[at]) for v in values])

    def untombstone(self, memory_ids: Sequence[str]) -> None:
        """Take back the tombstones of memories whose delete through mem0 failed (their points are still
        there and served) and close their journal entries, in one transaction."""
        ids = list(dict.fromkeys(memory_ids))

        def write(conn: Any) -> None:
            for mid in ids:
                found = conn.execute(_SELECT + " WHERE memory_id = ?", (mid,)).fetchone()
                if found is not None and found[COLUMNS.index("topic_key")] is not None:
                    revived = replace(row_from(found), deleted_at=None)
                    placed = make_room(conn, revived, None)
                    if placed is not revived:  # a newer row took the key meanwhile: this one is chained to it
                        conn.execute(_MARK_SUPERSEDED, (placed.superseded_by, placed.superseded_at, mid))
                conn.execute("UPDATE memories SET deleted_at = NULL WHERE memory_id = ?", (mid,))
                conn.execute("DELETE FROM pending WHERE action = 'delete' AND memory_id = ?", (mid,))

        self.claiming(write)

    def tombstone_all(self, when: datetime) -> None:
        """Tombstone every row, each journaled as a pending delete (``reset``)."""
        self._write("UPDATE memories SET deleted_at = COALESCE(deleted_at, ?)", (to_iso(when),))

    # -- operations under way (the pending journal) ---------------------------------------------
    def begin(self, memory_id: str, action: str, when: datetime) -> None:
        """Journal an operation on ``memory_id`` before its first step outside the ledger (a supersede or
        invalidation whose new memory mem0 is about to store)."""
        self._write(_BEGIN, (memory_id, action, to_iso(when)))

    def _has_journal(self) -> bool:
        """Whether this ledger has the ``pending`` table, asked once per connection (only a read-only opening of
        an older ledger lacks it, and nothing adds it while it stays open read-only)."""
        known = getattr(self, "_journal", None)
        if known is None:
            known = self.has_table("pending")
            if known:
                self._journal = True  # a missing table is asked again: a writable opening may migrate later
        return known

    def pending(self, action: str | None = None) -> list[tuple[str, str, str]]:
        """(memory_id, action, since) of every operation still under way (or left behind by a process that
        died), oldest first; only ``action``'s when given. Empty for a ledger older than the journal."""
        where, params = ("WHERE action = ?", (action,)) if action else ("", ())
        if not self._has_journal():
            return []  # a read-only ledger older than the journal
        rows = self.query(f"SELECT memory_id, action, since FROM pending {where} ORDER BY since, memory_id", params)
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def settle(self, memory_ids: Sequence[str], action: str) -> None:
        """Close the journal entries of operations that are done (or were undone)."""
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            self._write(
                f"DELETE FROM pending WHERE action = ? AND memory_id IN ({','.join('?' * len(chunk))})",
                [action, *chunk],
            )

    def scrub_fields(
        self,
        memory_ids: Sequence[str],
        texts: Sequence[str],
        columns: Sequence[str] = ("source", "invalid_reason", "topic_key"),
    ) -> int:
        """Blank every text field of these memories' rows that holds one of ``texts`` (one transaction); returns
        the fields blanked. (``forget --scrub`` also vacuums a SQLite file; PostgreSQL vacuums the table.)"""
        ids = list(dict.fromkeys(memory_ids))
        if not ids or not texts:
            return 0
        blanked = 0
        marks = ",".join("?" * len(ids))
        with self.transaction() as conn:
            for column in columns:
                for text in texts:
                    blanked += conn.execute(
                        f"UPDATE memories SET {column} = NULL WHERE memory_id IN ({marks}) "
                        f"AND {self.dialect.find}({column}, ?) > 0",
                        [*ids, text],
                    ).rowcount
        return blanked

    def record_uses(self, uses: dict[str, tuple[int, datetime]]) -> None:
        if not uses:
            return
        self._write(
            "UPDATE memories SET use_count = use_count + ?, "
            "last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END "
            "WHERE memory_id = ?",
            [(count, to_iso(when), to_iso(when), mid) for mid, (count, when) in uses.items()],
            many=True,
        )

    def purge_tombstones(self, older_than: datetime) -> int:
        """Remove tombstoned rows deleted before `older_than` (their memories are gone from mem0)."""
        return self._write(
            "DELETE FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? "
            "AND NOT EXISTS (SELECT 1 FROM memories s WHERE s.superseded_by = memories.memory_id "
            "AND s.deleted_at IS NULL)",
            (to_iso(older_than),),
        )

    # -- maintenance queries ----------------------------------------------------------------
    def review_candidates(
        self, now: datetime, older_than: timedelta, limit: int, scope: dict[str, str] | None = None
    ) -> list[LedgerRow]:
        cutoff = to_iso(shift_time(now, -older_than, what="older_than"))
        where = live_sql(expiry=False) + " AND expires_at IS NULL AND COALESCE(confirmed_at, created_at) < ?"
        params: list[Any] = [cutoff]
        for key, value in (scope or {}).items():
            where += f" AND {key} = ?"
            params.append(value)
        sql = _SELECT + f" WHERE {where} ORDER BY COALESCE(confirmed_at, created_at) LIMIT ?"
        return [row_from(r) for r in self.query(sql, [*params, limit])]

    def prune_candidates(
        self, now: datetime, retain: timedelta, limit: int | None = None
    ) -> list[tuple[LedgerRow, str]]:
        """Rows prune should delete: expired now, or superseded/invalidated before now - retain.

        All of them oldest first; with ``limit``, at most that many in key order, so the scan stops at
        the first ``limit`` matches (the cheap query auto_prune runs inside the app's calls)."""
        stamp, cutoff = to_iso(now), to_iso(shift_time(now, -retain, what="retain_superseded"))
        out: list[tuple[LedgerRow, str]] = []
        where = (
            "deleted_at IS NULL AND ((expires_at IS NOT NULL AND expires_at <= ?) "
            "OR (superseded_at IS NOT NULL AND superseded_at <= ?) "
            "OR (invalid_at IS NOT NULL AND invalid_at <= ?))"
        )
        params: tuple[Any, ...] = (stamp, cutoff, cutoff)
        if limit is None:
            rows: Iterable[LedgerRow] = self.iter_rows(where, params, order="created_at")
        else:
            rows = [
                row_from(r)
                for r in self.query(_SELECT + f" WHERE {where} ORDER BY memory_id LIMIT ?", (*params, int(limit)))
            ]
        for row in rows:
            if row.expires_at and row.expires_at <= stamp:
                reason = "expired"
            elif row.superseded_by:
                reason = "superseded"
            else:
                reason = "invalidated"
            out.append((row, reason))
        return out

    def unused_candidates(self, now: datetime, older_than: timedelta) -> list[LedgerRow]:
        """Live memories neither used nor confirmed since ``now - older_than``, least recently touched
        first. A never-used memory counts from its creation; a quarantined one is not live, so it is
        left to review."""
        cutoff, stamp = to_iso(shift_time(now, -older_than, what="unused")), to_iso(now)
        where = live_sql() + " AND COALESCE(last_used_at, created_at) < ? AND COALESCE(confirmed_at, created_at) < ?"
        touched = "COALESCE(last_used_at, created_at), COALESCE(confirmed_at, created_at)"
        order = f"{self.dialect.greatest}({touched}), memory_id"
        return list(self.iter_rows(where, (stamp, cutoff, cutoff), order=order))

    def purgeable_tombstones(self, older_than: datetime, limit: int | None = None) -> list[str]:
        """Ids :meth:`purge_rows` may remove, oldest tombstone first (at most ``limit``): tombstoned
        before ``older_than`` and not pointed at by a row that is still alive (removing a row cascades
        to the rows it superseded)."""
        rows = self.query(
            "SELECT memory_id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? "
            "AND NOT EXISTS (SELECT 1 FROM memories s WHERE s.superseded_by = memories.memory_id "
            "AND s.deleted_at IS NULL) ORDER BY deleted_at, memory_id LIMIT ?",
            (to_iso(older_than), 2**62 if limit is None else int(limit)),
        )
        return [r[0] for r in rows]


_MARK_SUPERSEDED = (
    "UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE memory_id = ? AND superseded_by IS NULL"
)


def _write_keyed(conn: Any, sql: str, row: LedgerRow, mode: str) -> int:
    """Inside a claiming transaction: write one row that has a topic key (``mode`` as in
    :meth:`Ledger.insert`: "new", "ignore", "replace" or "birth"), after making room for the key: the row as
    it will stand (for "birth" onto an existing row: that row's state with the new birth facts) takes it over
    from an older holder, or is written superseded by a newer one."""
    existing = None
    if mode in ("ignore", "birth"):
        found = conn.execute(_SELECT + " WHERE memory_id = ?", (row.memory_id,)).fetchone()
        existing = row_from(found) if found else None
        if existing is not None and mode == "ignore":
            return 0  # kept as it is: nothing changes who holds the key
    effective = row
    if existing is not None:
        births = {c: getattr(row, c) for c in _BIRTH_COLUMNS}
        effective = replace(existing, **births, quarantined=existing.quarantined and row.quarantined)
    placed = make_room(conn, effective, None)
    if placed is not effective:  # a newer row holds the key: this one is written superseded by it
        if existing is not None:
            conn.execute(_MARK_SUPERSEDED, (placed.superseded_by, placed.superseded_at, row.memory_id))
        row = replace(row, superseded_by=placed.superseded_by, superseded_at=placed.superseded_at)
    return int(conn.execute(sql, row.as_tuple()).rowcount)


def _link(conn: Any, old_id: str, new_id: str, stamp: str) -> None:
    """Inside a transaction: point old -> new, refusing self links and cycles."""
    if old_id == new_id:
        raise SupersedeError(f"a memory cannot supersede itself ({old_id})")
    walk: str | None = new_id
    seen: set[str] = set()
    while walk is not None and walk not in seen:
        if walk == old_id:
            raise SupersedeError(
                f"superseding {old_id} by {new_id} would make a cycle: {new_id} already leads "
                f"back to {old_id} through its own chain"
            )
        seen.add(walk)
        nxt = conn.execute("SELECT superseded_by FROM memories WHERE memory_id = ?", (walk,)).fetchone()
        walk = nxt[0] if nxt else None
    # compare-and-set: a memory another writer superseded (or deleted) meanwhile is refused, never relinked
    changed = conn.execute(
        "UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE memory_id = ? "
        "AND (superseded_by IS NULL OR superseded_by = ?) AND deleted_at IS NULL",
        (new_id, stamp, old_id, new_id),
    ).rowcount
    if not changed:
        now = conn.execute("SELECT superseded_by, deleted_at FROM memories WHERE memory_id = ?", (old_id,)).fetchone()
        if now is not None and now[1]:
            raise SupersedeError(f"{old_id} was deleted on {now[1]}; there is nothing live to supersede")
        if now is not None and now[0]:
            raise SupersedeError(f"{old_id} is already superseded by {now[0]}; supersede {now[0]} instead")


def _head(conn: Any, old_id: str, new_id: str) -> str:
    """Inside a transaction: the live end of ``old_id``'s chain (``old_id`` itself when nothing superseded it
    yet, or when its replacement is ``new_id``)."""
    walk, seen = old_id, {old_id}
    while True:
        found = conn.execute("SELECT superseded_by FROM memories WHERE memory_id = ?", (walk,)).fetchone()
        nxt = found[0] if found else None
        if nxt is None or nxt == new_id or nxt in seen:
            return walk
        seen.add(nxt)
        walk = nxt
