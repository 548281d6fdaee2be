"""The drop-in refuses the state changes the CLI refuses, with the same words: invalidating a superseded memory
names its successor, a second invalidation keeps the first reason, and confirming a superseded memory points at
the one that replaced it."""

from __future__ import annotations

import pytest

from mem0_hygiene.errors import StateError

SCOPE = {"user_id": "dana"}


def test_invalidating_a_superseded_memory_is_refused_naming_its_successor(mem):
    old = mem.add("Uses Postgres 15", **SCOPE, infer=False)["results"][0]["id"]
    new = mem.supersede(old, "Uses Postgres 16")
    with pytest.raises(StateError, match=f"superseded by {new}.*invalidate {new} instead"):
        mem.invalidate(old, reason="wrong")
    row = mem.ledger.get(old)
    assert row.invalid_at is None and row.superseded_by == new


def test_a_second_invalidation_keeps_the_first_reason(mem):
    mid = mem.add("Standup is at 9:30", **SCOPE, infer=False)["results"][0]["id"]
    mem.invalidate(mid, reason="moved to 10:00")
    with pytest.raises(StateError, match="already invalidated"):
        mem.invalidate(mid, reason="something else")
    assert mem.ledger.get(mid).invalid_reason == "moved to 10:00"


def test_confirming_a_superseded_memory_points_at_its_successor(mem):
    old = mem.add("Manager is Avi", **SCOPE, infer=False)["results"][0]["id"]
    new = mem.supersede(old, "Manager is Noa")
    with pytest.raises(StateError, match=f"confirm {new} instead"):
        mem.confirm(old)
    assert mem.confirm(new)["hygiene"]["state"] == "live"
