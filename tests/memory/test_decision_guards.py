"""The guards over the write-time decision hold for any wording, proved over generated pairs: a changed value or
another subject is never a duplicate, whatever the model said; a reformatted value is the same value; a
contradiction needs explicit evidence about the same frame; what a guard takes back is an add kept as a possible
conflict, through a real store."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem0_hygiene.memory.conflicts import open_conflicts
from mem0_hygiene.memory.decision import CONTRADICTION, DUPLICATE, UNRELATED, UPDATE
from mem0_hygiene.memory.decision_guards import guard, values

SUBJECTS = ["Dana", "My manager", "The team", "Their neighbour", "Omar"]
FRAMES = [
    "{s} has the standup at {v}",
    "{s} pays {v} for rent",
    "{s} runs {v} every week",
    "{s} uses Postgres {v}",
    "{s} goes to the gym on {v}",
    "{s} lives on the {v} floor",
    "The flight of {s} is on {v}",
]
TIMES = st.tuples(st.integers(0, 23), st.sampled_from([0, 15, 30, 45]))
AMOUNTS = st.integers(1, 99_999)
CONTRASTS = [
    ("daughter", "son"),
    ("front", "back"),
    ("staging", "production"),
    ("mother", "father"),
    ("upstairs", "downstairs"),
    ("wife", "husband"),
    ("left", "right"),
]
MONTHS = ["January", "February", "March", "April", "June", "July", "August", "September", "October", "November"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SPELLED = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    7: "seven",
    12: "twelve",
    20: "twenty",
    25: "twenty-five",
    40: "forty",
}
ORDINAL = {1: ("1st", "first"), 2: ("2nd", "second"), 3: ("3rd", "third"), 4: ("4th", "fourth"), 5: ("5th", "fifth")}
ANY_LABEL = st.sampled_from([DUPLICATE, UPDATE, CONTRADICTION, UNRELATED])


def clock_24(h: int, m: int) -> str:
    return f"{h:02d}:{m:02d}"


def clock_12(h: int, m: int) -> str:
    return f"{(h % 12) or 12}:{m:02d} {'pm' if h >= 12 else 'am'}"


# Each: (a value in one spelling, the same value in another).
@st.composite
def reformatted(draw: Any) -> tuple[str, str]:
    kind = draw(st.sampled_from(["time", "money", "day", "distance", "version", "spelled", "ordinal", "date"]))
    if kind == "time":
        h, m = draw(TIMES)
        return clock_24(h, m), clock_12(h, m)
    if kind == "money":
        n = draw(AMOUNTS)
        return f"{n:,} EUR", f"€{n}"
    if kind == "day":
        d = draw(st.sampled_from(DAYS))
        return f"{d}s", f"every {d}"
    if kind == "distance":
        n = draw(st.integers(1, 500))
        return f"{n} km", f"{n} kilometres"
    if kind == "version":
        v = f"{draw(st.integers(1, 30))}.{draw(st.integers(0, 20))}"
        return f"v{v}", f"version {v}"
    if kind == "spelled":
        n = draw(st.sampled_from(sorted(SPELLED)))
        return str(n), SPELLED[n]
    if kind == "ordinal":
        n = draw(st.sampled_from(sorted(ORDINAL)))
        return ORDINAL[n]
    month, day = draw(st.sampled_from(MONTHS)), draw(st.integers(1, 28))
    return f"{month} {day}", f"{day} {month}"


# Each: (a value, another value of the same kind), in any of the spellings above.
@st.composite
def changed(draw: Any) -> tuple[str, str]:
    kind = draw(st.sampled_from(["time", "money", "day", "distance", "version", "count", "date", "name"]))
    if kind == "time":
        (h, m), (h2, m2) = draw(TIMES), draw(TIMES)
        if (h, m) == (h2, m2):
            m2 = (m + 15) % 60
        return clock_24(h, m), draw(st.sampled_from([clock_24, clock_12]))(h2, m2)
    if kind == "money":
        n, n2 = draw(AMOUNTS), draw(AMOUNTS)
        return f"{n:,} EUR", f"€{n2 if n2 != n else n + 1}"
    if kind == "day":
        d, d2 = draw(st.permutations(DAYS))[:2]
        return f"{d}s", f"every {d2}"
    if kind == "distance":
        n, unit = draw(st.integers(1, 500)), draw(st.sampled_from(["km", "miles", "kg"]))
        return f"{n} km", (f"{n + 1} km" if unit == "km" else f"{n} {unit}")
    if kind == "version":
        major, minor = draw(st.integers(1, 30)), draw(st.integers(0, 20))
        return f"{major}.{minor}", f"{major}.{minor + 1}"
    if kind == "count":
        a, b = draw(st.permutations(sorted(SPELLED)))[:2]
        return str(a), SPELLED[b]
    if kind == "date":
        month, day = draw(st.sampled_from(MONTHS)), draw(st.integers(1, 27))
        return f"{month} {day}", f"{month} {day + 1}"
    a, b = draw(st.permutations(["Lisbon", "Porto", "Haifa", "Cairo", "Priya", "Tom", "Berlin"]))[:2]
    return a, b


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FRAMES), st.sampled_from(SUBJECTS), changed(), ANY_LABEL)
def test_a_changed_value_is_never_dropped_as_a_duplicate(
    frame: str, subject: str, pair: tuple[str, str], label: str
) -> None:
    old, new = frame.format(s=subject, v=pair[0]), frame.format(s=subject, v=pair[1])
    assert guard(label, new, old).label != DUPLICATE or label != DUPLICATE or new == old
    assert guard(DUPLICATE, new, old).label != DUPLICATE


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FRAMES), st.sampled_from(SUBJECTS), reformatted())
def test_a_reformatted_value_is_the_same_value_so_a_duplicate_stands(
    frame: str, subject: str, pair: tuple[str, str]
) -> None:
    old, new = frame.format(s=subject, v=pair[0]), frame.format(s=subject, v=pair[1])
    assert values(old) == values(new)
    assert guard(DUPLICATE, new, old).label == DUPLICATE


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(CONTRASTS),
    st.booleans(),
    st.sampled_from(
        [
            "My {w} is allergic to nuts",
            "The {w} door lock is broken",
            "The {w} server is down for maintenance",
            "Their {w} lives in Leeds",
            "The {w} bedroom needs painting",
        ]
    ),
)
def test_another_subject_word_is_never_a_duplicate_nor_an_update(
    contrast: tuple[str, str], flip: bool, frame: str
) -> None:
    a, b = contrast[::-1] if flip else contrast
    old, new = frame.format(w=a), frame.format(w=b)
    for label in (DUPLICATE, UPDATE):
        result = guard(label, new, old)
        assert result.label == UNRELATED and result.conflict is not None


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FRAMES), st.sampled_from(SUBJECTS), changed(), st.sampled_from(SUBJECTS))
def test_a_contradiction_without_explicit_evidence_is_an_add_and_a_possible_conflict(
    frame: str, subject: str, pair: tuple[str, str], other: str
) -> None:
    old, new = frame.format(s=subject, v=pair[0]), frame.format(s=other, v=pair[1])
    result = guard(CONTRADICTION, new, old)
    assert result.label == UNRELATED and result.conflict is not None


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(FRAMES),
    st.sampled_from(SUBJECTS),
    reformatted(),
    st.sampled_from(
        ["It is not true that {f}", "Correction: it is wrong that {f}", "{f}: no longer the case", "{f}, not anymore"]
    ),
)
def test_an_explicit_negation_of_the_same_frame_still_invalidates(
    frame: str, subject: str, pair: tuple[str, str], negation: str
) -> None:
    fact = frame.format(s=subject, v=pair[0])
    new = negation.format(f=frame.format(s=subject, v=pair[1]))
    assert guard(CONTRADICTION, new, fact).label == CONTRADICTION


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FRAMES), st.sampled_from(SUBJECTS), changed())
def test_a_negation_about_another_value_does_not_invalidate(frame: str, subject: str, pair: tuple[str, str]) -> None:
    old = frame.format(s=subject, v=pair[0])
    new = "No longer the case: " + frame.format(s=subject, v=pair[1])
    result = guard(CONTRADICTION, new, old)
    assert result.label == UNRELATED and result.conflict is not None


def test_the_guard_keeps_a_duplicate_the_store_made_and_lists_the_unsure_pair_for_review(
    make_memory: Any, clock: Any
) -> None:
    m = make_memory(write_decision=True)
    old = m.add("My daughter is allergic to peanuts", user_id="dana", infer=False)["results"][0]["id"]
    res = m.add("My son is allergic to peanuts", user_id="dana", infer=False)["results"]
    assert [r["event"] for r in res] == ["ADD"]
    assert "possible_conflict" in res[0]["hygiene"]["decision"]
    assert sorted(r["memory"] for r in m.get_all(filters={"user_id": "dana"})["results"]) == [
        "My daughter is allergic to peanuts",
        "My son is allergic to peanuts",
    ]
    [conflict] = open_conflicts(m.ledger, m.now())
    assert (conflict.memory_id, conflict.compared_id) == (res[0]["id"], old)
    assert "daughter" in conflict.reason and "son" in conflict.reason
    clock.advance(hours=1)
    m.confirm(old)  # settled by a person
    assert open_conflicts(m.ledger, m.now()) == []


@settings(max_examples=100, deadline=None)
@given(st.permutations(["Lisbon", "Porto", "Haifa", "Cairo", "Glasgow", "Manchester"]))
def test_an_update_needs_the_same_frame_or_a_verb_of_change(places: list[str]) -> None:
    old, new = f"Lives in {places[0]}", f"Grew up in {places[1]}"
    assert guard(UPDATE, new, old).label == UNRELATED and guard(UPDATE, new, old).conflict is not None
    assert guard(UPDATE, f"Moved to {places[1]}", old).label == UPDATE
    assert guard(UPDATE, f"Lives in {places[1]}", old).label == UPDATE


PEOPLE = ["sister", "brother", "colleague", "daughter", "neighbour", "coworker", "grandmother", "teammate"]
STATEMENTS = [
    ("{p}lives in {v}", "Lives in {v}"),
    ("{p}speaks {v} fluently", "Speaks {v} fluently"),
    ("{p}bank is {v}", "Their bank is {v}"),
    ("{p}car is a {v}", "Has a {v}"),
]
OBJECTS = ["Valencia", "Portuguese", "ING", "Honda Civic", "Lisbon", "Monzo"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PEOPLE), st.sampled_from(STATEMENTS), st.sampled_from(OBJECTS), st.booleans())
def test_a_person_only_one_text_names_is_another_subject(
    person: str, statement: tuple[str, str], value: str, flip: bool
) -> None:
    """'Their sister lives in Valencia' is not 'Lives in Valencia' again, nor an update of it, either way round:
    never dropped as a duplicate, never supersedes it; an add and a possible conflict."""
    said_of, said = statement
    who = f"Their {person}'s " if "bank" in said_of or "car" in said_of else f"Their {person} "
    new, old = said_of.format(p=who, v=value), said.format(v=value)
    if flip:
        new, old = old, new
    for label in (DUPLICATE, UPDATE):
        result = guard(label, new, old)
        assert result.label == UNRELATED and result.conflict is not None


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["manager", "bank", "doctor", "landlord", "team"]),
    st.sampled_from(["brother", "manager", "partner", "friend", "company"]),
    st.sampled_from(["Yuki", "ING", "Dr. Okafor", "Omar"]),
)
def test_a_possessor_before_the_same_word_is_another_subject(thing: str, owner: str, value: str) -> None:
    """'Their brother's bank is ING' / 'Their bank is ING', 'Their manager's manager is Yuki' / 'Their manager is
    Yuki': the same word, another owner."""
    old, new = f"Their {thing} is {value}", f"Their {owner}'s {thing} is {value}"
    for label in (DUPLICATE, UPDATE):
        assert guard(label, new, old).label == UNRELATED and guard(label, new, old).conflict is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Their partner's name is Jonas", "They are partnered with Jonas"),
        ("Priya's manager is Tom", "Tom manages Priya"),
        ("The payments team's tech lead is Alice", "Alice is the tech lead of the payments team"),
        ("Their sister lives in Valencia", "Their sister is based in Valencia"),
        ("Is studying for a master's in statistics", "Studies for a master's degree in statistics"),
        ("They have four kids", "They have four children"),
    ],
)
def test_the_same_person_said_two_ways_is_still_a_duplicate(old: str, new: str) -> None:
    assert guard(DUPLICATE, new, old).label == DUPLICATE


@settings(max_examples=100, deadline=None)
@given(
    st.permutations(["shared calendar", "main repository", "staging database", "team wiki", "VPN client"]),
    st.sampled_from([("required", "optional"), ("enabled", "disabled"), ("public", "private")]),
    st.sampled_from(["for new hires", "on weekends", "for contractors"]),
)
def test_an_opposite_said_of_another_subject_does_not_invalidate(
    things: list[str], opposites: tuple[str, str], rest: str
) -> None:
    """'The shared calendar is required for new hires' / 'The main repository is optional for new hires': the
    opposite is said of another thing; said of the same thing it invalidates."""
    old = f"The {things[0]} is {opposites[0]} {rest}"
    result = guard(CONTRADICTION, f"The {things[1]} is {opposites[1]} {rest}", old)
    assert result.label == UNRELATED and result.conflict is not None
    assert guard(CONTRADICTION, f"The {things[0]} is {opposites[1]} {rest}", old).label == CONTRADICTION
