"""history.db checks: mem0's changelog against the vector store, and deleted text that lingers."""

from __future__ import annotations

import shlex
from datetime import timedelta
from typing import Any

from ...report import Severity
from ..scratch import ReadHistory
from .base import (
    FIX_IDS,
    CheckResult,
    Context,
    check,
    clip,
    counted,
    finding,
    has_have,
    ids_cmd,
    is_are,
    n_memories,
    was_were,
)

MESSAGE_SAMPLE = 200


def _label(ctx: Context, h: ReadHistory) -> str:
    """ "LABEL: " before an example from one host's history.db, when there are several."""
    return f"{h.label}: " if len(ctx.db.histories) > 1 else ""


def _text_at(ctx: Context, src: int, rowid: int, column: str = "COALESCE(new_memory, old_memory)") -> Any:
    with ctx.db.attached(ctx.db.histories[src]) as alias:
        return ctx.db.one(f"SELECT {column} FROM {alias}.history WHERE rowid = ?", (rowid,))


def _events(ctx: Context) -> list[tuple[ReadHistory, list[tuple[str, int, int, int]]]]:
    """Per history.db, (event, rows, rows changed in the last 7 days, rows with no timestamp), from ONE scan of
    each file shared by the checks that need it (each scan of a 1M-row history costs about half a second)."""
    if "_history_events" not in ctx.extra:
        since = (ctx.now - timedelta(days=7)).isoformat()
        found = []
        for h in ctx.db.histories:
            with ctx.db.attached(h) as alias:
                rows = ctx.db.rows(
                    f"""SELECT COALESCE(event, '?'), COUNT(*), SUM(created_at >= :since OR updated_at >= :since),
                              SUM(created_at IS NULL OR created_at = '')
                       FROM {alias}.history GROUP BY 1 ORDER BY 2 DESC""",
                    {"since": since},
                )
            found.append((h, [(event, n, recent or 0, missing or 0) for event, n, recent, missing in rows]))
        ctx.extra["_history_events"] = found
    return list(ctx.extra["_history_events"])


@check(
    "HISTORY_ACTIVITY",
    "history",
    needs=("history",),
    severity="info",
    means="history.db rows by event and changes in the last 7 days",
    fix="nothing to fix: the figures say how the store is used",
)
def activity(ctx: Context) -> CheckResult:
    per_file = _events(ctx)
    by_event: dict[str, int] = {}
    for _h, events in per_file:
        for event, n, _, _ in events:
            by_event[event] = by_event.get(event, 0) + n
    by_event = dict(sorted(by_event.items(), key=lambda item: -item[1]))  # the most frequent first, as one file's
    recent = sum(r for _h, events in per_file for _, _, r, _ in events)
    total = sum(by_event.values())
    ctx.extra.setdefault("stats", {})["history_rows_by_event"] = by_event
    ctx.extra["stats"]["history_rows_last_7_days"] = recent
    details: dict[str, Any] = {"summary": True}
    examples = [f"{event}: {n}" for event, n in by_event.items()]
    if len(per_file) > 1:
        rows = {h.label: sum(n for _, n, _, _ in events) for h, events in per_file}
        details["rows_by_host"] = rows
        ctx.extra["stats"]["history_rows_by_host"] = rows
        examples += [f"{label}: {n} rows ({h.shown})" for (label, n), (h, _e) in zip(rows.items(), per_file)]
    yield finding(
        "HISTORY_ACTIVITY",
        Severity.INFO,
        "history",
        (
            f"{len(per_file)} history.db files hold {total} change rows"
            if len(per_file) > 1
            else f"history.db holds {total} change rows"
        )
        + f"; {recent} in the last 7 days",
        count=total,
        examples=examples,
        **details,
        why="The changelog is mem0's only record of what was added, updated and deleted, and when.",
    )


@check(
    "HISTORY_MISSING_TIMESTAMPS",
    "history",
    needs=("history",),
    severity="warning",
    means="history rows without a time",
    fix="write memories only through mem0's API (it stamps every change); find what wrote these rows",
)
def missing_timestamps(ctx: Context) -> CheckResult:
    n = sum(m for _h, events in _events(ctx) for _, _, _, m in events)
    if n:
        ids: list[str] = []
        for h, events in _events(ctx):
            if not sum(m for _, _, _, m in events) or len(ids) >= ctx.examples:
                continue
            with ctx.db.attached(h) as alias:
                ids += [
                    _label(ctx, h) + str(r[0])
                    for r in ctx.db.rows(
                        f"SELECT memory_id FROM {alias}.history WHERE created_at IS NULL OR created_at = '' LIMIT ?",
                        (ctx.examples - len(ids),),
                    )
                ]
        yield finding(
            "HISTORY_MISSING_TIMESTAMPS",
            Severity.WARNING,
            "history",
            f"{n} history rows have no timestamp",
            count=n,
            examples=ids,
            why="Without a time, nobody can tell how old a fact is or what the agent believed on a given day.",
            fix="Write memories through mem0's API (it stamps every change); find the script that wrote these rows.",
        )


def _lost_where(ctx: Context) -> str:
    where = "hist.last_event IS NOT 'DELETE' AND hist.memory_id NOT IN (SELECT id FROM points)"
    led = ctx.db.ledger
    if ctx.db.sources.ledger and led is not None:
        # mem0 deletes the point first and writes the DELETE row second: a crash in between leaves history
        # saying "exists" about a memory the ledger tombstoned on purpose. That one was deleted, not lost.
        where += f" AND hist.memory_id NOT IN (SELECT m.memory_id FROM {led.keys} m WHERE {led.deleted_key('m')})"
    return where


def _hosts(ctx: Context) -> dict[str, Any]:
    """The hosts whose history.db files a finding over all of them read (when there are several)."""
    return {"hosts": [h.label for h in ctx.db.histories]} if len(ctx.db.histories) > 1 else {}


@check(
    "MEMORIES_LOST",
    "history",
    needs=("histories", "points"),
    severity="error",
    means="history says added and never deleted, but the vector store lacks them",
    fix="restore the vector store and history.db from the same backup, together; then move the store off /tmp",
)
def lost(ctx: Context) -> CheckResult:
    where = _lost_where(ctx)
    n = ctx.db.one(f"SELECT COUNT(*) FROM hist WHERE {where}")
    if n:
        examples = [
            f"{mid}: {clip(_text_at(ctx, src, rowid), 60)}"
            for mid, src, rowid in ctx.db.rows(
                f"SELECT hist.memory_id, hist.src, hist.last_rowid FROM hist WHERE {where} LIMIT ?", (ctx.examples,)
            )
        ]
        yield finding(
            "MEMORIES_LOST",
            Severity.ERROR,
            "history",
            f"{n_memories(n)} that history.db says exist {is_are(n)} missing from the vector store",
            count=n,
            examples=examples,
            **_hosts(ctx),
            why="The vector store lost data that was never deleted through mem0, typically a /tmp wipe at reboot "
            "or a vector store restored from an older snapshot than history.db.",
            fix="Restore the vector store and history.db from the same backup, together; then move the store off "
            "/tmp (" + ctx.cmd("relocate --to /var/lib/mem0") + ")",
        )


@check(
    "POINTS_WITHOUT_HISTORY",
    "history",
    needs=("histories", "points"),
    severity="warning",
    means="vector points with no history: written around mem0",
    fix="review them (`mem0-hygiene review`); write only through mem0's API from now on",
)
def without_history(ctx: Context) -> CheckResult:
    n, examples = counted(ctx, "FROM points WHERE id NOT IN (SELECT memory_id FROM hist)", "id, text")
    if n:
        yield finding(
            "POINTS_WITHOUT_HISTORY",
            Severity.WARNING,
            "history",
            f"{n_memories(n)} in the vector store {has_have(n)} no history at all",
            count=n,
            examples=examples,
            **_hosts(ctx),
            why="Something wrote to the vector store around mem0 (a script, a migration), so nothing records where "
            "these came from or when.",
            fix="Review them (" + ctx.cmd("review") + "); write only through mem0's API from now on.",
        )


@check(
    "MEMORIES_RESURRECTED",
    "history",
    needs=("histories", "points"),
    severity="error",
    means="deleted according to history, back in the vector store (mixed restore)",
    fix=(
        "delete them again through mem0's API (`mem0-hygiene forget ID...`, ids in the finding); back up and "
        "restore both stores together"
    ),
)
def resurrected(ctx: Context) -> CheckResult:
    back = "FROM hist JOIN points p ON p.id = hist.memory_id WHERE hist.last_event = 'DELETE'"
    n, examples = counted(ctx, back, "p.id, p.text")
    if n:
        ids = [r[0] for r in ctx.db.rows(f"SELECT p.id {back} ORDER BY p.id LIMIT ?", (FIX_IDS,))]
        yield finding(
            "MEMORIES_RESURRECTED",
            Severity.ERROR,
            "history",
            f"{n_memories(n)} that {was_were(n)} deleted {is_are(n)} back in the vector store",
            count=n,
            examples=examples,
            **_hosts(ctx),
            why="A vector-store snapshot older than history.db was restored on its own, so deleted (often wrong or "
            "private) facts are served again.",
            fix=ids_cmd(ctx, "forget", ids, n) + "\n# deleted again through mem0's API; from now on back up and "
            "restore both stores together (mem0-hygiene backup / restore)",
        )


_DELETED_TEXT = (
    "FROM hist_files f JOIN hist u ON u.memory_id = f.memory_id WHERE u.last_event = 'DELETE' AND f.text_rows > 0"
)


@check(
    "DELETED_TEXT_IN_HISTORY",
    "history",
    needs=("history",),
    severity="warning",
    means="deleted memories' text still readable in history.db",
    fix="erase it: `mem0-hygiene forget ID... --scrub` (ids in the finding)",
)
def deleted_text(ctx: Context) -> CheckResult:
    # each file's summary counts each memory's rows that still hold text and keeps the last one: no scan here.
    # A memory deleted on one host keeps its text in every host's history.db that wrote it down.
    memories, rows = ctx.db.conn.execute(
        f"SELECT COUNT(DISTINCT f.memory_id), COALESCE(SUM(f.text_rows), 0) {_DELETED_TEXT}"
    ).fetchone()
    if rows:
        text = "CASE WHEN COALESCE(old_memory, '') <> '' THEN old_memory ELSE new_memory END"
        examples = [
            f"{_label(ctx, ctx.db.histories[src])}{mid}: {clip(_text_at(ctx, src, rowid, text), 40)}"
            for mid, src, rowid in ctx.db.rows(
                f"SELECT f.memory_id, f.src, f.text_rowid {_DELETED_TEXT} ORDER BY f.memory_id, f.src LIMIT ?",
                (ctx.examples,),
            )
        ]
        details: dict[str, Any] = {}
        if len(ctx.db.histories) > 1:
            details["rows_by_host"] = {
                ctx.db.histories[src].label: n
                for src, n in ctx.db.rows(
                    f"SELECT f.src, SUM(f.text_rows) {_DELETED_TEXT} GROUP BY f.src ORDER BY f.src"
                )
            }
        yield finding(
            "DELETED_TEXT_IN_HISTORY",
            Severity.WARNING,
            "history",
            f"The text of {n_memories(memories, 'deleted memory', 'deleted memories')} is still readable in history.db "
            f"({n_memories(rows, 'row', 'rows')}"
            f"{' in ' + str(len(details['rows_by_host'])) + ' files' if details else ''})",
            count=memories,
            examples=examples,
            **details,
            why="mem0 keeps a deleted memory's text in history.old_memory; deleting a memory does not erase what "
            "it said, which matters for private data and erasure requests.",
            fix=ids_cmd(
                ctx,
                "forget",
                [
                    r[0]
                    for r in ctx.db.rows(
                        f"SELECT DISTINCT f.memory_id {_DELETED_TEXT} ORDER BY f.memory_id LIMIT ?", (FIX_IDS,)
                    )
                ],
                memories,
                "--scrub",
            )
            + "\n# blanks the text, keeps the event rows"
            + ("; on each host named, with its own --history-db" if details else ""),
        )


@check(
    "DELETED_TEXT_IN_MESSAGES",
    "history",
    needs=("history", "messages"),
    severity="warning",
    means="deleted memories' text still in mem0's raw `messages` table",
    fix="erase it: `mem0-hygiene forget ID... --scrub` (ids in the finding)",
)
def deleted_in_messages(ctx: Context) -> CheckResult:
    found = []
    checked = 0
    for h in ctx.db.histories:
        with ctx.db.attached(h) as alias:
            sample = ctx.db.rows(
                f"SELECT hh.memory_id, hh.old_memory FROM {alias}.history hh "
                "JOIN hist ON hist.memory_id = hh.memory_id WHERE hist.last_event = 'DELETE' AND hh.event = 'DELETE' "
                "AND length(hh.old_memory) >= 12 "
                "ORDER BY hh.rowid DESC LIMIT ?",
                (MESSAGE_SAMPLE,),
            )
        checked += len(sample)
        for mid, text in sample:
            for m in ctx.db.histories:  # the raw turns are on the host that extracted the memory
                if not m.messages:
                    continue
                with ctx.db.attached(m) as alias:
                    if ctx.db.one(f"SELECT 1 FROM {alias}.messages WHERE instr(content, ?) > 0 LIMIT 1", (text,)):
                        found.append(f"{_label(ctx, m)}{mid}: {clip(text, 40)}")
    if found:
        yield finding(
            "DELETED_TEXT_IN_MESSAGES",
            Severity.WARNING,
            "history",
            f"The text of {len(found)} deleted memories is still in mem0's raw messages table",
            count=len(found),
            examples=found[: ctx.examples],
            checked=checked,
            why="mem0 stores the raw conversation turns it extracted from; deleting the memory leaves them.",
            fix=ids_cmd(ctx, "forget", [f.split(": ")[0].split()[-1] for f in found], len(found), "--scrub")
            + "\n# also removes the text from the messages table",
        )


@check(
    "HISTORY_FREE_PAGES",
    "history",
    needs=("history",),
    severity="info",
    means="free pages in history.db that may still hold deleted text",
    fix="with the app stopped: `sqlite3 history.db 'VACUUM'`",
)
def free_pages(ctx: Context) -> CheckResult:
    deletes = ctx.db.one("SELECT COUNT(*) FROM hist WHERE last_event = 'DELETE'")
    if not deletes:
        return
    for h in ctx.db.histories:
        with ctx.db.attached(h) as alias:
            free = ctx.db.one(f"PRAGMA {alias}.freelist_count") or 0
            page = ctx.db.one(f"PRAGMA {alias}.page_size") or 4096
        if free:
            many = len(ctx.db.histories) > 1
            yield finding(
                "HISTORY_FREE_PAGES",
                Severity.INFO,
                "history",
                f"history.db{' of ' + h.label if many else ''} has {free} free pages ({free * page // 1024} KiB) "
                "that may still hold deleted text",
                count=free,
                examples=[h.shown] if many else [],
                **({"host": h.label} if many else {}),
                why="SQLite leaves deleted rows' bytes in free pages until they are reused; `strings history.db` "
                "shows them.",
                fix=f"sqlite3 {shlex.quote(h.shown)} 'VACUUM'  # with the app stopped",
            )


@check(
    "HOT_JOURNAL",
    "history",
    severity="warning",
    means=(
        "history.db or the ledger was left mid-commit (the app died): audited from a rolled-back copy, the "
        "file left for the app to recover"
    ),
    fix=(
        "start the app, or run a maintenance command that writes (`mem0-hygiene prune`): the first writer "
        "rolls the journal back"
    ),
)
def hot_journal(ctx: Context) -> CheckResult:
    recovered = ctx.db.sources.recovered
    if recovered:
        names = " and ".join(
            "the ledger" if s == "ledger" else "history.db" if s == "history" else f"history.db of {s.split(' ', 1)[1]}"
            for s in recovered
        )
        yield finding(
            "HOT_JOURNAL",
            Severity.WARNING,
            "history",
            f"{names} {'was' if len(recovered) == 1 else 'were'} left in the middle of a commit; audited from a "
            "rolled-back copy",
            count=len(recovered),
            examples=list(recovered.values()),
            why="A process died while writing (a hot journal holds the pages to put back). The audit read the last "
            "committed state from a copy and left the file as it is; half-written pages were never read.",
            fix="Start the app, or run a maintenance command that writes (such as `mem0-hygiene prune`): the first "
            "connection that may write rolls the journal back in the file itself.",
        )
