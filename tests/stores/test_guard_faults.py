"""The drop-in's start-up move of a defaulted store off tmpfs, killed (SIGKILL) before each of its file operations:
the store always opens (drop-in and plain mem0) with every memory, and the next start finishes the move."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import Memory, offline_config
from mem0_hygiene.config import build_mem0_config, split_config
from mem0_hygiene.stores.mounts import filesystem_of

START_APP = """
def operation(config_json):
    import json
    from mem0_hygiene import Memory
    m = Memory.from_config(json.loads(config_json))
    m.close()
"""


@pytest.fixture
def shm_dir() -> Iterator[Path]:
    if not os.path.isdir("/dev/shm") or not filesystem_of("/dev/shm").volatile:
        pytest.skip("no tmpfs at /dev/shm here")
    d = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="mem0-hygiene-faults-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def app_config(home: Path, vector_path: Path) -> dict[str, Any]:
    cfg = offline_config(home, hygiene={"on_volatile": "relocate"})
    cfg["vector_store"]["config"]["path"] = str(vector_path)
    return cfg


def plain_ids(cfg: dict[str, Any]) -> list[str]:
    import mem0

    m = mem0.Memory(build_mem0_config(split_config(cfg)[0]))
    try:
        return sorted(r["id"] for r in m.get_all(filters={"user_id": "u"}, top_k=100)["results"])
    finally:
        m.close()
        m.vector_store.client.close()


def dropin_ids(cfg: dict[str, Any]) -> list[str]:
    m = Memory.from_config(cfg)
    try:
        return sorted(r["id"] for r in m.get_all(filters={"user_id": "u"}, top_k=100)["results"])
    finally:
        m.close()


def listing(**folders: Path) -> dict[str, str]:
    """Every entry of the named folders (one level), as 'link -> NAME/target', 'dir' or 'file'."""

    def named(path: str) -> str:
        for name, folder in folders.items():
            if path == str(folder) or path.startswith(str(folder) + "/"):
                return name + path[len(str(folder)) :]
        return path

    out = {}
    for folder in folders.values():
        for entry in sorted(folder.iterdir()):
            if entry.is_symlink():
                out[named(str(entry))] = "link -> " + named(os.path.realpath(entry))
            else:
                out[named(str(entry))] = "dir" if entry.is_dir() else "file"
    return out


def leftovers(*folders: Path) -> list[str]:
    return [str(p) for folder in folders for p in folder.rglob("*") if ".relocating-" in p.name]


def test_startup_move_survives_a_kill_before_each_file_operation(crash_runner, shm_dir, persistent_dir):
    template = persistent_dir / "template"
    seed_cfg = app_config(template / "home", template / "shm" / "qdrant")
    (template / "home").mkdir(parents=True)
    import mem0

    m = mem0.Memory(build_mem0_config(split_config(seed_cfg)[0]))
    ids = sorted(m.add(f"fact number {i}", user_id="u", infer=False)["results"][0]["id"] for i in range(4))
    m.close()
    m.vector_store.client.close()

    def fresh(name: str) -> tuple[Path, Path, dict[str, Any]]:
        shm, home = shm_dir / name, persistent_dir / name / "home"
        shutil.copytree(template / "shm", shm, symlinks=True)
        shutil.copytree(template / "home", home, symlinks=True)
        return shm, home, app_config(home, shm / "qdrant")

    shm, home, cfg = fresh("clean")
    clean = crash_runner.run(START_APP, json.dumps(cfg))
    assert clean["status"] == "ok", clean.get("error")
    assert (shm / "qdrant").is_symlink() and os.path.realpath(shm / "qdrant") == str(home / "qdrant")
    expected = listing(shm=shm, home=home)
    calls = clean["calls"]
    assert {"copyfile", "exchange_paths", "rmtree"} <= set(calls), calls

    held = 0
    for k in range(1, len(calls) + 1):
        shm, home, cfg = fresh(f"k{k}")
        killed = crash_runner.run(START_APP, json.dumps(cfg), kill_at=k)
        assert killed["status"] == "killed", (k, calls[k - 1], killed)
        where = f"killed before call {k} ({calls[k - 1]})"
        plain_cfg = {**cfg, "hygiene": {}}
        assert plain_ids(plain_cfg) == ids, where  # plain mem0 on the old path: every memory, nothing created
        assert dropin_ids(cfg) == ids, where  # the next start (it finishes the move)
        assert leftovers(shm, home) == [], where
        assert listing(shm=shm, home=home) == expected, where
        assert plain_ids(plain_cfg) == ids, where  # through the link, after the move
        moved = {**cfg["vector_store"]["config"], "path": str(home / "qdrant")}
        new_cfg = {**plain_cfg, "vector_store": {**cfg["vector_store"], "config": moved}}
        assert plain_ids(new_cfg) == ids, where
        held += 1
    assert held == len(calls) >= 5
