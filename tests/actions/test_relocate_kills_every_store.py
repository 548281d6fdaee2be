"""`mem0-hygiene relocate` on Chroma and FAISS, killed (SIGKILL) before a sample of its file operations (the first,
the last, every few between, and the store folder's atomic switch and the deletion after it), with and without
--with-sqlite, --remove-source and --update-config: after each kill the app finds every memory while the old paths
lead to the stores, and the rerun finishes the move as an uninterrupted run does. Local Qdrant is killed before
every operation in tests/actions/test_relocate_faults.py; benchmarks/relocate_kill_sweep.py kills every provider
before every operation in every variant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..relocate_kills import VARIANTS, Variant, check_kill_point, clean_run, make_template, sample

EVERY = 9
"""Kill before every 9th file operation (plus the first, the last and the folder's switch)."""

SAMPLED_VARIANTS = ("vector-store", "with-sqlite-remove-source-update-config")
"""The plainest run and the one that does the most (moves the SQLite files, removes the links, rewrites the config)."""

EXTRAS = {
    "chroma": ("chromadb", "chromadb (pip install -e '.[stores]')"),
    "faiss": ("faiss", "faiss-cpu (pip install -e '.[stores]')"),
}


@pytest.mark.parametrize("variant", SAMPLED_VARIANTS)
@pytest.mark.parametrize("provider", sorted(EXTRAS))
def test_relocate_killed_at_sampled_file_operations_loses_nothing_and_the_rerun_finishes(
    crash_runner: Any, tmp_path: Path, provider: str, variant: str
) -> None:
    module, install = EXTRAS[provider]
    pytest.importorskip(module, reason=f"{provider}: needs {install}")
    old, texts, sources = make_template(provider, tmp_path / "template")
    run = Variant(provider, VARIANTS[variant], old, texts, sources)
    clean = clean_run(crash_runner, run, tmp_path)
    assert "exchange_paths" in clean.calls  # the store folder is switched to a link in one atomic exchange
    points = sample(clean.calls, EVERY)
    assert len(points) >= 5
    failures = {
        f"k={k} (before {clean.calls[k - 1]})": wrong
        for k in points
        if (wrong := check_kill_point(crash_runner, run, clean, tmp_path, k))
    }
    assert not failures, failures
