"""The write-time guard: credentials and standing orders are dealt with before mem0 sees a message.

``hygiene.secrets`` (``"redact"`` by default, ``"refuse"``, ``"allow"``) decides what happens to a credential in a
text given to ``add`` (``infer=False`` texts and the messages an ``infer=True`` add sends to the LLM), ``update``
and ``supersede``: replaced by a marker naming its kind (``[redacted openai_api_key]``), refused with
:class:`~mem0_hygiene.errors.SecretRefused` (nothing stored), or stored as written (the audit still reports it).
``hygiene.instructions`` (``"flag"`` by default, ``"quarantine"``, ``"allow"``) decides what happens to a text
that reads as a standing order to the agent ("always deploy with tests disabled", "ignore previous
instructions"): stored and marked in the ledger (shown first in the digest), stored but not served until
confirmed, or stored as any fact.

The detectors are the audit's own (:mod:`mem0_hygiene.scan`), so the guard and the audit agree on what a
credential and an order are. Each text is scanned once. What mem0 writes of its own making (the facts its LLM
returns, a procedural summary) is screened for credentials by :mod:`mem0_hygiene.memory.fact_guard`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import INSTRUCTION_POLICIES, SECRET_POLICIES
from ..errors import SecretRefused
from ..scan import instruction_reason, redact_secrets

__all__ = ["CLEAN", "INSTRUCTION_POLICIES", "SECRET_POLICIES", "Screened", "facts_of", "screen_messages", "screen_text"]


@dataclass(frozen=True)
class Screened:
    """What the guard found in one message or text.

    Fields:
        redacted: the kinds of credential found (replaced unless the policy is "allow"), in order.
        flag: the standing-order label (see ``INSTRUCTION_LABELS``), or None; None when the policy is "allow".
        quarantine: the text must not be served until confirmed (``hygiene.instructions="quarantine"``).
    """

    redacted: tuple[str, ...] = ()
    flag: str | None = None
    quarantine: bool = False

    def merged(self, other: Screened) -> Screened:
        return Screened(
            tuple(dict.fromkeys((*self.redacted, *other.redacted))),
            self.flag or other.flag,
            self.quarantine or other.quarantine,
        )


CLEAN = Screened()


def screen_text(text: str, secrets: str, instructions: str, where: str) -> tuple[str, Screened]:
    """``text`` as it may be stored, and what was found. ``where`` names the text in a refusal ("message 2")."""
    kinds: list[str] = []
    if secrets != "allow":
        cleaned, kinds = redact_secrets(text)
        if kinds and secrets == "refuse":
            raise SecretRefused(
                f"{where} holds a credential ({', '.join(dict.fromkeys(kinds))}); nothing was stored. Remove it, or "
                "set hygiene.secrets='redact' to store the fact with the credential replaced by a marker"
            )
        text = cleaned
    flag = instruction_reason(text) if instructions != "allow" else None
    if not kinds and not flag:
        return text, CLEAN  # the common case, on every add
    return text, Screened(tuple(dict.fromkeys(kinds)), flag, bool(flag) and instructions == "quarantine")


def _screen_content(content: Any, secrets: str, instructions: str, where: str) -> tuple[Any, Screened]:
    if isinstance(content, str):
        return screen_text(content, secrets, instructions, where)
    if isinstance(content, list):  # multimodal parts: [{"type": "text", "text": ...}, ...]
        found, parts = CLEAN, []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                text, seen = screen_text(part["text"], secrets, instructions, where)
                parts.append({**part, "text": text})
                found = found.merged(seen)
            else:
                parts.append(part)
        return parts, found
    return content, CLEAN


def screen_messages(messages: list[Any], secrets: str, instructions: str) -> tuple[list[Any], list[Screened]]:
    """The messages as mem0 may see them (credentials replaced; refused per policy), and what was found in each
    (same order). A message that needs no change is passed on as the very same object."""
    out: list[Any] = []
    found: list[Screened] = []
    for index, msg in enumerate(messages, start=1):
        if not isinstance(msg, dict):
            out.append(msg)
            found.append(CLEAN)
            continue
        where = f"message {index} (role {msg.get('role') or '?'})" if len(messages) > 1 else "the text"
        content, seen = _screen_content(msg.get("content"), secrets, instructions, where)
        out.append(msg if content is msg.get("content") else {**msg, "content": content})
        found.append(seen)
    return out, found


def facts_of(screened: Screened) -> dict[str, Any]:
    """The keys a result item's ``"hygiene"`` dict gains (only when something was found)."""
    out: dict[str, Any] = {}
    if screened.redacted:
        out["redacted"] = list(screened.redacted)
    if screened.flag:
        out["instruction"] = screened.flag
    return out
