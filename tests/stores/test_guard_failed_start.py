"""A start that is going to fail anyway (mem0's embedder or LLM has no API key) moves no store before it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mem0_hygiene import Memory, offline_config

DEFAULT_VECTOR_PATH = "/tmp/qdrant"
SHM = Path("/dev/shm")


def state_of(path: str) -> tuple[bool, bool, str | None, list[str] | None]:
    """Whether ``path`` exists (as anything), is a link, where it leads, and what a folder there holds."""
    is_link = os.path.islink(path)
    listing = sorted(os.listdir(path)) if os.path.isdir(path) and not is_link else None
    return os.path.lexists(path), is_link, os.readlink(path) if is_link else None, listing


def test_mem0s_default_config_without_an_api_key_fails_with_mem0s_error_and_leaves_tmp_qdrant_alone(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "MEM0_DIR"}
    env.update(HOME=str(home), TMPDIR=str(tmp_path), MEM0_TELEMETRY="False")
    before = state_of(DEFAULT_VECTOR_PATH)
    done = subprocess.run(
        [sys.executable, "-c", "from mem0_hygiene import Memory; Memory()"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "OPENAI_API_KEY" in done.stderr.splitlines()[-1]  # mem0's own error, naming what is missing
    assert state_of(DEFAULT_VECTOR_PATH) == before
    assert not (home / ".mem0" / "qdrant").exists()


@pytest.fixture
def shm_dir() -> Iterator[Path]:
    if not SHM.is_dir():
        pytest.skip("needs /dev/shm (a tmpfs) on this machine")
    folder = SHM / f"mem0-hygiene-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_store_asked_to_move_stays_put_when_the_embedder_cannot_start(
    shm_dir: Path, persistent_dir: Path, plain_mem0, close_plain, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = shm_dir / "qdrant"
    seeded = plain_mem0(shm_dir)
    seeded.add("written before the drop-in", user_id="u", infer=False)
    close_plain(seeded)
    before = state_of(str(old))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = offline_config(persistent_dir, hygiene={"on_volatile": "relocate"})
    config["vector_store"]["config"]["path"] = str(old)
    config["embedder"] = {"provider": "openai"}
    with pytest.raises(Exception, match="OPENAI_API_KEY"):
        Memory.from_config(config)
    assert state_of(str(old)) == before and before[3]  # still the real folder, with its data
    assert not (persistent_dir / "qdrant").exists()
