"""The LLM judge of the write-time decision (``hygiene.write_decision: {"judge": "llm"}``).

Only for a candidate the deterministic decision is unsure of (:func:`mem0_hygiene.memory.decision.ambiguous`),
the app's own configured mem0 LLM is asked, as in mem0's paper, to choose ADD (unrelated), UPDATE, DELETE
(the new fact contradicts the old one) or NONE (the same fact) with a one-line reason: one call at most per
memory written, none when the decision is clear. An answer that cannot be read, or an LLM that fails, leaves
the deterministic decision in force (the reason says so); a write never fails because of the judge.

``{"judge": "llm_batch"}`` asks about all the unsure pairs of one ``add`` in one call (:func:`ask_judge_batch`:
the pairs numbered, a JSON answer per pair); an item that is missing or cannot be read leaves that pair's
deterministic decision, the others' answers still count. The guards apply to every answer either way.

The judged decisions are kept in the ledger's ``write_decisions`` table (part of its schema since version 4,
on SQLite and on PostgreSQL): which memory, against which, the event, the reason, when.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..timeutil import to_iso
from .decision import CONTRADICTION, DUPLICATE, UNRELATED, UPDATE

JUDGE = "llm"
JUDGE_BATCH = "llm_batch"
JUDGES = (JUDGE, JUDGE_BATCH)
EVENTS = {"ADD": UNRELATED, "UPDATE": UPDATE, "DELETE": CONTRADICTION, "NONE": DUPLICATE}

SYSTEM_PROMPT = """You keep a memory of facts about a user up to date. You are given one fact already in \
memory and one new fact. Choose exactly one event:
- ADD: the new fact is about something else; both facts stay.
- UPDATE: the new fact is the same kind of fact with a changed or more recent value; it replaces the old one.
- DELETE: the new fact says the old fact is no longer true (a negation, retraction or opposite); the old one \
is removed.
- NONE: the new fact says the same thing as the old one (a paraphrase); nothing changes.
Answer with JSON only: {"event": "ADD" | "UPDATE" | "DELETE" | "NONE", "reason": "<one short line>"}"""


@dataclass(frozen=True)
class Judgement:
    """What the judge answered (or why it could not).

    Fields:
        label: the decision it stands for (duplicate / update / contradiction / unrelated), None when the
            answer could not be used.
        event: ADD, UPDATE, DELETE or NONE as the LLM wrote it ("" when there was no usable answer).
        reason: its one-line reason, or why there was no usable answer.
    """

    label: str | None
    event: str
    reason: str


def judge_messages(new_text: str, old_text: str) -> list[dict[str, str]]:
    """The messages of one judge call."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"Fact in memory: {old_text}\nNew fact: {new_text}"},
    ]


_OBJECT_RE = re.compile(r"\{.*\}", re.DOTALL)
_LIST_OR_OBJECT_RE = re.compile(r"[\[{].*[\]}]", re.DOTALL)


def parse_judgement(response: Any) -> Judgement:
    """Read an LLM answer: JSON (in a code fence or not) with ``event`` and ``reason``."""
    text = response.get("content") if isinstance(response, dict) else response
    if not isinstance(text, str):
        return Judgement(None, "", "judge gave no text")
    match = _OBJECT_RE.search(text)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        return Judgement(None, "", "judge answer was not JSON")
    event = str(data.get("event", "")).strip().upper()
    if event not in EVENTS:
        return Judgement(None, "", f"judge answered {event or 'no event'!r}, not ADD/UPDATE/DELETE/NONE")
    reason = " ".join(str(data.get("reason") or "").split())[:200] or "no reason given"
    return Judgement(EVENTS[event], event, reason)


BATCH_PROMPT = (
    SYSTEM_PROMPT.split("\nAnswer with JSON only")[0].replace(
        "You are given one fact already in memory and one new fact.",
        "You are given numbered pairs, each of one fact already in memory and one new fact; judge each pair "
        "on its own.",
    )
    + """
Answer with JSON only, one item per pair: {"decisions": [{"pair": <number>, "event": "ADD" | "UPDATE" | "DELETE" | \
"NONE", "reason": "<one short line>"}, ...]}"""
)


def batch_messages(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The messages of one batched call over ``(new_text, old_text)`` pairs, numbered from 1."""
    body = "\n\n".join(
        f"Pair {i}:\nFact in memory: {old_text}\nNew fact: {new_text}"
        for i, (new_text, old_text) in enumerate(pairs, 1)
    )
    return [{"role": "system", "content": BATCH_PROMPT}, {"role": "user", "content": body}]


def _read_item(item: Any) -> Judgement:
    if not isinstance(item, dict):
        return Judgement(None, "", "judge's item was not a JSON object")
    event = str(item.get("event", "")).strip().upper()
    if event not in EVENTS:
        return Judgement(None, "", f"judge answered {event or 'no event'!r}, not ADD/UPDATE/DELETE/NONE")
    reason = " ".join(str(item.get("reason") or "").split())[:200] or "no reason given"
    return Judgement(EVENTS[event], event, reason)


def parse_batch(response: Any, count: int) -> list[Judgement]:
    """Read a batched answer: ``{"decisions": [{"pair": n, "event": .., "reason": ..}, ..]}`` (a bare list is
    read too; an item without ``pair`` counts by its place). One Judgement per pair, in order; a pair the answer
    leaves out, names twice or gets wrong has a Judgement without a label that says why."""
    text = response.get("content") if isinstance(response, dict) else response
    if not isinstance(text, str):
        return [Judgement(None, "", "judge gave no text")] * count
    match = _LIST_OR_OBJECT_RE.search(text)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    items = data.get("decisions") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return [Judgement(None, "", "judge answer was not JSON with a list of decisions")] * count
    found: dict[int, list[Judgement]] = {}
    for place, item in enumerate(items, 1):
        number = item.get("pair", place) if isinstance(item, dict) else place
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        if isinstance(number, int) and not isinstance(number, bool):
            found.setdefault(number, []).append(_read_item(item))
    out = []
    for n in range(1, count + 1):
        got = found.get(n, [])
        if not got:
            out.append(Judgement(None, "", f"judge gave no answer for pair {n}"))
        elif len(got) > 1:
            out.append(Judgement(None, "", f"judge answered pair {n} {len(got)} times"))
        else:
            out.append(got[0])
    return out


def ask_judge_batch(llm: Any, pairs: list[tuple[str, str]]) -> list[Judgement]:
    """One call of mem0's ``llm.generate_response`` over all the ``(new_text, old_text)`` pairs (none when there
    are none); a failing LLM gives Judgements without a label."""
    if not pairs:
        return []
    try:
        response = llm.generate_response(messages=batch_messages(pairs), response_format={"type": "json_object"})
    except Exception as exc:  # any provider error: the deterministic decisions stand
        return [Judgement(None, "", f"judge unavailable ({type(exc).__name__})")] * len(pairs)
    return parse_batch(response, len(pairs))


def ask_judge(llm: Any, new_text: str, old_text: str) -> Judgement:
    """One call of mem0's ``llm.generate_response``; a failing LLM gives a Judgement without a label."""
    try:
        response = llm.generate_response(
            messages=judge_messages(new_text, old_text), response_format={"type": "json_object"}
        )
    except Exception as exc:  # any provider error: the deterministic decision stands
        return Judgement(None, "", f"judge unavailable ({type(exc).__name__})")
    return parse_judgement(response)


def record_judgement(
    ledger: Any,
    memory_id: str,
    compared_id: str | None,
    label: str,
    judgement: Judgement,
    similarity: float | None,
    when: datetime,
) -> None:
    """Keep one judged decision in the ledger file: ``memory_id`` is the memory written (or, for NONE, the
    existing memory reinforced), ``compared_id`` the one it was judged against."""
    with ledger.transaction() as conn:  # the table is the ledger's own (see stores/ledger/schema.py)
        conn.execute(
            "INSERT INTO write_decisions (memory_id, compared_id, label, judge, event, reason, similarity, "
            "decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, compared_id, label, JUDGE, judgement.event or None, judgement.reason, similarity, to_iso(when)),
        )


def judged_decisions(ledger: Any, memory_id: str | None = None) -> list[dict[str, Any]]:
    """The judged decisions kept in the ledger (of one memory, or all), oldest first."""
    if not ledger.has_table("write_decisions"):
        return []
    sql = "SELECT memory_id, compared_id, label, judge, event, reason, similarity, decided_at FROM write_decisions"
    rows = ledger.query(
        sql + (" WHERE memory_id = ? ORDER BY id" if memory_id else " ORDER BY id"), (memory_id,) if memory_id else ()
    )
    keys = ("memory_id", "compared_id", "label", "judge", "event", "reason", "similarity", "decided_at")
    return [dict(zip(keys, r)) for r in rows]
