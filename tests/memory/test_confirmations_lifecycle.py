"""The confirmations log through the drop-in: ``confirm`` and a new text through ``update`` each add a line (in
the same transaction as ``confirmed_at``), hold no text (``forget --scrub`` has nothing to erase there), and go
with their memory's row when prune compacts its tombstone: no orphan rows, ``foreign_key_check`` empty."""

from __future__ import annotations

from typing import Any

from mem0_hygiene import maintenance
from mem0_hygiene.actions.forget import forget


def lines(m: Any, mid: str) -> list[tuple[str, str]]:
    return m.ledger.confirmations([mid]).get(mid, [])


def test_confirm_and_update_log_a_confirmation_each_and_set_confirmed_at(make_memory: Any, clock: Any) -> None:
    m = make_memory()
    mid = m.add("Dana uses pnpm", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    m.flush()
    assert lines(m, mid) == []  # a birth is not a confirmation
    clock.advance(days=1)
    m.confirm(mid)
    clock.advance(days=1)
    m.update(mid, text="Dana uses pnpm 9")
    clock.advance(days=1)
    m.update(mid, metadata={"team": "web"})  # no new text: not a confirmation
    got = lines(m, mid)
    assert [via for _at, via in got] == ["confirm", "update"]
    assert m.get(mid)["hygiene"]["confirmed_at"] == got[-1][0]


def test_a_pruned_memorys_confirmations_go_with_its_row(make_memory: Any, clock: Any) -> None:
    m = make_memory(retain_superseded="1d")
    mid = m.add("Away this week", user_id="dana", infer=False, source="chat", ttl="3d")["results"][0]["id"]
    keep = m.add("Lives in Lisbon", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    clock.advance(days=1)
    m.confirm(mid)
    m.confirm(keep)
    clock.advance(days=5)
    assert [p.memory_id for p in m.prune().memories] == [mid]  # expired: deleted, tombstoned
    clock.advance(days=5)
    assert maintenance.prune(m).tombstones_purged == 1  # compacted: the row goes, its confirmations too
    assert m.ledger.get(mid) is None and lines(m, mid) == [] and len(lines(m, keep)) == 1
    assert m.ledger.query("PRAGMA foreign_key_check") == []


def test_forget_with_scrub_keeps_no_text_in_the_log_and_compaction_takes_its_lines(
    make_memory: Any, clock: Any
) -> None:
    m = make_memory(retain_superseded="1d")
    mid = m.add("Dana's door code is 4411", user_id="dana", infer=False, source="chat")["results"][0]["id"]
    clock.advance(days=1)
    m.confirm(mid)
    forget(m, [mid], scrub=True)
    row = m.ledger.get(mid)
    assert row is not None and row.deleted_at  # the tombstone keeps it hidden; its lines are times only
    assert m.ledger.query("SELECT * FROM confirmations WHERE memory_id = ?", (mid,)) == [
        (mid, lines(m, mid)[0][0], "confirm")
    ]
    clock.advance(days=3)
    assert maintenance.prune(m).tombstones_purged == 1
    assert m.ledger.query("SELECT count(*) FROM confirmations") == [(0,)]
    assert m.ledger.query("PRAGMA foreign_key_check") == []
