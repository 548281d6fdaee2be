"""The external pairs (benchmarks/make_external_pairs.py): SICK's two-way judgements mapped onto the four labels,
a selection that depends only on the corpus, and a clear skip when the corpus file is absent."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
HEADER = (
    "pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\tentailment_BA\t"
    "sentence_A_original\tsentence_B_original\tsentence_A_dataset\tsentence_B_dataset\tSemEval_set\n"
)


def row(pair_id: int, a: str, b: str, ab: str, ba: str, relatedness: float = 4.0) -> str:
    return f"{pair_id}\t{a}\t{b}\tX\t{relatedness}\t{ab}\t{ba}\t{a}\t{b}\tFLICKR\tFLICKR\tTRAIN\n"


@pytest.fixture()
def mep(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import make_external_pairs

    yield make_external_pairs
    sys.modules.pop("make_external_pairs", None)


def test_two_way_judgements_map_onto_the_labels_and_one_way_ones_are_left_out(tmp_path, mep):
    sick = tmp_path / "SICK.txt"
    sick.write_text(
        HEADER
        + "".join(
            [
                row(1, "A man is playing a guitar", "A person is playing a guitar", "A_entails_B", "B_entails_A"),
                row(
                    2,
                    "A man is playing a guitar",
                    "There is no man playing a guitar",
                    "A_contradicts_B",
                    "B_contradicts_A",
                ),
                row(
                    3,
                    "A deer is standing inside a fence",
                    "The deer is jumping over the fence",
                    "A_contradicts_B",
                    "B_contradicts_A",
                ),
                row(
                    4,
                    "A man is speaking on a stage",
                    "A man is speaking at a podium",
                    "A_neutral_B",
                    "B_neutral_A",
                    3.6,
                ),
                row(5, "A cat is playing a keyboard", "A woman is slicing an onion", "A_neutral_B", "B_neutral_A", 1.2),
                row(6, "A man is playing a guitar", "A man is playing an instrument", "A_entails_B", "B_neutral_A"),
                row(7, "A dog runs", "a dog runs.", "A_entails_B", "B_entails_A"),
                row(
                    8,
                    "A dog is running across a very long and rocky landscape under a bright and sunny sky today",
                    "A dog runs",
                    "A_entails_B",
                    "B_entails_A",
                ),
            ]
        ),
        encoding="utf-8",
    )
    got = {p["id"] - mep.ID_BASE: (p["label"], p["kind"]) for p in mep.pairs(sick)}
    assert got == {
        1: ("duplicate", "paraphrase"),
        2: ("contradiction", "negation"),
        3: ("contradiction", "antonym"),
        4: ("unrelated", "near miss"),
        5: ("unrelated", "other topic"),
    }
    first = next(p for p in mep.pairs(sick) if p["id"] == mep.ID_BASE + 2)
    assert (first["old"], first["new"]) == ("A man is playing a guitar", "There is no man playing a guitar")
    assert "CC BY-NC-SA" in first["source"]


def test_the_selection_is_a_fixed_order_of_the_corpus_capped_per_label(tmp_path, mep, monkeypatch):
    monkeypatch.setattr(
        mep,
        "PER_LABEL",
        {
            ("duplicate", None): 2,
            ("contradiction", None): 0,
            ("unrelated", "near miss"): 0,
            ("unrelated", "other topic"): 0,
        },
    )
    sick = tmp_path / "SICK.txt"
    rows = [
        row(i, f"A dog number {i} runs", f"Dog number {i} is running", "A_entails_B", "B_entails_A")
        for i in range(1, 11)
    ]
    sick.write_text(HEADER + "".join(rows), encoding="utf-8")
    chosen = [p["id"] for p in mep.pairs(sick)]
    sick.write_text(HEADER + "".join(reversed(rows)), encoding="utf-8")
    assert [p["id"] for p in mep.pairs(sick)] == chosen  # the file's order does not matter
    assert len(chosen) == 2 and chosen != [mep.ID_BASE + 1, mep.ID_BASE + 2]  # hashed order, not the first rows


def test_without_the_corpus_the_builder_says_where_to_put_it(tmp_path, mep, capsys):
    assert mep.main(["--sick", str(tmp_path / "SICK.txt")]) == 2
    err = capsys.readouterr().err
    assert "SICK.txt not found" in err and "--sick PATH" in err
    (tmp_path / "SICK.txt").write_text("pair_ID\tsentence_A\tsentence_B\n1\ta\tb\n", encoding="utf-8")
    with pytest.raises(mep.SourceMissing, match="entailment_AB"):
        mep.pairs(tmp_path / "SICK.txt")
