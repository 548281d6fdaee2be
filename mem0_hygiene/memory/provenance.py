"""Provenance rules: which messages may become memories, and what kind of source a memory has."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..stores.ledger import SOURCE_KINDS

TOOL_ROLES = frozenset({"tool", "function"})
_ROLE_KINDS = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool", "function": "tool"}
_PREFIX_KINDS = (
    ("tool:", "tool"),
    ("web:", "tool"),
    ("http://", "tool"),
    ("https://", "tool"),
    ("file:", "import"),
    ("import:", "import"),
    ("user:", "user"),
    ("chat", "user"),
    ("assistant:", "assistant"),
    ("agent:", "assistant"),
    ("system:", "system"),
)
QUARANTINED_KINDS = frozenset({"tool"})


def normalize_messages(messages: Any) -> Any:
    """mem0's own shapes: a string is one user message, a dict is one message, a list stays."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    return messages


def split_tool_messages(messages: list[Any], trust_tool_output: bool) -> tuple[list[Any], int]:
    """(messages that may be used, how many tool/function messages were dropped)."""
    if trust_tool_output:
        return list(messages), 0
    kept = [m for m in messages if not (isinstance(m, dict) and m.get("role") in TOOL_ROLES)]
    return kept, len(messages) - len(kept)


def kind_from_source(source: str | None) -> str | None:
    """The source kind a source string implies ("tool:web_fetch ..." -> tool), or None."""
    if not source:
        return None
    low = source.strip().lower()
    for prefix, kind in _PREFIX_KINDS:
        if low.startswith(prefix):
            return kind
    return None


def kind_from_role(role: str | None) -> str:
    return _ROLE_KINDS.get(role or "", "unknown")


def resolve_kind(explicit: str | None, source: str | None, roles: list[str]) -> str:
    """Explicit kind wins, then the source's prefix, then the messages' roles."""
    if explicit is not None:
        if explicit not in SOURCE_KINDS:
            raise ConfigError(f"source_kind {explicit!r} is not one of {', '.join(SOURCE_KINDS)}")
        return explicit
    by_source = kind_from_source(source)
    if by_source:
        return by_source
    kinds = {kind_from_role(r) for r in roles if r != "system"}
    if "tool" in kinds:
        return "tool"
    if kinds == {"assistant"}:
        return "assistant"
    if "user" in kinds:
        return "user"
    return "unknown"
