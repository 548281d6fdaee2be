"""Time helpers: the injectable clock, UTC ISO strings, and durations such as "7d" or "12h"."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone

from .errors import ConfigError

Clock = Callable[[], datetime]

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(w|d|h|m|s)\s*$", re.IGNORECASE)
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


def system_clock() -> datetime:
    """The real time, in UTC."""
    return datetime.now(timezone.utc)


def as_utc(value: datetime) -> datetime:
    """A timezone-aware UTC datetime (naive values are taken to be UTC already)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def to_iso(value: datetime) -> str:
    """The ledger's one time format: UTC, microseconds, "+00:00". Sorts as text."""
    return as_utc(value).isoformat(timespec="microseconds")


def parse_time(value: datetime | date | str, *, what: str = "time") -> datetime:
    """A datetime from a datetime, a date (midnight UTC) or an ISO string."""
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            return as_utc(datetime.fromisoformat(text))
        except ValueError:
            raise ConfigError(
                f"{what} {value!r} is not an ISO date or datetime; write it like "
                f"'2026-12-01' or '2026-12-01T09:00:00+00:00'"
            ) from None
    raise ConfigError(f"{what} must be a datetime or an ISO string, not {type(value).__name__}")


def parse_duration(value: timedelta | str, *, what: str = "duration") -> timedelta:
    """A timedelta from a timedelta or a string such as "7d", "12h", "90m", "2w", "30s"."""
    if isinstance(value, timedelta):
        delta = value
    elif isinstance(value, str):
        match = _DURATION_RE.match(value)
        if not match:
            raise ConfigError(
                f"{what} {value!r} is not a duration; use a number and a unit: "
                f"'7d' (days), '12h' (hours), '90m' (minutes), '2w' (weeks) or '30s'"
            )
        number, unit = match.groups()
        delta = timedelta(**{_UNITS[unit.lower()]: float(number)})
    else:
        raise ConfigError(f"{what} must be a timedelta or a string like '7d', not {type(value).__name__}")
    if delta <= timedelta(0):
        raise ConfigError(f"{what} {value!r} must be longer than zero")
    return delta


def duration_text(value: timedelta | str) -> str:
    """The short form of a duration, as :func:`parse_duration` reads it back: "7d", "12h", "2w", "90s"
    (a string is returned as given, stripped)."""
    if isinstance(value, str):
        return value.strip()
    seconds = int(value.total_seconds())
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def age_days(then: datetime | None, now: datetime) -> float | None:
    """Days between two times, rounded to a tenth; None when `then` is unknown."""
    if then is None:
        return None
    return round((now - then).total_seconds() / 86400.0, 1)
