"""Content checks: credentials in memory text, memories that read as standing orders, exact duplicates."""

from __future__ import annotations

from ...report import Severity
from .base import CheckResult, Context, check, clip, finding, ids_cmd, live_points, n_memories


@check(
    "SECRET_IN_MEMORY",
    "content",
    needs=("points",),
    severity="error",
    means="credentials in memory text (shown redacted)",
    fix="erase them: `mem0-hygiene forget ID... --scrub` (ids in the finding); rotate the credential",
)
def secrets(ctx: Context) -> CheckResult:
    rows = ctx.db.rows("SELECT id, label FROM hits WHERE kind = 'secret' ORDER BY id")
    if rows:
        memories = len({r[0] for r in rows})
        kinds = sorted({label.split(":")[0] for _, label in rows})
        yield finding(
            "SECRET_IN_MEMORY",
            Severity.ERROR,
            "content",
            f"{n_memories(memories)} {'contains' if memories == 1 else 'contain'} credentials ({', '.join(kinds)})",
            count=memories,
            examples=[f"{mid}: {label}" for mid, label in rows[: ctx.examples]],
            kinds=kinds,
            why="Memories are pasted into prompts and sent to the LLM provider; a key in memory is a key in every "
            "prompt, log and backup.",
            fix=ids_cmd(ctx, "forget", [r[0] for r in rows], memories, "--scrub")
            + "\n# then rotate each credential named above: it has been in prompts, logs and backups",
        )


@check(
    "INSTRUCTION_MEMORY",
    "content",
    needs=("points",),
    severity="warning",
    means="live memories that read as standing orders to the agent",
    fix=(
        "read each (`mem0-hygiene history ID`) and invalidate the injected ones: `invalidate ID --reason "
        "'injected instruction'`"
    ),
)
def instructions(ctx: Context) -> CheckResult:
    frm, where, params = live_points(ctx)
    rows = ctx.db.rows(
        f"SELECT p.id, p.text, x.label FROM {frm} JOIN hits x ON x.id = p.id "
        f"WHERE {where} AND x.kind = 'instruction' ORDER BY p.id",
        params,
    )
    if rows:
        yield finding(
            "INSTRUCTION_MEMORY",
            Severity.WARNING,
            "content",
            f"{n_memories(len(rows), 'live memory reads', 'live memories read')} as standing orders to the agent",
            count=len(rows),
            examples=[f"{mid}: {clip(text, 60)} [{label}]" for mid, text, label in rows[: ctx.examples]],
            why="A memory is pasted into every prompt as something the user said; an instruction there (often "
            "injected from a web page or tool output) steers the agent on every later turn.",
            fix=ctx.cmd(f"history {rows[0][0]}")
            + "  # check its source, then, for each injected one:\n"
            + ctx.cmd(f"invalidate {rows[0][0]} --reason 'injected instruction'"),
        )


@check(
    "DUPLICATE_MEMORIES",
    "content",
    needs=("points",),
    severity="info",
    means="live memories repeating another word for word in the same scope",
    fix="delete the extra copies: `mem0-hygiene forget ID...` (ids in the finding)",
)
def duplicates(ctx: Context) -> CheckResult:
    frm, where, params = live_points(ctx)
    rows = ctx.db.rows(
        f"""SELECT COUNT(*) AS n, MIN(p.text), group_concat(p.id, ' ') FROM {frm} WHERE {where} AND p.norm <> ''
            GROUP BY COALESCE(p.user_id, ''), COALESCE(p.agent_id, ''), COALESCE(p.run_id, ''), p.norm
            HAVING n > 1 ORDER BY n DESC, 2""",
        params,
    )
    if rows:
        extra = sum(n - 1 for n, _, _ in rows)
        yield finding(
            "DUPLICATE_MEMORIES",
            Severity.INFO,
            "content",
            f"{n_memories(extra, 'live memory repeats', 'live memories repeat')} another word for word "
            f"({n_memories(len(rows), 'group', 'groups')})",
            count=extra,
            examples=[f"{n}x {clip(text, 60)}" for n, text, _ in rows[: ctx.examples]],
            why="Duplicates crowd out other memories from a search page and make a fact look more certain than it is.",
            fix=ctx.cmd(f"forget {' '.join(rows[0][2].split()[1:])}")
            + "  # the extra copies of the first group (keep the one with the best source)",
        )
