"""Time helpers: the injectable clock, UTC ISO strings, and durations such as "7d" or "12h"."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone

from .errors import ConfigError

Clock = Callable[[], datetime]

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(w|d|h|m|s)\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}


def system_clock() -> datetime:
    """The real time, in UTC."""
    return datetime.now(timezone.utc)


EARLIEST = datetime(1900, 1, 1, tzinfo=timezone.utc)  # the sane range of times: [EARLIEST, LATEST)
LATEST = datetime(3000, 1, 1, tzinfo=timezone.utc)
LONGEST = timedelta(days=36525)  # the longest duration: 100 years
_RANGE_TEXT = f"{EARLIEST:%Y-%m-%d} to {LATEST - timedelta(days=1):%Y-%m-%d} (UTC)"
_LONGEST_TEXT = f"{LONGEST.days}d (100 years)"


def _shown(value: object) -> str:
    """A value as a message shows it: strings quoted, datetimes and dates in ISO form."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value.days}d" if not value.seconds and not value.microseconds else str(value)
    return repr(value)


def _out_of_range(value: object, what: str) -> ConfigError:
    return ConfigError(
        f"{what} {_shown(value)} is outside the times this tool handles, {_RANGE_TEXT}; give a time in that range"
    )


def _checked(moment: datetime, value: object, what: str) -> datetime:
    if not EARLIEST <= moment < LATEST:
        raise _out_of_range(value, what)
    return moment


def as_utc(value: datetime, *, what: str = "time") -> datetime:
    """A timezone-aware UTC datetime. A naive value is the machine's local time (as ``datetime.now()``
    gives it) and is converted; an aware one is converted from its own zone. A value that cannot be
    converted (the ends of ``datetime``'s range) raises :class:`ConfigError`, never OverflowError."""
    if value.tzinfo is timezone.utc:
        return value  # already UTC (every time the drop-in takes from its clocks)
    return _to_utc(value, value, what)


def _to_utc(moment: datetime, value: object, what: str) -> datetime:
    try:
        return moment.astimezone(timezone.utc)  # naive: local time, by Python's own rule
    except (OverflowError, ValueError, OSError):
        raise _out_of_range(value, what) from None


def to_iso(value: datetime) -> str:
    """The ledger's one time format: UTC, microseconds, "+00:00". Sorts as text."""
    return as_utc(value).isoformat(timespec="microseconds")


def _day_in_utc(day: date, value: object, what: str) -> datetime:
    return _checked(datetime(day.year, day.month, day.day, tzinfo=timezone.utc), value, what)


def parse_time(value: datetime | date | str, *, what: str = "time") -> datetime:
    """A UTC datetime from a datetime, a date or an ISO string.

    One rule for times without an offset: a naive datetime, or an ISO time with no offset
    ("2026-12-01T09:00"), is the machine's local time, converted to UTC; a date alone (a ``date``, or
    "2026-12-01") is that day from midnight UTC, as mem0 reads ``expiration_date``; anything with an
    offset or a zone ("...+02:00", "...Z") is taken as it says. Raises :class:`ConfigError` for
    anything else, and for times outside :data:`EARLIEST` .. :data:`LATEST`, naming the value and
    the range."""
    if isinstance(value, datetime):
        return _checked(as_utc(value, what=what), value, what)
    if isinstance(value, date):
        return _day_in_utc(value, value, what)
    if isinstance(value, str):
        parsed = _from_text(value, what)
        if parsed is None:
            raise ConfigError(
                f"{what} {value!r} is not an ISO date or datetime; write it like "
                f"'2026-12-01' or '2026-12-01T09:00:00+00:00'"
            )
        return parsed
    raise ConfigError(f"{what} must be a datetime or an ISO string, not {type(value).__name__}")


def _from_text(value: str, what: str) -> datetime | None:
    """An ISO date or time string as UTC by :func:`parse_time`'s rule; None when it is neither."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    if "T" not in text.upper() and " " not in text:
        try:
            return _day_in_utc(date.fromisoformat(text), value, what)
        except ValueError:
            pass
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return _checked(_to_utc(parsed, value, what), value, what)


def _too_long(value: object, what: str) -> ConfigError:
    return ConfigError(f"{what} {_shown(value)} is too long: durations go up to {_LONGEST_TEXT}")


def parse_duration(value: timedelta | str, *, what: str = "duration") -> timedelta:
    """A timedelta from a timedelta or a string such as "7d", "12h", "90m", "2w", "30s". Raises
    :class:`ConfigError` for anything else, for zero or less, and beyond :data:`LONGEST` (100 years)."""
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
        seconds = float(number) * _UNIT_SECONDS[unit.lower()]
        if seconds > LONGEST.total_seconds():
            raise _too_long(value, what)
        delta = timedelta(seconds=seconds)
    else:
        raise ConfigError(f"{what} must be a timedelta or a string like '7d', not {type(value).__name__}")
    if delta <= timedelta(0):
        raise ConfigError(f"{what} {value!r} must be longer than zero")
    if delta > LONGEST:
        raise _too_long(value, what)
    return delta


def shift_time(moment: datetime, delta: timedelta, *, what: str = "time") -> datetime:
    """``moment + delta`` (a negative ``delta`` goes back), refused with a :class:`ConfigError` naming
    ``what`` when the result leaves :data:`EARLIEST` .. :data:`LATEST` (never an OverflowError)."""
    start = as_utc(moment)
    try:
        end = start + delta
    except OverflowError:
        raise _out_of_range(delta, what) from None
    if not EARLIEST <= end < LATEST:
        raise ConfigError(
            f"{what} {_shown(delta)} from {start.isoformat()} ends at {_shown(end)}, outside "
            f"the times this tool handles, {_RANGE_TEXT}"
        )
    return end


def window_start_time(value: timedelta | datetime | date | str, now: datetime, *, what: str = "since") -> datetime:
    """The start of a window: a duration back from ``now`` ("1d", "12h", a timedelta) or a time (a
    datetime, a date or an ISO string, by :func:`parse_time`'s rule). Raises :class:`ConfigError`
    naming the value: not a duration nor a time, too long, or out of range."""
    if isinstance(value, timedelta) or (isinstance(value, str) and _DURATION_RE.match(value)):
        return shift_time(now, -parse_duration(value, what=what), what=what)
    if isinstance(value, (datetime, date)):
        return parse_time(value, what=what)
    if isinstance(value, str):
        parsed = _from_text(value, what)
        if parsed is not None:
            return parsed
    raise ConfigError(
        f"{what} {value!r} is neither a duration ('1d', '12h', '2w') nor an ISO time "
        "('2026-08-01', '2026-08-01T09:00:00+00:00')"
    )


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
