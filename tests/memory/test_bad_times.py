"""Absurd durations and far-off dates get a ConfigError naming the value and the sane range wherever they
enter (add, reads, review, prune, digest, the hygiene settings), never an OverflowError; and a time without an
offset is the machine's local time everywhere, so `expires_at=datetime.now() + 2h` is two hours ahead in any
time zone."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from mem0_hygiene import Memory, maintenance, offline_config
from mem0_hygiene.config import HygieneSettings
from mem0_hygiene.errors import ConfigError

HUGE = "999999999d"
RANGE = r"1900-01-01 to 2999-12-31"
TOO_LONG = r"too long.*36525d \(100 years\)"


@pytest.fixture
def new_york(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def add(m: Memory, **kwargs):
    return m.add("Dana is travelling", user_id="dana", infer=False, source="chat", **kwargs)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"ttl": HUGE}, rf"ttl '999999999d' is {TOO_LONG}"),
        ({"ttl": timedelta(days=999999999)}, rf"ttl .* is {TOO_LONG}"),
        ({"expires_at": "9999-12-31T23:00:00-05:00"}, rf"expires_at '9999-12-31T23:00:00-05:00' is outside .*{RANGE}"),
        ({"expires_at": datetime.max}, rf"expires_at 9999-12-31T23:59:59.999999 is outside .*{RANGE}"),
        ({"expiration_date": "9999-12-31"}, rf"expiration_date '9999-12-31' is outside .*{RANGE}"),
    ],
)
def test_add_refuses_an_expiry_out_of_range_and_stores_nothing(mem, kwargs, pattern):
    with pytest.raises(ConfigError, match=pattern):
        add(mem, **kwargs)
    assert mem.get_all(filters={"user_id": "dana"}, include_stale=True)["results"] == []


def test_a_ttl_ending_past_the_range_is_refused(make_memory, clock):
    clock.current = datetime(2999, 6, 1, tzinfo=timezone.utc)
    m = make_memory()
    with pytest.raises(ConfigError, match=rf"ttl 365d from .*{RANGE}"):
        add(m, ttl="365d")


@pytest.mark.parametrize(
    "name, value",
    [
        ("as_of", "9999-12-31T23:00:00-05:00"),
        ("since", "0001-01-01T00:00:00+01:00"),
        ("until", datetime.max),
    ],
)
def test_time_travel_bounds_out_of_range_are_refused(mem, name, value):
    add(mem)
    for read in (
        lambda: mem.search("travel", filters={"user_id": "dana"}, **{name: value}),
        lambda: mem.get_all(filters={"user_id": "dana"}, **{name: value}),
    ):
        with pytest.raises(ConfigError, match=rf"{name} .* is outside .*{RANGE}"):
            read()


@pytest.mark.parametrize("name", ["retain_superseded", "review_older_than", "auto_prune"])
def test_a_hygiene_duration_setting_beyond_a_hundred_years_is_refused(tmp_path, name):
    with pytest.raises(ConfigError, match=rf"hygiene.{name} '999999999d' is {TOO_LONG}"):
        HygieneSettings.from_dict({name: HUGE})
    with pytest.raises(ConfigError, match=rf"hygiene.{name} .* is {TOO_LONG}"):
        HygieneSettings(**{name: timedelta(days=999999999)})
    with pytest.raises(ConfigError, match=rf"hygiene.{name}"):
        Memory.from_config(offline_config(tmp_path / "store", hygiene={name: HUGE}))


def test_review_prune_and_digest_refuse_absurd_windows(mem):
    add(mem)
    with pytest.raises(ConfigError, match=rf"older_than '999999999d' is {TOO_LONG}"):
        mem.review_queue(older_than=HUGE)
    with pytest.raises(ConfigError, match=rf"older_than '999999999d' is {TOO_LONG}"):
        maintenance.review_queue(mem, older_than=HUGE)
    with pytest.raises(ConfigError, match=rf"unused '999999999d' is {TOO_LONG}"):
        maintenance.prune(mem, unused=HUGE, dry_run=True)
    with pytest.raises(ConfigError, match=rf"since '999999999d' is {TOO_LONG}"):
        maintenance.digest(mem, since=HUGE)
    with pytest.raises(ConfigError, match=rf"since '0001-01-01' is outside .*{RANGE}"):
        maintenance.digest(mem, since="0001-01-01")
    with pytest.raises(ConfigError, match=rf"since 0001-01-01T00:00:00 is outside .*{RANGE}"):
        maintenance.digest(mem, since=datetime.min)


def test_expires_at_now_plus_two_hours_in_local_time_is_two_hours_ahead(make_memory, new_york):
    from mem0_hygiene.timeutil import system_clock

    m = make_memory(clock=system_clock)
    item = add(m, expires_at=datetime.now() + timedelta(hours=2))["results"][0]
    expires = datetime.fromisoformat(item["hygiene"]["expires_at"])
    assert timedelta(hours=1, minutes=59) < expires - datetime.now(timezone.utc) <= timedelta(hours=2)


def test_naive_times_are_local_in_every_entry_point(mem, clock, new_york):
    # the clock says 2026-08-01T09:00Z = 05:00 in New York (EDT)
    item = add(mem, expires_at="2026-08-01T07:00:00")["results"][0]  # 07:00 New York = 11:00Z, still ahead
    assert item["hygiene"]["expires_at"] == "2026-08-01T11:00:00.000000+00:00"
    clock.advance(hours=1)  # 10:00Z = 06:00 New York
    scope = {"user_id": "dana"}
    assert mem.get_all(filters=scope, as_of=datetime(2026, 8, 1, 5, 30))["results"]  # 09:30Z: created at 09:00Z
    assert not mem.get_all(filters=scope, as_of=datetime(2026, 8, 1, 4, 30))["results"]  # 08:30Z: not yet written
    assert not mem.get_all(filters=scope, since="2026-08-01T05:30:00")["results"]
    assert mem.get_all(filters=scope, until="2026-08-01T05:30:00")["results"]
    assert [i.text for i in maintenance.digest(mem, since=datetime(2026, 8, 1, 4, 30)).items] == ["Dana is travelling"]
    assert maintenance.digest(mem, since=datetime(2026, 8, 1, 5, 30)).items == ()
