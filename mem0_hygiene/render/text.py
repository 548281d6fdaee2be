"""The earlier import path of the text helpers, now :mod:`mem0_hygiene.display.text` (below every layer that
shows something)."""

from ..display.text import (
    INVISIBLE,
    heading_time,
    human_size,
    parsed_time,
    plural,
    printable,
    redact_secrets,
    redacted,
    redacted_data,
    revealing_secrets,
    run_text,
    secrets_revealed,
    yes_no,
)

__all__ = [
    "INVISIBLE",
    "heading_time",
    "human_size",
    "parsed_time",
    "plural",
    "printable",
    "redact_secrets",
    "redacted",
    "redacted_data",
    "revealing_secrets",
    "run_text",
    "secrets_revealed",
    "yes_no",
]
