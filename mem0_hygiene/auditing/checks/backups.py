"""Backup checks: when the last verified backup was taken.

The facts come from the backup record that ``mem0-hygiene backup`` (or ``m.backup(dest)``) keeps beside
the ledger (``hygiene.backups.json``; see :mod:`mem0_hygiene.actions.backup`). A recorded backup counts only
while its folder still holds its manifest and every listed file with the listed size.
"""

from __future__ import annotations

from datetime import timedelta

from ...report import Severity
from ...timeutil import parse_time
from .base import CheckResult, Context, check, finding

MAX_AGE = timedelta(days=7)

_WHY = (
    "A backup taken in one job (vector store, history.db and the ledger at the same moment) is the only way "
    "back after a lost disk, a /tmp wipe or a bad prune; restoring the vector store alone brings deleted "
    "facts back."
)


def _age_text(age: timedelta) -> str:
    days = age.total_seconds() / 86400
    if days >= 1:
        return f"{days:.1f} days"
    return f"{age.total_seconds() / 3600:.1f} hours"


@check(
    "BACKUP_LAST_VERIFIED",
    "backups",
    needs=("backups",),
    severity="info/warning",
    means="no verified backup, or the last one is over 7 days old (info: its age)",
    fix="`mem0-hygiene backup /var/backups/mem0 --keep 7`, daily from a timer (`mem0-hygiene schedule`)",
)
def last_backup(ctx: Context) -> CheckResult:
    status = ctx.db.sources.backup_status
    fix = ctx.cmd("backup /var/backups/mem0 --keep 7")
    if status is None or status.last is None:
        if status is not None and status.recorded:
            yield finding(
                "BACKUP_LAST_VERIFIED",
                Severity.WARNING,
                "backups",
                f"No verified backup: the {status.recorded} recorded backup(s) are gone or incomplete",
                count=status.recorded,
                examples=status.gone[: ctx.examples],
                record=status.record_path,
                why=_WHY,
                fix=fix,
            )
            return
        yield finding(
            "BACKUP_LAST_VERIFIED",
            Severity.WARNING,
            "backups",
            "No verified backup",
            count=0,
            examples=[],
            record=status.record_path if status else None,
            why=_WHY,
            fix=fix,
        )
        return
    last = status.last
    try:
        age = max(timedelta(0), ctx.now - parse_time(last.created_at))
    except Exception:  # an unreadable time: treat it as old rather than hide it
        age = MAX_AGE + timedelta(days=1)
    details = {
        "path": last.path,
        "created_at": last.created_at,
        "age_days": round(age.total_seconds() / 86400, 2),
        "counts": last.counts,
        "record": status.record_path,
        "gone": list(status.gone),
    }
    if age > MAX_AGE:
        yield finding(
            "BACKUP_LAST_VERIFIED",
            Severity.WARNING,
            "backups",
            f"The last verified backup is {_age_text(age)} old (older than {MAX_AGE.days} days)",
            count=1,
            examples=[last.path],
            why=_WHY,
            fix=fix,
            **details,
        )
        return
    yield finding(
        "BACKUP_LAST_VERIFIED",
        Severity.INFO,
        "backups",
        f"Last verified backup taken {_age_text(age)} ago ({last.files} files, "
        f"{sum(last.counts.get('points', {}).values())} points)",
        count=1,
        examples=[last.path],
        why="Backups are checked when they are made (integrity_check, counts, checksums); this one is still "
        "complete on disk.",
        fix=fix + "  # keep taking them, e.g. daily from a timer",
        **details,
    )
