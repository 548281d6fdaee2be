"""relocate and relocate_qdrant_folder on real stores built by the real mem0 Memory: data intact,
refused while another process holds the store, and an interruption leaves the source usable."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene.actions import relocate as relocate_mod
from mem0_hygiene.actions.relocate import relocate, relocate_qdrant_folder
from mem0_hygiene.config import build_mem0_config, offline_config, split_config
from mem0_hygiene.errors import RelocateError, StoreLocked
from mem0_hygiene.stores import qdrant as qdrant_local
from mem0_hygiene.stores.mounts import filesystem_of
from mem0_hygiene.stores.sqlite import copy_sqlite

TEXTS = [f"fact number {i}: the team deploys service {i} with tool {i % 3}" for i in range(40)]


def open_plain(config: dict[str, Any]) -> Any:
    import mem0

    return mem0.Memory(build_mem0_config(split_config(config)[0]))


def close_plain(m: Any) -> None:
    m.close()
    m.vector_store.client.close()


def build_store(folder: Path, texts: list[str] = TEXTS) -> dict[str, Any]:
    """A store written by the real mem0 Memory; returns its config. Closed afterwards (lock released)."""
    config = offline_config(folder)
    m = open_plain(config)
    try:
        for text in texts:
            m.add(text, user_id="u", infer=False)
    finally:
        close_plain(m)
    return config


def stored_texts(config: dict[str, Any]) -> list[str]:
    m = open_plain(config)
    try:
        return sorted(r["memory"] for r in m.get_all(filters={"user_id": "u"}, top_k=1000)["results"])
    finally:
        close_plain(m)


def merged(config: dict[str, Any], snippet: dict[str, Any]) -> dict[str, Any]:
    out = dict(config)
    for key, value in snippet.items():
        if key == "vector_store":
            vs = dict(out.get("vector_store") or {})
            vs["config"] = {**(vs.get("config") or {}), **value["config"]}
            out["vector_store"] = vs
        elif key == "hygiene":
            out["hygiene"] = {**(out.get("hygiene") or {}), **value}
        else:
            out[key] = value
    return out


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".relocating-" in p.name) if folder.exists() else []


@pytest.fixture
def store(tmp_path: Path) -> dict[str, Any]:
    return build_store(tmp_path / "old")


def test_relocate_keeps_every_memory(tmp_path: Path, store: dict[str, Any]):
    before = qdrant_local.collection_counts(store["vector_store"]["config"]["path"])
    assert before == {"mem0": len(TEXTS)}

    result = relocate(store, tmp_path / "new")

    move = result.move("vector_store")
    assert move is not None
    assert move.source == str(tmp_path / "old" / "qdrant")
    assert move.destination == str(tmp_path / "new" / "qdrant")
    assert move.counts_before == move.counts_after == before
    assert move.sampled == min(len(TEXTS), relocate_mod.DEFAULT_SAMPLE)
    assert not move.source_removed and not result.source_removed
    assert result.config_snippet == {
        "vector_store": {
            "provider": "qdrant",
            "config": {"path": str(tmp_path / "new" / "qdrant"), "collection_name": "mem0"},
        }
    }
    new_config = merged(store, result.config_snippet)
    assert stored_texts(new_config) == sorted(TEXTS)
    # the old path is a link to the new store: the old config reaches the very same store, no second copy
    assert move.linked and os.path.realpath(tmp_path / "old" / "qdrant") == move.destination
    assert stored_texts(store) == sorted(TEXTS)
    m = open_plain(store)
    try:
        m.add("written through the old path afterwards", user_id="u", infer=False)
    finally:
        close_plain(m)
    assert stored_texts(new_config) == sorted([*TEXTS, "written through the old path afterwards"])
    assert leftovers(tmp_path / "new") == [] and leftovers(tmp_path / "old") == []


def test_relocate_with_sqlite_and_remove_source(tmp_path: Path, mem0_home: Path):
    from mem0_hygiene import Memory

    config = offline_config(tmp_path / "old")
    m = Memory.from_config(config)
    try:
        ids = [m.add(t, user_id="u", infer=False, source="chat 2026-08-01")["results"][0]["id"] for t in TEXTS[:5]]
    finally:
        m.close()
    old_history = tmp_path / "old" / "history.db"
    old_ledger = tmp_path / "old" / "hygiene.db"
    assert old_history.exists() and old_ledger.exists()

    result = relocate(config, tmp_path / "new", include_sqlite=True, remove_source=True)

    assert [mv.role for mv in result.moves] == ["vector_store", "history_db", "ledger"]
    for mv in result.moves:
        assert mv.counts_before == mv.counts_after
        assert mv.source_removed
    assert result.move("history_db").integrity == "ok"  # type: ignore[union-attr]
    assert result.move("history_db").counts_after["history"] == 5  # type: ignore[union-attr]
    assert result.source_removed
    for gone in (tmp_path / "old" / "qdrant", old_history, old_ledger):
        assert not os.path.lexists(gone)  # no link left either: readers of the old paths find nothing
    assert result.config_snippet["history_db_path"] == str(tmp_path / "new" / "history.db")
    assert result.config_snippet["hygiene"] == {"ledger_path": str(tmp_path / "new" / "hygiene.db")}

    m = Memory.from_config(merged(config, result.config_snippet))
    try:
        got = m.get_all(filters={"user_id": "u"})["results"]
        assert sorted(r["id"] for r in got) == sorted(ids)
        assert sorted(r["memory"] for r in got) == sorted(TEXTS[:5])
        assert len(m.history(ids[0])) == 1
    finally:
        m.close()


def test_dry_run_writes_nothing(tmp_path: Path, store: dict[str, Any]):
    result = relocate(store, tmp_path / "new", include_sqlite=True, dry_run=True)
    assert result.dry_run
    assert result.move("vector_store").counts_before == {"mem0": len(TEXTS)}  # type: ignore[union-attr]
    assert result.move("history_db").counts_before["history"] == len(TEXTS)  # type: ignore[union-attr]
    assert any("hygiene.db" in s and "does not exist" in s for s in result.skipped)
    assert not (tmp_path / "new").exists()
    assert "history_db_path" in result.config_snippet


def test_destination_taken_is_refused(tmp_path: Path, store: dict[str, Any]):
    (tmp_path / "new" / "qdrant").mkdir(parents=True)
    (tmp_path / "new" / "qdrant" / "something").write_text("mine")
    with pytest.raises(RelocateError, match="already exists"):
        relocate(store, tmp_path / "new")
    assert (tmp_path / "new" / "qdrant" / "something").read_text() == "mine"
    assert stored_texts(store) == sorted(TEXTS)
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["qdrant"]  # no journal written


def test_an_empty_destination_folder_is_fine(tmp_path: Path, store: dict[str, Any]):
    (tmp_path / "new" / "qdrant").mkdir(parents=True)
    result = relocate(store, tmp_path / "new")
    assert result.move("vector_store").counts_after == {"mem0": len(TEXTS)}  # type: ignore[union-attr]


def test_nothing_to_relocate(tmp_path: Path):
    with pytest.raises(RelocateError, match="no local Qdrant store"):
        relocate(offline_config(tmp_path / "empty"), tmp_path / "new")
    server = {"vector_store": {"provider": "qdrant", "config": {"host": "localhost", "port": 6333}}}
    with pytest.raises(RelocateError, match=r"qdrant on a server \(localhost:6333\) keeps its data there and stays"):
        relocate(server, tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_same_place_refused(tmp_path: Path, store: dict[str, Any]):
    with pytest.raises(RelocateError, match="already at"):
        relocate(store, tmp_path / "old")


# ------------------------------------------------------------------------------------ locks


@pytest.fixture
def holder(store: dict[str, Any], hold_qdrant_lock: Any) -> Any:
    """Another process with the store open, as a running app would have it."""
    return hold_qdrant_lock(store["vector_store"]["config"]["path"])


def test_relocate_refused_while_another_process_holds_the_store(tmp_path: Path, store: dict[str, Any], holder: Any):
    path = store["vector_store"]["config"]["path"]
    assert qdrant_local.is_locked(path)
    with pytest.raises(StoreLocked) as info:
        relocate(store, tmp_path / "new")
    message = str(info.value)
    assert path in message
    assert "stop the app" in message
    assert "m.backup(" in message and "m.prune()" in message
    assert "Qdrant server" in message
    with pytest.raises(StoreLocked):
        relocate(store, tmp_path / "new", dry_run=True)
    with pytest.raises(StoreLocked):
        relocate_qdrant_folder(path, tmp_path / "new" / "qdrant")
    assert not (tmp_path / "new").exists()

    holder.release()
    assert not qdrant_local.is_locked(path)
    assert relocate(store, tmp_path / "new").move("vector_store").counts_after == {"mem0": len(TEXTS)}  # type: ignore[union-attr]


def test_lock_held_in_this_process_is_seen(store: dict[str, Any]):
    path = store["vector_store"]["config"]["path"]
    assert not qdrant_local.is_locked(path)
    with qdrant_local.opened(path) as client:
        assert qdrant_local.client_counts(client) == {"mem0": len(TEXTS)}
        assert qdrant_local.is_locked(path)
        with pytest.raises(StoreLocked):
            qdrant_local.collection_counts(path)
    assert not qdrant_local.is_locked(path)


def test_is_locked_on_missing_folder(tmp_path: Path):
    assert not qdrant_local.is_locked(tmp_path / "nothing")
    assert qdrant_local.collection_counts(tmp_path / "nothing") == {}
    assert not (tmp_path / "nothing").exists()


# ------------------------------------------------------------------------------------ interruptions


def _half_copy(exc: BaseException):
    def copy_store(src: str, dst: str) -> None:
        os.makedirs(dst)
        shutil.copy2(os.path.join(src, "meta.json"), os.path.join(dst, "meta.json"))
        raise exc

    return copy_store


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_interrupted_copy_leaves_source_usable(
    tmp_path: Path, store: dict[str, Any], monkeypatch: pytest.MonkeyPatch, exc: BaseException
):
    src = store["vector_store"]["config"]["path"]
    monkeypatch.setattr(qdrant_local, "copy_store", _half_copy(exc))
    with pytest.raises(type(exc)):
        relocate(store, tmp_path / "new", remove_source=True)
    monkeypatch.undo()
    assert not (tmp_path / "new" / "qdrant").exists()
    assert leftovers(tmp_path / "new") == []
    assert not qdrant_local.is_locked(src)
    assert qdrant_local.collection_counts(src) == {"mem0": len(TEXTS)}
    assert stored_texts(store) == sorted(TEXTS)


def test_copy_missing_points_fails_verification(tmp_path: Path, store: dict[str, Any], monkeypatch: pytest.MonkeyPatch):
    real_copy = qdrant_local.copy_store

    def lossy_copy(src: str, dst: str) -> None:
        real_copy(src, dst)
        with qdrant_local.opened(dst) as client:
            first = client.scroll("mem0", limit=1)[0][0].id
            client.delete("mem0", points_selector=[first])

    monkeypatch.setattr(qdrant_local, "copy_store", lossy_copy)
    with pytest.raises(RelocateError, match="does not match"):
        relocate(store, tmp_path / "new", remove_source=True)
    assert not (tmp_path / "new" / "qdrant").exists()
    assert leftovers(tmp_path / "new") == []
    assert stored_texts(store) == sorted(TEXTS)


def test_copy_with_changed_payload_fails_verification(
    tmp_path: Path, store: dict[str, Any], monkeypatch: pytest.MonkeyPatch
):
    real_copy = qdrant_local.copy_store

    def corrupting_copy(src: str, dst: str) -> None:
        real_copy(src, dst)
        with qdrant_local.opened(dst) as client:
            ids = qdrant_local.all_ids(client, "mem0")
            client.set_payload("mem0", payload={"data": "tampered"}, points=[ids[0]])

    monkeypatch.setattr(qdrant_local, "copy_store", corrupting_copy)
    with pytest.raises(RelocateError, match="differs"):
        relocate(store, tmp_path / "new")
    assert not (tmp_path / "new" / "qdrant").exists()
    assert stored_texts(store) == sorted(TEXTS)


def test_failure_in_a_later_store_undoes_earlier_copies(
    tmp_path: Path, store: dict[str, Any], monkeypatch: pytest.MonkeyPatch
):
    def broken(src: str, dst: str) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(relocate_mod, "copy_database", broken)
    with pytest.raises(KeyboardInterrupt):
        relocate(store, tmp_path / "new", include_sqlite=True, remove_source=True)
    assert not (tmp_path / "new" / "qdrant").exists()
    assert (tmp_path / "old" / "history.db").exists()
    assert stored_texts(store) == sorted(TEXTS)


# ------------------------------------------------------------------------------------ start-up rescue


@pytest.fixture
def shm_dir() -> Iterator[Path]:
    """A folder on a real tmpfs: /dev/shm."""
    if not os.path.isdir("/dev/shm") or not filesystem_of("/dev/shm").volatile:
        pytest.skip("no tmpfs at /dev/shm here")
    d = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="mem0-hygiene-test-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_relocate_qdrant_folder_from_tmpfs(tmp_path: Path, shm_dir: Path):
    config = build_store(shm_dir, TEXTS[:12])
    src = config["vector_store"]["config"]["path"]
    assert filesystem_of(src).volatile
    dst = tmp_path / "persistent" / "qdrant"

    counts = relocate_qdrant_folder(src, dst)

    assert counts == {"mem0": 12}
    assert not filesystem_of(dst).volatile
    assert os.path.isdir(src)  # the caller decides when the old copy goes
    moved = dict(config)
    moved["vector_store"] = {"provider": "qdrant", "config": {**config["vector_store"]["config"], "path": str(dst)}}
    assert stored_texts(moved) == sorted(TEXTS[:12])
    with pytest.raises(RelocateError, match="already exists"):
        relocate_qdrant_folder(src, dst)


def test_relocate_qdrant_folder_missing_source(tmp_path: Path):
    with pytest.raises(RelocateError, match="no local Qdrant store"):
        relocate_qdrant_folder(tmp_path / "nope", tmp_path / "dst")


# ------------------------------------------------------------------------------------ SQLite copies


def test_copy_sqlite_of_a_live_wal_database(tmp_path: Path):
    src = tmp_path / "live.db"
    writer = sqlite3.connect(src)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (x)")
    writer.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
    writer.commit()  # still open, WAL not checkpointed
    try:
        before, after, integrity = copy_sqlite(str(src), str(tmp_path / "out" / "copy.db"))
    finally:
        writer.close()
    assert before == after == {"t": 100}
    assert integrity == "ok"
    check = sqlite3.connect(tmp_path / "out" / "copy.db")
    try:
        assert check.execute("SELECT count(*), sum(x) FROM t").fetchone() == (100, sum(range(100)))
    finally:
        check.close()
    with pytest.raises(RelocateError, match="already exists"):
        copy_sqlite(str(src), str(tmp_path / "out" / "copy.db"))
    assert leftovers(tmp_path / "out") == []


@pytest.fixture
def mem0_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "mem0home"
    monkeypatch.setenv("MEM0_DIR", str(d))
    return d


def test_copy_database_keeps_mode_and_wal_and_clears_an_interrupted_runs_leftovers(tmp_path: Path):
    src = tmp_path / "ledger.db"
    writer = sqlite3.connect(src)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (x)")
    writer.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    writer.commit()
    writer.close()
    os.chmod(src, 0o600)
    out = tmp_path / "out"
    out.mkdir()
    (out / ".copy.db.relocating-abcd1234").write_bytes(b"half a copy")  # a crash mid-copy left these
    (out / ".copy.db.relocating-abcd1234-wal").write_bytes(b"")
    copy_sqlite(str(src), str(out / "copy.db"))
    assert stat.S_IMODE(os.stat(out / "copy.db").st_mode) == 0o600
    check = sqlite3.connect(out / "copy.db")
    try:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        check.close()
    assert sorted(p.name for p in out.iterdir()) == ["copy.db"]


def test_a_qdrant_copy_clears_an_interrupted_runs_leftovers(tmp_path: Path, store: dict[str, Any]):
    leftover = tmp_path / "new" / ".qdrant.relocating-abcd1234" / "store"
    leftover.mkdir(parents=True)
    (leftover / "meta.json").write_text("{}")
    relocate_qdrant_folder(store["vector_store"]["config"]["path"], tmp_path / "new" / "qdrant")
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["qdrant"]
