"""The write decision reads cosine similarity on every provider: the same pairs give the same decisions, at the
same similarities, as on Qdrant (FAISS and Chroma score by a distance, pgvector by a clipped cosine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mem0_hygiene import ConfigError, Memory
from mem0_hygiene.stores.scores import INVERSE_ONE_MINUS, INVERSE_SQUARED_L2, ScoreScale, score_scale

from .stores import store_config

PAIRS_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "staleness_pairs.jsonl"
ISSUE_PAIR = ("Dana uses Jenkins for nightly builds", "Dana no longer drinks coffee")
"""The pair FAISS got wrong (the coffee retraction invalidated the Jenkins fact: 0.39 read as a cosine)."""


def sample_pairs() -> list[tuple[str, str]]:
    """The issue's pair and 13 of the labelled staleness pairs (every label, spread over the file)."""
    lines = [json.loads(line) for line in PAIRS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [ISSUE_PAIR] + [(p["old"], p["new"]) for p in lines[::14]]


def decisions(config: dict[str, Any], pairs: list[tuple[str, str]]) -> list[tuple[str, float | None]]:
    """(label, similarity) of the second text of each pair, added after the first in a scope of its own."""
    m = Memory.from_config(config)
    try:
        out = []
        for i, (old, new) in enumerate(pairs):
            m.add(old, user_id=f"u{i}", infer=False)
            decided = m.add(new, user_id=f"u{i}", infer=False)["results"][0]["hygiene"]["decision"]
            out.append((decided["label"], decided["similarity"]))
        return out
    finally:
        m.close()


def test_the_same_pairs_get_the_same_decisions_as_on_qdrant(provider: str, provider_config: Any, tmp_path, clock):
    pairs = sample_pairs()
    assert len(pairs) >= 12
    here = decisions(provider_config(write_decision=True), pairs)
    reference = decisions(
        store_config("qdrant", tmp_path / "qdrant", hygiene={"clock": clock, "write_decision": True}), pairs
    )
    assert [label for label, _ in here] == [label for label, _ in reference]
    assert here[0][0] == "unrelated"  # the coffee retraction leaves the Jenkins fact alone
    for (_, sim), (_, ref) in zip(here, reference):
        assert (sim is None) == (ref is None)
        if sim is not None and ref is not None:
            assert sim == pytest.approx(ref, abs=2e-3)


def test_each_distance_converts_back_to_the_cosine() -> None:
    cos = 0.22
    squared_l2 = 2 - 2 * cos  # between unit vectors
    assert ScoreScale("faiss", "L2", INVERSE_SQUARED_L2, True).cosine(1 / (1 + squared_l2)) == pytest.approx(cos)
    assert ScoreScale("chroma", "cosine", INVERSE_ONE_MINUS, False).cosine(1 / (1 + (1 - cos))) == pytest.approx(cos)


def test_a_cosine_converts_to_the_score_the_store_gives_it_and_back() -> None:
    for formula in (INVERSE_SQUARED_L2, INVERSE_ONE_MINUS):
        scale = ScoreScale("chroma", "distance", formula, False)
        for cos in (-0.5, 0.0, 0.1, 0.22, 0.9, 1.0):
            assert scale.cosine(scale.from_cosine(cos)) == pytest.approx(cos)
    assert ScoreScale("chroma", "l2", INVERSE_SQUARED_L2, True).from_cosine(0.1) == pytest.approx(1 / 2.8)
    assert ScoreScale("qdrant", "L2 distance", "l2", True).from_cosine(0.1) is None  # a distance: not a threshold


def test_a_scale_needing_unit_vectors_refuses_other_vectors_naming_the_setting() -> None:
    scale = ScoreScale("faiss", "L2 distance", INVERSE_SQUARED_L2, True, "set vector_store.config.normalize_L2")
    with pytest.raises(ConfigError, match=r"faiss .*not \(norm 5\).*normalize_L2"):
        scale.check_unit([3.0, 4.0])
    scale.check_unit([0.6, 0.8])


def test_an_unknown_provider_or_distance_is_refused_not_guessed() -> None:
    with pytest.raises(ConfigError, match="weaviate.*hygiene.write_decision off"):
        score_scale("weaviate", object())

    class Faiss:
        distance_strategy = "manhattan"
        normalize_L2 = False

    with pytest.raises(ConfigError, match="faiss.*distance_strategy 'manhattan'.*cosine"):
        score_scale("faiss", Faiss())


def relevances(config: dict[str, Any]) -> dict[str, float]:
    """The decay ranking's relevance of each memory for one query (text -> relevance); score_details stay out."""
    m = Memory.from_config(config)
    try:
        for text in ("Dana deploys with Docker Compose", "Dana uses Jenkins for nightly builds", "Dana drinks tea"):
            m.add(text, user_id="dana", infer=False)
        found = m.search("how does Dana deploy", filters={"user_id": "dana"}, top_k=5, threshold=0.0)["results"]
        assert all("score_details" not in item for item in found)
        return {item["memory"]: item["hygiene"]["rank"]["relevance"] for item in found}
    finally:
        m.close()


def test_decay_ranking_reads_the_same_relevance_as_on_qdrant(provider: str, provider_config: Any, tmp_path, clock):
    here = relevances(provider_config(rank=True))
    reference = relevances(store_config("qdrant", tmp_path / "qdrant", hygiene={"clock": clock, "rank": True}))
    assert set(here) == set(reference) and len(here) == 3
    for text, rel in reference.items():
        assert here[text] == pytest.approx(rel, abs=2e-3), text
