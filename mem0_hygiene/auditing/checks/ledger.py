"""Ledger checks: prune backlog, broken or cyclic supersede chains, drift between ledger and store,
the review queue, and where memories came from."""

from __future__ import annotations

from ...report import Severity
from ..ledger_sql import LedgerSQL
from ..scratch import NO_LEDGER
from .base import (
    LEDGER_LIVE,
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

WEEKLY_REVIEW = 20


def _ledger(ctx: Context) -> LedgerSQL:
    """The ledger's queries run here: on the scratch database (SQLite, attached) or on the server (PostgreSQL)."""
    assert ctx.db.ledger is not None
    return ctx.db.ledger


@check(
    "LEDGER_MISSING",
    "ledger",
    severity="info/error",
    means="no ledger yet (info), or the file is not a usable ledger (error)",
    fix=(
        "`mem0-hygiene adopt` gives every memory a ledger row (a damaged file: move it away and adopt, or "
        "restore a backup)"
    ),
)
def ledger_missing(ctx: Context) -> CheckResult:
    reason = ctx.db.sources.missing.get("ledger")
    if reason:
        absent = reason.startswith(NO_LEDGER)
        yield finding(
            "LEDGER_MISSING",
            Severity.INFO if absent else Severity.ERROR,
            "ledger",
            "No mem0-hygiene ledger yet: memories have no provenance, expiry or supersession records"
            if absent
            else "The ledger file cannot be used",
            examples=[reason],
            why="Without the ledger nothing records where a memory came from or whether it is still true.",
            fix=(
                ctx.cmd("adopt") + "  # gives every memory a ledger row now (source 'unknown'; mem0's "
                "expiration_date kept as its expiry)\nfrom mem0_hygiene import Memory  # in the app, instead of "
                "mem0's Memory: new memories get their source and expiry"
            )
            if absent
            else "Restore the ledger from the latest backup (mem0-hygiene restore), or move the damaged file aside "
            "and run " + ctx.cmd("adopt"),
        )


@check(
    "LEDGER_BACKLOG",
    "ledger",
    needs=("ledger",),
    severity="info/warning",
    means="ledger rows by state and how many are ready to prune",
    fix="`mem0-hygiene prune --dry-run`, then `prune` (or `m.prune()` in the app)",
)
def backlog(ctx: Context) -> CheckResult:
    led = _ledger(ctx)
    by_state = dict(
        led.rows(
            f"""SELECT CASE WHEN deleted_at IS NOT NULL THEN 'deleted' WHEN superseded_by IS NOT NULL THEN 'superseded'
                  WHEN invalid_at IS NOT NULL THEN 'invalidated' WHEN quarantined = 1 THEN 'quarantined'
                  WHEN expires_at IS NOT NULL AND expires_at <= :now THEN 'expired' ELSE 'live' END, COUNT(*)
           FROM {led.memories} GROUP BY 1""",
            {"now": ctx.now_iso},
        )
    )
    total = sum(by_state.values())
    ctx.extra.setdefault("stats", {})["ledger_rows_by_state"] = by_state
    cutoff = (ctx.now - ctx.retain_superseded).isoformat(timespec="microseconds")
    prunable = led.one(
        f"""SELECT COUNT(*) FROM {led.memories} WHERE deleted_at IS NULL
           AND ((expires_at IS NOT NULL AND expires_at <= ?) OR superseded_at <= ? OR invalid_at <= ?)""",
        (ctx.now_iso, cutoff, cutoff),
    )
    live = by_state.get("live", 0)
    if not total:
        return
    severity = Severity.WARNING if prunable > max(100, total // 5) else Severity.INFO
    yield finding(
        "LEDGER_BACKLOG",
        severity,
        "ledger",
        f"{total} ledger rows, {live} live; {prunable} ready to prune",
        count=prunable,
        examples=[f"{state}: {n}" for state, n in sorted(by_state.items())],
        summary=True,
        why="Stale rows are hidden from reads, so a missed prune only costs disk and review load; a large "
        "backlog means prune is not running.",
        fix=ctx.cmd("prune --dry-run") + "  # then without --dry-run; or m.prune() in the app",
    )


@check(
    "EXPIRED_NOT_PRUNED",
    "ledger",
    needs=("ledger|points",),
    severity="warning",
    means="expired memories still stored (other readers still see them)",
    fix="`mem0-hygiene prune`, or set `hygiene.auto_prune: 24h` in the app",
)
def expired(ctx: Context) -> CheckResult:
    """Expired by the ledger's ``expires_at``, and, for memories the ledger does not know (plain mem0 wrote
    them; no ledger at all), by mem0's own ``expiration_date`` in the payload, as mem0 reads it: a date before
    today (UTC)."""
    n, ids = 0, []
    led = ctx.db.ledger
    has_ledger = bool(ctx.db.sources.ledger and led is not None)
    if has_ledger:
        assert led is not None
        where = f"FROM {led.memories} WHERE deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?"
        n = led.one(f"SELECT COUNT(*) {where}", (ctx.now_iso,))
        if n:
            ids = [
                f"{mid} (expired {exp[:10]})"
                for mid, exp in led.rows(
                    f"SELECT memory_id, expires_at {where} ORDER BY expires_at{led.collate}, memory_id{led.collate} "
                    "LIMIT ?",
                    (ctx.now_iso, ctx.examples),
                )
            ]
    if ctx.db.sources.points:
        untracked = (
            f"FROM points p LEFT JOIN {led.keys} m ON m.memory_id = p.id WHERE m.memory_id IS NULL AND "
            if has_ledger and led is not None
            else "FROM points p WHERE "
        )
        where = untracked + "p.expiration_date IS NOT NULL AND p.expiration_date <> '' AND p.expiration_date < ?"
        today = ctx.now.date().isoformat()
        more = ctx.db.one(f"SELECT COUNT(*) {where}", (today,)) or 0
        if more:
            ids += [
                f"{mid} (mem0 expiration_date {exp[:10]})"
                for mid, exp in ctx.db.rows(
                    f"SELECT p.id, p.expiration_date {where} ORDER BY p.expiration_date, p.id LIMIT ?",
                    (today, max(ctx.examples - len(ids), 0)),
                )
            ]
        n += more
    if n:
        yield finding(
            "EXPIRED_NOT_PRUNED",
            Severity.WARNING,
            "ledger",
            f"{n_memories(n)} {has_have(n)} expired but {is_are(n)} still stored",
            count=n,
            examples=ids,
            why="The drop-in hides them, but every other reader of the store (plain mem0, scripts, exports) still "
            "sees facts that are no longer true.",
            fix=ctx.cmd("prune") + "  # or set hygiene.auto_prune='24h' in the app",
        )


@check(
    "CHAIN_BROKEN",
    "ledger",
    needs=("ledger",),
    severity="error",
    means="superseded memories pointing at a replacement that is gone (foreign keys were off)",
    fix="re-link or invalidate the memories named in the finding (`mem0-hygiene invalidate ID`)",
)
def chain_broken(ctx: Context) -> CheckResult:
    led = _ledger(ctx)
    dangling = led.rows(
        f"""SELECT m.memory_id, m.superseded_by FROM {led.memories} m LEFT JOIN {led.memories} n
           ON n.memory_id = m.superseded_by WHERE m.superseded_by IS NOT NULL AND n.memory_id IS NULL
           ORDER BY m.memory_id{led.collate}"""
    )
    orphaned = led.rows(
        f"""SELECT m.memory_id, m.superseded_by FROM {led.memories} m JOIN {led.memories} n
           ON n.memory_id = m.superseded_by WHERE m.deleted_at IS NULL AND n.deleted_at IS NOT NULL
           ORDER BY m.memory_id{led.collate}"""
    )
    fk_rows = led.foreign_key_rows()
    n = len(dangling) + len(orphaned)
    if n or fk_rows:
        examples = [f"{a} -> {b} (missing)" for a, b in dangling] + [f"{a} -> {b} (deleted)" for a, b in orphaned]
        yield finding(
            "CHAIN_BROKEN",
            Severity.ERROR,
            "ledger",
            f"{n_memories(n, 'superseded memory points', 'superseded memories point')} at a replacement that is gone",
            count=n,
            examples=examples[: ctx.examples],
            foreign_key_check_rows=fk_rows,
            why="The newer fact was deleted on a connection with foreign keys off, so the older, stale fact was "
            "not deleted with it; the first script that 'fixes dangling pointers' makes it live again.",
            fix=(
                ids_cmd(ctx, "forget", [a for a, _ in dangling + orphaned], n)
                if n
                else "Run the audit again after the app's next start: it finishes a delete a crash interrupted"
            )
            + "\n# deletes each stale predecessor through mem0; never clear superseded_by by hand",
        )


@check(
    "CHAIN_CYCLE",
    "ledger",
    needs=("ledger",),
    severity="error",
    means="supersede cycles: none of the facts in them is ever served",
    fix="invalidate one memory of each cycle: `mem0-hygiene invalidate ID --reason 'supersede cycle'`",
)
def chain_cycle(ctx: Context) -> CheckResult:
    led = _ledger(ctx)
    rows = led.rows(
        f"""WITH RECURSIVE walk(start, cur, depth) AS (
               SELECT memory_id, superseded_by, 1 FROM {led.memories} WHERE superseded_by IS NOT NULL
               UNION ALL
               SELECT w.start, m.superseded_by, w.depth + 1 FROM walk w JOIN {led.memories} m ON m.memory_id = w.cur
               WHERE m.superseded_by IS NOT NULL AND w.cur <> w.start AND w.depth < 64)
           SELECT start FROM (SELECT DISTINCT start FROM walk WHERE cur = start) c ORDER BY start{led.collate}"""
    )
    if rows:
        yield finding(
            "CHAIN_CYCLE",
            Severity.ERROR,
            "ledger",
            f"{n_memories(len(rows))} {'sits' if len(rows) == 1 else 'sit'} on a supersede cycle",
            count=len(rows),
            examples=[r[0] for r in rows],
            why="In a cycle every fact is superseded by another, so none of them is ever served: the agent loses the "
            "fact entirely.",
            fix=ctx.cmd(f"invalidate {rows[0][0]} --reason 'supersede cycle'")
            + "  # each wrong one; then store the true fact again",
        )


@check(
    "LEDGER_PRAGMAS",
    "ledger",
    needs=("ledger",),
    severity="warning",
    means="the ledger is not in WAL mode or lacks its foreign key",
    fix="open the ledger only through mem0_hygiene (it sets WAL, foreign keys and a busy timeout)",
)
def pragmas(ctx: Context) -> CheckResult:
    problems = _ledger(ctx).setup_problems(ctx.db.sources.ledger_wal)
    if problems:
        yield finding(
            "LEDGER_PRAGMAS",
            Severity.WARNING,
            "ledger",
            "The ledger is not set up for safe concurrent use",
            count=len(problems),
            examples=problems,
            why="Readers and one writer only coexist under WAL; without the foreign key, deletes break chains.",
            fix="Open the ledger only through mem0_hygiene (it sets WAL, foreign keys and a busy timeout).",
        )


@check(
    "UNTRACKED_MEMORIES",
    "ledger",
    needs=("ledger", "points"),
    severity="warning",
    means="memories with no ledger row (plain mem0 or before adoption)",
    fix="`mem0-hygiene adopt` records them with source 'unknown' for review (in the app: `m.adopt()`)",
)
def untracked(ctx: Context) -> CheckResult:
    keys = _ledger(ctx).keys
    n, examples = counted(
        ctx, f"FROM points p WHERE NOT EXISTS (SELECT 1 FROM {keys} m WHERE m.memory_id = p.id)", "p.id, p.text", 50
    )
    if n:
        yield finding(
            "UNTRACKED_MEMORIES",
            Severity.WARNING,
            "ledger",
            f"{n_memories(n)} {has_have(n)} no ledger row (written by plain mem0 or before adoption)",
            count=n,
            examples=examples,
            why="They are served with no source, no confirmation date and no expiry.",
            fix=ctx.cmd("adopt") + "  # records them with source 'unknown' for review (in the app: m.adopt())",
        )


@check(
    "LEDGER_ORPHANS",
    "ledger",
    needs=("ledger", "points"),
    severity="warning",
    means="ledger rows whose memory is not in the vector store",
    fix="check `MEMORIES_LOST` first; `mem0-hygiene prune` compacts rows whose memories are gone",
)
def orphans(ctx: Context) -> CheckResult:
    led = _ledger(ctx)
    where = (
        f"FROM {led.keys} m WHERE NOT ({led.deleted_key('m')}) AND NOT EXISTS (SELECT 1 FROM points p "
        "WHERE p.id = m.memory_id)"
    )
    n = ctx.db.one(f"SELECT COUNT(*) {where}")
    if n:
        ids = [r[0] for r in ctx.db.rows(f"SELECT m.memory_id {where} ORDER BY m.memory_id LIMIT ?", (ctx.examples,))]
        yield finding(
            "LEDGER_ORPHANS",
            Severity.WARNING,
            "ledger",
            f"{n} ledger rows describe memories that are not in the vector store",
            count=n,
            examples=ids,
            why="The memories were deleted around the wrapper, or lost with the vector store.",
            fix="Check MEMORIES_LOST first; " + ctx.cmd("prune") + " compacts rows whose memories are gone.",
        )


def _journal(ctx: Context) -> bool:
    """The ledger has the journal of operations under way (schema version 2 and later)."""
    return _ledger(ctx).has_journal()


def _pending_delete(ctx: Context) -> str:
    pending = _ledger(ctx).keys_pending
    return f"EXISTS (SELECT 1 FROM {pending} q WHERE q.memory_id = m.memory_id AND q.action = 'delete')"


@check(
    "TOMBSTONED_PRESENT",
    "ledger",
    needs=("ledger", "points"),
    severity="error",
    means="memories deleted through mem0-hygiene are back in the vector store",
    fix="`mem0-hygiene prune` deletes their points again through mem0 (the tombstones stay)",
)
def tombstoned(ctx: Context) -> CheckResult:
    led = _ledger(ctx)
    where = f"FROM {led.keys} m JOIN points p ON p.id = m.memory_id WHERE {led.deleted_key('m')}"
    if _journal(ctx):
        where += f" AND NOT {_pending_delete(ctx)}"  # a delete still under way: UNFINISHED_OPERATIONS says so
    n, examples = counted(ctx, where, "m.memory_id, p.text", 50, order="m.memory_id")
    if n:
        yield finding(
            "TOMBSTONED_PRESENT",
            Severity.ERROR,
            "ledger",
            f"{n_memories(n)} deleted through mem0-hygiene {is_are(n)} back in the vector store",
            count=n,
            examples=examples,
            why="An older vector snapshot was restored alone. mem0-hygiene keeps hiding them, but plain mem0 and "
            "every other reader serve them again.",
            fix=ctx.cmd("prune") + "  # deletes their points again through mem0 (the tombstones stay); restore the "
            "vector store and the SQLite files together, with mem0-hygiene restore",
        )


@check(
    "UNFINISHED_OPERATIONS",
    "ledger",
    needs=("ledger",),
    severity="warning",
    means="deletes or supersedes a crash interrupted (the next prune, or start, finishes them)",
    fix="`mem0-hygiene prune` finishes the deletes; starting the app finishes them too",
)
def unfinished(ctx: Context) -> CheckResult:
    if not _journal(ctx):
        return
    pending = _ledger(ctx).keys_pending  # in the scratch database: it is compared with the points
    deletes = f"FROM {pending} q WHERE q.action = 'delete'"
    if ctx.db.sources.points:
        deletes += " AND q.memory_id IN (SELECT id FROM points)"  # the point went: nothing left to do
    n_deletes = ctx.db.one(f"SELECT COUNT(*) {deletes}") or 0
    replacing = f"FROM {pending} q WHERE q.action IN ('supersede', 'invalidate')"
    n_replacing = ctx.db.one(f"SELECT COUNT(*) {replacing}") or 0
    if not n_deletes and not n_replacing:
        return
    examples = [
        f"{mid} (delete since {since[:19]})"
        for mid, since in ctx.db.rows(
            f"SELECT q.memory_id, q.since {deletes} ORDER BY q.since, q.memory_id LIMIT ?", (ctx.examples,)
        )
    ]
    examples += [
        f"{mid} ({action} since {since[:19]})"
        for mid, action, since in ctx.db.rows(
            f"SELECT q.memory_id, q.action, q.since {replacing} ORDER BY q.since, q.memory_id LIMIT ?", (ctx.examples,)
        )
    ]
    yield finding(
        "UNFINISHED_OPERATIONS",
        Severity.WARNING,
        "ledger",
        f"{n_deletes + n_replacing} operations were interrupted midway: {n_deletes} deletes whose points are "
        f"still in the vector store, {n_replacing} supersedes not yet linked",
        count=n_deletes + n_replacing,
        examples=examples[: ctx.examples],
        why="The app died between the ledger's step and mem0's. The drop-in already hides the deleted memories, "
        "but plain mem0 and other readers still serve them until the delete is finished; a half-done "
        "supersede is linked (or dropped, if its new fact never landed) when the drop-in next starts.",
        fix=ctx.cmd("prune") + "  # finishes the deletes (or m.prune() in the app); starting the app finishes "
        "the supersedes",
    )


@check(
    "REVIEW_BACKLOG",
    "ledger",
    needs=("ledger",),
    severity="info/warning",
    means="confirmations older than 90 days, against a reviewable 20 a week",
    fix="`mem0-hygiene review --limit 20`, a batch a week",
)
def review(ctx: Context) -> CheckResult:
    cutoff = (ctx.now - ctx.review_older_than).isoformat(timespec="microseconds")
    led = _ledger(ctx)
    where = (
        f"FROM {led.memories} m WHERE {LEDGER_LIVE} AND m.expires_at IS NULL "
        "AND COALESCE(m.confirmed_at, m.created_at) < :cutoff"
    )
    params = {"now": ctx.now_iso, "cutoff": cutoff}
    n = led.one(f"SELECT COUNT(*) {where}", params)
    if n:
        weeks = -(-n // WEEKLY_REVIEW)
        oldest = led.rows(
            f"SELECT m.memory_id, COALESCE(m.confirmed_at, m.created_at) {where} "
            f"ORDER BY COALESCE(m.confirmed_at, m.created_at){led.collate}, m.memory_id{led.collate} "
            "LIMIT :lim",
            {**params, "lim": ctx.examples},
        )
        yield finding(
            "REVIEW_BACKLOG",
            Severity.WARNING if n > WEEKLY_REVIEW else Severity.INFO,
            "ledger",
            f"{n_memories(n)} {was_were(n)} last confirmed over {ctx.review_older_than.days} days ago "
            f"({weeks} week{'s' if weeks != 1 else ''} of review at {WEEKLY_REVIEW} a week)",
            count=n,
            examples=[f"{mid} (confirmed {when[:10]})" for mid, when in oldest],
            why="Drift has no clock: a decision made elsewhere ('we moved to pnpm') leaves the old fact looking "
            "fresh. Only re-confirmation or supersession catches it.",
            fix=ctx.cmd("review --limit 20"),
        )


@check(
    "UNSOURCED",
    "ledger",
    needs=("ledger",),
    severity="warning",
    means="live memories with no source",
    fix="pass `source=` to every `add`, and set `hygiene.require_source: true`",
)
def unsourced(ctx: Context) -> CheckResult:
    led = _ledger(ctx)
    where = f"FROM {led.memories} m WHERE {LEDGER_LIVE} AND (m.source IS NULL OR m.source IN ('', 'unknown'))"
    n = led.one(f"SELECT COUNT(*) {where}", {"now": ctx.now_iso})
    if n:
        ids = [
            r[0]
            for r in led.rows(
                f"SELECT m.memory_id {where} ORDER BY m.memory_id{led.collate} LIMIT :lim",
                {"now": ctx.now_iso, "lim": ctx.examples},
            )
        ]
        yield finding(
            "UNSOURCED",
            Severity.WARNING,
            "ledger",
            f"{n_memories(n, 'live memory has', 'live memories have')} no source",
            count=n,
            examples=ids,
            why="A fact nobody can trace cannot be re-checked, and an injected one looks like any other.",
            fix="m.add(..., source='chat 2026-08-08')  # and hygiene.require_source: true",
        )


TOOL_ROLES_SQL = "('tool', 'function')"


@check(
    "TOOL_SOURCED",
    "ledger",
    needs=("ledger|points",),
    severity="warning",
    means=(
        "memories from tool output or web content, listed (also untracked ones plain mem0 stored from a "
        "`tool`/`function` message)"
    ),
    fix="read each (`mem0-hygiene history ID`), then `invalidate` it or `confirm` it",
)
def tool_sourced(ctx: Context) -> CheckResult:
    n = live = 0
    examples: list[str] = []
    led = ctx.db.ledger
    if ctx.db.sources.ledger and led is not None:
        where = f"FROM {led.memories} m WHERE m.deleted_at IS NULL AND m.source_kind = 'tool'"
        n = led.one(f"SELECT COUNT(*) {where}") or 0
        if n:
            live = led.one(f"SELECT COUNT(*) {where} AND m.quarantined = 0") or 0
            rows = led.rows(
                f"SELECT m.memory_id, m.source, m.quarantined {where} ORDER BY m.memory_id{led.collate} LIMIT ?",
                (ctx.examples,),
            )
            examples = [f"{mid} from {clip(src, 50)}{' (quarantined)' if q else ''}" for mid, src, q in rows]
    if ctx.db.sources.points:  # written by plain mem0 (or before adoption): mem0 keeps each message's role
        untracked = (
            f"FROM points p LEFT JOIN {led.keys} m ON m.memory_id = p.id WHERE m.memory_id IS NULL AND "
            if ctx.db.sources.ledger and led is not None
            else "FROM points p WHERE "
        ) + f"p.role IN {TOOL_ROLES_SQL}"
        k = ctx.db.one(f"SELECT COUNT(*) {untracked}") or 0
        if k:
            n, live = n + k, live + k  # untracked: plain mem0 serves them
            rows = ctx.db.rows(f"SELECT p.id, p.role {untracked} LIMIT ?", (ctx.examples,))
            examples += [f"{pid} untracked, message role {role} (served by plain mem0)" for pid, role in rows]
    if n:
        first = examples[0].split()[0] if examples else "ID"
        yield finding(
            "TOOL_SOURCED",
            Severity.WARNING,
            "ledger",
            f"{n_memories(n)} came from tool output or web content ({live} confirmed and served)",
            count=n,
            examples=examples[: ctx.examples],
            why="Text from web pages, files and command output that reads like a standing fact gets injected into "
            "every later prompt as if the user had said it.",
            fix=ctx.cmd(f"history {first}")
            + "  # its source and story; then, for each injected one:\n"
            + ctx.cmd(f"invalidate {first} --reason 'injected tool output'")
            + "\n# or, if it is true:\n"
            + ctx.cmd(f"confirm {first}"),
        )
