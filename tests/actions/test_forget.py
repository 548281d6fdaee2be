"""Verified erasure on real stores: the proof is the raw bytes of every file in the deployment's folder."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.actions.forget import forget
from mem0_hygiene.auditing.runner import audit
from mem0_hygiene.errors import MemoryNotFound

U = {"user_id": "dana"}
SECRET = "Dana's passport number is X1234567"


def files_holding(folder: Path, text: str) -> list[str]:
    """Every file under the folder whose raw bytes contain the text (UTF-8)."""
    needle = text.encode("utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def digests(folder: Path) -> dict[str, str]:
    """Every data file's sha256 (a WAL database's -shm index changes on every read, so it is left out)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


def history_rows(path: str, memory_id: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT event, old_memory, new_memory FROM history WHERE memory_id = ? ORDER BY rowid", (memory_id,)
        ).fetchall()


@pytest.fixture
def folder(persistent_dir) -> Path:
    return persistent_dir / "app"


@pytest.fixture
def app(make_deployment, folder):
    """An open drop-in Memory holding the secret, some other memories and a raw message with the secret."""

    def plant(m):
        secret_id = m.add(SECRET, **U, infer=False, source="chat")["results"][0]["id"]
        for i in range(5):
            m.add(f"Dana likes tea number {i}", **U, infer=False, source="chat")
        m.db.save_messages([{"role": "user", "content": f"by the way, {SECRET}"}], "user_id=dana")  # mem0's writer
        return secret_id

    d = make_deployment(folder, plant=plant, keep_open=True)
    return d.memory, d.planted


def test_scrub_is_proven_by_the_raw_bytes_of_every_file(app, folder):
    m, secret_id = app
    history = str(folder / "history.db")
    assert "history.db" in files_holding(folder, SECRET)
    assert "qdrant/collection/mem0/storage.sqlite" in files_holding(folder, SECRET)

    result = m.forget([secret_id], scrub=True)

    assert files_holding(folder, SECRET) == []
    assert result.verified and result.deleted == (secret_id,) and not result.dry_run
    checked = {Path(f.path).relative_to(folder).as_posix() for f in result.files}
    assert {"history.db", "hygiene.db", "qdrant/collection/mem0/storage.sqlite", "qdrant/meta.json"} <= checked
    assert all(f.clean for f in result.files)
    assert result.history_rows_blanked == 2 and result.messages_removed == 1
    assert history_rows(history, secret_id) == [("ADD", None, ""), ("DELETE", "", None)]  # the events stay
    assert SECRET not in str(result.to_dict())  # the result never repeats the text
    # the app and its other memories are unharmed
    assert len(m.get_all(filters=U)["results"]) == 5
    assert m.get(secret_id) is None
    m.add("Dana drinks coffee too", **U, infer=False, source="chat")
    codes = {f.code for f in audit(m).findings}
    assert not codes & {"DELETED_TEXT_IN_HISTORY", "DELETED_TEXT_IN_MESSAGES", "TOMBSTONED_PRESENT"}


def test_scrub_rewrites_qdrant_storage_where_a_deleted_payload_lingers(make_memory, tmp_path):
    """Where SQLite is built without SECURE_DELETE (the default upstream), a deleted row stays in free
    pages: simulate that on the app's own connections, delete as plain mem0 would, then scrub."""
    folder = tmp_path / "store"
    m = make_memory(folder)
    m.vector_store.client._client.collections["mem0"].storage.storage.execute("PRAGMA secure_delete = OFF")
    m.db.connection.execute("PRAGMA secure_delete = OFF")
    secret_id = m.add(SECRET, **U, infer=False, source="chat")["results"][0]["id"]
    for i in range(5):
        m.add(f"Dana likes tea number {i}", **U, infer=False, source="chat")
    m.delete(secret_id)
    assert files_holding(folder, SECRET) == ["history.db", "qdrant/collection/mem0/storage.sqlite"]

    result = m.forget([secret_id], scrub=True)  # already deleted: only its text is left to erase

    assert result.already_deleted == (secret_id,) and result.deleted == ()
    assert str(folder / "qdrant/collection/mem0/storage.sqlite") in result.vacuumed
    assert files_holding(folder, SECRET) == [] and result.verified


def test_forget_from_a_config_cascades_through_the_chain(folder, clock):
    cfg = offline_config(folder, hygiene={"clock": clock})
    m = Memory.from_config(cfg)
    old = m.add("Dana's home address is 12 Elm Street", **U, infer=False, source="chat")["results"][0]["id"]
    new = m.supersede(old, "Dana's home address is 9 Oak Avenue", source="chat")
    m.add("Dana works on billing", **U, infer=False, source="chat")
    m.close()

    result = forget(cfg, [new], scrub=True)

    assert result.cascaded == (old,) and set(result.deleted) == {old, new} and result.verified
    assert result.texts == 2
    for text in ("12 Elm Street", "9 Oak Avenue"):
        assert files_holding(folder, text) == []
    assert files_holding(folder, "Dana works on billing") == ["history.db", "qdrant/collection/mem0/storage.sqlite"]
    with sqlite3.connect(folder / "hygiene.db") as conn:
        tombstoned = dict(conn.execute("SELECT memory_id, deleted_at IS NOT NULL FROM memories"))
    assert tombstoned[old] and tombstoned[new]
    assert not {f.code for f in audit(cfg).findings} & {
        "DELETED_TEXT_IN_HISTORY",
        "TOMBSTONED_PRESENT",
        "MEMORIES_RESURRECTED",
        "LEDGER_ORPHANS",
    }


def test_text_another_memory_still_holds_is_reported_with_the_reason(app, folder):
    m, secret_id = app
    twin = m.add(SECRET, user_id="sam", infer=False, source="chat")["results"][0]["id"]

    result = m.forget([secret_id], scrub=True)

    assert not result.verified
    dirty = {Path(f.path).relative_to(folder).as_posix(): f.reason for f in result.still_found}
    assert set(dirty) == {"history.db", "qdrant/collection/mem0/storage.sqlite"}
    assert twin in dirty["history.db"] and "other memories" in dirty["history.db"]
    assert "1 other stored point" in dirty["qdrant/collection/mem0/storage.sqlite"]
    m.forget([twin], scrub=True)
    assert files_holding(folder, SECRET) == []


def test_dry_run_changes_nothing_and_says_where_the_text_is(app, folder):
    m, secret_id = app
    m.flush()
    before = digests(folder)
    result = m.forget([secret_id], scrub=True, dry_run=True)
    assert digests(folder) == before
    assert result.dry_run and result.deleted == (secret_id,) and not result.verified
    assert result.history_rows_blanked == 1 and result.messages_removed == 1
    found = {Path(f.path).relative_to(folder).as_posix() for f in result.still_found}
    assert found == {"history.db", "qdrant/collection/mem0/storage.sqlite"}
    assert m.get(secret_id)["memory"] == SECRET


def test_forget_without_scrub_deletes_and_says_the_text_remains(app, folder):
    m, secret_id = app
    result = m.forget([secret_id])
    assert result.deleted == (secret_id,) and not result.scrub and result.files == ()
    assert "not scrubbed" in result.notes[0]
    assert "history.db" in files_holding(folder, SECRET)


def test_an_unknown_id_changes_nothing(app, folder):
    m, secret_id = app
    with pytest.raises(MemoryNotFound, match="nothing was changed"):
        m.forget([secret_id, "no-such-memory"], scrub=True)
    assert m.get(secret_id)["memory"] == SECRET
