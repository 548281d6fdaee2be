"""Build ``benchmarks/data/staleness_templates.jsonl``: labelled old/new fact pairs from slot templates.

A second procedure beside the hand-written ``staleness_pairs.jsonl``: each *frame* is one fact with a value slot
("{s} commutes by {v}"), written in several equivalent surface forms, a negated form, a changed-value form
with a verb of change, and a *near miss* (another fact that shares words or the value). From each frame come:

* duplicate / paraphrase: the same value in two surface forms;
* update / value change: the same form with another value, and a verb-of-change form with a third value;
* contradiction / negation: the negated form of the same value;
* contradiction / antonym (frames that have one): the opposite predicate, no negation word;
* unrelated / near miss: the near-miss fact, with the same value and with other values;
* unrelated / other topic: a fact of another frame, and the negated form of another frame's fact (a negation
  or a retraction alone does not make a contradiction: "Lives in Leeds" / "Stopped using Zed for coding").

Deterministic (a fixed seed picks the values). Run ``python benchmarks/make_template_pairs.py`` to rewrite the
file; ``benchmarks/train_decision.py`` trains on it with the other training files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "staleness_templates.jsonl"
SEED = 17

# forms: equivalent surface forms; change: a verb-of-change form; neg: the negated form; near: a near miss;
# ant: (positive form, opposite form) without a negation word.
FRAMES: list[dict[str, Any]] = [
    {
        "domain": "commute",
        "values": ["bike", "train", "bus", "car", "scooter"],
        "forms": ["Commutes to work by {v}", "Gets to the office by {v}", "Their commute is by {v}"],
        "change": "Now commutes by {v} instead",
        "neg": "No longer commutes by {v}",
        "near": "Goes to the gym by {v} on weekends",
    },
    {
        "domain": "work",
        "values": ["Hannah", "Marcus", "Yuki", "Fatima", "Pedro"],
        "forms": ["{s} manager is {v}", "{v} is {s2} manager", "Reports to {v}"],
        "s": "Their",
        "s2": "their",
        "change": "{v} took over as their manager",
        "neg": "{v} is not their manager any more",
        "near": "Their manager's manager is {v}",
    },
    {
        "domain": "home",
        "values": ["Utrecht", "Leeds", "Valencia", "Kraków", "Gothenburg"],
        "forms": ["Lives in {v}", "Their home is in {v}", "Is based in {v}"],
        "change": "Moved to {v} last month",
        "neg": "Does not live in {v} anymore",
        "near": "Their sister lives in {v}",
    },
    {
        "domain": "infrastructure",
        "values": ["MySQL 8", "Postgres 14", "MariaDB 10", "CockroachDB", "Postgres 17"],
        "forms": [
            "The orders service stores data in {v}",
            "{v} is the orders service's database",
            "Orders are stored in {v}",
        ],
        "change": "The orders service was migrated to {v}",
        "neg": "The orders service stopped using {v}",
        "near": "The reporting jobs read from {v}",
    },
    {
        "domain": "schedule",
        "values": ["08:45", "09:15", "10:30", "11:00", "14:00"],
        "forms": ["The daily standup is at {v}", "Standup happens every day at {v}", "Daily standup: {v}"],
        "change": "The daily standup moved to {v}",
        "neg": "There is no daily standup at {v} any more",
        "near": "The weekly retro is at {v} on Fridays",
    },
    {
        "domain": "tooling",
        "values": ["VS Code", "Neovim", "PyCharm", "Emacs", "Zed"],
        "forms": ["Writes code in {v}", "Their editor is {v}", "Uses {v} as their code editor"],
        "change": "Switched their editor to {v}",
        "neg": "Stopped using {v} for coding",
        "near": "Their teammate writes code in {v}",
    },
    {
        "domain": "food",
        "values": ["oat milk", "soy milk", "almond milk", "whole milk", "lactose-free milk"],
        "forms": ["Takes {v} in their coffee", "Has their coffee with {v}", "Likes {v} in coffee"],
        "change": "Now takes {v} in their coffee",
        "neg": "No longer takes {v} in coffee",
        "near": "Uses {v} for baking",
    },
    {
        "domain": "health",
        "values": ["Dr. Rossi", "Dr. Mensah", "Dr. Novak", "Dr. Ito", "Dr. Haddad"],
        "forms": ["Their physiotherapist is {v}", "Sees {v} for physiotherapy", "{v} is their physio"],
        "change": "Changed physiotherapist to {v}",
        "neg": "{v} is not their physiotherapist any more",
        "near": "Their son's paediatrician is {v}",
    },
    {
        "domain": "finance",
        "values": ["Monzo", "Barclays", "N26", "Chase", "Wise"],
        "forms": ["Their salary is paid into {v}", "Gets paid into their {v} account", "Salary goes to {v}"],
        "change": "Moved their salary account to {v}",
        "neg": "Their salary no longer goes to {v}",
        "near": "Keeps an emergency fund at {v}",
    },
    {
        "domain": "travel",
        "values": ["window", "aisle", "exit-row", "front-row", "bulkhead"],
        "forms": ["Prefers a {v} seat on trains", "On trains, likes to sit in a {v} seat", "Books {v} seats on trains"],
        "change": "Now prefers {v} seats on trains",
        "neg": "Does not want {v} seats on trains any more",
        "near": "Prefers a {v} table at restaurants",
    },
    {
        "domain": "devices",
        "values": ["Pixel 8", "iPhone 15", "Galaxy S23", "Fairphone 5", "iPhone 13"],
        "forms": ["Their phone is a {v}", "Uses a {v} as their phone", "Has a {v}"],
        "change": "Replaced their phone with a {v}",
        "neg": "Got rid of the {v}",
        "near": "Their work tablet is a {v}",
    },
    {
        "domain": "tooling",
        "values": ["3.10", "3.11", "3.12", "3.13", "3.9"],
        "forms": [
            "The service runs on Python {v}",
            "Python {v} is the service's runtime",
            "Runs the service on Python {v}",
        ],
        "change": "The service was upgraded to Python {v}",
        "neg": "The service is not on Python {v} any more",
        "near": "The build scripts need Python {v}",
    },
    {
        "domain": "people",
        "values": ["Elif", "Kofi", "Sven", "Mei", "Rahul"],
        "forms": ["{v} leads the mobile team", "The mobile team is led by {v}", "The mobile team's lead is {v}"],
        "change": "{v} took over the mobile team",
        "neg": "{v} stepped down from leading the mobile team",
        "near": "{v} joined the mobile team last week",
    },
    {
        "domain": "hobbies",
        "values": ["bouldering", "salsa", "pottery", "rowing", "judo"],
        "forms": ["Does {v} on Tuesday evenings", "Tuesday evenings are for {v}", "Goes to {v} every Tuesday evening"],
        "change": "Switched Tuesday evenings to {v}",
        "neg": "Gave up {v} on Tuesdays",
        "near": "Watched a {v} competition on TV",
    },
    {
        "domain": "schedule",
        "values": ["9 June", "14 July", "2 August", "21 September", "5 October"],
        "forms": ["The product launch is on {v}", "Launch day is {v}", "The product launches on {v}"],
        "change": "The product launch was pushed to {v}",
        "neg": "The launch on {v} was called off",
        "near": "The marketing review is on {v}",
    },
    {
        "domain": "infrastructure",
        "values": ["Datadog", "Grafana Cloud", "New Relic", "Honeycomb", "Prometheus"],
        "forms": ["Metrics go to {v}", "Uses {v} for metrics", "{v} collects the metrics"],
        "change": "Metrics moved to {v}",
        "neg": "Stopped sending metrics to {v}",
        "near": "The status page links to {v} dashboards",
    },
    {
        "domain": "family",
        "values": ["two", "three", "four", "one", "five"],
        "forms": ["Has {v} children", "Is a parent of {v} kids", "They have {v} kids"],
        "change": "Now has {v} children",
        "neg": "Does not have {v} children",
        "near": "Their neighbours have {v} children",
    },
    {
        "domain": "pets",
        "values": ["Biscuit", "Pepper", "Nala", "Otis", "Luna"],
        "forms": ["Their dog is called {v}", "Has a dog named {v}", "{v} is the name of their dog"],
        "change": "Renamed the dog {v}",
        "neg": "No longer has the dog {v}",
        "near": "Their neighbour's dog is called {v}",
    },
    {"domain": "preferences", "ant": ("Likes working late at night", "Dislikes working late at night")},
    {"domain": "preferences", "ant": ("Enjoys public speaking", "Is terrified of public speaking")},
    {
        "domain": "infrastructure",
        "ant": ("Autoscaling is enabled on the web tier", "Autoscaling is disabled on the web tier"),
    },
    {
        "domain": "policy",
        "ant": (
            "Personal laptops are permitted on the guest network",
            "Personal laptops are banned from the guest network",
        ),
    },
    {"domain": "health", "ant": ("Sleeps well", "Suffers from insomnia")},
    {"domain": "work", "ant": ("The hiring freeze is active", "The hiring freeze has been lifted")},
    {"domain": "food", "ant": ("Loves mushrooms", "Hates mushrooms")},
    {"domain": "home", "ant": ("The front door lock is working", "The front door lock is broken")},
]


def fill(template: str, frame: dict[str, Any], value: str) -> str:
    text = template.format(v=value, s=frame.get("s", ""), s2=frame.get("s2", ""))
    return text[0].upper() + text[1:]


def pairs() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    out: list[dict[str, Any]] = []

    def emit(frame: dict[str, Any], label: str, kind: str, old: str, new: str) -> None:
        out.append(
            {
                "id": 1001 + len(out),
                "category": frame["domain"],
                "label": label,
                "kind": kind,
                "old": old,
                "new": new,
                "source": "templates",
            }
        )

    slotted = [f for f in FRAMES if "ant" not in f]
    for frame in FRAMES:
        if "ant" in frame:
            emit(frame, "contradiction", "antonym", *frame["ant"])
            continue
        v1, v2, v3 = rng.sample(frame["values"], 3)
        forms = frame["forms"]
        a, b = rng.sample(range(len(forms)), 2)
        emit(frame, "duplicate", "paraphrase", fill(forms[a], frame, v1), fill(forms[b], frame, v1))
        emit(frame, "update", "value change", fill(forms[a], frame, v1), fill(forms[a], frame, v2))
        emit(frame, "update", "value change", fill(forms[b], frame, v1), fill(frame["change"], frame, v3))
        emit(frame, "contradiction", "negation", fill(forms[a], frame, v1), fill(frame["neg"], frame, v1))
        emit(frame, "unrelated", "near miss", fill(forms[a], frame, v1), fill(frame["near"], frame, v1))
        emit(frame, "unrelated", "near miss", fill(forms[b], frame, v2), fill(frame["near"], frame, v3))
        other = slotted[(slotted.index(frame) + 7) % len(slotted)]
        emit(
            frame,
            "unrelated",
            "other topic",
            fill(forms[a], frame, v2),
            fill(rng.choice(other["forms"]), other, rng.choice(other["values"])),
        )
    # Appended after the pairs above, so that their ids and values stay as they were.
    for frame in slotted:
        other = slotted[(slotted.index(frame) + 5) % len(slotted)]
        emit(
            frame,
            "unrelated",
            "other topic",
            fill(rng.choice(frame["forms"]), frame, rng.choice(frame["values"])),
            fill(other["neg"], other, rng.choice(other["values"])),
        )
    return out


def main() -> None:
    rows = pairs()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{OUT.name}: {len(rows)} pairs")


if __name__ == "__main__":
    main()
