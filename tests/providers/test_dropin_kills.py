"""A supersede and a delete SIGKILLed midway, on every provider: after the restart nothing is lost, the old fact
is never served beside the new one (nor a deleted one, by the drop-in or plain mem0), and the app's retry ends
where an uninterrupted run does. A sample of kill points (the steps between mem0's write and the ledger's);
``benchmarks/dropin_kill_sweep.py`` kills after every step."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .kills import SOURCES, check_and_retry, plant, run_killed, wrongs
from .stores import unique_collection

KILL_AFTER = {"supersede": ("vector_store.insert",), "delete": ("ledger.tombstone_live_chain", "vector_store.delete")}
"""The sampled steps: a kill right after each (mem0 stored the new fact, the ledger not yet told; the memory
tombstoned, its point not yet deleted; the point deleted, the journal not yet settled)."""


@pytest.mark.parametrize("op", ["supersede", "delete"])
def test_a_supersede_or_delete_killed_midway_loses_nothing_and_never_serves_what_it_replaced(
    op: str, provider: str, provider_config: Callable[..., dict[str, Any]], tmp_path: Path, clock: Any
) -> None:
    for step in KILL_AFTER[op]:
        config = provider_config(tmp_path / step, collection=unique_collection())
        ids = plant(config)
        run = run_killed(config, SOURCES[op], ids, clock(), tmp_path, kill_at=step)
        assert run.killed, f"{op} not killed after {step}: {run.error}"
        seen, after = check_and_retry(op, config, ids)
        assert not wrongs(op, seen, after, strict=True), f"{provider} {op} killed after {step}: " + "; ".join(
            wrongs(op, seen, after, strict=True)
        )
