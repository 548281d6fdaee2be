"""The LLM judge of the write-time decision (``hygiene.write_decision: {"judge": "llm"}``).

Only for a candidate the deterministic decision is unsure of (:func:`mem0_hygiene.memory.decision.ambiguous`),
the app's own configured mem0 LLM is asked, as in mem0's paper, to choose ADD (unrelated), UPDATE, DELETE
(the new fact contradicts the old one) or NONE (the same fact) with a one-line reason: one call at most per
memory written, none when the decision is clear. An answer that cannot be read, or an LLM that fails, leaves
the deterministic decision in force (the reason says so); a write never fails because of the judge.

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
    with ledger.transaction() as conn:  # the table is the ledger's own (see stores/ledger_ddl.py)
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
