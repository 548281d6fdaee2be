"""Storage checks: where each store lives, whether it survives a reboot, whether it can be read."""

from __future__ import annotations

from ...report import Severity
from .base import CheckResult, Context, check, finding

_LABEL = {"vector_store": "vector store", "history_db": "history.db", "ledger": "ledger", "mem0_dir": "mem0's folder"}


@check(
    "STORE_VOLATILE",
    "storage",
    severity="error",
    means="a store is on tmpfs/ramfs: lost at reboot",
    fix=(
        "move the store to a persistent disk: `mem0-hygiene relocate --to /var/lib/mem0` (`--with-sqlite` for "
        "history.db and the ledger)"
    ),
)
def volatile(ctx: Context) -> CheckResult:
    for loc in ctx.locations:
        if loc.is_local and loc.volatile and loc.role != "mem0_dir":
            fs = loc.filesystem.fstype if loc.filesystem else "?"
            yield finding(
                "STORE_VOLATILE",
                Severity.ERROR,
                "storage",
                f"The {_LABEL[loc.role]} is on a RAM disk ({fs}): everything in it is lost at reboot",
                count=1,
                examples=[loc.path],
                role=loc.role,
                fstype=fs,
                why="tmpfs and ramfs keep files in memory only; a reboot or container restart empties the store "
                "and the agent silently forgets everything.",
                fix=ctx.cmd(f"relocate --to /var/lib/mem0{' --with-sqlite' if loc.role != 'vector_store' else ''}"),
            )


@check(
    "STORE_UNDER_TMP",
    "storage",
    severity="warning",
    means="a store is under /tmp or /var/tmp: cleaned or aged out by the OS",
    fix="move the store out of the temp folder: `mem0-hygiene relocate --to /var/lib/mem0`",
)
def under_tmp(ctx: Context) -> CheckResult:
    for loc in ctx.locations:
        if loc.is_local and loc.under_tmp and not loc.volatile and loc.role != "mem0_dir":
            yield finding(
                "STORE_UNDER_TMP",
                Severity.WARNING,
                "storage",
                f"The {_LABEL[loc.role]} is under a temp folder",
                count=1,
                examples=[loc.path],
                role=loc.role,
                why="systemd-tmpfiles and similar cleaners age out files under /tmp and /var/tmp, and some systems "
                "empty /tmp at boot.",
                fix=ctx.cmd(f"relocate --to /var/lib/mem0{' --with-sqlite' if loc.role != 'vector_store' else ''}"),
            )


@check(
    "STORE_MISSING",
    "storage",
    severity="error",
    means="the vector store or history.db does not exist at the configured path",
    fix="compare `mem0-hygiene where` with the paths the app uses, and pass the app's config (`--config`)",
)
def missing(ctx: Context) -> CheckResult:
    for loc in ctx.locations:
        if loc.role in ("vector_store", "history_db") and loc.is_local and not loc.exists:
            yield finding(
                "STORE_MISSING",
                Severity.ERROR,
                "storage",
                f"The {_LABEL[loc.role]} does not exist at {loc.path}",
                count=1,
                examples=[loc.path],
                role=loc.role,
                why="Either the app writes somewhere else (check the config passed to the audit) or the store was "
                "lost, e.g. a /tmp wipe at reboot.",
                fix="mem0-hygiene where --config YOUR_APP_CONFIG  # compare with the paths your app uses",
            )


@check(
    "STORE_NOT_WRITABLE",
    "storage",
    severity="warning",
    means="a store exists but this user cannot write it",
    fix="run maintenance as the app's user, or fix the ownership",
)
def not_writable(ctx: Context) -> CheckResult:
    for loc in ctx.locations:
        if loc.is_local and loc.exists and loc.writable is False and loc.role != "mem0_dir":
            yield finding(
                "STORE_NOT_WRITABLE",
                Severity.WARNING,
                "storage",
                f"The {_LABEL[loc.role]} at {loc.path} is not writable by this user",
                count=1,
                examples=[loc.path],
                role=loc.role,
                why="The app (or maintenance) running as this user would fail on its first write.",
                fix=f"ls -ld {loc.path}  # run maintenance as the app's user, or fix the ownership",
            )


@check(
    "STORE_LOCKED",
    "storage",
    severity="warning",
    means="a running process holds the local Qdrant folder; vector checks skipped",
    fix="stop the app, or audit in the app: `audit(m)` with its `Memory`",
)
def locked(ctx: Context) -> CheckResult:
    path = ctx.extra.get("locked_path")
    if path:
        yield finding(
            "STORE_LOCKED",
            Severity.WARNING,
            "storage",
            "The local Qdrant folder is held by another process (probably the running app)",
            count=1,
            examples=[path],
            why="Local Qdrant allows one process per folder, so checks that read the vector store were skipped.",
            fix="from mem0_hygiene import audit; print(audit(m).to_dict())  # in the app, with its Memory m",
        )
