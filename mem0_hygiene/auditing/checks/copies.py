"""Copy checks: the copies of the stores the tool made (backup sets, stores a restore moved aside, relocation
sources), read from the one registry of copies beside the ledger (:mod:`mem0_hygiene.stores.copies`).

Every copy holds the same memories as the live stores did when it was made: a fact superseded or deleted since
is still in it, and it comes back if the copy is put back. ``STORE_COPIES`` lists them (info), and warns about
those older than the deployment's ``retain_superseded``: past that age prune would have deleted what they keep.
"""

from __future__ import annotations

import os
import shlex
from datetime import timedelta

from ...display.text import human_size, plural
from ...errors import BackupError
from ...report import Severity
from ...stores.copies import StoreCopy, list_copies
from ...timeutil import duration_text
from .base import CheckResult, Context, check, finding

_WHY = (
    "A copy of the stores holds every memory they held when it was made, superseded and deleted facts "
    "included; put back, it brings them back. forget --scrub erases a memory from every registered copy."
)


def _paths(ctx: Context) -> tuple[str | None, str | None]:
    by_role: dict[str, str | None] = {}
    for loc in ctx.locations:  # the deployment's own history.db comes before the other hosts'
        by_role.setdefault(loc.role, loc.path)
    return by_role.get("ledger"), by_role.get("history_db")


def _age(copy: StoreCopy, ctx: Context) -> timedelta:
    age = copy.age(ctx.now)
    return age if age is not None else ctx.retain_superseded + timedelta(days=1)  # unreadable time: treat as old


def _describe(copy: StoreCopy, ctx: Context) -> str:
    days = _age(copy, ctx).total_seconds() / 86400
    return f"{copy.kind} {copy.path} ({days:.1f} days old, {human_size(copy.size_bytes)})"


def _fix(stale: list[StoreCopy], fresh: list[StoreCopy], ctx: Context) -> str:
    """Commands that remove the stale copies: a new backup whose rotation keeps only the fresh sets of that
    DEST, and ``rm`` for the other copies (a gone copy drops off the registry)."""
    fixes: list[str] = []
    for dest in sorted({os.path.dirname(c.path) for c in stale if c.kind == "backup_set"}):
        keep = 1 + sum(1 for c in fresh if c.kind == "backup_set" and os.path.dirname(c.path) == dest)
        fixes.append(ctx.cmd(f"backup {shlex.quote(dest)} --keep {keep}") + "  # rotation removes the older sets")
    for c in stale:
        if c.kind == "backup_set":
            continue
        if c.is_folder:
            fixes.append(f"rm -rf {shlex.quote(c.path)}")
        else:
            fixes.append("rm -f " + " ".join(shlex.quote(c.path + s) for s in ("", "-wal", "-shm", "-journal")))
    return "; ".join(fixes)


@check(
    "STORE_COPIES",
    "storage",
    severity="info/warning",
    means=(
        "copies of the stores the tool made (backups, stores restore moved aside, relocation sources) with "
        "age and size; warning for one older than `retain_superseded`"
    ),
    fix="`mem0-hygiene where` lists every copy; `backup --keep N` rotates old backup sets",
)
def copies(ctx: Context) -> CheckResult:
    ledger_path, history_path = _paths(ctx)
    try:
        found = list_copies(ledger_path, history_path)
    except BackupError as exc:
        yield finding(
            "STORE_COPIES",
            Severity.WARNING,
            "storage",
            "The copies of the stores cannot be listed",
            count=0,
            examples=[str(exc)],
            why=_WHY + " Unlisted copies are neither shown nor erased.",
            fix="mv the damaged file away (named in the example); the next backup or restore writes a new one",
        )
        return
    if not found:
        return
    retain = ctx.retain_superseded
    stale = [c for c in found if _age(c, ctx) > retain]
    fresh = [c for c in found if c not in stale]
    details = {
        "copies": [c.to_dict(ctx.now) for c in found],
        "retention": duration_text(retain),
        "size_bytes": sum(c.size_bytes or 0 for c in found),
    }
    if stale:
        yield finding(
            "STORE_COPIES",
            Severity.WARNING,
            "storage",
            f"{len(stale)} of {plural(len(found), 'copy', 'copies')} of the stores "
            f"{'is' if len(stale) == 1 else 'are'} older than the retention "
            f"({duration_text(retain)}, hygiene.retain_superseded)",
            count=len(stale),
            examples=[_describe(c, ctx) for c in stale][: ctx.examples],
            why=_WHY + " These are older than the time superseded and invalidated memories are kept.",
            fix=_fix(stale, fresh, ctx),
            stale=[c.path for c in stale],
            **details,
        )
        return
    yield finding(
        "STORE_COPIES",
        Severity.INFO,
        "storage",
        f"{plural(len(found), 'copy', 'copies')} of the stores ({human_size(details['size_bytes'])}), "
        f"{'all within' if len(found) > 1 else 'within'} the retention ({duration_text(retain)})",
        count=len(found),
        examples=[_describe(c, ctx) for c in found][: ctx.examples],
        why=_WHY,
        fix=ctx.cmd("where") + "  # lists every copy with its age and size",
        **details,
    )
