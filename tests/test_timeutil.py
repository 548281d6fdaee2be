"""Times and durations from users: one rule for times without an offset (local time, converted to UTC; a date
alone is that day in UTC), a sane range for both, and a ConfigError naming the value and the range instead of
an OverflowError."""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta, timezone

import pytest

from mem0_hygiene.errors import ConfigError
from mem0_hygiene.timeutil import as_utc, parse_duration, parse_time, shift_time, to_iso


@pytest.fixture
def new_york(monkeypatch):
    """The process runs in America/New_York (EDT, UTC-4, in August) for the test, then goes back."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    "value",
    [
        "999999999d",
        "99999999999999999999999w",
        "36526d",
        "5219w",
        "876601h",
        timedelta(days=999999999),
        timedelta(days=36526),
    ],
)
def test_a_duration_beyond_a_hundred_years_is_refused_naming_the_value_and_the_range(value):
    with pytest.raises(ConfigError, match=r"ttl .* is too long.*36525d \(100 years\)"):
        parse_duration(value, what="ttl")


def test_durations_up_to_a_hundred_years_are_accepted():
    assert parse_duration("36525d") == timedelta(days=36525)
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_duration(timedelta(hours=12)) == timedelta(hours=12)


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:00:00-05:00",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31",
        "3000-01-01",
        "1899-12-31T23:59:59+00:00",
        datetime.max,
        datetime.min,
        datetime.max.replace(tzinfo=timezone.utc),
        date(9999, 12, 31),
        date(1, 1, 1),
    ],
)
def test_a_time_outside_the_sane_range_is_refused_naming_it_and_the_range(value):
    with pytest.raises(ConfigError, match=r"expires_at .* is outside .*1900-01-01 to 2999-12-31"):
        parse_time(value, what="expires_at")


def test_times_inside_the_range_are_accepted():
    assert to_iso(parse_time("2999-12-31T23:59:59+00:00")) == "2999-12-31T23:59:59.000000+00:00"
    assert to_iso(parse_time("1900-01-01")) == "1900-01-01T00:00:00.000000+00:00"


def test_arithmetic_past_the_range_is_a_config_error_not_an_overflow():
    now = datetime(2999, 6, 1, tzinfo=timezone.utc)
    with pytest.raises(ConfigError, match=r"ttl .*2999-12-31"):
        shift_time(now, timedelta(days=365), what="ttl")
    assert shift_time(now, -timedelta(days=1)) == now - timedelta(days=1)


def test_a_naive_datetime_is_local_time_converted_to_utc(new_york):
    assert as_utc(datetime(2026, 8, 1, 7, 0)) == datetime(2026, 8, 1, 11, 0, tzinfo=timezone.utc)  # EDT
    assert as_utc(datetime(2026, 12, 1, 7, 0)) == datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)  # EST
    assert parse_time(datetime(2026, 8, 1, 7, 0)) == datetime(2026, 8, 1, 11, 0, tzinfo=timezone.utc)


def test_an_iso_string_without_an_offset_is_local_time_and_one_with_an_offset_is_kept(new_york):
    assert to_iso(parse_time("2026-08-01T07:00:00")) == "2026-08-01T11:00:00.000000+00:00"
    assert to_iso(parse_time("2026-08-01T07:00:00+00:00")) == "2026-08-01T07:00:00.000000+00:00"
    assert to_iso(parse_time("2026-08-01T07:00:00Z")) == "2026-08-01T07:00:00.000000+00:00"


def test_a_date_alone_is_that_day_in_utc_as_mem0_reads_expiration_date(new_york):
    assert to_iso(parse_time("2026-08-01")) == "2026-08-01T00:00:00.000000+00:00"
    assert to_iso(parse_time(date(2026, 8, 1))) == "2026-08-01T00:00:00.000000+00:00"


def test_now_in_local_time_is_now(new_york):
    before = datetime.now(timezone.utc)
    local = as_utc(datetime.now())
    assert before - timedelta(seconds=5) <= local <= datetime.now(timezone.utc)
