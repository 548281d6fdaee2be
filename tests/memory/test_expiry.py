"""Decay: memories with a natural end are hidden the moment their expiry passes, without a prune."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mem0_hygiene import ConfigError

SCOPE = {"user_id": "dana"}


def texts(result):
    return [r["memory"] for r in result["results"]]


def test_away_from_keyboard_with_7d_ttl_is_hidden_on_day_8_without_prune(mem, clock):
    mem.add("Dana is away from keyboard this week", **SCOPE, infer=False, ttl="7d", source="chat 2026-08-01")
    mem.add("Dana works on the billing service", **SCOPE, infer=False, source="chat 2026-08-01")

    clock.advance(days=6)
    assert "Dana is away from keyboard this week" in texts(mem.search("away from keyboard", filters=SCOPE))

    clock.advance(days=2)  # day 8
    assert "Dana is away from keyboard this week" not in texts(mem.search("away from keyboard", filters=SCOPE))
    assert texts(mem.get_all(filters=SCOPE)) == ["Dana works on the billing service"]
    # still in the store, only hidden: nothing was pruned
    stale = mem.get_all(filters=SCOPE, include_stale=True)["results"]
    states = {r["memory"]: r["hygiene"]["state"] for r in stale}
    assert states["Dana is away from keyboard this week"] == "expired"


def test_wrapper_expiry_also_sets_mem0_expiration_date(mem, clock):
    added = mem.add("Staging is down for the migration", **SCOPE, infer=False, ttl="2d")
    item = mem.get(added["results"][0]["id"])
    assert item["expiration_date"] == (clock() + timedelta(days=2)).date().isoformat()
    assert item["hygiene"]["expires_at"].startswith((clock() + timedelta(days=2)).date().isoformat())
    assert item["metadata"] is None  # the payload keys the wrapper uses do not leak into results


def test_show_expired_returns_expired_but_not_superseded(mem, clock):
    mem.add("Office closed on Friday", **SCOPE, infer=False, ttl="1d")
    clock.advance(days=2)
    assert texts(mem.get_all(filters=SCOPE)) == []
    assert texts(mem.get_all(filters=SCOPE, show_expired=True)) == ["Office closed on Friday"]


def test_mem0_expiration_date_is_recorded_as_expiry(mem, clock):
    added = mem.add("Conference badge valid", **SCOPE, infer=False, expiration_date="2026-08-03")
    mem.flush()
    row = mem.ledger.get(added["results"][0]["id"])
    assert row.expires_at == "2026-08-04T00:00:00.000000+00:00"
    clock.advance(days=2, hours=16)  # 2026-08-04 01:00
    assert texts(mem.get_all(filters=SCOPE)) == []


@pytest.mark.parametrize("ttl", ["7 days", "x", "-1d", "0h", "12"])
def test_malformed_ttl_names_the_problem_and_stores_nothing(mem, ttl):
    with pytest.raises(ConfigError, match="ttl"):
        mem.add("Something temporary", **SCOPE, infer=False, ttl=ttl)
    assert mem.get_all(filters=SCOPE, include_stale=True)["results"] == []


def test_ttl_and_expires_at_together_is_an_error(mem, clock):
    with pytest.raises(ConfigError, match="only one of ttl, expires_at"):
        mem.add("x", **SCOPE, infer=False, ttl="1d", expires_at=clock() + timedelta(days=2))


def test_expiry_in_the_past_is_an_error(mem, clock):
    with pytest.raises(ConfigError, match="already past"):
        mem.add("x", **SCOPE, infer=False, expires_at=(clock() - timedelta(hours=1)).isoformat())
    assert mem.get_all(filters=SCOPE, include_stale=True)["results"] == []


@pytest.mark.parametrize(
    ("ttl", "delta"),
    [
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        ("2w", timedelta(weeks=2)),
        (timedelta(days=3), timedelta(days=3)),
    ],
)
def test_ttl_forms(mem, clock, ttl, delta):
    added = mem.add("Temporary fact", **SCOPE, infer=False, ttl=ttl)
    mem.flush()
    row = mem.ledger.get(added["results"][0]["id"])
    assert row.expires_at == (clock() + delta).isoformat(timespec="microseconds")


def test_plain_mem0_reading_the_same_store_hides_the_expired_memory_too(make_memory, tmp_path, plain_mem0, close_plain):
    # the injected clock starts on 2026-08-01, so a 7-day ttl ends long before the real today
    mem = make_memory(tmp_path / "store")
    mem.add("Away from keyboard this week", **SCOPE, infer=False, ttl="7d")
    mem.add("Works on billing", **SCOPE, infer=False)
    mem.close()
    plain = plain_mem0(tmp_path / "store")
    try:
        assert texts(plain.get_all(filters=SCOPE)) == ["Works on billing"]
    finally:
        close_plain(plain)
