"""Store safety at start-up: the drop-in never keeps memories on a RAM disk by accident."""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

import pytest
from mem0 import Memory as Mem0Memory

from mem0_hygiene import Memory, VolatileStoreError, offline_config
from mem0_hygiene.config import ConfigFacts, build_mem0_config, split_config

SHM = Path("/dev/shm")
pytestmark = pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm (a tmpfs) on this machine")


@pytest.fixture
def shm_dir():
    folder = SHM / f"mem0-hygiene-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def home_dir():
    """A persistent folder (not under /tmp), like ~/.mem0 would be."""
    folder = Path.home() / ".cache" / f"mem0-hygiene-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


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
        assert (old / "collection").exists()  # the old copy stays until the user removes it
        assert any(f"moved the vector store from {old}" in r.message and "verified 3 points" in r.message
                   for r in caplog.records)
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
