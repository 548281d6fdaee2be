"""Build ``benchmarks/data/staleness_opposites.jsonl``: labelled pairs about opposite predicates.

A third procedure beside the hand-written pairs and the slot templates (``make_template_pairs.py``): a list of
*predicates with their opposite* (written from general knowledge, no negation word: "introverted" /
"outgoing", "online" / "offline", "loves" / "can't stand"), each with the kind of subject it applies to, put into
sentence patterns in the first person, the third person without a subject, and with a named subject. From each
predicate come:

* contradiction / antonym: the same subject, the predicate then its opposite (both directions);
* duplicate / paraphrase: the same subject and predicate in two patterns;
* unrelated / near miss: another subject with the opposite predicate ("The staging server is offline" /
  "The build server is online");
* unrelated / other topic: the same subject with a predicate of another line.

Deterministic (a fixed seed picks subjects and patterns). Run ``python benchmarks/make_opposite_pairs.py`` to
rewrite the file; ``benchmarks/train_decision.py`` trains on it with the other training files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "staleness_opposites.jsonl"
SEED = 23

# Sentence patterns per subject kind: {p} is the predicate; each pattern is (text, person) so a pair keeps one
# person. "person": said about the user; "thing": about a system, place or object (subject in {t}).
PERSON_PATTERNS = {
    "adj": ["I'm {p}", "To be honest, I am {p}", "Is {p}", "Describes themselves as {p}"],
    "verb": ["I {p}", "{P}", "They {p}", "Says they {p}"],
}
THING_PATTERNS = {
    "adj": ["{T} is {p}", "{T} is currently {p}", "{T} is {p}, as far as I know", "{T}: {p}"],
}
THINGS = [
    "the staging server",
    "the build server",
    "the office Wi-Fi",
    "the customer database",
    "the team wiki",
    "the billing API",
    "the guest network",
    "the main repository",
    "the shared calendar",
    "the VPN",
    "the test cluster",
    "the company blog",
]

# (predicate, opposite, subject kind, pattern kind[, object]): verbs take an object.
PREDICATES: list[tuple[str, str, str, str]] = [
    ("introverted", "outgoing", "person", "adj"),
    ("a morning person", "a night owl", "person", "adj"),
    ("patient with beginners", "impatient with beginners", "person", "adj"),
    ("optimistic about the project", "pessimistic about the project", "person", "adj"),
    ("left-handed", "right-handed", "person", "adj"),
    ("single", "married", "person", "adj"),
    ("employed full-time", "unemployed", "person", "adj"),
    ("calm before exams", "anxious before exams", "person", "adj"),
    ("comfortable with heights", "afraid of heights", "person", "adj"),
    ("fit", "injured", "person", "adj"),
    ("satisfied with the new job", "unhappy with the new job", "person", "adj"),
    ("in favour of the four-day week", "against the four-day week", "person", "adj"),
    ("love spicy food", "can't stand spicy food", "person", "verb"),
    ("enjoy long meetings", "hate long meetings", "person", "verb"),
    ("prefer working in the office", "avoid working in the office", "person", "verb"),
    ("trust the new vendor", "distrust the new vendor", "person", "verb"),
    ("like cold showers", "dread cold showers", "person", "verb"),
    ("agree with the reorg", "disagree with the reorg", "person", "verb"),
    ("accept the offer from Acme", "reject the offer from Acme", "person", "verb"),
    ("online", "offline", "thing", "adj"),
    ("encrypted", "stored in plain text", "thing", "adj"),
    ("public", "private", "thing", "adj"),
    ("enabled", "disabled", "thing", "adj"),
    ("stable", "flaky", "thing", "adj"),
    ("fast", "slow", "thing", "adj"),
    ("cheap to run", "expensive to run", "thing", "adj"),
    ("required for new hires", "optional for new hires", "thing", "adj"),
    ("available to contractors", "unavailable to contractors", "thing", "adj"),
    ("open to everyone", "closed to everyone", "thing", "adj"),
    ("working", "broken", "thing", "adj"),
    ("visible to customers", "hidden from customers", "thing", "adj"),
    ("secure", "vulnerable", "thing", "adj"),
    ("ahead of schedule", "behind schedule", "thing", "adj"),
    ("easy to set up", "hard to set up", "thing", "adj"),
    ("automated", "manual", "thing", "adj"),
]
# Lines close enough that one may contradict the other: never paired as "other topic".
RELATED = frozenset(
    {
        "online",
        "enabled",
        "stable",
        "working",
        "available to contractors",
        "open to everyone",
        "public",
        "encrypted",
        "secure",
    }
)


def cap(text: str) -> str:
    return text[0].upper() + text[1:]


def say(pattern: str, predicate: str, thing: str) -> str:
    return cap(pattern.format(p=predicate, P=cap(predicate), t=thing, T=cap(thing)))


def third_person(verb_phrase: str) -> str:
    """ "love spicy food" -> "loves spicy food" (for the patterns without a subject)."""
    verb, _, rest = verb_phrase.partition(" ")
    if verb == "can't":
        return verb_phrase
    verb = verb + ("es" if verb.endswith(("s", "sh", "ch")) else "s")
    return f"{verb} {rest}".strip()


def sentence(pattern: str, predicate: str, kind: str, thing: str) -> str:
    if kind == "verb" and pattern == "{P}":
        predicate = third_person(predicate)
    return say(pattern, predicate, thing)


def pairs() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    out: list[dict[str, Any]] = []

    def emit(label: str, kind: str, old: str, new: str) -> None:
        out.append(
            {
                "id": 3001 + len(out),
                "category": "opposites",
                "label": label,
                "kind": kind,
                "old": old,
                "new": new,
                "source": "opposite predicates",
            }
        )

    for index, (pos, neg, subject, kind) in enumerate(PREDICATES):
        patterns = (PERSON_PATTERNS if subject == "person" else THING_PATTERNS)[kind]
        a, b = rng.sample(patterns, 2)
        thing, other_thing = rng.sample(THINGS, 2)
        first, second = (pos, neg) if index % 2 == 0 else (neg, pos)
        emit("contradiction", "antonym", sentence(a, first, kind, thing), sentence(a, second, kind, thing))
        emit("contradiction", "antonym", sentence(b, second, kind, thing), sentence(a, first, kind, thing))
        emit("duplicate", "paraphrase", sentence(a, first, kind, thing), sentence(b, first, kind, thing))
        if subject == "thing":
            emit("unrelated", "near miss", sentence(a, first, kind, thing), sentence(a, second, kind, other_thing))
        others = [
            p for p in PREDICATES if p[2] == subject and p[3] == kind and p[0] != pos and not {p[0], pos} <= RELATED
        ]
        other = rng.choice(others)
        emit(
            "unrelated", "other topic", sentence(a, first, kind, thing), sentence(b, rng.choice(other[:2]), kind, thing)
        )
    return out


def main() -> None:
    rows = pairs()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{OUT.name}: {len(rows)} pairs")


if __name__ == "__main__":
    main()
