"""A negation taken back (the old fact negated, the new one not) is read as such: the feature, the shipped model's
decision and its reason, and the trainer's reversed pairs (the labels that do not depend on which fact came first)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mem0_hygiene.memory.decision import CONTRADICTION, DUPLICATE, EMBEDDER_DEFAULTS, MINILM_FAMILY, classify
from mem0_hygiene.memory.decision_features import pair_features

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MINILM = EMBEDDER_DEFAULTS[MINILM_FAMILY]


def test_a_negation_only_in_the_old_text_is_a_negation_taken_back():
    assert pair_features("Owns a car", "Doesn't own a car").dropped_negation
    assert pair_features("Uses Docker Compose again", "No longer uses Docker Compose").dropped_negation
    assert not pair_features("Doesn't own a car", "Owns a car").dropped_negation  # that is the new text's negation
    assert not pair_features("Never drinks coffee", "Does not drink coffee").dropped_negation  # both negated
    assert not pair_features("Owns a car", "Owns a bike").dropped_negation


@pytest.mark.parametrize("similarity", [0.75, 0.85, 0.9])
@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Owns a car", "Doesn't own a car"),
        ("Uses Docker Compose", "No longer uses Docker Compose"),
        ("Eats meat again", "Does not eat meat"),
    ],
)
def test_the_shipped_model_never_swallows_a_negation_taken_back_as_a_duplicate(new, old, similarity):
    verdict = classify(similarity, new, old, MINILM)
    assert verdict.label == CONTRADICTION != DUPLICATE
    assert "negation taken back" in verdict.reason


def test_the_trainer_reverses_only_the_labels_that_do_not_depend_on_the_order(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import train_decision

    try:
        pairs = [
            {"id": i, "label": label, "kind": "k", "old": f"old {i}", "new": f"new {i}"}
            for i, label in enumerate(("duplicate", "update", "contradiction", "unrelated"))
        ]
        turned, source = train_decision.reversals(pairs)
    finally:
        sys.modules.pop("train_decision", None)
        sys.modules.pop("eval_staleness", None)
    assert source == [0, 2, 3]  # an update read backwards would make the older value the news
    assert [(p["old"], p["new"], p["label"]) for p in turned] == [
        ("new 0", "old 0", "duplicate"),
        ("new 2", "old 2", "contradiction"),
        ("new 3", "old 3", "unrelated"),
    ]
    assert all(p["reversed"] for p in turned) and all("reversed" not in p for p in pairs)
