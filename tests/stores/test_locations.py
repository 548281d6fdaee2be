"""resolve_locations: mem0's defaults, MEM0_DIR, explicit paths, servers, and live Memory objects."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from mem0_hygiene.config import build_mem0_config, offline_config, split_config
from mem0_hygiene.errors import ConfigError
from mem0_hygiene.stores.locations import StoreLocation, is_under_tmp, location_of, redact_url, resolve_locations


@pytest.fixture
def mem0_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "mem0home"
    monkeypatch.setenv("MEM0_DIR", str(d))
    return d


def by_role(locations: list[StoreLocation]) -> dict[str, StoreLocation]:
    return {loc.role: loc for loc in locations}


def test_roles_in_order(mem0_dir: Path):
    assert [loc.role for loc in resolve_locations({})] == ["vector_store", "history_db", "ledger", "mem0_dir"]


def test_empty_config_uses_mem0_defaults(mem0_dir: Path):
    locs = by_role(resolve_locations(None))
    vs = locs["vector_store"]
    assert (vs.provider, vs.path, vs.collection, vs.remote) == ("qdrant", "/tmp/qdrant", "mem0", None)
    assert vs.defaulted
    assert vs.under_tmp
    assert vs.filesystem is not None
    # history.db and the ledger follow MEM0_DIR, read now from the environment
    assert locs["history_db"].path == str(mem0_dir / "history.db")
    assert locs["history_db"].defaulted
    assert locs["ledger"].path == str(mem0_dir / "hygiene.db")
    assert locs["ledger"].defaulted
    assert locs["mem0_dir"].path == str(mem0_dir)
    assert not locs["mem0_dir"].defaulted


def test_mem0_dir_defaults_to_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("MEM0_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    locs = by_role(resolve_locations({}))
    assert locs["mem0_dir"].path == str(tmp_path / "home" / ".mem0")
    assert locs["mem0_dir"].defaulted
    assert locs["history_db"].path == str(tmp_path / "home" / ".mem0" / "history.db")
    assert not locs["mem0_dir"].exists  # nothing is created by looking


def test_defaulted_path_on_volatile_filesystem_reported(mem0_dir: Path):
    """The defaulted path is judged by its filesystem: /tmp here, whatever backs it."""
    vs = location_of(resolve_locations({}), "vector_store")
    assert vs.defaulted and vs.under_tmp
    assert vs.volatile == (vs.filesystem is not None and vs.filesystem.volatile)


def test_explicit_paths(tmp_path: Path, mem0_dir: Path):
    cfg = offline_config(tmp_path / "store", collection="agent", hygiene={"ledger_path": str(tmp_path / "l.db")})
    locs = by_role(resolve_locations(cfg))
    vs = locs["vector_store"]
    assert vs.path == str(tmp_path / "store" / "qdrant")
    assert vs.collection == "agent"
    assert not vs.defaulted
    assert not vs.exists and vs.size_bytes is None
    assert vs.writable is True  # its parent can be created under tmp_path
    assert locs["history_db"].path == str(tmp_path / "store" / "history.db")
    assert not locs["history_db"].defaulted
    assert locs["ledger"].path == str(tmp_path / "l.db")
    assert not locs["ledger"].defaulted


def test_ledger_defaults_beside_history(tmp_path: Path, mem0_dir: Path):
    locs = by_role(resolve_locations({"history_db_path": str(tmp_path / "h" / "history.db")}))
    assert locs["ledger"].path == str(tmp_path / "h" / "hygiene.db")
    assert locs["ledger"].defaulted


def test_sizes_and_existence(tmp_path: Path, mem0_dir: Path):
    store = tmp_path / "store"
    (store / "qdrant" / "collection" / "mem0").mkdir(parents=True)
    (store / "qdrant" / "meta.json").write_text("x" * 10)
    (store / "qdrant" / "collection" / "mem0" / "storage.sqlite").write_bytes(b"y" * 100)
    (store / "history.db").write_bytes(b"z" * 7)
    (store / "history.db-wal").write_bytes(b"w" * 3)
    locs = by_role(resolve_locations(offline_config(store)))
    assert locs["vector_store"].exists and locs["vector_store"].size_bytes == 110
    assert locs["history_db"].exists and locs["history_db"].size_bytes == 10
    assert not locs["ledger"].exists and locs["ledger"].size_bytes is None


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="/dev/shm does not exist here")
def test_explicit_path_on_dev_shm_is_volatile(mem0_dir: Path):
    shm = tempfile.mkdtemp(dir="/dev/shm", prefix="mem0-hygiene-test-")
    try:
        cfg = {"vector_store": {"provider": "qdrant", "config": {"path": os.path.join(shm, "qdrant")}}}
        vs = location_of(resolve_locations(cfg), "vector_store")
        assert vs.volatile
        assert not vs.defaulted
        assert vs.filesystem is not None and vs.filesystem.fstype == "tmpfs"
        assert vs.at_risk
    finally:
        os.rmdir(shm)


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="/dev/shm does not exist here")
def test_under_tmp_resolves_symlinks(tmp_path: Path):
    outside = tempfile.mkdtemp(dir="/dev/shm", prefix="mem0-hygiene-test-")
    link = Path(outside) / "link"
    try:
        link.symlink_to(tmp_path)
        assert is_under_tmp(str(link / "qdrant"))  # resolves into /tmp
        assert not is_under_tmp(os.path.join(outside, "qdrant"))
    finally:
        link.unlink(missing_ok=True)
        os.rmdir(outside)


def test_under_tmp_literal_paths():
    assert is_under_tmp("/var/tmp/x")
    assert is_under_tmp("/tmp")
    assert not is_under_tmp("/tmpfoo/x")


def test_qdrant_server_shows_url_without_secrets(mem0_dir: Path):
    cfg = {
        "vector_store": {
            "provider": "qdrant",
            "config": {"url": "https://bob:hunter2@qdrant.example.com:6333/?token=abc", "api_key": "SECRET-KEY"},
        }
    }
    vs = location_of(resolve_locations(cfg), "vector_store")
    assert vs.path is None
    assert vs.remote == "https://qdrant.example.com:6333/"
    dumped = json.dumps([loc.to_dict() for loc in resolve_locations(cfg)])
    for secret in ("SECRET-KEY", "hunter2", "bob", "abc"):
        assert secret not in dumped


def test_qdrant_host_port(mem0_dir: Path):
    cfg = {"vector_store": {"provider": "qdrant", "config": {"host": "localhost", "port": 6333}}}
    vs = location_of(resolve_locations(cfg), "vector_store")
    assert vs.remote == "localhost:6333" and vs.path is None and not vs.defaulted


def test_other_providers(tmp_path: Path, mem0_dir: Path):
    faiss = location_of(resolve_locations({"vector_store": {"provider": "faiss", "config": {}}}), "vector_store")
    assert (faiss.path, faiss.defaulted) == ("/tmp/faiss", True)
    pg = {"vector_store": {"provider": "pgvector", "config": {"connection_string": "postgresql://u:pw@db:5432/x"}}}
    loc = location_of(resolve_locations(pg), "vector_store")
    assert loc.remote == "postgresql://db:5432/x"


def test_redact_url():
    assert redact_url("http://user:pass@h:1/p?q=1#f") == "http://h:1/p"
    assert redact_url("https://qdrant.example.com") == "https://qdrant.example.com"


def test_in_memory_sqlite(mem0_dir: Path):
    loc = location_of(resolve_locations({"hygiene": {"ledger_path": ":memory:"}}), "ledger")
    assert loc.path == ":memory:" and not loc.is_local and loc.filesystem is None


def test_rejects_other_objects():
    with pytest.raises(ConfigError):
        resolve_locations(42)


def test_memory_config_and_plain_mem0_memory(tmp_path: Path, mem0_dir: Path):
    import mem0

    cfg = build_mem0_config(split_config(offline_config(tmp_path / "store"))[0])
    from_cfg = by_role(resolve_locations(cfg))
    assert from_cfg["vector_store"].path == str(tmp_path / "store" / "qdrant")
    assert not from_cfg["vector_store"].defaulted
    m = mem0.Memory(cfg)
    try:
        locs = by_role(resolve_locations(m))
        assert locs["vector_store"].path == str(tmp_path / "store" / "qdrant")
        assert locs["vector_store"].exists
        assert locs["history_db"].path == str(tmp_path / "store" / "history.db")
        assert locs["ledger"].path == str(tmp_path / "store" / "hygiene.db")
        assert locs["ledger"].defaulted
    finally:
        m.close()
        m.vector_store.client.close()


def test_dropin_memory_attributes(tmp_path: Path, mem0_dir: Path):
    from mem0_hygiene import Memory

    m = Memory.from_config(offline_config(tmp_path / "store", hygiene={"ledger_path": str(tmp_path / "led.db")}))
    try:
        locs = by_role(resolve_locations(m))
        assert locs["ledger"].path == str(tmp_path / "led.db")
        assert not locs["ledger"].defaulted
        assert not locs["vector_store"].defaulted
        assert locs["vector_store"].path == str(tmp_path / "store" / "qdrant")
    finally:
        m.close()


def test_to_dict_is_json(tmp_path: Path, mem0_dir: Path):
    data = [loc.to_dict() for loc in resolve_locations(offline_config(tmp_path))]
    text = json.dumps(data)
    assert json.loads(text)[0]["filesystem"]["method"] in ("findmnt", "mountinfo", "unknown")
