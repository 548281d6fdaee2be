"""Scheduled maintenance from outside the app: a systemd service + timer, or a crontab line, that runs
``mem0-hygiene backup`` (when a backup folder is given) and then ``mem0-hygiene prune`` with the app's
config baked in as absolute paths.

:func:`build_schedule` returns a :class:`Schedule` (the file texts, the crontab line, the commands to
enable it, warnings); :func:`install_units` writes the unit files. Nothing here prints or runs
``systemctl``.

Local Qdrant lets one process open its folder: while the app runs, a scheduled job cannot open the
store and fails with "store locked". For such a store the schedule carries a warning recommending the
in-process route (``hygiene.auto_prune`` and ``m.backup(...)`` from the app's own scheduler).
"""

from __future__ import annotations

import getpass
import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..errors import ConfigError, HygieneError
from ..stores.durable import write_file
from ..timeutil import duration_text, parse_duration

DEFAULT_UNIT_DIR = "/etc/systemd/system"
DEFAULT_NAME = "mem0-hygiene"
_AT_RE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class UnitFile:
    """One file to install.

    Fields:
        name: file name ("mem0-hygiene.service").
        text: its content.
    """

    name: str
    text: str


@dataclass(frozen=True)
class Schedule:
    """A maintenance schedule, ready to print or install.

    Fields:
        kind: "systemd" or "cron".
        every: the interval as given ("24h").
        calendar: the systemd ``OnCalendar`` expression, or the cron time fields.
        commands: the command lines run, in order (backup first, then prune).
        files: for systemd, the service and the timer.
        cron_line: for cron, the crontab line.
        enable: what to run afterwards to activate it (printed, never run here).
        warnings: things to know before relying on it (a local Qdrant store, ...).
    """

    kind: str
    every: str
    calendar: str
    commands: tuple[tuple[str, ...], ...]
    files: tuple[UnitFile, ...] = ()
    cron_line: str = ""
    enable: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the fields above (files as name/text pairs)."""
        return {
            "kind": self.kind,
            "every": self.every,
            "calendar": self.calendar,
            "commands": [list(c) for c in self.commands],
            "files": [{"name": f.name, "text": f.text} for f in self.files],
            "cron_line": self.cron_line,
            "enable": list(self.enable),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Timing:
    """An interval as both schedulers spell it.

    Fields:
        on_calendar: systemd's ``OnCalendar=`` value.
        cron: the five cron time fields.
    """

    on_calendar: str
    cron: str


def timing(every: timedelta | str, at: str = "03:30") -> Timing:
    """Turn an interval into calendar times both systemd and cron can express exactly.

    Supported: minutes that divide an hour (``15m``), hours that divide a day (``6h``), one day
    (``24h``/``1d``, at ``at``), one week (``7d``/``1w``, Mondays at ``at``). Anything else is refused
    with the list, rather than run at an irregular rhythm.
    """
    delta = parse_duration(every, what="every")
    match = _AT_RE.match(at.strip())
    if not match:
        raise ConfigError(f"at {at!r} is not a time of day; write it as HH:MM, e.g. 03:30")
    hour, minute = int(match.group(1)), int(match.group(2))
    seconds = int(delta.total_seconds())
    if delta != timedelta(seconds=seconds):
        seconds = -1
    if seconds == 7 * 86400:
        return Timing(f"Mon *-*-* {hour:02d}:{minute:02d}:00", f"{minute} {hour} * * 1")
    if seconds == 86400:
        return Timing(f"*-*-* {hour:02d}:{minute:02d}:00", f"{minute} {hour} * * *")
    if seconds > 0 and seconds % 3600 == 0 and 24 % (seconds // 3600) == 0:
        step = seconds // 3600
        return Timing(f"*-*-* 00/{step}:{minute:02d}:00", f"{minute} */{step} * * *")
    if seconds > 0 and seconds % 60 == 0 and 60 % (seconds // 60) == 0:
        step = seconds // 60
        return Timing(f"*-*-* *:00/{step}:00", f"*/{step} * * * *")
    raise ConfigError(
        f"every {every!r} cannot be scheduled at a steady rhythm; use minutes that divide an hour (15m, 30m), "
        "hours that divide a day (1h, 6h, 12h), 24h (daily, at --at) or 7d (weekly, Mondays at --at)"
    )


def _systemd_quote(arg: str) -> str:
    """One ExecStart argument: specifiers and variables escaped, quoted when it has spaces or quotes."""
    value = arg.replace("%", "%%").replace("$", "$$")
    if value and not re.search(r"[\s\"'\\;]", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _systemd_env(name: str, value: str) -> str:
    escaped = value.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
    return f'Environment="{name}={escaped}"'


def _cron_quote(arg: str) -> str:
    """One shell word for a crontab line: shell-quoted, and ``%`` escaped (cron turns it into a newline)."""
    return shlex.quote(arg).replace("%", "\\%")


def build_schedule(
    kind: str,
    store_args: Sequence[str],
    *,
    every: timedelta | str = "24h",
    at: str = "03:30",
    backup_dir: str | None = None,
    keep: int | None = None,
    prune_args: Sequence[str] = (),
    name: str = DEFAULT_NAME,
    user: str | None = None,
    workdir: str | None = None,
    program: Sequence[str] | None = None,
    environment: dict[str, str] | None = None,
    local_qdrant: str | None = None,
    unit_dir: str = DEFAULT_UNIT_DIR,
) -> Schedule:
    """The schedule for ``kind`` ("systemd" or "cron").

    ``store_args`` are the store options each command gets (``["--config", "/abs/mem0.json"]``); make
    paths in them absolute (a scheduler does not run in your folder). ``backup_dir`` adds
    ``mem0-hygiene backup DIR [--keep N]`` before the prune (the prune runs only when the backup
    succeeded). ``program`` is the command that runs mem0-hygiene (default: this Python with
    ``-m mem0_hygiene``). ``user`` runs the service as that user (default: the current one), so the
    files keep their owner. ``environment`` is passed on (e.g. ``MEM0_DIR``). ``local_qdrant`` names the
    store's local Qdrant folder, which adds the warning about the app holding its lock.
    """
    if kind not in ("systemd", "cron"):
        raise ConfigError(f"schedule kind must be 'systemd' or 'cron', not {kind!r}")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.@-]*", name):
        raise ConfigError(f"unit name {name!r} may hold only letters, digits and _ . @ -")
    when = timing(every, at)
    prog = list(program) if program else [sys.executable, "-m", "mem0_hygiene"]
    commands: list[tuple[str, ...]] = []
    if backup_dir:
        backup = [*prog, "backup", os.path.abspath(os.path.expanduser(backup_dir)), *store_args]
        if keep is not None:
            backup += ["--keep", str(int(keep))]
        commands.append(tuple(backup))
    commands.append(tuple([*prog, "prune", *prune_args, *store_args]))
    env = {"MEM0_TELEMETRY": "False", **(environment or {})}
    workdir = os.path.abspath(workdir or os.getcwd())
    user = user or getpass.getuser()
    every_text = duration_text(every)
    warnings = []
    if local_qdrant:
        warnings.append(
            f"the vector store is a local Qdrant folder ({local_qdrant}). While your app runs it holds that "
            "folder's lock, so this scheduled job cannot open the store and will fail with 'store locked'. "
            "Use it only when the app is stopped at that time. Otherwise maintain the store inside the app: "
            "set hygiene.auto_prune='24h' in its config (it prunes a little in each call) and call "
            "m.backup(DEST) from the app's own scheduler (on mem0_hygiene's Memory; plain mem0's has no backup); "
            "or move the store to a Qdrant server."
        )
    what = "backup, then prune" if backup_dir else "prune"
    if kind == "cron":
        env_words = " ".join(f"{k}={_cron_quote(v)}" for k, v in env.items())
        chain = " && ".join(" ".join(_cron_quote(a) for a in cmd) for cmd in commands)
        line = f"{when.cron} cd {_cron_quote(workdir)} && {env_words} {chain}"
        warnings.append(
            "cron does not run jobs missed while the machine was off (systemd's Persistent=true "
            "does); use --systemd, or anacron, where that matters"
        )
        return Schedule(
            "cron",
            every_text,
            when.cron,
            tuple(commands),
            cron_line=line,
            enable=("crontab -e   # add the line above (as the user that owns the store files)",),
            warnings=tuple(warnings),
        )
    service_lines = [
        "[Unit]",
        f"Description=mem0-hygiene maintenance: {what}",
        "After=local-fs.target network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        f"User={user}",
        f"WorkingDirectory={workdir}",
        *(_systemd_env(k, v) for k, v in env.items()),
        *("ExecStart=" + " ".join(_systemd_quote(a) for a in cmd) for cmd in commands),
        "Nice=10",
        "IOSchedulingClass=idle",
        "",
    ]
    timer_lines = [
        "[Unit]",
        f"Description=mem0-hygiene maintenance ({what}) every {every_text}",
        "",
        "[Timer]",
        f"OnCalendar={when.on_calendar}",
        "Persistent=true",
        "RandomizedDelaySec=5min",
        f"Unit={name}.service",
        "",
        "[Install]",
        "WantedBy=timers.target",
        "",
    ]
    files = (UnitFile(f"{name}.service", "\n".join(service_lines)), UnitFile(f"{name}.timer", "\n".join(timer_lines)))
    enable: tuple[str, ...] = (
        "systemctl daemon-reload",
        f"systemctl enable --now {name}.timer",
        f"systemctl list-timers {name}.timer   # next run",
        f"journalctl -u {name}.service   # its output",
    )
    if os.path.abspath(unit_dir) != DEFAULT_UNIT_DIR:
        enable = (f"# the files are meant for {DEFAULT_UNIT_DIR}; link or copy them there first", *enable)
    return Schedule(
        "systemd", every_text, when.on_calendar, tuple(commands), files=files, enable=enable, warnings=tuple(warnings)
    )


def install_units(schedule: Schedule, unit_dir: str = DEFAULT_UNIT_DIR) -> list[str]:
    """Write the schedule's unit files into ``unit_dir``; returns the paths written. Does not run
    ``systemctl``: :attr:`Schedule.enable` says what to run."""
    if schedule.kind != "systemd" or not schedule.files:
        raise ConfigError("only a systemd schedule has files to install; add a cron line with `crontab -e`")
    written = []
    try:
        os.makedirs(unit_dir, exist_ok=True)
        for unit in schedule.files:
            path = os.path.join(unit_dir, unit.name)
            write_file(path, unit.text, mode=0o644)
            written.append(path)
    except PermissionError as exc:
        raise HygieneError(
            f"cannot write {exc.filename or unit_dir}: permission denied. Install as root (sudo), or pass "
            f"--unit-dir DIR and copy the files into {DEFAULT_UNIT_DIR} yourself"
        ) from None
    except OSError as exc:
        raise HygieneError(f"cannot write the unit files into {unit_dir}: {exc.strerror or exc}") from None
    return written
