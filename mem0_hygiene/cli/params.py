"""Click parameter types for the values the commands take: durations, time windows, schedule intervals and
files to write.

Each is checked when click parses the command line, before any store is opened: a bad value exits 2 with
click's ``Invalid value for '--OPTION'`` line, naming the option as the user typed it and what a good value
looks like. The converted value is the text as given (the library parses it again with its own clock), so
what the command does is exactly what the library does with that text. Nothing here imports mem0.
"""

from __future__ import annotations

import os
from typing import Any

import click

from ..errors import ConfigError


def option_name(param: click.Parameter | None) -> str:
    """The option as the user types it ("--older-than"), or the parameter's name for an argument."""
    if param is None:
        return "value"
    longs = [o for o in getattr(param, "opts", []) if o.startswith("--")]
    return longs[0] if longs else (param.human_readable_name or param.name or "value")


class Duration(click.ParamType):
    """A duration such as ``7d``, ``12h``, ``2w``: longer than zero and at most 100 years."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..timeutil import parse_duration

        try:
            parse_duration(str(value), what=option_name(param))
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)
        return str(value)


class Window(click.ParamType):
    """The start of a window: a duration back from now (``1d``) or an ISO time (``2026-08-01``)."""

    name = "duration|time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..timeutil import system_clock, window_start_time

        try:
            window_start_time(str(value), system_clock(), what=option_name(param))
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)
        return str(value)


class Interval(click.ParamType):
    """A schedule interval systemd and cron can both run at a steady rhythm (15m, 30m, 1h, 6h, 24h, 7d)."""

    name = "interval"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..actions.schedule import timing

        try:
            timing(str(value))
        except ConfigError as exc:
            self.fail(str(exc).replace("every ", f"{option_name(param)} ", 1), param, ctx)
        return str(value)


class OutputFile(click.ParamType):
    """A file the command will write: its folder must exist and be writable, and it must not be a folder.
    Checked before the command runs, so a long audit is not thrown away at the end."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = os.path.expanduser(str(value))
        folder = os.path.dirname(os.path.abspath(path))
        if os.path.isdir(path):
            self.fail(f"{value} is a folder; give a file name inside it", param, ctx)
        if not os.path.isdir(folder):
            self.fail(f"the folder {folder} does not exist; create it first or write somewhere else", param, ctx)
        if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            self.fail(f"cannot write {value}: permission denied; choose a file you can write", param, ctx)
        return path


class DestinationFolder(click.ParamType):
    """A folder the command will write into (created when missing): it must be a folder, or creatable in an
    existing, writable parent folder."""

    name = "dir"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = os.path.expanduser(str(value))
        if os.path.exists(path) and not os.path.isdir(path):
            self.fail(f"{value} is a file, not a folder; give a folder", param, ctx)
        if not os.path.exists(path):
            parent = os.path.dirname(os.path.abspath(path))
            while parent and not os.path.exists(parent):
                parent = os.path.dirname(parent)
            if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK) or _pseudo(parent):
                self.fail(
                    f"cannot create the folder {value}: {parent} is not writable; choose a folder you can write",
                    param,
                    ctx,
                )
        return str(value)


def _pseudo(path: str) -> bool:
    """/proc and /sys: root may "write" there by the permission bits, but no folder can be made."""
    real = os.path.realpath(path)
    return any(real == p or real.startswith(p + "/") for p in ("/proc", "/sys"))


DURATION = Duration()
WINDOW = Window()
INTERVAL = Interval()
OUTPUT_FILE = OutputFile()
DESTINATION_FOLDER = DestinationFolder()
