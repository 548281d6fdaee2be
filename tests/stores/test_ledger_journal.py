"""The ledger's journal of operations under way (schema version 3): every tombstone is journaled by the
statement that writes it, a replacement by its own entry, and older ledgers get the journal when opened
(a scratch copy of one too, without touching the file)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

from mem0_hygiene.stores.ledger import SCHEMA_VERSION, LedgerRow, open_ledger, scratch_copy

from .old_ledgers import as_version

NOW = datetime(2026, 8, 1, 9, 0, tzinfo=timezone.utc)


def rows(*ids: str) -> list[LedgerRow]:
    return [LedgerRow(mid, created_at="2026-07-01T00:00:00.000000+00:00") for mid in ids]


def test_every_tombstone_is_journaled_as_a_pending_delete_until_settled(tmp_path):
    ledger = open_ledger(str(tmp_path / "hygiene.db"))
    ledger.insert(rows("a", "b", "c"))
    ledger.tombstone(["a"], NOW)
    ledger.tombstone_all(NOW)  # reset: b and c too (a keeps its first tombstone)
    assert sorted(mid for mid, action, _since in ledger.pending() if action == "delete") == ["a", "b", "c"]
    ledger.settle(["a", "b"], "delete")
    assert ledger.pending("delete") == [("c", "delete", ledger.get("c").deleted_at)]
    ledger.insert_tombstoned(rows("d"), NOW)
    assert [mid for mid, _a, _s in ledger.pending("delete")] == ["c", "d"]
    ledger.close()


def test_a_replacement_and_its_link_are_one_transaction_that_closes_its_entry(tmp_path):
    ledger = open_ledger(str(tmp_path / "hygiene.db"))
    ledger.insert(rows("old"))
    ledger.begin("old", "supersede", NOW)
    assert ledger.pending() == [("old", "supersede", "2026-08-01T09:00:00.000000+00:00")]
    ledger.add_linked(rows("new")[0], "old", NOW)
    assert (ledger.get("old").superseded_by, ledger.get("new") is not None, ledger.pending()) == ("new", True, [])
    ledger.close()


def _as_version_2(path: str) -> None:
    as_version(path, 2)


def test_a_version_2_ledger_gets_the_journal_when_the_drop_in_opens_it(tmp_path):
    path = str(tmp_path / "hygiene.db")
    ledger = open_ledger(path)
    ledger.insert(rows("a"))
    ledger.close()
    _as_version_2(path)
    ledger = open_ledger(path)
    assert ledger.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION
    ledger.tombstone(["a"], NOW)
    assert [mid for mid, _a, _s in ledger.pending("delete")] == ["a"]
    ledger.close()


def test_a_scratch_copy_of_a_version_2_ledger_has_the_journal_and_the_file_is_left_alone(tmp_path):
    path = str(tmp_path / "hygiene.db")
    ledger = open_ledger(path)
    ledger.insert(rows("a"))
    ledger.close()
    _as_version_2(path)
    before = hashlib.sha256(open(path, "rb").read()).hexdigest()
    scratch = scratch_copy(path)
    scratch.tombstone(["a"], NOW)  # a dry run's delete goes to the copy's journal
    assert [mid for mid, _a, _s in scratch.pending("delete")] == ["a"]
    scratch.close()
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == before
    readonly = open_ledger(path, readonly=True)
    assert readonly.pending() == []  # a read-only reader of an old ledger sees no journal, and no error
    readonly.close()
