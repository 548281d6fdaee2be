"""migrate SIGKILLed after a sample of its steps (the journal's first write, midway through the points, after the
history and ledger transactions, during verification, at the cleanup): the source is as it was, the destination is
empty of our writes or resumable, and the rerun finishes it without duplicates. Every step is killed by
benchmarks/migrate_kill_sweep.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import offline_config
from mem0_hygiene.maintenance import migrate

from ..migrate_kills import check_after_kill, check_finished, fill, fingerprint, run_migration

pytest.importorskip("faiss", reason="the migration's destination here is FAISS: pip install -e '.[stores]'")

SAMPLE = (
    "journal planned",
    "writing the points 4/",
    "writing mem0's history ",
    "verifying",
    "removing the migration's working copy 1/1",
)
"""Steps (by the start of their label) to kill after; the first step matching each is used."""


def configs(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    source = offline_config(folder / "a")
    target = offline_config(folder / "b")
    target["vector_store"] = {
        "provider": "faiss",
        "config": {"path": str(folder / "b" / "faiss"), "collection_name": "mem0"},
    }
    return source, target


@pytest.fixture(scope="module")
def clean_steps(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The steps of a clean run in a child process (the same data gives the same steps)."""
    folder = tmp_path_factory.mktemp("clean")
    source, target = configs(folder)
    fill(source)
    clean = run_migration(source, target, 0, folder)
    assert not clean.error and not clean.killed, clean.error
    assert check_finished(target, fingerprint(source, folder, "source"), folder, "moved") == ""
    return clean.steps


def test_a_clean_run_in_a_child_process_passes_every_sampled_step(clean_steps: list[str]) -> None:
    for label in SAMPLE:
        assert any(s.startswith(label) for s in clean_steps), label


@pytest.mark.parametrize("label", SAMPLE)
def test_a_migration_killed_after_a_step_is_finished_by_the_rerun(
    tmp_path: Path, label: str, clean_steps: list[str]
) -> None:
    kill_at = next(i for i, s in enumerate(clean_steps, 1) if s.startswith(label))
    source, target = configs(tmp_path)
    fill(source)
    want = fingerprint(source, tmp_path, "before")
    assert run_migration(source, target, kill_at, tmp_path).killed
    assert fingerprint(source, tmp_path, "after-kill") == want  # the source is untouched
    assert check_after_kill(target, want, tmp_path) == ""

    migrate(source, target)  # the rerun
    assert fingerprint(source, tmp_path, "after-rerun") == want
    assert check_finished(target, want, tmp_path, "moved") == ""
