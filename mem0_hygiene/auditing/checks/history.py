"""history.db checks: mem0's changelog against the vector store, and deleted text that lingers."""

from __future__ import annotations

from datetime import timedelta

from ...render.text import plural
from ...report import Severity
from .base import CheckResult, Context, check, clip, counted, finding

MESSAGE_SAMPLE = 200


def _n(count: int, one: str = "memory", many: str = "memories") -> str:
    return plural(count, one, many)


def _be(count: int) -> str:
    return "is" if count == 1 else "are"


def _have(count: int) -> str:
    return "has" if count == 1 else "have"


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def _events(ctx: Context) -> list[tuple[str, int, int, int]]:
    """(event, rows, rows changed in the last 7 days, rows with no timestamp), from ONE scan of history.db
    shared by the checks that need it (each scan of a 1M-row history costs about half a second)."""
    if "_history_events" not in ctx.extra:
        since = (ctx.now - timedelta(days=7)).isoformat()
        rows = ctx.db.rows(
            """SELECT COALESCE(event, '?'), COUNT(*), SUM(created_at >= :since OR updated_at >= :since),
                      SUM(created_at IS NULL OR created_at = '')
               FROM h.history GROUP BY 1 ORDER BY 2 DESC""", {"since": since})
        ctx.extra["_history_events"] = [(event, n, recent or 0, missing or 0) for event, n, recent, missing in rows]
    return list(ctx.extra["_history_events"])


@check("HISTORY_ACTIVITY", "history", needs=("history",))
def activity(ctx: Context) -> CheckResult:
    events = _events(ctx)
    by_event = {event: n for event, n, _, _ in events}
    recent = sum(r for _, _, r, _ in events)
    total = sum(by_event.values())
    ctx.extra.setdefault("stats", {})["history_rows_by_event"] = by_event
    ctx.extra["stats"]["history_rows_last_7_days"] = recent
    yield finding(
        "HISTORY_ACTIVITY", Severity.INFO, "history",
        f"history.db holds {total} change rows; {recent} in the last 7 days",
        count=total, examples=[f"{event}: {n}" for event, n in by_event.items()], summary=True,
        why="The changelog is mem0's only record of what was added, updated and deleted, and when.",
    )


@check("HISTORY_MISSING_TIMESTAMPS", "history", needs=("history",))
def missing_timestamps(ctx: Context) -> CheckResult:
    n = sum(m for _, _, _, m in _events(ctx))
    if n:
        ids = [r[0] for r in ctx.db.rows(
            "SELECT memory_id FROM h.history WHERE created_at IS NULL OR created_at = '' LIMIT ?", (ctx.examples,))]
        yield finding(
            "HISTORY_MISSING_TIMESTAMPS", Severity.WARNING, "history",
            f"{n} history rows have no timestamp", count=n, examples=ids,
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


@check("MEMORIES_LOST", "history", needs=("history", "points"))
def lost(ctx: Context) -> CheckResult:
    where = _lost_where(ctx)
    n = ctx.db.one(f"SELECT COUNT(*) FROM hist WHERE {where}")
    if n:
        examples = [f"{mid}: {clip(text, 60)}" for mid, text in ctx.db.rows(
            "SELECT hist.memory_id, COALESCE(hh.new_memory, hh.old_memory) FROM hist "
            f"JOIN h.history hh ON hh.rowid = hist.last_rowid WHERE {where} LIMIT ?", (ctx.examples,))]
        yield finding(
            "MEMORIES_LOST", Severity.ERROR, "history",
            f"{_n(n)} that history.db says exist {_be(n)} missing from the vector store",
            count=n, examples=examples,
            why="The vector store lost data that was never deleted through mem0, typically a /tmp wipe at reboot "
                "or a vector store restored from an older snapshot than history.db.",
            fix="Restore the vector store and history.db from the same backup, together; then move the store off "
                "/tmp (" + ctx.cmd("relocate --to /var/lib/mem0") + ")",
        )


@check("POINTS_WITHOUT_HISTORY", "history", needs=("history", "points"))
def without_history(ctx: Context) -> CheckResult:
    n, examples = counted(ctx, "FROM points WHERE id NOT IN (SELECT memory_id FROM hist)", "id, text")
    if n:
        yield finding(
            "POINTS_WITHOUT_HISTORY", Severity.WARNING, "history",
            f"{_n(n)} in the vector store {_have(n)} no history at all",
            count=n, examples=examples,
            why="Something wrote to the vector store around mem0 (a script, a migration), so nothing records where "
                "these came from or when.",
            fix="Review them (" + ctx.cmd("review") + "); write only through mem0's API from now on.",
        )


@check("MEMORIES_RESURRECTED", "history", needs=("history", "points"))
def resurrected(ctx: Context) -> CheckResult:
    n, examples = counted(ctx, "FROM hist JOIN points p ON p.id = hist.memory_id WHERE hist.last_event = 'DELETE'",
                          "p.id, p.text")
    if n:
        yield finding(
            "MEMORIES_RESURRECTED", Severity.ERROR, "history",
            f"{_n(n)} that {_was(n)} deleted {_be(n)} back in the vector store",
            count=n, examples=examples,
            why="A vector-store snapshot older than history.db was restored on its own, so deleted (often wrong or "
                "private) facts are served again.",
            fix=ctx.cmd("forget ID...") + "  # the ids listed: deleted again through mem0's API; back up and restore "
                "both stores together (mem0-hygiene backup / restore)",
        )


@check("DELETED_TEXT_IN_HISTORY", "history", needs=("history",))
def deleted_text(ctx: Context) -> CheckResult:
    # hist counts each memory's rows that still hold text and keeps the last one (see auditdb): no scan here.
    memories, rows = ctx.db.conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(text_rows), 0) FROM hist WHERE last_event = 'DELETE' AND text_rows > 0"
    ).fetchone()
    if rows:
        examples = [f"{mid}: {clip(text, 40)}" for mid, text in ctx.db.rows(
            "SELECT hist.memory_id, CASE WHEN COALESCE(hh.old_memory, '') <> '' THEN hh.old_memory "
            "ELSE hh.new_memory END FROM hist JOIN h.history hh ON hh.rowid = hist.text_rowid "
            "WHERE hist.last_event = 'DELETE' AND hist.text_rows > 0 ORDER BY hist.memory_id LIMIT ?",
            (ctx.examples,))]
        yield finding(
            "DELETED_TEXT_IN_HISTORY", Severity.WARNING, "history",
            f"The text of {_n(memories, 'deleted memory', 'deleted memories')} is still readable in history.db "
            f"({_n(rows, 'row', 'rows')})",
            count=memories, examples=examples,
            why="mem0 keeps a deleted memory's text in history.old_memory; deleting a memory does not erase what "
                "it said, which matters for private data and erasure requests.",
            fix=ctx.cmd("forget MEMORY_ID --scrub") + "  # blanks the text, keeps the event rows",
        )


@check("DELETED_TEXT_IN_MESSAGES", "history", needs=("history", "messages"))
def deleted_in_messages(ctx: Context) -> CheckResult:
    sample = ctx.db.rows(
        "SELECT hh.memory_id, hh.old_memory FROM h.history hh JOIN hist ON hist.memory_id = hh.memory_id "
        "WHERE hist.last_event = 'DELETE' AND hh.event = 'DELETE' AND length(hh.old_memory) >= 12 "
        "ORDER BY hh.rowid DESC LIMIT ?", (MESSAGE_SAMPLE,))
    found = []
    for mid, text in sample:
        if ctx.db.one("SELECT 1 FROM h.messages WHERE instr(content, ?) > 0 LIMIT 1", (text,)):
            found.append(f"{mid}: {clip(text, 40)}")
    if found:
        yield finding(
            "DELETED_TEXT_IN_MESSAGES", Severity.WARNING, "history",
            f"The text of {len(found)} deleted memories is still in mem0's raw messages table",
            count=len(found), examples=found[: ctx.examples], checked=len(sample),
            why="mem0 stores the raw conversation turns it extracted from; deleting the memory leaves them.",
            fix=ctx.cmd("forget MEMORY_ID --scrub") + "  # also removes it from the messages table",
        )


@check("HISTORY_FREE_PAGES", "history", needs=("history",))
def free_pages(ctx: Context) -> CheckResult:
    free = ctx.db.one("PRAGMA h.freelist_count") or 0
    page = ctx.db.one("PRAGMA h.page_size") or 4096
    deletes = ctx.db.one("SELECT COUNT(*) FROM hist WHERE last_event = 'DELETE'")
    if free and deletes:
        yield finding(
            "HISTORY_FREE_PAGES", Severity.INFO, "history",
            f"history.db has {free} free pages ({free * page // 1024} KiB) that may still hold deleted text",
            count=free, examples=[],
            why="SQLite leaves deleted rows' bytes in free pages until they are reused; `strings history.db` "
                "shows them.",
            fix="sqlite3 history.db 'VACUUM'  # with the app stopped; or " + ctx.cmd("forget ID --scrub"),
        )


@check("HOT_JOURNAL", "history")
def hot_journal(ctx: Context) -> CheckResult:
    recovered = ctx.db.sources.recovered
    if recovered:
        names = " and ".join("history.db" if s == "history" else "the ledger" for s in recovered)
        yield finding(
            "HOT_JOURNAL", Severity.WARNING, "history",
            f"{names} {'was' if len(recovered) == 1 else 'were'} left in the middle of a commit; audited from a "
            "rolled-back copy", count=len(recovered), examples=list(recovered.values()),
            why="A process died while writing (a hot journal holds the pages to put back). The audit read the last "
                "committed state from a copy and left the file as it is; half-written pages were never read.",
            fix="Start the app, or run a maintenance command that writes (such as `mem0-hygiene prune`): the first "
                "connection that may write rolls the journal back in the file itself.",
        )
