"""The audit's text scanners, under their earlier import path: they live in :mod:`mem0_hygiene.scan`
(below every layer, so the write guard, the audit and the renderers use the same detector)."""

from ...scan import (
    INSTRUCTION_LABELS,
    SECRET_KINDS,
    SecretHit,
    find_secrets,
    instruction_reason,
    normalize_for_duplicates,
    redact,
    redact_secrets,
    secret_spans,
)

__all__ = [
    "INSTRUCTION_LABELS",
    "SECRET_KINDS",
    "SecretHit",
    "find_secrets",
    "instruction_reason",
    "normalize_for_duplicates",
    "redact",
    "redact_secrets",
    "secret_spans",
]
