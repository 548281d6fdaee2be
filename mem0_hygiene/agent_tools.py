"""The memory tools an agent calls (remember, recall, correct, invalidate, confirm, forget, review), as plain
library code over the drop-in ``Memory``: no protocol here. :mod:`mem0_hygiene.mcp_server` serves them over MCP.

One :class:`AgentTools` serves one session's scope (``user_id`` and/or ``agent_id``, fixed when it is built): a
memory of another scope is refused with the very message an unknown id gets, so a client can neither read nor
change, nor even learn of, another user's memories. Every tool returns a :class:`ToolResult`: text a model can
read plus the same facts as data. Bad input raises a :class:`~mem0_hygiene.errors.HygieneError` (the server turns
it into a tool error). Every call runs under one lock: local Qdrant's client is not thread-safe.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .config import WriteDecisionSettings
from .display.text import printable, redacted_data
from .errors import ConfigError, MemoryNotFound, StateError
from .memory.core import Memory
from .memory.decision import normalize_text
from .memory.prompt import format_for_prompt
from .memory.provenance import kind_from_source
from .memory.ranking import cosine_relevance
from .memory.scope import SCOPE_KEYS, scope_of
from .scan import redact_secrets
from .stores.ledger import LedgerRow
from .stores.scores import INVERSE_ONE_MINUS, INVERSE_SQUARED_L2, ScoreScale
from .stores.states import live_sql
from .timeutil import to_iso

SOURCE_PREFIX = "mcp:"
"""Every memory a tool writes has a source starting ``mcp:<client name>``."""

MAX_LIMIT = 100
"""The most memories one recall or review returns."""

TOOL_SOURCE = re.compile(r"^\s*(tools?(\b|_)|function(\b|_)|web\b|https?:)", re.IGNORECASE)
"""A source the client labels as tool output, a function result or web content ("tool:web_fetch ...", "tool
output", "function result", "https://..."): never stored unless ``hygiene.trust_tool_output``."""

RECALL_MIN_COSINE = 0.1
"""The least cosine similarity to the query a recalled memory has, on every store (mem0's default threshold, which
is the cosine on local Qdrant and pgvector)."""

T = TypeVar("T")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns: ``text`` for the model to read, ``data`` (JSON-ready) as structured content.

    Fields:
        text: one or more lines of plain text (credentials redacted, control characters escaped).
        data: the same facts as a dict (memory texts redacted the same way).
        is_error: the call was refused (nothing changed); ``text`` says why and what to do instead.
    """

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "data": self.data, "is_error": self.is_error}

    def __str__(self) -> str:
        return self.text


def _text(value: Any) -> str:
    return printable(value, limit=2000)


def _date(value: Any) -> str | None:
    return str(value)[:10] if value else None


def _line(item: dict[str, Any]) -> str:
    """``- Prefers pnpm (confirmed 2026-08-01) [id 7c0f...]``: :func:`format_for_prompt`'s line plus the id."""
    shown = {**item, "memory": _text(item.get("memory"))}
    return f"{format_for_prompt([shown])} [id {item.get('id')}]"


def _memory_data(item: dict[str, Any]) -> dict[str, Any]:
    facts = item.get("hygiene") or {}
    out = {
        "id": str(item.get("id")),
        "memory": _text(item.get("memory")),
        "state": facts.get("state"),
        "confirmed_at": facts.get("confirmed_at") or facts.get("created_at"),
        "created_at": facts.get("created_at"),
        "expires_at": facts.get("expires_at"),
        "age_days": round(facts["age_days"], 2) if isinstance(facts.get("age_days"), (int, float)) else None,
        "source": _text(facts.get("source")) if facts.get("source") else None,
    }
    if item.get("score") is not None:
        out["score"] = round(float(item["score"]), 4)
    return out


def _cosine_scale(m: Memory) -> ScoreScale | None:
    """How ``m``'s store scores a hit, when that is not the cosine already and can be read back as one (Chroma's
    and FAISS's distances, turned into ``1 / (1 + d)`` by mem0); None for a store that scores by the cosine
    (local Qdrant, pgvector) or whose scale cannot be known (its scores are then used as mem0 gives them)."""
    try:
        scale = m.score_scale()
    except ConfigError:
        return None
    if scale.formula in (INVERSE_SQUARED_L2, INVERSE_ONE_MINUS):
        return scale
    return None


def _search(m: Memory, query: str, top_k: int, scope: dict[str, Any]) -> list[dict[str, Any]]:
    """The live memories of ``scope`` nearest to ``query``, at least :data:`RECALL_MIN_COSINE` similar to it and
    scored on one scale on every store: mem0's threshold and scores are its store's own (on Chroma and FAISS every
    memory passes a threshold of 0.1, unrelated ones included), so there the threshold is the store's score of
    that cosine and each hit's score is read back as mem0's score of its cosine."""
    scale = _cosine_scale(m)
    threshold = scale.from_cosine(RECALL_MIN_COSINE) if scale is not None else None
    if scale is None or threshold is None:
        return list(m.search(query, top_k=top_k, filters=scope).get("results") or [])
    res = m.search(query, top_k=top_k, filters=scope, threshold=threshold, explain=True)
    items = list(res.get("results") or [])
    for item in items:
        score = cosine_relevance(item, scale.cosine)
        if score is not None:
            item["score"] = score
        item.pop("score_details", None)
    return items


def _said_redacted(kinds: list[str], what: str = "") -> str:
    """What a tool's answer says when the write guard took credentials out (the same detector as the guard's)."""
    return (
        f" Redacted before storing{what}: {', '.join(kinds)} (each replaced by a marker, as shown; the "
        "credential itself was not stored)."
    )


def _limit(value: Any, what: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{what} must be a whole number from 1 to {MAX_LIMIT}, not {value!r}")
    if not 1 <= value <= MAX_LIMIT:
        raise ConfigError(f"{what} must be from 1 to {MAX_LIMIT}, not {value}")
    return value


def _required(value: Any, what: str, example: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} is required and must be non-empty text, e.g. {example}")
    return value.strip()


def _optional(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be text, not {type(value).__name__}")
    return value.strip() or None


class AgentTools:
    """The memory tools for one session's scope over one open drop-in Memory (the caller closes it).

    ``user_id``/``agent_id``: the scope every tool works in (at least one). ``client_name`` is what the
    memories' source names when a call does not say (``mcp:<client>``).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        client_name: str = "unknown-client",
    ) -> None:
        self.memory = memory
        self.scope = scope_of(user_id, agent_id, None)
        if not self.scope:
            raise ConfigError(
                "the memory tools need a scope: give --user-id USER and/or --agent-id AGENT "
                "(every memory the session reads or writes is in it)"
            )
        self.client_name = client_name
        self._lock = threading.RLock()

    # -- plumbing ---------------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[Memory]:
        with self._lock:
            yield self.memory

    def _call(self, func: Callable[[Memory], T]) -> T:
        with self._locked() as m:
            try:
                return func(m)
            finally:
                m.flush()  # what the tool did is on disk at once: `history`, `digest` and the audit read it

    def scope_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.scope.items())

    def source_for(self, client: str | None, source: str | None) -> str:
        """``mcp:<client>``, plus the caller's own source after a space."""
        name = printable((client or self.client_name).strip() or "unknown-client", limit=80).replace(" ", "_")
        return f"{SOURCE_PREFIX}{name}" + (f" {source}" if source else "")

    def owned(self, m: Memory, memory_id: Any) -> dict[str, Any]:
        """The memory (mem0's item, with its hygiene facts) if it exists and is in this session's scope;
        otherwise :class:`MemoryNotFound` with the same words whether it is absent or another scope's."""
        mid = _required(memory_id, "memory_id", "the id recall returned")
        unknown = MemoryNotFound(mid, "recall or review lists the ids of this session's memories")
        item = m.get(mid)
        if item is None or (item.get("hygiene") or {}).get("state") == "deleted":
            raise unknown
        row = m.ledger.get(mid)
        for key, want in self.scope.items():
            have = item.get(key) or (getattr(row, key, None) if row is not None else None)
            if have != want:
                raise unknown
        return item

    # -- tools ------------------------------------------------------------------------------------
    def remember(
        self, text: Any, ttl: Any = None, topic_key: Any = None, source: Any = None, *, client: str | None = None
    ) -> ToolResult:
        """Store a fact in the session's scope through the drop-in (write guard, write decision when on)."""
        fact = _required(text, "text", "'Dana prefers pnpm'")
        given = _optional(source, "source")
        ttl_text = _optional(ttl, "ttl")
        key = _optional(topic_key, "topic_key")
        kind = "tool" if given and TOOL_SOURCE.match(given) else (kind_from_source(given) or "assistant")

        def run(m: Memory) -> ToolResult:
            if kind == "tool" and not m.hygiene_settings.trust_tool_output:
                return ToolResult(
                    "Not stored: the source says this is tool output or web content, and tool output never "
                    "becomes a memory here (hygiene.trust_tool_output is off). Remember only what the user said "
                    "or confirmed, with a source such as 'chat'.",
                    {"outcome": "refused", "reason": "tool_output", "source": _text(given)},
                    is_error=True,
                )
            if key is not None and WriteDecisionSettings.parse(m.hygiene_settings.write_decision) is None:
                same = self._same_topic(m, key)  # (with the write decision on, the drop-in does this itself)
                if same is not None:
                    return self._replace_topic(m, same, fact, key, self.source_for(client, given), kind, ttl_text)
            res = m.add(
                fact,
                infer=False,
                source=self.source_for(client, given),
                source_kind=kind,
                ttl=ttl_text,
                topic_key=key,
                user_id=self.scope.get("user_id"),
                agent_id=self.scope.get("agent_id"),
            )
            return self._remembered(res.get("results") or [])

        return self._call(run)

    def _same_topic(self, m: Memory, key: str) -> LedgerRow | None:
        """The live memory of this exact scope with the identity key ``key``, newest first, or None."""
        where = "topic_key = ? AND " + live_sql()
        params: list[Any] = [key, to_iso(m.now())]
        for name in SCOPE_KEYS:
            where += f" AND {m.ledger.dialect.is_same(name)}"
            params.append(self.scope.get(name))
        return next(m.ledger.iter_rows(where, params, order="created_at DESC"), None)

    def _replace_topic(
        self, m: Memory, old: LedgerRow, fact: str, key: str, source: str, kind: str, ttl: str | None
    ) -> ToolResult:
        item = m.get(old.memory_id) or {}
        old_text = str(item.get("memory") or "")
        if normalize_text(old_text) == normalize_text(fact):
            return ToolResult(
                f"Already known, nothing added: duplicate of {old.memory_id} ({_text(old_text)}).",
                {"outcome": "duplicate", "id": old.memory_id, "duplicate_of": old.memory_id, "memory": _text(old_text)},
            )
        new_id = m.supersede(old.memory_id, fact, source=source, source_kind=kind, ttl=ttl, topic_key=key)
        new = m.get(new_id) or {}
        facts = new.get("hygiene") or {}
        row = m.ledger.get(new_id)
        found = [k for k in (row.redacted or "").split(",") if k] if row is not None else []
        text = (
            f"Added memory {new_id}: {_text(new.get('memory'))} It supersedes {old.memory_id} "
            f"({_text(old_text)}), same topic_key {key!r}, now hidden."
        )
        if found:
            text += _said_redacted(found)
        return ToolResult(
            text,
            {
                "outcome": "superseded",
                "id": new_id,
                "memory": _text(new.get("memory")),
                "state": facts.get("state"),
                "source": _text(facts.get("source")),
                "expires_at": facts.get("expires_at"),
                "redacted": found,
                "supersedes": old.memory_id,
            },
        )

    def _remembered(self, items: list[dict[str, Any]]) -> ToolResult:
        if not items:
            raise StateError("nothing was stored (the text was empty after cleaning); give the fact as plain text")
        new = next((i for i in items if i.get("event") in ("ADD", "UPDATE")), None)
        if new is None:  # the write decision found the very fact already stored
            old = items[0]
            old_id = str(old.get("id"))
            same = {"outcome": "duplicate", "id": old_id, "duplicate_of": old_id, "memory": _text(old.get("memory"))}
            return ToolResult(
                f"Already known, nothing added: duplicate of {old.get('id')} "
                f"({_text(old.get('memory'))}). Its use count went up.",
                same,
            )
        facts = new.get("hygiene") or {}
        decision = facts.get("decision") or {}
        data: dict[str, Any] = {
            "outcome": "added",
            "id": str(new.get("id")),
            "memory": _text(new.get("memory")),
            "state": facts.get("state"),
            "source": _text(facts.get("source")),
            "expires_at": facts.get("expires_at"),
            "redacted": list(facts.get("redacted") or []),
        }
        parts = [f"Added memory {new.get('id')}: {_text(new.get('memory'))}"]
        if new.get("event") == "UPDATE" and decision.get("supersedes"):
            data["outcome"] = "superseded"
            data["supersedes"] = str(decision["supersedes"])
            parts.append(f"It supersedes {decision['supersedes']} ({_text(new.get('previous_memory'))}), now hidden.")
        invalidated = [i for i in items if i.get("event") == "DELETE"]
        if invalidated:
            data["outcome"] = "contradicts"
            data["invalidates"] = [str(i.get("id")) for i in invalidated]
            parts.append(
                "It contradicts, and invalidated: "
                + "; ".join(f"{i.get('id')} ({_text(i.get('memory'))})" for i in invalidated)
                + "."
            )
        if data["redacted"]:
            parts.append(_said_redacted(data["redacted"]).strip())
        if facts.get("instruction"):
            data["instruction"] = facts["instruction"]
            parts.append("It reads as a standing order to the agent and is flagged for review.")
        if facts.get("state") == "quarantined":
            parts.append("It is quarantined (not recalled) until confirmed.")
        if facts.get("expires_at"):
            parts.append(f"Expires {_date(facts['expires_at'])}.")
        return ToolResult(" ".join(parts), data)

    def recall(self, query: Any, limit: Any = None) -> ToolResult:
        """Live memories of the session's scope nearest to ``query``, each with its id and date."""
        question = _required(query, "query", "'package manager'")
        top_k = _limit(limit, "limit", 10)

        def run(m: Memory) -> ToolResult:
            items = _search(m, question, top_k, dict(self.scope))
            data = {"count": len(items), "memories": [_memory_data(i) for i in items], "as_of": to_iso(m.now())}
            if not items:
                return ToolResult("No live memory matches.", data)
            return ToolResult("\n".join(_line(i) for i in items), data)

        return self._call(run)

    def correct(self, memory_id: Any, new_text: Any, reason: Any = None, *, client: str | None = None) -> ToolResult:
        """Supersede a memory by the corrected fact (the old one is hidden; the chain is kept)."""
        text = _required(new_text, "new_text", "'Dana prefers pnpm, not npm'")
        why = _optional(reason, "reason")

        def run(m: Memory) -> ToolResult:
            old = self.owned(m, memory_id)
            old_id = str(old["id"])
            new_id = m.supersede(
                old_id, text, source=self.source_for(client, f"correction: {why}" if why else "correction")
            )
            row = m.ledger.get(new_id)
            found = [k for k in (row.redacted or "").split(",") if k] if row is not None else []
            new = m.get(new_id) or {}
            data = {
                "outcome": "superseded",
                "old_id": old_id,
                "new_id": new_id,
                "old_memory": _text(old.get("memory")),
                "memory": _text(new.get("memory")),
                "reason": _text(why) if why else None,
                "redacted": found,
            }
            msg = (
                f"Corrected: {old_id} ({_text(old.get('memory'))}) is superseded by {new_id} "
                f"({_text(new.get('memory'))}); recall now returns only the new fact."
            )
            if found:
                msg += _said_redacted(found)
            return ToolResult(msg, data)

        return self._call(run)

    def invalidate(self, memory_id: Any, reason: Any) -> ToolResult:
        """Declare a memory untrue: hidden at once, kept for audit with the reason."""
        why = _required(reason, "reason", "'the user said they moved to Berlin'")

        def run(m: Memory) -> ToolResult:
            item = self.owned(m, memory_id)
            mid = str(item["id"])
            m.invalidate(mid, reason=why)  # the reason is kept: the write guard screens it
            found = list(dict.fromkeys(redact_secrets(why)[1])) if m.hygiene_settings.secrets != "allow" else []
            msg = f"Invalidated {mid} ({_text(item.get('memory'))}): {_text(why)}. It is no longer recalled."
            if found:
                msg += _said_redacted(found, " the reason")
            return ToolResult(
                msg,
                {
                    "outcome": "invalidated",
                    "id": mid,
                    "memory": _text(item.get("memory")),
                    "reason": _text(why),
                    "redacted": found,
                },
            )

        return self._call(run)

    def confirm(self, memory_id: Any) -> ToolResult:
        """Mark a memory as checked and still true today (also releases a quarantined one)."""

        def run(m: Memory) -> ToolResult:
            item = self.owned(m, memory_id)
            mid = str(item["id"])
            before = (item.get("hygiene") or {}).get("state")
            after = m.confirm(mid)
            facts = after.get("hygiene") or {}
            when = _date(facts.get("confirmed_at"))
            msg = f"Confirmed {mid} ({_text(item.get('memory'))}) as of {when}."
            if before == "quarantined":
                msg += " It was quarantined and is now recalled."
            return ToolResult(
                msg,
                {
                    "outcome": "confirmed",
                    "id": mid,
                    "confirmed_at": facts.get("confirmed_at"),
                    "state": facts.get("state"),
                    "was": before,
                },
            )

        return self._call(run)

    def forget(self, memory_id: Any) -> ToolResult:
        """Delete a memory through mem0's API, with the memories it had superseded."""

        def run(m: Memory) -> ToolResult:
            item = self.owned(m, memory_id)
            mid = str(item["id"])
            chain = m.ledger.predecessors(mid)
            m.delete(mid)
            msg = f"Deleted {mid} ({_text(item.get('memory'))})"
            msg += f" and the {len(chain)} older version(s) it had replaced." if chain else "."
            return ToolResult(msg, {"outcome": "deleted", "id": mid, "also_deleted": chain})

        return self._call(run)

    def review(self, limit: Any = None) -> ToolResult:
        """The session's memories whose confirmation is oldest (due for a check), oldest first."""
        count = _limit(limit, "limit", 20)

        def run(m: Memory) -> ToolResult:
            items = m.review_queue(limit=count, filters=dict(self.scope))
            older = m.hygiene_settings.review_older_than
            data = {"count": len(items), "memories": [_memory_data(i) for i in items], "older_than_days": older.days}
            if not items:
                return ToolResult(f"Nothing is due for review (no memory unconfirmed for {older.days} days).", data)
            head = (
                f"{len(items)} memory(ies) unconfirmed for over {older.days} days, oldest first. Ask the user "
                "and then confirm, correct or invalidate each:"
            )
            return ToolResult("\n".join([head, *(_line(i) for i in items)]), data)

        return self._call(run)

    # -- resources --------------------------------------------------------------------------------
    def audit_summary(self) -> dict[str, Any]:
        """The audit of the whole deployment, summarised: counts, and each finding's code, severity, title and
        count (no examples: they would show other scopes' texts)."""
        from .auditing.runner import audit

        with self._locked() as m:
            m.flush()
            report = audit(m, examples=0)
        return redacted_data(
            {
                "target": report.target,
                "finished_at": report.finished_at,
                "summary": report.counts(),
                "findings": [
                    {"code": f.code, "severity": f.severity.label, "title": f.title, "count": f.count}
                    for f in report.findings
                ],
                "skipped": [{"code": s.code, "reason": s.reason} for s in report.skipped],
            }
        )

    def review_queue(self) -> dict[str, Any]:
        """The review queue of this session's scope as data (the ``review`` tool's, at its default size)."""
        return self.review().data | {"scope": dict(self.scope)}
