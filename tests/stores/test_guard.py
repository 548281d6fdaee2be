"""Store safety at start-up: the drop-in never keeps memories on a RAM disk by accident."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from mem0 import Memory as Mem0Memory

from mem0_hygiene import Memory, VolatileStoreError, offline_config
from mem0_hygiene.config import ConfigFacts, build_mem0_config, split_config
from mem0_hygiene.errors import HygieneError, RelocateError

SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm (a tmpfs) on this machine")


@pytest.fixture
def shm_dir():
    folder = SHM / f"mem0-hygiene-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def home_dir(persistent_dir):
    """A persistent folder (neither under a temp folder nor in RAM), like ~/.mem0 would be."""
    return persistent_dir


def config_with_vector_path(home: Path, vector_path: Path, **hygiene):
    cfg = offline_config(home, hygiene=hygiene or None)
    cfg["vector_store"]["config"]["path"] = str(vector_path)
    return cfg


@pytest.fixture
def seed(close_plain):
    """Writes n memories with plain mem0 at vector_path: `seed(vector_path, home, n=3)` returns their ids."""

    def seed_facts(vector_path: Path, home: Path, n: int = 3) -> list[str]:
        cfg = config_with_vector_path(home, vector_path)
        cfg["history_db_path"] = str(home / "seed-history.db")
        m = Mem0Memory(build_mem0_config(split_config(cfg)[0]))
        ids = [m.add(f"fact number {i}", user_id="u", infer=False)["results"][0]["id"] for i in range(n)]
        close_plain(m)
        return ids

    return seed_facts


def test_defaulted_vector_path_on_tmpfs_moves_beside_history_with_its_data(shm_dir, home_dir, caplog, seed):
    old = shm_dir / "qdrant"
    ids = seed(old, home_dir)
    mem0_part, settings, _ = split_config(config_with_vector_path(home_dir, old))
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene"):
        m = Memory(build_mem0_config(mem0_part), hygiene=settings, config_facts=ConfigFacts(vector_path_defaulted=True))
    try:
        new = home_dir / "qdrant"
        assert m.config.vector_store.config.path == str(new)
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
        # no second copy: the old path is a link to the moved store, the moved-from data is gone
        assert old.is_symlink() and os.path.realpath(old) == str(new)
        assert [p.name for p in shm_dir.iterdir()] == ["qdrant"]
        said = [r.message for r in caplog.records if f"moved the vector store from {old}" in r.message]
        assert len(said) == 1 and "verified 3 points" in said[0]
        assert f"{old} is now a link to {new}" in said[0]
        assert (
            f"Pin the path in your config: 'vector_store': {{'provider': 'qdrant', 'config': {{'path': '{new}'}}}}"
            in said[0]
        )
    finally:
        m.close()


def test_explicit_tmpfs_path_gets_one_loud_warning_and_is_used(shm_dir, home_dir, caplog):
    path = shm_dir / "explicit"
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene"):
        m = Memory.from_config(config_with_vector_path(home_dir, path))
    try:
        assert m.config.vector_store.config.path == str(path)
        warnings = [r.message for r in caplog.records if str(path) in r.message]
        assert len(warnings) == 1
        assert "RAM disk" in warnings[0] and "mem0-hygiene relocate --to DIR" in warnings[0]
    finally:
        m.close()


def test_explicit_tmpfs_path_is_refused_when_on_volatile_is_error(shm_dir, home_dir):
    path = shm_dir / "refused"
    with pytest.raises(VolatileStoreError, match="refuses to start"):
        Memory.from_config(config_with_vector_path(home_dir, path, on_volatile="error"))
    assert not path.exists()
    assert not (home_dir / "hygiene.db").exists()


def test_explicit_tmpfs_path_is_relocated_when_asked(shm_dir, home_dir, seed):
    old = shm_dir / "asked"
    ids = seed(old, home_dir, n=2)
    m = Memory.from_config(config_with_vector_path(home_dir, old, on_volatile="relocate"))
    try:
        assert m.config.vector_store.config.path == str(home_dir / "qdrant")
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
    finally:
        m.close()


def test_history_db_on_tmpfs_is_warned(shm_dir, home_dir, caplog):
    cfg = offline_config(home_dir)
    cfg["history_db_path"] = str(shm_dir / "history.db")
    cfg["hygiene"] = {"ledger_path": str(home_dir / "hygiene.db")}
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene"):
        m = Memory.from_config(cfg)
    m.close()
    assert any("mem0's history.db" in r.message and "--with-sqlite" in r.message for r in caplog.records)


def test_explicit_tmpfs_path_relocated_when_asked_leaves_a_link(shm_dir, home_dir, seed):
    old = shm_dir / "asked-link"
    seed(old, home_dir, n=1)
    m = Memory.from_config(config_with_vector_path(home_dir, old, on_volatile="relocate"))
    m.close()
    assert old.is_symlink() and os.path.realpath(old) == str(home_dir / "qdrant")


# ------------------------------------------------------------------------------------ the link is the same store

PLAIN_APP = """
import json, sys
from mem0 import Memory
from mem0_hygiene.config import build_mem0_config, split_config
config = json.loads(sys.argv[1])
m = Memory(build_mem0_config(split_config(config)[0]))
print(json.dumps(sorted(r["memory"] for r in m.get_all(filters={"user_id": "u"}, top_k=100)["results"])), flush=True)
"""

HOLD_PLAIN = """
import json, sys
from mem0 import Memory
from mem0_hygiene.config import build_mem0_config, split_config
m = Memory(build_mem0_config(split_config(json.loads(sys.argv[2]))[0]))
print("ready", flush=True)
sys.stdin.readline()
"""


def plain_app(config: dict, *, env: dict | None = None) -> subprocess.CompletedProcess:
    """A plain mem0 app in its own process, opening the store at the config's (old) path: what it sees."""
    return subprocess.run(
        [sys.executable, "-c", PLAIN_APP, json.dumps(config)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def defaulted_memory(home: Path, old: Path) -> Memory:
    mem0_part, settings, _ = split_config(config_with_vector_path(home, old))
    return Memory(build_mem0_config(mem0_part), hygiene=settings, config_facts=ConfigFacts(vector_path_defaulted=True))


def test_plain_mem0_on_the_old_path_sees_what_the_dropin_wrote_and_shares_its_lock(
    shm_dir, home_dir, seed, hold_qdrant_lock
):
    old = shm_dir / "qdrant"
    seed(old, home_dir, n=2)
    plain_config = {**config_with_vector_path(home_dir, old), "hygiene": {}}
    plain_config["history_db_path"] = str(home_dir / "history.db")
    m = defaulted_memory(home_dir, old)
    try:
        m.add("written by the drop-in after the move", user_id="u", infer=False, source="chat")
        # while the drop-in has the store open, a plain mem0 app on the old path is refused by qdrant's own lock
        held = plain_app(plain_config)
        assert held.returncode != 0 and "already accessed" in held.stderr
    finally:
        m.close()
    seen = plain_app(plain_config)
    assert seen.returncode == 0, seen.stderr
    assert json.loads(seen.stdout.splitlines()[-1]) == [
        "fact number 0",
        "fact number 1",
        "written by the drop-in after the move",
    ]

    # and the other way round: a plain mem0 app holding the old path keeps the drop-in out of the new one
    holder = hold_qdrant_lock(old, script=HOLD_PLAIN.replace("sys.argv[2]", repr(json.dumps(plain_config))))
    with pytest.raises((RuntimeError, HygieneError), match="already accessed|holds its lock"):
        defaulted_memory(home_dir, old)
    holder.release()
    m = defaulted_memory(home_dir, old)
    m.close()


def test_the_next_start_recreates_the_link_the_os_cleaned(shm_dir, home_dir, seed, caplog):
    old = shm_dir / "qdrant"
    ids = seed(old, home_dir, n=2)
    defaulted_memory(home_dir, old).close()
    os.unlink(old)  # /tmp wiped at reboot: the link is gone, the store is safe beside history.db
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene"):
        m = defaulted_memory(home_dir, old)
    try:
        assert old.is_symlink() and os.path.realpath(old) == str(home_dir / "qdrant")
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
        assert any(
            "its link was gone" in r.message and f"the store is at {home_dir / 'qdrant'}" in r.message
            for r in caplog.records
        )
    finally:
        m.close()


def test_a_fresh_start_links_the_old_path_to_the_new_empty_store(shm_dir, home_dir):
    old = shm_dir / "qdrant"
    m = defaulted_memory(home_dir, old)
    try:
        assert old.is_symlink() and os.path.realpath(old) == str(home_dir / "qdrant")
        m.add("the first memory", user_id="u", infer=False)
    finally:
        m.close()
    plain_config = {**config_with_vector_path(home_dir, old), "hygiene": {}}
    seen = plain_app(plain_config)
    assert seen.returncode == 0, seen.stderr
    assert json.loads(seen.stdout.splitlines()[-1]) == ["the first memory"]


def test_two_different_stores_are_refused_naming_both(shm_dir, home_dir, seed):
    old = shm_dir / "qdrant"
    seed(old, home_dir, n=2)
    seed(home_dir / "qdrant", home_dir, n=3)  # another store already where the drop-in would move it
    with pytest.raises(VolatileStoreError) as info:
        defaulted_memory(home_dir, old)
    message = str(info.value)
    assert str(old) in message and str(home_dir / "qdrant") in message
    assert "2 points in 'mem0'" in message and "3 points in 'mem0'" in message
    assert f"mv {old} {old}.old" in message and "vector_store.config.path" in message
    assert (old / "meta.json").is_file() and not old.is_symlink()  # nothing was switched
    assert (home_dir / "qdrant" / "meta.json").is_file()


def test_the_same_store_in_both_places_becomes_one(shm_dir, home_dir, seed):
    old = shm_dir / "qdrant"
    ids = seed(old, home_dir, n=2)
    shutil.copytree(old, home_dir / "qdrant")  # what earlier versions left: a copy, and the original in /tmp
    m = defaulted_memory(home_dir, old)
    try:
        assert old.is_symlink() and os.path.realpath(old) == str(home_dir / "qdrant")
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
    finally:
        m.close()


def test_a_store_changed_between_copy_and_switch_is_not_moved(shm_dir, home_dir, seed, monkeypatch):
    from mem0_hygiene.stores import guard

    old = shm_dir / "qdrant"
    seed(old, home_dir, n=2)
    real_copy = guard.copy_store_verified

    def copy_then_write(src: str, dst: str, *args):
        made = real_copy(src, dst, *args)
        os.utime(os.path.join(src, "meta.json"), ns=(1, 1))  # another client wrote meanwhile
        return made

    monkeypatch.setattr(guard, "copy_store_verified", copy_then_write)
    with pytest.raises(RelocateError, match="changed after it was copied"):
        defaulted_memory(home_dir, old)
    assert not old.is_symlink() and (old / "meta.json").is_file()
    assert not (home_dir / "qdrant").exists()  # the fresh copy is gone: no second store


def test_without_the_atomic_exchange_the_folder_is_moved_aside_then_linked(shm_dir, home_dir, seed, monkeypatch):
    from mem0_hygiene.stores import moves

    old = shm_dir / "qdrant"
    ids = seed(old, home_dir, n=2)
    monkeypatch.setattr(moves, "exchange_paths", lambda a, b: False)
    m = defaulted_memory(home_dir, old)
    try:
        assert old.is_symlink()
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
    finally:
        m.close()
    assert [p.name for p in shm_dir.iterdir()] == ["qdrant"]


def test_an_interrupted_aside_move_is_finished_or_undone(shm_dir, home_dir, seed):
    from mem0_hygiene.stores.moves import finish_swap
    from mem0_hygiene.stores.staging import aside_path

    old = shm_dir / "qdrant"
    ids = seed(old, home_dir, n=2)
    aside = Path(aside_path(str(old)))
    os.rename(old, aside)  # killed between moving the folder aside and linking: no verified copy yet
    assert "undid" in finish_swap(str(old), str(home_dir / "qdrant"), folder=True)
    assert (old / "meta.json").is_file() and not aside.exists()

    shutil.copytree(old, home_dir / "qdrant")  # the verified copy is in place, then the kill
    os.rename(old, aside)
    m = defaulted_memory(home_dir, old)  # the next start finishes the switch
    try:
        assert old.is_symlink() and not aside.exists()
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
    finally:
        m.close()


def test_a_link_the_user_made_to_another_folder_is_left_alone(shm_dir, home_dir, seed):
    elsewhere = home_dir / "mine"
    ids = seed(elsewhere, home_dir, n=1)
    old = shm_dir / "qdrant"
    os.symlink(elsewhere, old)
    m = defaulted_memory(home_dir, old)
    try:
        assert os.path.realpath(old) == str(elsewhere) and not (home_dir / "qdrant").exists()
        assert [r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]] == ids
    finally:
        m.close()


def test_only_the_relocate_policy_finishes_a_switch_a_crash_left(shm_dir, home_dir, seed):
    from mem0_hygiene.stores.staging import link_tmp_path

    old = shm_dir / "qdrant"
    ids = seed(old, home_dir, n=1)
    defaulted_memory(home_dir, old).close()
    leftover = Path(link_tmp_path(str(old)))
    shutil.copytree(home_dir / "qdrant", leftover)  # killed after the exchange: the moved-from folder is still here
    mem0_part, settings, _ = split_config(config_with_vector_path(home_dir, old, on_volatile="warn"))
    m = Memory(build_mem0_config(mem0_part), hygiene=settings, config_facts=ConfigFacts(vector_path_defaulted=True))
    m.close()  # how the CLI opens a store: it moves and cleans nothing
    assert leftover.is_dir()
    m = defaulted_memory(home_dir, old)  # the app's next start does
    try:
        assert not leftover.exists() and [r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]] == ids
    finally:
        m.close()


def test_with_no_persistent_folder_to_move_to_the_store_stays_and_a_warning_says_why(
    shm_dir, seed, caplog, monkeypatch
):
    old = shm_dir / "asked"
    ids = seed(old, shm_dir, n=2)
    monkeypatch.setenv("MEM0_DIR", str(shm_dir / "mem0-dir"))  # mem0's folder on the RAM disk too, like HOME under /tmp
    with caplog.at_level(logging.WARNING, logger="mem0_hygiene"):
        m = Memory.from_config(config_with_vector_path(shm_dir, old, on_volatile="relocate"))
    try:
        assert m.config.vector_store.config.path == str(old) and not old.is_symlink()
        assert sorted(r["id"] for r in m.get_all(filters={"user_id": "u"})["results"]) == sorted(ids)
        said = [r.message for r in caplog.records if "no persistent folder to move it to" in r.message]
        assert len(said) == 1 and str(old) in said[0] and "relocate --to DIR" in said[0]
        assert not (shm_dir / "qdrant").exists() and not (shm_dir / "mem0-dir" / "qdrant").exists()
    finally:
        m.close()
