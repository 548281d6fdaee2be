"""One live row per topic key and scope: the ledger's unique partial index and how writes make room for it.

A ``topic_key`` names a fact's identity ("same key in the same scope = same fact"), so at most one row per
(scope, key) may hold it: the unique index :data:`TOPIC_INDEX` covers the rows with a key that are not
superseded, invalidated, deleted or quarantined (a quarantined row is tool output not served until confirmed:
it never replaces a fact, so it holds no key until its confirmation). Scopes compare with NULLs equal
(``COALESCE(user_id, '')`` and so on).

Every write that can make a row hold a key (a new memory's row, a row flushed late from a replica's buffer,
an adoption, a revived tombstone, a confirmation releasing a quarantined row, a copy into PostgreSQL) first
calls :func:`make_room` inside its transaction: when another row holds the key, the older of the two is
chained to the newer (superseded, never deleted; compare-and-set), so the write never breaks the index and
nothing is lost. "Newer" is the later ``created_at`` (the row written last on a tie); a confirmation makes
the confirmed row the newer. The index is the guarantee: a writer that raced past the check meets it, and
its transaction is run again (:class:`TopicConflict`), finding the other row this time.

The migration to schema version 4 resolves rows that already share a key the same way before it creates
the index (:func:`chain_duplicates`): the newest stays live, each older one points at the next newer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..errors import LedgerError

TOPIC_INDEX = "memories_topic_live"

HOLDS_KEY = (
    "topic_key IS NOT NULL AND superseded_by IS NULL AND invalid_at IS NULL AND deleted_at IS NULL AND quarantined = 0"
)
"""The SQL condition of a row that holds its topic key (the index's ``WHERE``)."""

_SCOPE = ("COALESCE(user_id, '')", "COALESCE(agent_id, '')", "COALESCE(run_id, '')")

INDEX_SQL = f"CREATE UNIQUE INDEX {TOPIC_INDEX} ON memories (topic_key, {', '.join(_SCOPE)}) WHERE {HOLDS_KEY}"

_HOLDER = (
    f"SELECT memory_id, created_at FROM memories WHERE {HOLDS_KEY} AND topic_key = ? AND "
    + " AND ".join(f"{s} = ?" for s in _SCOPE)
    + " AND memory_id <> ?"
)

_CHAIN = (
    "UPDATE memories SET superseded_by = ?, superseded_at = ? WHERE memory_id = ? AND superseded_by IS NULL "
    "AND deleted_at IS NULL"
)

RETRIES = 5
"""How many times a transaction that met the index (another writer raced past its check) is run again."""


class TopicConflict(LedgerError):
    """A write met the unique topic-key index: another writer made a row hold the key meanwhile. The
    transaction was rolled back; run it again (it then finds that row and chains)."""


def holds_key(row: Any) -> bool:
    """Whether a ledger row, as it will be written, holds its topic key."""
    return (
        row.topic_key is not None
        and not row.superseded_by
        and not row.invalid_at
        and not row.deleted_at
        and not row.quarantined
    )


def holder(conn: Any, row: Any) -> tuple[str, str] | None:
    """(memory_id, created_at) of the other row holding ``row``'s topic key in its scope, if any."""
    found = conn.execute(
        _HOLDER, (row.topic_key, row.user_id or "", row.agent_id or "", row.run_id or "", row.memory_id)
    ).fetchone()
    return (str(found[0]), str(found[1])) if found else None


def make_room(conn: Any, row: Any, stamp: str | None, *, wins: bool = False) -> Any:
    """Inside a transaction whose foreign keys are deferred (the row may not be written yet), before ``row`` is
    written with exactly these facts: when another row holds its topic key, chain the older of the two to the
    newer, at ``stamp`` (None: when the newer one was created). Returns the row to write: ``row``, or ``row``
    superseded by the holder when the holder is the newer. ``wins``: ``row`` is the newer whatever the times
    (it is being confirmed)."""
    if not holds_key(row):
        return row
    found = holder(conn, row)
    if found is None:
        return row
    other, created = found
    if wins or created <= row.created_at:  # at the same instant the row written last is the newer
        # compare-and-set: only while it still holds the key
        conn.execute(_CHAIN, (row.memory_id, stamp or row.created_at, other))
        return row
    return replace(row, superseded_by=other, superseded_at=stamp or created)


def chain_duplicates(conn: Any, stamp: str) -> int:
    """Inside a transaction: chain every row that shares a topic key and scope with a newer one to the next
    newer (the newest stays live), at ``stamp``. Returns how many rows were chained."""
    rows = conn.execute(
        f"SELECT memory_id, topic_key, {', '.join(_SCOPE)}, created_at FROM memories WHERE {HOLDS_KEY}"
    ).fetchall()
    groups: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for mid, key, user, agent, run, created in rows:
        groups.setdefault((str(key), str(user), str(agent), str(run)), []).append((str(created), str(mid)))
    links = []
    for members in groups.values():
        if len(members) > 1:
            members.sort()
            links += [(newer[1], stamp, older[1]) for older, newer in zip(members, members[1:])]
    for link in links:
        conn.execute(_CHAIN, link)
    return len(links)


def conflict_from(text: str) -> bool:
    """Whether a database error's text is about the topic-key index."""
    return TOPIC_INDEX in text


def chained_rows(rows: Sequence[Any], stamp: str) -> tuple[list[Any], int]:
    """The same resolution for ledger rows held in memory (a copy of a ledger older than version 4): rows that
    share a topic key and scope with a newer one, superseded by the next newer. Returns (rows, how many)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, row in enumerate(rows):
        if holds_key(row):
            groups.setdefault((row.topic_key, row.user_id or "", row.agent_id or "", row.run_id or ""), []).append(i)
    out = list(rows)
    chained = 0
    for members in groups.values():
        members.sort(key=lambda i: (rows[i].created_at, rows[i].memory_id))
        for older, newer in zip(members, members[1:]):
            out[older] = replace(rows[older], superseded_by=rows[newer].memory_id, superseded_at=stamp)
            chained += 1
    return out, chained
